package page

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/testutil"
)

// parse reads b, text as the filter writes it, line by line into
// families, as a direct pass hands the fast path its lines (Ingester.readPage).
// ok is false when the page holds anything the fast path does not follow.
// The families live until the next call.
func (p *fastParser) parse(b []byte) (fams map[string]*dto.MetricFamily, ok bool) {
	p.reset()
	var names nameTable
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return nil, false // the last line is cut: expfmt's error
		}
		line := skipBlanks(b[:nl])
		b = b[nl+1:]
		if len(line) == 0 {
			continue
		}
		var ok bool
		if rest, typed := bytes.CutPrefix(line, []byte("# TYPE ")); typed {
			name, typ, _ := bytes.Cut(rest, []byte(" "))
			ok = p.setType(name, string(typ))
		} else if line[0] != '#' {
			_, ok = p.sampleLine(line, names.lookup(line))
		}
		if !ok {
			return nil, false
		}
	}
	return p.finish(), true
}

// sameFamilies compares the fast path's reading of b with expfmt's: when
// the fast path accepts b, expfmt must accept it too and give the same
// families, message for message. It returns what differs, or "".
func sameFamilies(fp *fastParser, b []byte) (accepted bool, diff string) {
	fast, ok := fp.parse(b)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	want, err := parser.TextToMetricFamilies(bytes.NewReader(b))
	if !ok {
		return false, ""
	}
	if err != nil {
		return true, fmt.Sprintf("the fast path accepted what expfmt refuses (%v)", err)
	}
	return true, diffFamilies(fast, want, "fast  ")
}

// diffFamilies says how a reader's families differ from expfmt's (want),
// "" when they are the same message for message; who names the reader.
func diffFamilies(got, want map[string]*dto.MetricFamily, who string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d families, expfmt %d: %v vs %v", len(got), len(want), familyNames(got), familyNames(want))
	}
	for name, mf := range want {
		if !proto.Equal(mf, got[name]) {
			return fmt.Sprintf("family %q:\n%s %v\nexpfmt %v", name, who, got[name], mf)
		}
	}
	return ""
}

func familyNames(fams map[string]*dto.MetricFamily) []string {
	return slices.Sorted(maps.Keys(fams))
}

