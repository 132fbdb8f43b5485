package catalogue

import (
	"math"
	"slices"
	"testing"
	"time"
)

var nan = math.NaN()

func TestNanAdd(t *testing.T) {
	for _, c := range []struct{ a, b, want float64 }{
		{1, 2, 3},
		{nan, 2, 2},
		{1, nan, 1},
		{nan, nan, nan},
		{0, nan, 0},
	} {
		if got := NanAdd(c.a, c.b); !same(got, c.want) {
			t.Errorf("NanAdd(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestNewSampleKnowsNothing(t *testing.T) {
	at := time.Unix(100, 0)
	s := NewSample(at)
	if !s.Time.Equal(at) || !s.OK() || s.HasVLLM {
		t.Fatalf("NewSample(%v) = %+v", at, s)
	}
	for _, v := range []float64{s.KVCapacityTokens, s.ProcessStartTime, s.ProcessRSSBytes, s.GCCollections, s.HTTPRequests} {
		if !math.IsNaN(v) {
			t.Errorf("a figure of NewSample is %v, not absent", v)
		}
	}
	for _, v := range slices.Concat(s.Total.Scalars[:], s.Total.Finished[:]) {
		if !math.IsNaN(v) {
			t.Errorf("a value of NewSample's Total is %v, not absent", v)
		}
	}
}

// part is a sample with every figure absent but what set gives it.
func part(set func(*Sample)) Sample {
	s := NewSample(time.Time{})
	set(&s)
	return s
}

func scalar(k Scalar, v float64) Sample {
	return part(func(s *Sample) { s.Total.Scalars[k] = v })
}

func kv(usage, capacity float64) Sample {
	return part(func(s *Sample) { s.Total.Scalars[KVCacheUsage], s.KVCapacityTokens = usage, capacity })
}

func sum(parts ...Sample) Sample {
	var m Merge
	for i := range parts {
		m.AddSample(&parts[i])
	}
	return m.Sample()
}

// TestMergeRules holds one case per figure's rule.
func TestMergeRules(t *testing.T) {
	for _, c := range []struct {
		name   string
		parts  []Sample
		figure func(*Sample) float64
		want   float64
	}{
		{"counters sum", []Sample{scalar(PromptTokens, 10), scalar(PromptTokens, 5)}, scalarOf(PromptTokens), 15},
		{"gauges that count sum", []Sample{scalar(Running, 2), scalar(Running, 3), scalar(Running, 0)}, scalarOf(Running), 5},
		{"capacity waiting sums", []Sample{scalar(WaitingCapacity, 4), scalar(WaitingCapacity, 1)}, scalarOf(WaitingCapacity), 5},
		{"a part without the figure adds nothing", []Sample{scalar(Waiting, 7), scalar(Waiting, nan)}, scalarOf(Waiting), 7},
		{"absent in every part stays absent", []Sample{scalar(Waiting, nan), scalar(Waiting, nan)}, scalarOf(Waiting), nan},
		{"no parts: absent", nil, scalarOf(Running), nan},
		{"sleep level is the least asleep", []Sample{scalar(SleepLevel, 2), scalar(SleepLevel, 0), scalar(SleepLevel, 1)}, scalarOf(SleepLevel), 0},
		{"sleep level of all asleep", []Sample{scalar(SleepLevel, 2), scalar(SleepLevel, 1)}, scalarOf(SleepLevel), 1},
		{"sleep level of a part that says none is not awake", []Sample{scalar(SleepLevel, nan), scalar(SleepLevel, 2)}, scalarOf(SleepLevel), 2},
		{"KV usage is weighted by capacity", []Sample{kv(0.5, 1000), kv(1, 3000)}, scalarOf(KVCacheUsage), 0.875},
		{"KV usage is the plain mean when a capacity is unknown", []Sample{kv(0.5, 1000), kv(1, nan)}, scalarOf(KVCacheUsage), 0.75},
		{"KV usage over the parts that report it", []Sample{kv(0.5, 1000), kv(nan, 3000)}, scalarOf(KVCacheUsage), 0.5},
		{"KV usage absent everywhere", []Sample{kv(nan, 1000), kv(nan, nan)}, scalarOf(KVCacheUsage), nan},
		{"finish reasons sum", []Sample{finished(FinishStop, 3), finished(FinishStop, 4), finished(FinishAbort, 1)}, finishedOf(FinishStop), 7},
		{"a finish reason one part lacks", []Sample{finished(FinishStop, 3), finished(FinishAbort, 1)}, finishedOf(FinishAbort), 1},
		{"draft positions add by position", []Sample{positions(1, 2), positions(10)}, positionOf(0), 11},
		{"a draft position one part lacks", []Sample{positions(1, 2), positions(10)}, positionOf(1), 2},
		{"an absent draft position adds nothing", []Sample{positions(1, nan), positions(10, 20)}, positionOf(1), 20},
		{"KV capacity sums", []Sample{kv(nan, 1000), kv(nan, 3000), kv(nan, nan)}, func(s *Sample) float64 { return s.KVCapacityTokens }, 4000},
		{"resident memory sums", []Sample{part(func(s *Sample) { s.ProcessRSSBytes = 5 }), part(func(s *Sample) { s.ProcessRSSBytes = 6 })}, func(s *Sample) float64 { return s.ProcessRSSBytes }, 11},
		{"GC collections sum", []Sample{part(func(s *Sample) { s.GCCollections = 5 }), part(func(s *Sample) { s.GCCollections = 6 })}, func(s *Sample) float64 { return s.GCCollections }, 11},
		{"HTTP requests sum", []Sample{part(func(s *Sample) { s.HTTPRequests = 5 }), part(func(s *Sample) { s.HTTPRequests = nan })}, func(s *Sample) float64 { return s.HTTPRequests }, 5},
		{"process start is the latest", []Sample{part(func(s *Sample) { s.ProcessStartTime = 200 }), part(func(s *Sample) { s.ProcessStartTime = 300 }), part(func(s *Sample) { s.ProcessStartTime = nan })}, func(s *Sample) float64 { return s.ProcessStartTime }, 300},
		{"histogram counts add on equal bounds", []Sample{histogram([]float64{1, 2}, 3, 5), histogram([]float64{1, 2}, 1, 2)}, countOf(1), 7},
		{"histogram _sum adds", []Sample{histogram([]float64{1, 2}, 3, 5), histogram([]float64{1, 2}, 1, 2)}, func(s *Sample) float64 { return s.Total.Histograms[TTFT].Sum }, 20},
		{"histogram _count adds", []Sample{histogram([]float64{1, 2}, 3, 5), histogram([]float64{1, 2}, 1, 2)}, func(s *Sample) float64 { return s.Total.Histograms[TTFT].Count }, 7},
		{"an absent bucket count adds nothing", []Sample{histogram([]float64{1, 2}, nan, 5), histogram([]float64{1, 2}, 1, 2)}, countOf(0), 1},
		{"histograms on unlike bounds are not added", []Sample{histogram([]float64{1, 2}, 3, 5), histogram([]float64{1, 4}, 1, 2)}, countOf(1), 5},
	} {
		got := sum(c.parts...)
		if v := c.figure(&got); !same(v, c.want) {
			t.Errorf("%s: %v, want %v", c.name, v, c.want)
		}
	}
}

func scalarOf(k Scalar) func(*Sample) float64 {
	return func(s *Sample) float64 { return s.Total.Scalars[k] }
}

func finished(r FinishReason, v float64) Sample {
	return part(func(s *Sample) { s.Total.Finished[r] = v })
}

func finishedOf(r FinishReason) func(*Sample) float64 {
	return func(s *Sample) float64 { return s.Total.Finished[r] }
}

func positions(vs ...float64) Sample {
	return part(func(s *Sample) { s.Total.SpecAcceptedPerPos = vs })
}

func positionOf(p int) func(*Sample) float64 {
	return func(s *Sample) float64 {
		if p >= len(s.Total.SpecAcceptedPerPos) {
			return -1
		}
		return s.Total.SpecAcceptedPerPos[p]
	}
}

// histogram is a TTFT histogram of those counts, its _sum 10 and its
// _count the last count.
func histogram(bounds []float64, counts ...float64) Sample {
	return part(func(s *Sample) {
		s.Total.Histograms[TTFT] = Buckets{Bounds: bounds, Counts: counts, Sum: 10, Count: counts[len(counts)-1]}
	})
}

func countOf(i int) func(*Sample) float64 {
	return func(s *Sample) float64 { return s.Total.Histograms[TTFT].Counts[i] }
}

func TestMergeRefusesUnlikeBounds(t *testing.T) {
	a, b, c := histogram([]float64{1, 2}, 3, 5), histogram([]float64{1, 4}, 1, 2), histogram([]float64{1, 2}, 1, 1)
	var m Merge
	if r := m.AddSample(&a); r != 0 {
		t.Errorf("the first part is refused %b", r)
	}
	if r := m.AddSample(&b); !r.Has(TTFT) || r&^(1<<TTFT) != 0 {
		t.Errorf("a part on other bounds: refused %b, want TTFT only", r)
	}
	if r := m.AddSample(&c); r != 0 {
		t.Errorf("a part on the same bounds is refused %b", r)
	}
	got := m.Sample().Total.Histograms[TTFT]
	if !slices.Equal(got.Bounds, []float64{1, 2}) || !slices.Equal(got.Counts, []float64{4, 6}) || got.Count != 6 {
		t.Errorf("sum %+v, want the first and third parts'", got)
	}
	if !slices.Equal(a.Total.Histograms[TTFT].Counts, []float64{3, 5}) {
		t.Errorf("the merge changed a part's counts: %v", a.Total.Histograms[TTFT].Counts)
	}
}

func TestBucketsAdd(t *testing.T) {
	bounds := []float64{1, 2}
	for _, c := range []struct {
		name     string
		dst, src Buckets
		ok       bool
		want     Buckets
	}{
		{"into absent takes src", Buckets{}, Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}, true,
			Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}},
		{"absent src adds nothing", Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}, Buckets{}, true,
			Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}},
		{"equal bounds add", Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}, Buckets{Bounds: []float64{1, 2}, Counts: []float64{1, 1}, Sum: nan, Count: 1}, true,
			Buckets{Bounds: bounds, Counts: []float64{2, 3}, Sum: 3, Count: 3}},
		{"other bounds are refused", Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}, Buckets{Bounds: []float64{1, 3}, Counts: []float64{1, 1}, Sum: 1, Count: 1}, false,
			Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}},
		{"more bounds are refused", Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}, Buckets{Bounds: []float64{1, 2, 3}, Counts: []float64{1, 1, 1}, Sum: 1, Count: 1}, false,
			Buckets{Bounds: bounds, Counts: []float64{1, 2}, Sum: 3, Count: 2}},
	} {
		dst := c.dst
		if ok := dst.Add(c.src); ok != c.ok {
			t.Errorf("%s: Add = %v, want %v", c.name, ok, c.ok)
		}
		if !slices.Equal(dst.Bounds, c.want.Bounds) || !slices.Equal(dst.Counts, c.want.Counts) || !same(dst.Sum, c.want.Sum) || !same(dst.Count, c.want.Count) {
			t.Errorf("%s: %+v, want %+v", c.name, dst, c.want)
		}
	}
}

