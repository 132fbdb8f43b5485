package promsource

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/testutil"
)

// floodAnswer is a matrix answer of n series of six points each, as a
// server answering every query with a whole large fleet would send it.
func floodAnswer(n int, at float64) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metric":{"__name__":"vllm:num_requests_running","instance":"10.%d.%d.%d:8000","job":"vllm","namespace":"prod","pod":"vllm-%d"},"values":[`, i>>16, (i>>8)&255, i&255, i)
		for p := range 6 {
			if p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `[%.3f,"%d"]`, at-float64(30-5*p), i%7)
		}
		b.WriteString("]}")
	}
	b.WriteString("]}}")
	return b.Bytes()
}

// peakHeap samples the heap in use until stop is called, which returns
// the largest seen.
func peakHeap() (stop func() uint64) {
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// A server answering every query with 100,000 series (some 30 MB of
// JSON each) is refused once the decoded answers pass the source's share
// of the memory bound, with a message naming the query and the series
// read, and the heap never holds more than the bound.
func TestLargeAnswersAreRefusedWithinTheBound(t *testing.T) {
	testutil.SkipShort(t, "answers of some 30 MB of JSON")
	const bound = 256 << 20 // the default of --max-memory
	at := float64(time.Now().Unix())
	body := floodAnswer(100_000, at)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	runtime.GC()
	stop := peakHeap()
	s := testSource(t, Config{URL: srv.URL, MaxMemory: bound, Timeout: time.Minute})
	rep := refreshOnce(t, s)
	peak := stop()
	st := s.Status()
	t.Logf("peak heap %.0f MiB (the answer: %.0f MiB of JSON); problem: %s", float64(peak)/(1<<20), float64(len(body))/(1<<20), st.Problem)
	for _, want := range []string{"Prometheus's answers passed 64 MiB, their share of --max-memory 256MiB; narrow the selector", "raise --max-memory (at ", ` series of the answer to {__name__=~"`, `…"`} {
		if !strings.Contains(st.Problem, want) {
			t.Errorf("problem %q, want one with %q", st.Problem, want)
		}
	}
	if len(rep.Replicas) != 0 {
		t.Errorf("%d replicas: a refused answer gives none", len(rep.Replicas))
	}
	if peak > bound {
		t.Errorf("peak heap %d MiB, over the bound of %d MiB", peak>>20, bound>>20)
	}
}

// manyLabels is a matrix answer of one series of n labels, some 55
// bytes of JSON each.
func manyLabels(n int, at float64) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:num_requests_running"`)
	for i := range n {
		fmt.Fprintf(&b, `,"label_%07d":"%036d"`, i, i)
	}
	fmt.Fprintf(&b, `},"values":[[%.3f,"1"]]}]}}`, at)
	return b.Bytes()
}

// A server answering every query with one series of a million labels
// (55 MB of JSON) is refused as the labels arrive, not once the series
// is whole: the message says how far into that series the bound was
// passed, and the heap never holds more than the bound.
func TestOneSeriesOfAMillionLabelsIsRefusedAsItArrives(t *testing.T) {
	testutil.SkipShort(t, "answers of 55 MB of JSON")
	const bound = 256 << 20 // the default of --max-memory
	body := manyLabels(1_000_000, float64(time.Now().Unix()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	runtime.GC()
	stop := peakHeap()
	s := testSource(t, Config{URL: srv.URL, MaxMemory: bound, Timeout: time.Minute})
	rep := refreshOnce(t, s)
	peak := stop()
	st := s.Status()
	t.Logf("peak heap %.0f MiB (the answer: %.0f MB of JSON); problem: %s", float64(peak)/(1<<20), float64(len(body))/1e6, st.Problem)
	for _, want := range []string{"Prometheus's answers passed 64 MiB, their share of --max-memory 256MiB", "(at 0 series of the answer to ", " labels of the next)"} {
		if !strings.Contains(st.Problem, want) {
			t.Errorf("problem %q, want one with %q", st.Problem, want)
		}
	}
	if len(rep.Replicas) != 0 {
		t.Errorf("%d replicas: a refused answer gives none", len(rep.Replicas))
	}
	if peak > bound {
		t.Errorf("peak heap %d MiB, over the bound of %d MiB", peak>>20, bound>>20)
	}
}

// A query in a message is one line of at most shortExprRunes runes (and
// the ellipsis), its regex of names cut short, whatever vtop asked.
func TestShortExpr(t *testing.T) {
	longNames := strings.Repeat("vllm:a_long_metric_name|", 20)
	buckets := newQueries(`job="vllm"`, time.Second, grouper{}, true).buckets(30*time.Second, summarised)[0]
	tests := []struct {
		name, expr, want string
	}{
		{name: "a short selector is kept", expr: `up{job="vllm"}`, want: `up{job="vllm"}`},
		{name: "a long regex of names is cut at 40 bytes", expr: `{__name__=~"` + longNames + `", job="vllm"}[30s]`,
			want: `{__name__=~"vllm:a_long_metric_name|vllm:a_long_metr…", job="vllm"}[30s]`},
		{name: "line breaks and runs of spaces are one space", expr: "sum by (pod) (\n    up\n)", want: "sum by (pod) ( up )"},
		{name: "a terminal's escape sequence is not passed on", expr: "up\x1b[2J", want: "up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shortExpr(tt.expr); got != tt.want {
				t.Errorf("shortExpr(%q) = %q, want %q", tt.expr, got, tt.want)
			}
		})
	}
	t.Run("the buckets' query is cut to one line", func(t *testing.T) {
		got := shortExpr(buckets)
		if n := len([]rune(got)); n != shortExprRunes+1 || !strings.HasSuffix(got, "…") || strings.ContainsAny(got, "\n\t") {
			t.Errorf("shortExpr of the buckets' query (%d runes) = %q (%d runes), want one line of %d runes and an ellipsis", len(buckets), got, n, shortExprRunes)
		}
		if !strings.HasPrefix(got, "label_replace(") {
			t.Errorf("shortExpr of the buckets' query = %q, want it to begin as the query does", got)
		}
	})
}

