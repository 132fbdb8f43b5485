package promsource

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/analysis"
)

// pts are points at t0 plus the given seconds, valued by their time.
func pts(secs ...float64) []model.SamplePair {
	out := make([]model.SamplePair, len(secs))
	for i, s := range secs {
		t := t0.Add(time.Duration(s * float64(time.Second)))
		out[i] = model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(s)}
	}
	return out
}

// secsOf is the inverse of pts.
func secsOf(ps []model.SamplePair) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = float64(p.Value)
	}
	return out
}

func stream(name string, ps []model.SamplePair) *sampleStream {
	return &sampleStream{Metric: labelsOf(model.Metric{"__name__": model.LabelValue(name), "instance": "a:8000"}), Values: ps}
}

// An increment adds what is new, keeps what is held, drops what left the
// window, and ends up with exactly the samples a read of the whole window
// would have returned.
func TestRawWindowMerge(t *testing.T) {
	const width = 10 * time.Second
	tests := []struct {
		name  string
		held  map[string][]float64 // the full read at t0
		at    float64              // the increment's evaluation, seconds after t0
		add   map[string][]float64
		again map[string][]float64 // the recheck's part, read with add
		want  map[string][]float64
		full  bool
		added map[string]float64 // the oldest sample added to each series, seconds after t0
	}{
		{
			name: "new samples appended, overlap deduplicated, old ones dropped",
			held: map[string][]float64{"x": {-9, -8, -6, -4, -2, 0}},
			at:   3, add: map[string][]float64{"x": {-2, 0, 1, 3}},
			want:  map[string][]float64{"x": {-6, -4, -2, 0, 1, 3}},
			added: map[string]float64{"x": 1},
		},
		{
			name: "a sample that arrived late, between two held ones, goes in its place",
			held: map[string][]float64{"x": {-4, -2, 0}},
			at:   2, add: map[string][]float64{"x": {-1, 2}},
			want:  map[string][]float64{"x": {-4, -2, -1, 0, 2}},
			added: map[string]float64{"x": -1},
		},
		{
			name: "the left edge is in (the window is closed)",
			held: map[string][]float64{"x": {-9.5, -9, -7, -5}},
			at:   1, add: map[string][]float64{"x": {1}},
			want:  map[string][]float64{"x": {-9, -7, -5, 1}},
			added: map[string]float64{"x": 1},
		},
		{
			name: "a new series starts with its increment; a series whose samples all left the window is gone",
			held: map[string][]float64{"x": {-9, -8}, "y": {-1, 0}},
			at:   5, add: map[string][]float64{"y": {4}, "z": {3, 4}},
			want:  map[string][]float64{"y": {-1, 0, 4}, "z": {3, 4}},
			added: map[string]float64{"y": 4, "z": 3},
		},
		{
			name: "the recheck brings a sample the increment's margin missed, and the earlier samples of a series the increment called new",
			held: map[string][]float64{"x": {-8, -6, -2, 0}},
			at:   2, add: map[string][]float64{"x": {0, 2}, "z": {1, 2}},
			again: map[string][]float64{"x": {-8, -6, -4, -2, 0, 2}, "z": {-3, 1, 2}},
			want:  map[string][]float64{"x": {-8, -6, -4, -2, 0, 2}, "z": {-3, 1, 2}},
			added: map[string]float64{"x": -4, "z": -3},
		},
		{
			name: "a full read replaces everything",
			held: map[string][]float64{"x": {-3, -1}, "y": {-2}},
			at:   1, add: map[string][]float64{"x": {-8, 1}}, full: true,
			want:  map[string][]float64{"x": {-8, 1}},
			added: map[string]float64{},
		},
	}
	for _, tt := range tests {
		var w rawWindow
		w.merge(matrixOf(tt.held), t0, width, true)
		at := t0.Add(time.Duration(tt.at * float64(time.Second)))
		w.merge(append(matrixOf(tt.add), matrixOf(tt.again)...), at, width, tt.full)
		got := map[string][]float64{}
		m, added := w.matrix()
		gotAdded := map[string]float64{}
		for i, s := range m {
			got[string(s.Metric.get("__name__"))] = secsOf(s.Values)
			if added != nil && added[i] != noneAdded {
				gotAdded[string(s.Metric.get("__name__"))] = float64(added[i]-model.TimeFromUnixNano(t0.UnixNano())) / 1000
			}
		}
		if (added == nil) != tt.full || !maps.Equal(gotAdded, tt.added) {
			t.Errorf("%s: added %v (nil %v), want %v", tt.name, gotAdded, added == nil, tt.added)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: series %v, want %v", tt.name, got, tt.want)
			continue
		}
		for name, want := range tt.want {
			if !slices.Equal(got[name], want) {
				t.Errorf("%s: %s holds %v, want %v", tt.name, name, got[name], want)
			}
		}
	}
}

