package page

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/testutil"
)

// nextValues is a page as its next scrape gives it when only its values
// moved: the value of every sample line becomes the one pick gives for
// that line (the line's number and its old value), the rest is as it was.
func nextValues(page string, pick func(line int, old string) string) string {
	lines := strings.SplitAfter(page, "\n")
	for i, l := range lines {
		body := strings.TrimRight(l, "\n")
		if t := strings.TrimLeft(body, " \t"); t == "" || t[0] == '#' {
			continue
		}
		at := strings.LastIndexAny(body, " \t") + 1
		if at == 0 {
			continue
		}
		lines[i] = body[:at] + pick(i, body[at:]) + l[len(body):]
	}
	return strings.Join(lines, "")
}

// onLine sets the value of line n only.
func onLine(n int, value string) func(int, string) string {
	return func(i int, old string) string {
		if i == n {
			return value
		}
		return old
	}
}

// moved is the value a counter or a gauge shows a second later.
func moved(_ int, old string) string {
	switch old {
	case "+Inf", "-Inf", "NaN":
		return old
	}
	return old + "1" // 12 → 121, 0.5 → 0.51, 1e3 → 1e31
}

// readBoth reads the pages in turn with an Ingester whose memo is kept
// for any page and by expfmt alone (byExpfmt), and fails where
// the two samples (or errors) of a page differ. It returns whether each
// page was read as values only.
func readBoth(t *testing.T, contentType string, pages ...string) (replayed []bool) {
	t.Helper()
	in := NewIngester()
	setMemoMin(t, 0)
	for i, p := range pages {
		got, want := show(in, p, contentType), showExpfmt(p, contentType)
		if got != want {
			t.Fatalf("page %d read as values only %v:\n%s\nexpfmt:\n%s", i, in.replayed, got, want)
		}
		if in.replayed {
			if diff := diffFamilies(in.memo.s.fast.fams, freshFamilies(t, p, contentType), "values only"); diff != "" {
				t.Fatalf("page %d read as values only into other families than a fresh reading: %s", i, diff)
			}
		}
		replayed = append(replayed, in.replayed)
	}
	return replayed
}

// setMemoMin sets the fewest lines a page needs to keep its memo while the
// test runs (the tests that call it do not run in parallel).
func setMemoMin(t testing.TB, n int) {
	old := memoMinLines
	memoMinLines = n
	t.Cleanup(func() { memoMinLines = old })
}

// freshFamilies are the families a page is read into by an Ingester that
// never saw another: those it keeps as the page's memo. The Sample does
// not tell an integer count from the same count as a float, the families
// do.
func freshFamilies(t *testing.T, page, contentType string) map[string]*dto.MetricFamily {
	t.Helper()
	in := NewIngester()
	setMemoMin(t, 0)
	if _, err := in.Ingest([]byte(page), contentType); err != nil || in.memo.s == nil {
		t.Fatalf("a page read as values only after another kept no memo when read alone (%v)", err)
	}
	return in.memo.s.fast.fams
}

func show(in *Ingester, page, contentType string) string {
	s, err := in.Ingest([]byte(page), contentType)
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%#v", s)
}

