package compare

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/sim"
)

// The fleet's sum is the catalogue's: a fleet with one replica awake is
// awake (the sleep level is not summed), and a replica whose buckets
// differ from the others' is left out of that histogram and named.
func TestSumOfReplicas(t *testing.T) {
	replica := func(sleep float64, bounds, counts []float64) *catalogue.Sample {
		s := catalogue.NewSample(time.Time{})
		s.HasVLLM = true
		s.Total.Scalars[catalogue.SleepLevel] = sleep
		s.Total.Scalars[catalogue.Running] = 2
		s.Total.Histograms[catalogue.TTFT] = catalogue.Buckets{Bounds: bounds, Counts: counts, Sum: 1, Count: counts[len(counts)-1]}
		return &s
	}
	targets := []record.Target{{Name: "a:8000"}, {Name: "b:8000"}, {Name: "c:8000"}}
	at := time.Unix(1000, 0)
	got := sum(at, []*catalogue.Sample{
		replica(1, []float64{1, 2}, []float64{3, 5}),
		replica(0, []float64{1, 4}, []float64{1, 2}),
		replica(1, []float64{1, 2}, []float64{1, 1}),
	}, targets)
	if !got.Time.Equal(at) || !got.HasVLLM {
		t.Errorf("time %v, vLLM %v; want %v, true", got.Time, got.HasVLLM, at)
	}
	if v := got.Total.Scalars[catalogue.SleepLevel]; v != 0 {
		t.Errorf("sleep level %v, want 0: b:8000 is awake", v)
	}
	if v := got.Total.Scalars[catalogue.Running]; v != 6 {
		t.Errorf("running %v, want 6", v)
	}
	if b := got.Total.Histograms[catalogue.TTFT]; !slices.Equal(b.Counts, []float64{4, 6}) {
		t.Errorf("TTFT counts %v, want a:8000's and c:8000's summed", b.Counts)
	}
	if len(got.Warnings) != 1 || !strings.HasPrefix(got.Warnings[0], "b:8000: buckets of") {
		t.Errorf("warnings %q, want one naming b:8000", got.Warnings)
	}
}

// What a side's sum left out is said under the figures, by side.
func TestTextSaysWhatTheSumLeftOut(t *testing.T) {
	var buf strings.Builder
	r := Result{Baseline: Side{Name: "before"}, Candidate: Side{Name: "after", Warnings: []string{"b:8000: buckets of ttft unlike"}}}
	if err := r.Text(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "warning: after: b:8000: buckets of ttft unlike\n") {
		t.Errorf("text %q does not say the candidate's warning", buf.String())
	}
}

// A target that never answered in the part compared is left out of the
// sum, and said: the recording of a fleet with one dead replica compares
// (with itself too) instead of holding "fewer than two readings".
func TestDeadTargetLeftOut(t *testing.T) {
	dead := scrape.Target{Name: "10.0.0.9:8000", URL: "http://10.0.0.9:8000/metrics"}
	rec := simRecordingWith(t, func(*sim.ReplicaConfig) {}, 60*time.Second, []scrape.Target{dead})
	res, err := Compare(rec, rec, "b.vtrec", "b.vtrec", Options{})
	if err != nil {
		t.Fatalf("compare of a recording with itself: %v", err)
	}
	want := "10.0.0.9:8000: no good scrape in the part compared; left out of the sum"
	if !slices.Contains(res.Baseline.Warnings, want) {
		t.Errorf("warnings %q, want %q", res.Baseline.Warnings, want)
	}
	if res.Baseline.Replicas != 1 {
		t.Errorf("%d replicas, want the 1 that answered", res.Baseline.Replicas)
	}
	if !res.Baseline.RequestsPerSecond.Known() || res.Baseline.RequestsPerSecond != res.Candidate.RequestsPerSecond {
		t.Errorf("req/s %v and %v, want the live replica's, alike", res.Baseline.RequestsPerSecond, res.Candidate.RequestsPerSecond)
	}
}