// fastCases are lines the fast path must read as expfmt does, or leave to
// it: the forms of the text format one by one.
var fastCases = []struct {
	name   string
	page   string
	accept bool
}{
	{"gauges and counters", "a 1\nb{x=\"y\"} 2.5\n# TYPE c counter\nc_total{x=\"y\",z=\"w\"} 3e3\n", true},
	{"histogram in any label order", "# TYPE h histogram\n" +
		"h_bucket{a=\"1\",le=\"0.5\",b=\"2\"} 1\nh_bucket{b=\"2\",a=\"1\",le=\"+Inf\"} 3\n" +
		"h_sum{b=\"2\",a=\"1\"} 4.5\nh_count{a=\"1\",b=\"2\"} 3\n", true},
	{"two series of a histogram interleaved", "# TYPE h histogram\n" +
		"h_bucket{e=\"0\",le=\"1\"} 1\nh_bucket{e=\"1\",le=\"1\"} 2\nh_bucket{e=\"0\",le=\"+Inf\"} 3\nh_count{e=\"1\"} 2\n", true},
	{"fractional counts turn every count to float", "# TYPE h histogram\nh_bucket{le=\"1\"} 1.5\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n", true},
	{"fractional sample count", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 2.5\n", true},
	{"bucket without le", "# TYPE h histogram\nh_bucket{x=\"1\"} 2\n", true},
	{"le twice on a histogram: the last wins", "# TYPE h histogram\nh_bucket{le=\"1\",le=\"2\"} 2\n", true},
	{"le on a gauge is a label", "g{le=\"1\"} 2\n", true},
	{"untyped bucket family", "h_bucket{le=\"1\"} 2\n", true},
	{"blanks everywhere the format allows", "  a { x = \"y\" , z=\"w\" , } 1\n\n\t\nb{}2\nc\t{x=\"1\"}\t3\n", true},
	{"special values", "a NaN\nb +Inf\nc -Inf\nd -0\ne 1e-300\n", true},
	{"empty family of a TYPE only", "# TYPE h histogram\n# TYPE g gauge\ng 1\n", true},
	{"duplicate series", "a{x=\"1\"} 1\na{x=\"1\"} 2\n", true},
	{"UTF-8 value", "a{x=\"µs ✓\"} 1\n", true},
	{"names and values extending the previous line's", "a{x=\"1\",y=\"ab\"} 1\na{xy=\"1\",y=\"abc\"} 2\na{x=\"12\",y=\"a\"} 3\nab{x=\"1\"} 4\na 5\n", true},
	{"a histogram's labels in another order, then fewer", "# TYPE h histogram\n" +
		"h_bucket{a=\"1\",b=\"2\",le=\"1\"} 1\nh_bucket{b=\"2\",a=\"1\",le=\"+Inf\"} 2\nh_bucket{a=\"1\",le=\"+Inf\"} 3\n" +
		"h_count{a=\"1\",b=\"2\"} 2\nh_count{a=\"1\"} 3\nh_sum{a=\"1\",b=\"2\",c=\"3\"} 4\n", true},
	{"lines sharing all labels but the last", "# TYPE h histogram\n" +
		"h_bucket{a=\"1\",b=\"2\",le=\"1\"} 1\nh_bucket{a=\"1\",b=\"2\",le=\"2\"} 2\nh_bucket{a=\"1\",b=\"3\",le=\"1\"} 3\n" +
		"h_bucket{a=\"1\",b=\"2\",} 4\nh_bucket{a=\"1\",b=\"2\",le=\"3\",} 5\ng{a=\"1\",b=\"2\",le=\"1\"} 6\ng{a=\"1\",b=\"2\",le=\"2\"} 7\n" +
		"h_bucket{a=\"1\",b=\"2\",le=\"4\"} 8\n", true},
	{"le before the last label, on a gauge and a histogram", "# TYPE h histogram\n" +
		"g{le=\"1\",a=\"1\"} 1\nh_bucket{le=\"1\",a=\"2\"} 2\nh_bucket{le=\"+Inf\",a=\"2\"} 3\ng{le=\"+Inf\",a=\"3\"} 4\n", true},
	{"a duplicate after the previous line's prefix", "a{x=\"1\",y=\"2\"} 1\na{x=\"1\",x=\"2\"} 2\n", false},
	{"lines sharing a prefix, then a histogram", "g{a=\"1\",le=\"1\"} 1\n# TYPE h histogram\nh_bucket{a=\"1\",le=\"1\"} 2\nh_bucket{a=\"1\",le=\"2\"} 3\ng{a=\"1\",le=\"2\"} 4\n", true},
	{"a value the previous line's with a quote after", "a{x=\"1\"} 1\na{x=\"1\"\"} 2\n", false},
	{"decimals", "a 0.5\nb 1.\nc .25\nd 123456789012.345\ne 0.1\nf 1234567890123456\ng 1.5e3\n", true},
	{"timestamp", "a 1 1000\n", false},
	{"blank after the value", "a 1 \n", false},
	{"escape", "a{x=\"\\\"\"} 1\n", false},
	{"quoted label name", "a{\"x\"=\"1\"} 1\n", false},
	{"name in braces", "{\"a\"} 1\n", false},
	{"invalid UTF-8", "a{x=\"\xff\"} 1\n", false},
	{"duplicate label", "a{x=\"1\",x=\"2\"} 1\n", false},
	{"reserved label", "a{__name__=\"b\"} 1\n", false},
	{"second TYPE", "# TYPE a gauge\n# TYPE a counter\n", false},
	{"TYPE after samples", "a 1\n# TYPE a gauge\n", false},
	{"summary", "# TYPE s summary\ns{quantile=\"0.5\"} 1\n", false},
	{"hexadecimal value", "a 0x1p3\n", false},
	{"underscore in value", "a 1_0\n", false},
	{"value missing", "a\n", false},
	{"negative bucket", "# TYPE h histogram\nh_bucket{le=\"1\"} -1.5\n", false},
	{"negative count", "# TYPE h histogram\nh_count -2\n", false},
	{"le not a number", "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n", false},
	{"cut last line", "a 1", false},
	{"another comment", "# HELP a b\na 1\n", false},
	{"name starting with a digit", "1a 1\n", false},
	{"unclosed labels", "a{x=\"1\" 1\n", false},
}

// TestFastParseMatchesExpfmt holds the fast path to expfmt's families on
// each form, and checks which forms it leaves to expfmt.
func TestFastParseMatchesExpfmt(t *testing.T) {
	fp := newFastParser() // shared, as across the pages of a target
	for _, c := range fastCases {
		t.Run(c.name, func(t *testing.T) {
			accepted, diff := sameFamilies(fp, []byte(c.page))
			if diff != "" {
				t.Error(diff)
			}
			if accepted != c.accept {
				t.Errorf("accepted = %v, want %v", accepted, c.accept)
			}
		})
	}
}

// filteredPages returns the filter's output of every captured page and of
// client_golang pages of 1, 2 and 8 engines, keyed by name: the input the
// fast path meets in a live run.
func filteredPages(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	paths := captures(t)
	add := func(name string, page []byte) {
		in := NewIngester()
		om, err := in.pageFormat(page, "")
		if err != nil {
			return
		}
		in.s = getScratch()
		defer putScratch(in.s)
		if _, err := in.filter(page, om, nil, false); err == nil {
			out[name] = slices.Clone(in.s.filtered)
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		add(filepath.Base(p), cleanReal(filepath.Base(p), b))
	}
	for _, e := range []int{1, 2, 8} {
		add(fmt.Sprintf("client_golang %d engines", e), testutil.VLLMPage(t, e))
	}
	return out
}

// TestFastParseOnRealPages: on every captured page and on client_golang's
// pages the fast path reads what expfmt reads, and it does read them (a
// fast path that always fell back would pass the comparison and help
// nobody).
func TestFastParseOnRealPages(t *testing.T) {
	fp := newFastParser()
	pages := filteredPages(t)
	if len(pages) < 10 {
		t.Fatalf("only %d pages filtered", len(pages))
	}
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		accepted, diff := sameFamilies(fp, pages[name])
		if diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
		if !accepted {
			t.Errorf("%s: the fast path fell back", name)
		}
	}
}

// TestIngestFastAndPlain: Ingest with the fast path gives the very Sample that expfmt alone gives, on every captured page,
// on client_golang's pages and on the cases above.
func TestIngestFastAndPlain(t *testing.T) {
	pages := map[string]string{}
	for name, b := range filteredPages(t) {
		pages[name] = string(b)
	}
	paths, _ := filepath.Glob(filepath.Join(realDir, "*.txt"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages["raw "+filepath.Base(p)] = string(b)
	}
	for _, c := range fastCases {
		pages["case "+c.name] = c.page
	}
	in := NewIngester()
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		if diff := ingestFastAndPlain(pages[name], ""); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
		if _, diff := sameDirectFamilies(in, []byte(pages[name]), ""); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

// ingestFastAndPlain reads page by Ingest and by expfmt alone
// (byExpfmt). It returns how the readings differ, or "".
func ingestFastAndPlain(page, contentType string) (diff string) {
	if direct, plain := show(NewIngester(), page, contentType), showExpfmt(page, contentType); direct != plain {
		return fmt.Sprintf("fast path and expfmt differ:\n%s\n%s", direct, plain)
	}
	return ""
}

// byExpfmt reads a page the long way alone, the reference every faster
// way is held to: the filter's copy parsed by expfmt (Ingester.readCopy),
// built into a Sample as Ingest builds it.
func byExpfmt(page []byte, contentType string) (catalogue.Sample, error) {
	in := NewIngester()
	om, err := in.pageFormat(page, contentType)
	if err != nil {
		return catalogue.Sample{}, err
	}
	in.s = getScratch()
	defer in.keepOrRelease(false)
	p, fams, err := in.readCopy(page, om)
	if err != nil {
		return catalogue.Sample{}, err
	}
	in.memo.hasVLLM, in.memo.dropped = p.hasVLLM, p.dropped
	return in.sample(page, om, fams, new(bool))
}

// showExpfmt is show for byExpfmt's reading.
func showExpfmt(page, contentType string) string {
	s, err := byExpfmt([]byte(page), contentType)
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%#v", s)
}

// sameDirectFamilies holds a direct pass (see Ingester.readPage) to expfmt's
// families: when the fast path follows the page line by line, the filter
// must accept the page too, and expfmt must read the filter's copy into the
// same families. in is reused, as a target's
// Ingester is from page to page.
func sameDirectFamilies(in *Ingester, page []byte, contentType string) (accepted bool, diff string) {
	om, err := in.pageFormat(page, contentType)
	if err != nil {
		return false, ""
	}
	in.s = getScratch()
	defer func() {
		putScratch(in.s)
		in.s = nil
	}()
	if _, err = in.filter(page, om, in.s.fast, false); err != nil {
		return false, "" // left to the long way, or refused by the filter itself
	}
	fast := in.s.fast.finish()
	if _, err := in.filter(page, om, nil, false); err != nil {
		return true, fmt.Sprintf("the filter refuses what the direct pass accepted (%v)", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	want, err := parser.TextToMetricFamilies(bytes.NewReader(in.s.filtered))
	if err != nil {
		return true, fmt.Sprintf("the direct pass accepted what expfmt refuses (%v)", err)
	}
	return true, diffFamilies(fast, want, "direct")
}

// TestDirectOnRealPages: on every captured page and on client_golang's
// pages a direct pass reads what expfmt reads from the filter's copy, and
// it does follow them (else every live page would be read twice).
func TestDirectOnRealPages(t *testing.T) {
	pages := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join(realDir, "*.txt"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Base(p)] = cleanReal(filepath.Base(p), b)
	}
	for _, e := range []int{1, 2, 8} {
		pages[fmt.Sprintf("client_golang %d engines", e)] = testutil.VLLMPage(t, e)
	}
	in := NewIngester()
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		accepted, diff := sameDirectFamilies(in, pages[name], "")
		if diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
		if !accepted {
			t.Errorf("%s: the direct pass fell back", name)
		}
	}
}

// FuzzFastParse: on any bytes, the fast path either leaves the page to
// expfmt or reads exactly the families expfmt reads. One parser serves
// every input, as one serves every page of a target, so state carried from
// one page to the next is fuzzed too.
func FuzzFastParse(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c.page))
	}
	for _, b := range filteredPages(f) {
		f.Add(b)
	}
	fp := newFastParser()
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, diff := sameFamilies(fp, b); diff != "" {
			t.Error(diff)
		}
	})
}