// A stretch of the past whose every answer passes the memory budget, even
// read ten seconds at a time, is refused with what to do (the selector,
// --max-memory) and the least it was read by, not a bare "too big".
func TestPastOverItsBudgetSaysWhatToDo(t *testing.T) {
	testutil.SkipShort(t, "answers of some 30 MB of JSON, chunk after chunk")
	end := time.Now().Truncate(time.Second)
	start := end.Add(-time.Hour)
	flood := floodAnswer(100_000, float64(end.Unix()))
	targets := fmt.Sprintf(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"vllm","instance":"10.0.0.1:8000"},"values":[[%d,"1"]]}]}}`, start.Unix())
	var chunks sync.Map // the widths of the chunks asked, by the query's range
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/query_range") {
			_, _ = w.Write([]byte(targets))
			return
		}
		_ = r.ParseForm()
		if q := r.Form.Get("query"); strings.HasSuffix(q, "ms])") || strings.HasSuffix(q, "ms]") {
			chunks.Store(q[strings.LastIndex(q, "[")+1:], true)
		}
		_, _ = w.Write(flood)
	}))
	defer srv.Close()
	s := testSource(t, Config{URL: srv.URL, MaxMemory: 256 << 20, Timeout: time.Minute})
	p, err := s.Past(t.Context(), start, end)
	if err != nil {
		t.Fatal(err)
	}
	err = p.read(t.Context(), func(_, _ matrix, _, _ model.Time) error {
		t.Error("a chunk over its budget was handed on")
		return nil
	})
	if err == nil {
		t.Fatal("no error: the answers passed their budget")
	}
	for _, want := range []string{"Prometheus's answers passed 32 MiB, their share of --max-memory 256MiB", "narrow the selector", "raise --max-memory", "the stretch was read 10s at a time, the least"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q, want one with %q", err, want)
		}
	}
	if _, ok := chunks.Load("10000ms]"); !ok {
		var asked []string
		chunks.Range(func(k, _ any) bool { asked = append(asked, k.(string)); return true })
		t.Errorf("chunks asked %v: the chunk was not halved down to 10s before giving up", asked)
	}
}

// The answers' share of the default --max-memory holds what the
// documents say (README, docs/flags.md): some 290,000 series of a 30 s
// window scraped every 5 s, 110,000 scraped every second, counted as the
// decoder counts them (simulated two-engine replicas as Prometheus
// labels them).
func TestAnswerShareHoldsTheSeriesDocumented(t *testing.T) {
	testutil.SkipShort(t, "simulated windows of 290,000 and 110,000 series decoded")
	share := Config{MaxMemory: DefaultMaxMemory}.answerBudget()
	for _, tt := range []struct {
		points, atLeast int
	}{{7, 280_000}, {31, 105_000}} {
		m := simulatedWindow(t, 20, tt.points)
		b := newBudget(1 << 40)
		got, _, err := decodeMatrix(bytes.NewReader(matrixAnswer(t, m)), len(m), b)
		if err != nil || len(got) != len(m) {
			t.Fatalf("%d series, %v; want %d", len(got), err, len(m))
		}
		perSeries := float64(b.limit-b.left.Load()) / float64(len(got))
		if held := int(float64(share) / perSeries); held < tt.atLeast {
			t.Errorf("%d points a series: %.0f bytes counted each, %d series in %d MiB; the documents say %d", tt.points, perSeries, held, share>>20, tt.atLeast)
		}
	}
}