// A page of the last page's shape is read as values only, into the same
// sample as the full reading gives; anything that changes more than the
// values, or a value the full reading would take differently, is read in
// full.
func TestSameShapePages(t *testing.T) {
	eight := string(testutil.VLLMPage(t, 8))
	tests := []struct {
		name   string
		next   string
		replay bool
	}{
		{"values moved", nextValues(eight, moved), true},
		{"the same page", eight, true},
		{"no value moved but one", nextValues(eight, onLine(200, "7")), true},
		{"fractional counts", nextValues(eight, func(_ int, old string) string {
			if strings.ContainsAny(old, ".eIN") {
				return old
			}
			return old + ".25"
		}), true},
		{"special values", nextValues(eight, func(i int, _ string) string {
			return []string{"NaN", "+Inf", "-0", "1e-3", "0.1"}[i%5]
		}), true},
		{"minus infinity", nextValues(eight, func(int, string) string { return "-Inf" }), false},
		{"a negative fractional bucket", nextValues(eight, func(_ int, old string) string { return "-" + old + ".5" }), false},
		{"a timestamp", nextValues(eight, func(_ int, old string) string { return old + " 1700000000000" }), false},
		{"a value that is no number", nextValues(eight, onLine(500, "1_000")), false},
		{"a value missing", nextValues(eight, onLine(900, "")), false},
		{"a label changed", strings.Replace(eight, `engine="3"`, `engine="9"`, 1), false},
		{"a line more", eight + "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 1\n", false},
		{"a line less", eight[:strings.LastIndex(eight[:len(eight)-1], "\n")+1], false},
		{"a comment changed", strings.Replace(eight, "# HELP", "# HELP ", 1), false},
		{"a blank line", "\n" + eight, false},
		{"a line cut", eight[:len(eight)-1], false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The third page is held to expfmt after the memo of
			// whichever page came before it.
			got := readBoth(t, "text/plain; version=0.0.4", eight, tc.next, nextValues(eight, moved))
			if got[0] || got[1] != tc.replay {
				t.Errorf("read as values only: first page %v, next page %v; want false, %v", got[0], got[1], tc.replay)
			}
		})
	}
}

// Every real capture, its values moved, is read as values only into what
// expfmt gives, and an OpenMetrics page never is.
func TestSameShapeRealPages(t *testing.T) {
	for _, path := range captures(t) {
		page := string(loadReal(t, filepath.Base(path)))
		t.Run(filepath.Base(path), func(t *testing.T) {
			got := readBoth(t, "text/plain; version=0.0.4", page, nextValues(page, moved))
			if first := show(NewIngester(), page, ""); !strings.HasPrefix(first, "error") && !got[1] {
				t.Errorf("a page of the same shape was read in full")
			}
		})
	}
	om := readBoth(t, "application/openmetrics-text; version=1.0.0", omPage, nextValues(omPage, moved))
	if om[1] {
		t.Error("an OpenMetrics page was read as values only")
	}
}

// A page keeps its memo only when it is large enough for the memo to pay:
// eight engines do, one does not.
func TestMemoOnlyForLargePages(t *testing.T) {
	for _, tc := range []struct {
		engines int
		kept    bool
	}{{1, false}, {2, false}, {8, true}} {
		in := NewIngester()
		page := testutil.VLLMPage(t, tc.engines)
		for range 2 {
			if _, err := in.Ingest(page, ""); err != nil {
				t.Fatal(err)
			}
		}
		if kept := in.memo.s != nil; kept != tc.kept || in.replayed != tc.kept {
			t.Errorf("%d engines: memo kept %v, second page read as values only %v; want %v", tc.engines, kept, in.replayed, tc.kept)
		}
	}
}