// FuzzIngestFastPath: on any page, Ingest with its fast paths gives the
// Sample (or the error) that expfmt alone gives, and a direct pass the
// families expfmt reads from the filter's copy.
func FuzzIngestFastPath(f *testing.F) {
	for _, c := range fastCases {
		f.Add(c.page, "")
	}
	f.Add(newestPage, "")
	f.Add(omPage, "application/openmetrics-text; version=1.0.0")
	f.Add(string(testutil.VLLMPage(f, 2)), "")
	in := NewIngester() // for the families, shared as a target's is
	f.Fuzz(func(t *testing.T, page, contentType string) {
		if strings.Count(page, "\n") > 2000 {
			return // the parser's limits are not what this compares
		}
		if diff := ingestFastAndPlain(page, contentType); diff != "" {
			t.Error(diff)
		}
		if _, diff := sameDirectFamilies(in, []byte(page), contentType); diff != "" {
			t.Error(diff)
		}
	})
}

// FuzzIngestAcrossScrapes: what an Ingester and the parsers' storage keep
// from one page to the next (its sample names, bucket bounds by place, label
// prefixes, interned strings) never changes a reading: a page read after
// another, by the same Ingester, gives the Sample (or the error) that
// expfmt alone gives, with nothing kept.
func FuzzIngestAcrossScrapes(f *testing.F) {
	two := string(testutil.VLLMPage(f, 2))
	f.Add(two, changedPage(two), "")
	f.Add(newestPage, two, "")
	f.Add(omPage, omPage, "application/openmetrics-text; version=1.0.0")
	// The names of the last page, where the next page's names start with them.
	f.Add("vllm:num_requests_running 1\n", "vllm:num_requests_running-x 1\n", "")
	f.Add("vllm:num_requests_running 1\n", "vllm:num_requests_runningx 1\nvllm:num_requests_running 2\n", "")
	for _, c := range fastCases {
		f.Add(two, c.page, "")
	}
	f.Fuzz(func(t *testing.T, first, second, contentType string) {
		if strings.Count(first, "\n")+strings.Count(second, "\n") > 4000 {
			return // the parser's limits are not what this compares
		}
		in := NewIngester()
		setMemoMin(t, 0) // the second page is read by the first's memo where it can be
		show(in, first, contentType)
		if after, want := show(in, second, contentType), showExpfmt(second, contentType); after != want {
			t.Errorf("read after another page:\n%s\nexpfmt:\n%s", after, want)
		}
	})
}

