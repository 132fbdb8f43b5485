package monitor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/catalogue"
)

// statusSource is a source of one replica that reports its own health.
type statusSource struct {
	keepingSource
	status catalogue.SourceStatus
	at     time.Time
}

func (s *statusSource) Status() catalogue.SourceStatus { return s.status }

func (s *statusSource) Readings(dst []catalogue.Readings) []catalogue.Readings {
	good := func(at time.Time) catalogue.Sample {
		return catalogue.Sample{Time: at, HasVLLM: true, Total: catalogue.NewSeries(), KVCapacityTokens: 0, ProcessStartTime: 1}
	}
	return append(dst[:0], catalogue.Readings{Target: "a:8000", Samples: []catalogue.Sample{good(s.at.Add(-time.Second)), good(s.at)}})
}

func (s *statusSource) Now() time.Time { return s.at }

// A source that fails as a whole leaves the replicas' verdicts as they
// were, each marked stale, and the report says how old the data are:
// live, once, and not when the source is fine.
func TestSourceFailureMarksReplicasStale(t *testing.T) {
	at := time.Unix(1e9, 0)
	tests := []struct {
		name      string
		status    catalogue.SourceStatus
		wantStale bool
		wantAge   float64
	}{
		{"fine", catalogue.SourceStatus{Name: "Prometheus http://p:9090", LastGood: at, Checked: at}, false, 0},
		{"failing", catalogue.SourceStatus{Name: "Prometheus http://p:9090", Problem: "connection refused",
			Since: at.Add(5 * time.Second), LastGood: at, Checked: at.Add(42 * time.Second)}, true, 42},
	}
	for _, tt := range tests {
		st := &statusSource{status: tt.status, at: at}
		src := Source{Feed: st, Status: st.Status}
		check := func(how string, r analysis.Report) {
			if len(r.Replicas) != 1 || r.Source == nil {
				t.Fatalf("%s, %s: replicas %d, source %v", tt.name, how, len(r.Replicas), r.Source)
			}
			rep := r.Replicas[0]
			if rep.SourceStale != tt.wantStale || rep.State == analysis.StateDown {
				t.Errorf("%s, %s: %s, stale %v; want stale %v and never DOWN", tt.name, how, rep.State, rep.SourceStale, tt.wantStale)
			}
			if r.Source.DataAgeSeconds != tt.wantAge || r.Source.Name != tt.status.Name || r.Source.Problem != tt.status.Problem {
				t.Errorf("%s, %s: source %+v, want the data %vs old", tt.name, how, *r.Source, tt.wantAge)
			}
		}
		once, err := Once(context.Background(), src, analysis.DefaultConfig(), time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		check("once", once)
		live := make(chan analysis.Report, 1)
		m := New(src, analysis.DefaultConfig(), func(r analysis.Report) error {
			select {
			case live <- r:
			default:
			}
			return errors.New("one report is enough")
		})
		_ = m.Run(context.Background())
		check("live", <-live)
	}
}