func TestMergeDescription(t *testing.T) {
	sidecar := part(func(s *Sample) { s.ProcessRSSBytes = 1; s.Derived.Add(ScalarFigure(PromptTokens)) })
	server := part(func(s *Sample) {
		s.HasVLLM, s.Model, s.EngineKind, s.Role = true, "m", EngineSGLang, RolePrefill
		s.Derived.Add(ScalarFigure(Running))
	})
	other := part(func(s *Sample) { s.HasVLLM, s.Model = true, "other" })
	got := sum(sidecar, server, other)
	if !got.HasVLLM || got.Model != "m" || got.EngineKind != EngineSGLang || got.Role != RolePrefill {
		t.Errorf("description %+v, want the first engine part's", got)
	}
	if !got.Derived.Has(ScalarFigure(PromptTokens)) || !got.Derived.Has(ScalarFigure(Running)) {
		t.Errorf("derived %b, want every part's", got.Derived)
	}
}

// The engines of a page know no capacity of their own: KV usage is their
// plain mean.
func TestMergeSeries(t *testing.T) {
	a, b := NewSeries(), NewSeries()
	a.Scalars[KVCacheUsage], b.Scalars[KVCacheUsage] = 0.2, 0.4
	a.Scalars[Running], b.Scalars[Running] = 1, 2
	var m Merge
	m.Add(&a)
	m.Add(&b)
	got := m.Series()
	if !same(got.Scalars[KVCacheUsage], 0.3) || got.Scalars[Running] != 3 {
		t.Errorf("KV usage %v, running %v; want 0.3 and 3", got.Scalars[KVCacheUsage], got.Scalars[Running])
	}
}

// same reports whether a and b are equal to 1e-12, or both NaN.
func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-12
}