// changedPage is a page as its next scrape gives it: every digit of a
// value or a bound but the first of each line moved on.
func changedPage(page string) string {
	b := []byte(page)
	for i := 1; i < len(b); i++ {
		if c := b[i]; c >= '0' && c < '9' && b[i-1] != '\n' && b[i-1] != '_' {
			b[i]++
		}
	}
	return string(b)
}

// The free list keeps the storage a page of eight engines needs and lets go
// of what a page of the parser's line limit needed.
func TestScratchBounds(t *testing.T) {
	eight := newFastParser()
	filtered := filteredPages(t)["client_golang 8 engines"]
	if _, ok := eight.parse(filtered); !ok {
		t.Fatal("the fast path fell back on client_golang's page of 8 engines")
	}
	if n := eight.chunks(); n > maxScratchChunks {
		t.Errorf("8 engines take %d chunks, more than the %d the free list keeps", n, maxScratchChunks)
	}
	huge := newFastParser()
	var page bytes.Buffer
	for i := range maxKeptLines {
		fmt.Fprintf(&page, "vllm:num_requests_running{engine=\"%d\"} 1\n", i)
	}
	if _, ok := huge.parse(page.Bytes()); !ok {
		t.Fatal("the fast path fell back on plain gauges")
	}
	if n := huge.chunks(); n <= maxScratchChunks {
		t.Errorf("%d lines take %d chunks, within the %d the free list keeps", maxKeptLines, n, maxScratchChunks)
	}
	t.Logf("8 engines: %d chunks; %d gauges: %d chunks", eight.chunks(), maxKeptLines, huge.chunks())
}