func matrixOf(series map[string][]float64) matrix {
	var m matrix
	for name, secs := range series {
		m = append(m, stream(name, pts(secs...)))
	}
	return m
}

// The raw query reads the whole window when it must and otherwise only
// since the last evaluation, with a margin of two scrape intervals (at
// least minMargin), and further back by what the newest samples trail the
// evaluation beyond one scrape interval.
func TestRawWindowRange(t *testing.T) {
	const width = 30 * time.Second
	tests := []struct {
		name      string
		scrape    float64 // seconds between the held samples; 0: nothing held
		lag       float64 // seconds the newest held sample trails the evaluation
		after     time.Duration
		width     time.Duration
		wantRange time.Duration
		wantFull  bool
	}{
		{"nothing held", 0, 0, 5 * time.Second, width, width, true},
		{"1 s scrapes, 5 s later", 1, 0, 5 * time.Second, width, 7 * time.Second, false},
		{"5 s scrapes, 5 s later", 5, 0, 5 * time.Second, width, 15 * time.Second, false},
		{"15 s scrapes: the margin reaches the window", 15, 0, 5 * time.Second, width, width, true},
		{"1 s scrapes answered 8 s late (remote write): the lag beyond a scrape is added", 1, 8, 5 * time.Second, width, 14 * time.Second, false},
		{"a wider window", 1, 0, 5 * time.Second, time.Minute, time.Minute, true},
		{"the clock went back", 1, 0, -time.Second, width, width, true},
	}
	for _, tt := range tests {
		var w rawWindow
		if tt.scrape > 0 {
			var secs []float64
			for s := -25.0; s <= -tt.lag; s += tt.scrape {
				secs = append(secs, s)
			}
			w.merge(matrix{stream("x", pts(secs...))}, t0, width, true)
		}
		r, full := w.rangeFor(t0.Add(tt.after), tt.width)
		if r != tt.wantRange || full != tt.wantFull {
			t.Errorf("%s: range %s full %v, want %s %v", tt.name, r, full, tt.wantRange, tt.wantFull)
		}
	}
}

// Once the window is held, refreshes stay increments however long they go
// on, each re-reading the next part of the series over the whole window:
// every part within recheckEvery, from the first again after a whole read.
func TestRecheckInTurn(t *testing.T) {
	for _, tt := range []struct {
		interval time.Duration
		parts    int
	}{
		{time.Second, maxRecheckParts}, {5 * time.Second, 12}, {10 * time.Second, 6},
		{25 * time.Second, 2}, {30 * time.Second, 2}, {time.Minute, 2}, {5 * time.Minute, 2},
	} {
		if got := recheckParts(tt.interval); got != tt.parts {
			t.Errorf("refreshes %s apart: %d parts, want %d", tt.interval, got, tt.parts)
		}
	}
	const width, interval = 30 * time.Second, 5 * time.Second
	parts := recheckParts(interval)
	var w rawWindow
	var secs []float64
	for s := -29.0; s <= 0; s++ {
		secs = append(secs, s)
	}
	w.merge(matrix{stream("x", pts(secs...))}, t0, width, true)
	at := t0
	for i := range 2*parts + 1 {
		at = at.Add(interval)
		r, full := w.rangeFor(at, width)
		if full || r != 7*time.Second {
			t.Fatalf("refresh %d, %s after the whole read: range %s, whole %v; want an increment of 7s", i+1, at.Sub(t0), r, full)
		}
		if got := w.nextRecheck(parts); got != i%parts {
			t.Errorf("refresh %d re-reads part %d, want %d", i+1, got, i%parts)
		}
		end := at.Sub(t0).Seconds()
		w.merge(matrix{stream("x", pts(end-4, end-3, end-2, end-1, end))}, at, width, false)
	}
	w.merge(matrix{stream("x", pts(secs...))}, at, width, true)
	if got := w.nextRecheck(parts); got != 0 {
		t.Errorf("after a whole read the recheck resumes at part %d, want 0", got)
	}
}

