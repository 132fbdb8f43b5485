package scrape

import (
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// at is the sample taken i seconds in: its time tells which it is.
func at(i int) catalogue.Sample {
	return catalogue.Sample{Time: time.Unix(int64(i), 0), Backends: []string{"b"}}
}

// seconds lists which samples a slice holds.
func seconds(ss []catalogue.Sample) []int64 {
	out := make([]int64, len(ss))
	for i, s := range ss {
		out[i] = s.Time.Unix()
	}
	return out
}

// wantSeconds checks that ss holds the samples from first to last.
func wantSeconds(t *testing.T, what string, ss []catalogue.Sample, first, last int) {
	t.Helper()
	got := seconds(ss)
	ok := len(got) == last-first+1
	for i := 0; ok && i < len(got); i++ {
		ok = got[i] == int64(first+i)
	}
	if !ok {
		t.Errorf("%s: samples %v, want %d to %d", what, got, first, last)
	}
}

// A window keeps the newest samples up to its capacity, oldest first,
// however its pushes and views interleave.
func TestSampleWindowKeepsTheNewest(t *testing.T) {
	for _, every := range []int{1, 2, 3, windowSlack, windowSlack + 1, 7, 1000} {
		w := newSampleWindow(5)
		for i := 1; i <= 40; i++ {
			w.Push(at(i))
			if w.Len() != min(i, 5) {
				t.Fatalf("viewed every %d pushes: Len %d after %d pushes", every, w.Len(), i)
			}
			if i%every == 0 || i == 40 {
				wantSeconds(t, "view", w.View(), max(1, i-4), i)
			}
		}
		if w.Cap() != 5 {
			t.Errorf("Cap %d", w.Cap())
		}
	}
	if w := newSampleWindow(0); w.Cap() != 1 || len(w.View()) != 0 {
		t.Errorf("capacity 0: Cap %d, %d samples", w.Cap(), len(w.View()))
	}
}

// A view lent to the analysis stays as it was while the poller pushes on,
// past the window's slack and its capacity, until the next view.
func TestSampleWindowViewStaysUntilTheNext(t *testing.T) {
	w := newSampleWindow(5)
	for i := 1; i <= 7; i++ {
		w.Push(at(i))
	}
	view := w.View()
	wantSeconds(t, "first view", view, 3, 7)
	for i := 8; i <= 30; i++ {
		w.Push(at(i))
		wantSeconds(t, "lent view", view, 3, 7)
	}
	wantSeconds(t, "next view", w.View(), 26, 30)
	w.Grow(8)
	wantSeconds(t, "after Grow", w.View(), 26, 30)
	for i := 31; i <= 35; i++ {
		w.Push(at(i))
	}
	wantSeconds(t, "grown", w.View(), 28, 35)
	if w.Cap() != 8 {
		t.Errorf("Cap %d after Grow(8)", w.Cap())
	}
	w.Grow(3)
	if w.Cap() != 8 {
		t.Errorf("Grow(3) shrank the window to %d", w.Cap())
	}
}

// The samples a window drops do not stay behind in its buffer once a view
// has moved the values: their histograms would stay alive with them.
func TestSampleWindowClearsWhatItDrops(t *testing.T) {
	w := newSampleWindow(3)
	for i := 1; i <= 6; i++ {
		w.Push(at(i))
		w.View()
	}
	for i := 1; i <= 20; i++ {
		w.Push(at(i))
	}
	view := w.View()
	for i, s := range w.buf[len(view):] {
		if s.Backends != nil || !s.Time.IsZero() {
			t.Errorf("slot %d past the view holds sample %d", len(view)+i, s.Time.Unix())
		}
	}
}

// A sample is marked rising against the newest good sample before it,
// failed ones skipped, even when that sample is the oldest still kept.
func TestSampleWindowMarksAgainstTheLastGood(t *testing.T) {
	bounds := []float64{1, 2}
	withCounts := func(i int, counts ...float64) catalogue.Sample {
		s := at(i)
		s.Total = catalogue.NewSeries()
		s.Total.Histograms[catalogue.TTFT] = catalogue.Buckets{Bounds: bounds, Counts: counts}
		return s
	}
	failed := func(i int) catalogue.Sample {
		s := at(i)
		s.Err = "connection refused"
		return s
	}
	cases := []struct {
		name   string
		pushes []catalogue.Sample
		rising bool
	}{
		{"first sample", []catalogue.Sample{withCounts(1, 1, 2)}, false},
		{"after a good one", []catalogue.Sample{withCounts(1, 1, 2), withCounts(2, 1, 3)}, true},
		{"after a drop", []catalogue.Sample{withCounts(1, 1, 2), withCounts(2, 0, 3)}, false},
		{"failures in between", []catalogue.Sample{withCounts(1, 1, 2), failed(2), failed(3), withCounts(4, 2, 2)}, true},
		// The failures hide no reading that dropped: the mark is against
		// the good sample before them, whose counts (5) are above sample 3's.
		{"a drop across failures", []catalogue.Sample{withCounts(1, 5, 5), failed(2), withCounts(3, 1, 1)}, false},
		{"only failures before", []catalogue.Sample{failed(1), failed(2), withCounts(3, 1, 1)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newSampleWindow(3)
			for _, s := range c.pushes {
				w.Push(s)
			}
			view := w.View()
			got := view[len(view)-1].Total.Rising.Has(catalogue.TTFT)
			if got != c.rising {
				t.Errorf("newest sample rising = %v, want %v", got, c.rising)
			}
		})
	}
}