// TestParseValue holds parseValue's short decimals to ParseFloat, bit for
// bit, over the edges of its fast path and random decimals of up to 16
// digits, a point anywhere among them.
func TestParseValue(t *testing.T) {
	cases := []string{"0", "1", "1.", ".5", ".", "..", "1..2", "0.1", "0.3", "2.5", "1e3", "+Inf", "-Inf", "NaN", "-0",
		"-1.5", "+1.5", "999999999999999", "9999999999999999", "0.000000000000001", "123456789012.345",
		"1234567890123456", "0.9999999999999999", "00000000000000.1", "1_0", "0x10", ""}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		digits := 1 + rng.IntN(16)
		b := make([]byte, 0, digits+1)
		for range digits {
			b = append(b, byte('0'+rng.IntN(10)))
		}
		if rng.IntN(8) > 0 {
			at := rng.IntN(digits + 1)
			b = slices.Insert(b, at, '.')
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		got, ok := parseValue([]byte(c))
		want, err := strconv.ParseFloat(c, 64)
		if strings.ContainsAny(c, "xX_") {
			err = strconv.ErrSyntax // expfmt refuses hexadecimal and underscores
		}
		if ok != (err == nil) || ok && math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("parseValue(%q) = %v, %v; ParseFloat %v, %v", c, got, ok, want, err)
		}
	}
}