// An evaluation time whose window would start exactly on a held sample is
// moved back a millisecond at a time, so that Prometheus's closed (before
// 3.0) and left-open (3.0 on) windows select the same samples.
func TestAvoidEdge(t *testing.T) {
	const width = 10 * time.Second
	var w rawWindow
	if got := w.avoidEdge(t0, width); !got.Equal(t0) {
		t.Errorf("nothing held: %v, want %v", got, t0)
	}
	// Samples at -10 s and 1 ms after it: t0 and t0+1ms both put one on
	// the edge.
	held := pts(-10, -9.999, -5, 0)
	w.merge(matrix{stream("x", held)}, t0, time.Minute, true)
	tests := []struct {
		at, want time.Time
	}{
		{t0.Add(time.Millisecond), t0.Add(-time.Millisecond)},
		{t0, t0.Add(-time.Millisecond)},
		{t0.Add(2 * time.Millisecond), t0.Add(2 * time.Millisecond)},
		{t0.Add(5 * time.Second), t0.Add(5*time.Second - time.Millisecond)},
	}
	for _, tt := range tests {
		if got := w.avoidEdge(tt.at, width); !got.Equal(tt.want) {
			t.Errorf("at %v: %v, want %v", tt.at.Sub(t0), got.Sub(t0), tt.want.Sub(t0))
		}
	}
}