// FuzzIngestSameShape reads a page and then the page with other values
// (from the fuzzer's list of values, numbers or not) as expfmt reads it.
func FuzzIngestSameShape(f *testing.F) {
	f.Add(string(testutil.VLLMPage(f, 2)), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
	f.Add(newestPage, []byte{1, 1, 2, 3, 5, 8, 13})
	f.Add(omPage, []byte{3})
	for _, c := range fastCases {
		f.Add(c.page, []byte{7, 0, 9})
	}
	values := []string{"0", "1", "2.5", "-1", "NaN", "+Inf", "-Inf", "1e3", "0.1", "7", "1.5e-3", "x", "1_0",
		"", "3 1700000000", "-0.5", "18446744073709551616", "4.2 ", "0x1p3", "-0"}
	f.Fuzz(func(t *testing.T, page string, picks []byte) {
		if strings.Count(page, "\n") > 4000 {
			return // the parser's limits are not what this compares
		}
		next := nextValues(page, func(i int, old string) string {
			if len(picks) == 0 {
				return old
			}
			return values[int(picks[i%len(picks)])%len(values)]
		})
		readBoth(t, "", page, next, page)
	})
}

// A carriage return is part of a line unless it ends it: a TYPE line that
// ends in two, one of which the line keeps, is not the same line as one
// that ends in one.
func TestSameShapeCarriageReturns(t *testing.T) {
	eight := string(testutil.VLLMPage(t, 8))
	const typeLine = "# TYPE vllm:time_to_first_token_seconds histogram\n"
	if !strings.Contains(eight, typeLine) {
		t.Fatalf("the page has no line %q", typeLine)
	}
	ending := func(end string) string {
		return strings.Replace(eight, typeLine, strings.TrimSuffix(typeLine, "\n")+end, 1)
	}
	got := readBoth(t, "", ending("\r\r\n"), ending("\r\n"), ending("\n"), ending("\r\r\n"))
	if !got[2] {
		t.Error("a line that lost the carriage return cutLine takes off was read in full")
	}
}

// A page read as values only stores the values a fresh reading would, where
// the last page's boxes hold something else: a count or a bucket that
// normalizeHistogram turned into a float because a neighbour was a
// fraction, a value that turned a fraction and back, a neighbour that
// changed, a line whose ending changed. Held against expfmt.
func TestValuesOnlyStoresAfresh(t *testing.T) {
	eight := string(testutil.VLLMPage(t, 8))
	lineOf := func(prefix string) int {
		for i, l := range strings.SplitAfter(eight, "\n") {
			if strings.HasPrefix(l, prefix) {
				return i
			}
		}
		t.Fatalf("no line starts with %q", prefix)
		return 0
	}
	const ttft = `vllm:time_to_first_token_seconds_`
	bucket := lineOf(ttft + `bucket{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct",le="0.005"} 1`)
	count := lineOf(ttft + `count{engine="0",`)
	scalar := lineOf(`vllm:num_requests_running{engine="0",`)
	set := func(line int, value string) string { return nextValues(eight, onLine(line, value)) }
	ending := func(line int, end string) string {
		lines := strings.SplitAfter(eight, "\n")
		lines[line] = strings.TrimSuffix(lines[line], "\n") + end
		return strings.Join(lines, "")
	}
	for _, tc := range []struct {
		name  string
		pages []string
	}{
		{"a bucket turns a fraction and back", []string{eight, set(bucket, "1.5"), eight, eight}},
		{"every bucket of a series a fraction, then one back", []string{eight,
			nextValues(eight, func(i int, old string) string {
				if i >= bucket-1 && i < count-1 {
					return old + ".5"
				}
				return old
			}), set(bucket, "1.5"), eight}},
		{"a count turns a fraction and back", []string{eight, set(count, "5.5"), eight, eight}},
		{"a count turns an integer in other bytes", []string{eight, set(count, "5.0"), set(count, "5e0"), eight}},
		{"a scalar turns a fraction and back", []string{eight, set(scalar, "1.5"), eight, eight}},
		{"a neighbour changes", []string{eight, set(bucket+1, "9"), set(bucket-1, "9"), eight}},
		{"a longer value, then short", []string{eight, set(bucket, "1000"), eight, set(bucket, "1000")}},
		{"counts of fifteen digits and more", []string{eight, set(bucket, "999999999999999"),
			set(bucket, "9999999999999999"), set(bucket, "18446744073709551617"), eight}},
		{"a line's ending changes", []string{eight, ending(bucket, "\r\n"), eight, ending(bucket, "\r\n")}},
		{"a dropped line's value changes", []string{eight + "other_total 1\n", eight + "other_total 1\n",
			eight + "other_total 1 2\n", eight + "other_total 1 2\n", eight + "other_total 18446744073709551617\n",
			eight + "other_total 1x\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replayed := readBoth(t, "", tc.pages...)
			if last := len(tc.pages) - 1; !replayed[last-1] {
				t.Error("the page before the last was not read as values only")
			}
		})
	}
}