// The raw read's own decoder gives what the query client gives for the
// same answer: labels (escapes too), millisecond times, NaN and
// infinities, warnings.
func TestDecodeMatrixMatchesTheClient(t *testing.T) {
	want := model.Matrix{
		{Metric: model.Metric{"__name__": "vllm:num_requests_running", "instance": "a:8000"}, Values: pts(-2.5, -1.001, 0)},
		{Metric: model.Metric{"__name__": "vllm:e2e_request_latency_seconds_bucket", "le": "+Inf", "model_name": "a \"quoted\"\nmodel ünïcode"},
			Values: []model.SamplePair{{Timestamp: 1733030000123, Value: model.SampleValue(math.NaN())}, {Timestamp: 1733030001000, Value: model.SampleValue(math.Inf(1))}, {Timestamp: 1733030002007, Value: -0.25}}},
	}
	result, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"status":"success","data":{"resultType":"matrix","result":` + string(result) + `},"warnings":["w1"],"infos":["i"]}`
	got, warns, err := decodeMatrix(strings.NewReader(body), DefaultMaxSeries, nil)
	if err != nil {
		t.Fatal(err)
	}
	var client model.Matrix
	if err := json.Unmarshal(result, &client); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(client) || !slices.Equal(warns, []string{"w1"}) {
		t.Fatalf("%d series, warnings %q; want %d, [w1]", len(got), warns, len(client))
	}
	for i := range client {
		if !got[i].Metric.metric().Equal(client[i].Metric) || len(got[i].Values) != len(client[i].Values) {
			t.Errorf("series %d: %v, want %v", i, got[i], client[i])
			continue
		}
		for j, p := range client[i].Values {
			if !p.Equal(&got[i].Values[j]) {
				t.Errorf("series %d point %d: %v, want %v", i, j, got[i].Values[j], p)
			}
		}
	}
}

// The series cap is checked as the answer arrives: an answer with more
// series than the cap is refused, whatever follows the series over it.
func TestDecodeMatrixCapsSeries(t *testing.T) {
	three, err := json.Marshal(matrix{stream("a", pts(0)), stream("b", pts(0)), stream("c", pts(0))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		result    string
		maxSeries int
		want      int // series; -1: refused
	}{
		{"under the cap", string(three), 4, 3},
		{"at the cap", string(three), 3, 3},
		{"over the cap", string(three), 2, -1},
		// The decoder stops at the third series: what follows is not read.
		{"over the cap, then garbage", strings.TrimSuffix(string(three), "]") + `,{"metric":`, 2, -1},
	}
	for _, tt := range tests {
		body := `{"status":"success","data":{"resultType":"matrix","result":` + tt.result + `}}`
		got, _, err := decodeMatrix(strings.NewReader(body), tt.maxSeries, nil)
		switch {
		case tt.want < 0 && !errors.Is(err, errTooManySeries):
			t.Errorf("%s: %d series, error %v; want errTooManySeries", tt.name, len(got), err)
		case tt.want >= 0 && (err != nil || len(got) != tt.want):
			t.Errorf("%s: %d series, error %v; want %d", tt.name, len(got), err, tt.want)
		}
	}
}

// Building only what an increment added gives the very samples a build of
// the whole window gives: in the steady state, after a scrape that landed
// late, and when a bucket bound appears.
func TestIncrementalBuildEqualsWhole(t *testing.T) {
	const width = 10 * time.Second
	// fleetAt is two replicas' raw series with a sample every second from
	// -20 s to last (seconds after t0); the newest of b's TTFT series is
	// missing when lateB (as if they came from a second target of b whose
	// scrape lands late), and a's TTFT gains a bucket at 0.3 from newBound
	// on.
	fleetAt := func(last, newBound float64, lateB bool) model.Matrix {
		var m model.Matrix
		for _, inst := range []string{"a:8000", "b:8000"} {
			add := func(name string, extra map[string]string, value func(s float64) float64, from float64) {
				var secs []float64
				for s := -20.0; s <= last; s++ {
					if lateB && inst == "b:8000" && strings.Contains(name, "time_to_first_token") && s == last {
						continue
					}
					secs = append(secs, s)
				}
				labels := map[string]string{"__name__": name, "instance": inst, "job": "vllm", "model_name": "m"}
				maps.Copy(labels, extra)
				ss := &model.SampleStream{Metric: model.Metric{}}
				for k, v := range labels {
					ss.Metric[model.LabelName(k)] = model.LabelValue(v)
				}
				for _, p := range pts(secs...) {
					s := float64(p.Value)
					if s >= from {
						ss.Values = append(ss.Values, model.SamplePair{Timestamp: p.Timestamp, Value: model.SampleValue(value(s))})
					}
				}
				m = append(m, ss)
			}
			add("vllm:num_requests_running", nil, func(s float64) float64 { return 10 + s }, -20)
			add("vllm:generation_tokens_total", nil, func(s float64) float64 { return 1000 + 50*(s+20) }, -20)
			add("vllm:request_success_total", map[string]string{"finished_reason": "stop"}, func(s float64) float64 { return 3 * (s + 20) }, -20)
			for _, le := range []string{"0.1", "1", "+Inf"} {
				add("vllm:time_to_first_token_seconds_bucket", map[string]string{"le": le}, func(s float64) float64 { return 2 * (s + 20) }, -20)
			}
			if inst == "a:8000" {
				add("vllm:time_to_first_token_seconds_bucket", map[string]string{"le": "0.3"}, func(s float64) float64 { return s + 20 }, newBound)
			}
			add("vllm:time_to_first_token_seconds_count", nil, func(s float64) float64 { return 2 * (s + 20) }, -20)
			add("vllm:time_to_first_token_seconds_sum", nil, func(s float64) float64 { return 0.2 * (s + 20) }, -20)
		}
		return m
	}
	secs := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	steps := []struct {
		name     string
		at       float64
		newBound float64
		lateB    bool
	}{
		{"the first read", 0, 99, false},
		{"an increment", 3, 99, true},
		{"b's scrape at 3 s lands late", 5, 99, false},
		{"an increment", 7, 99, false},
		{"a's TTFT gains a bound", 9, 8, false},
		{"an increment", 12, 8, false},
	}
	inc := testSource(t, Config{})
	for i, st := range steps {
		at := secs(st.at)
		window := fleetAt(st.at, st.newBound, st.lateB)
		// The increment: what the window holds since 3 s before the
		// previous step (the margin), as Prometheus would answer.
		read, full := window, i == 0
		if !full {
			read = nil
			for _, ss := range window {
				var recent []model.SamplePair
				for _, p := range ss.Values {
					if p.Timestamp.Time().After(secs(steps[i-1].at - 3)) {
						recent = append(recent, p)
					}
				}
				read = append(read, &model.SampleStream{Metric: ss.Metric, Values: recent})
			}
		}
		inc.raw.merge(decodedOf(read), at, width, full)
		f := fetched{}
		f.raw, f.added = inc.raw.matrix()
		inc.apply(at, width, f)

		whole := testSource(t, Config{})
		whole.raw.merge(decodedOf(window), at, width, true)
		g := fetched{}
		g.raw, g.added = whole.raw.matrix()
		whole.apply(at, width, g)

		if got, want := fmt.Sprintf("%+v", inc.snapshot()), fmt.Sprintf("%+v", whole.snapshot()); got != want {
			t.Errorf("step %d (%s): the increment's build differs from the whole window's:\n%s\nwant\n%s", i, st.name, got, want)
		}
	}
}

// laggingStore answers range selectors of every query as a store fed by
// remote write would: a counter scraped every second, each sample
// answered only lag after its time, and none after stop (Unix seconds;
// 0: it goes on).
type laggingStore struct {
	lag  time.Duration
	stop atomic.Int64
}

func (l *laggingStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form.Get("query")
	at, _ := strconv.ParseFloat(r.Form.Get("time"), 64)
	ms, _ := strconv.ParseFloat(q[strings.LastIndex(q, "[")+1:strings.LastIndex(q, "ms]")], 64)
	name, newest := "vllm:generation_tokens_total", at-l.lag.Seconds()
	if strings.HasPrefix(q, "up") {
		name = "up"
	}
	if stop := float64(l.stop.Load()); stop > 0 {
		newest = min(newest, stop)
	}
	var values []string
	for ts := math.Floor(at-ms/1000) + 1; ts <= newest; ts++ {
		values = append(values, fmt.Sprintf(`[%.3f,"%g"]`, ts, ts-1e9))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":%q,"instance":"a:8000","job":"vllm"},"values":[%s]}]}}`,
		name, strings.Join(values, ","))
}

// A store that answers samples 8 s after their time (more than the
// margin of two 1 s scrapes): every increment still reaches back to where
// the samples held end, so the window holds exactly what a whole read
// gives, and the replica stays up with its rate. When its samples stop,
// the replica is DOWN as soon as the lateness, measured while samples
// still came, and its own staleness allow.
func TestIncrementsReachBackOverALaggingStore(t *testing.T) {
	const lag, width, interval = 8 * time.Second, 30 * time.Second, 5 * time.Second
	store := &laggingStore{lag: lag}
	srv := httptest.NewServer(store)
	defer srv.Close()
	clock := t0.Add(time.Hour)
	s := testSource(t, Config{URL: srv.URL, Window: width, Interval: interval, Now: func() time.Time { return clock }})
	for i := range 12 {
		rep := refreshOnce(t, s)
		if i > 0 && s.Stats().FullReads != 1 {
			t.Fatalf("refresh %d read the window whole", i+1)
		}
		var held []model.SamplePair
		for _, ss := range s.raw.series {
			held = ss.Values
		}
		at := s.Now()
		want := int(at.Add(-lag).Sub(at.Add(-width)).Seconds()) // what a whole read gives
		if len(held) < want-1 || len(held) > want+1 {
			t.Errorf("refresh %d: %d samples held, a whole read gives %d", i+1, len(held), want)
		}
		if len(rep.Replicas) != 1 {
			t.Fatalf("refresh %d: %d replicas, want 1", i+1, len(rep.Replicas))
		}
		if r := rep.Replicas[0]; r.State == analysis.StateDown || !r.Figures.GenerationTokensPerSecond.Known() {
			t.Errorf("refresh %d: %s (%q), generation %v; want the replica up with its token rate", i+1, r.State, r.Error, r.Figures.GenerationTokensPerSecond)
		}
		clock = clock.Add(interval)
	}
	stopped := s.Now().Add(-lag).Unix()
	store.stop.Store(stopped)
	// Stale after 3 scrapes and a refresh (8 s) plus the lateness (7 s)
	// since the last sample: the refreshes after come 14 s and 19 s
	// after it, so the second is DOWN.
	for i := range 4 {
		rep := refreshOnce(t, s)
		down := rep.Replicas[0].State == analysis.StateDown
		if down != (i >= 1) {
			t.Errorf("refresh %d after the samples stopped (%s after the last): DOWN %v (%q)", i+1, s.Now().Sub(time.Unix(stopped, 0)), down, rep.Replicas[0].Error)
		}
		clock = clock.Add(interval)
	}
}
