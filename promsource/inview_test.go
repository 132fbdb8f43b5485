package promsource

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/testutil"
)

// The store of the on-screen tests: two fleets of real vLLM pages
// (client_golang's exposition), job "small" and job "large", back-filled
// with the rows vtop's recording rules record for every replica and
// their info series, every ivStep over a minute. The rows are written as
// the rules would write them (their evaluation is e2e/rules_path_test's),
// so that the store is ready in seconds.
const (
	ivStep   = 5 * time.Second
	ivSteps  = 13
	ivWindow = 30 * time.Second
	// ivScrapeLag is how long before each evaluation the replicas were
	// scraped: scrapes and evaluations are not aligned in a real store,
	// and a sample on the window's edge would move the raw read's time.
	ivScrapeLag = 1700 * time.Millisecond
)

// inViewFleet names a fleet's replicas: n instances of a job.
func inViewFleet(job string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d:8000", job, i)
	}
	return out
}

// inViewRules are the rules' settings the store's rows are recorded with,
// those of a source configured as inViewConfig.
func inViewRules() promql.RulesSettings {
	acfg := analysis.DefaultConfig()
	return promql.RulesSettings{Window: ivWindow, SLOTTFT: acfg.SLOTTFT, SLOITL: acfg.SLOITL, Hysteresis: acfg.Hysteresis}
}

// inViewStore back-fills the two fleets and serves them from a real
// Prometheus; it returns the server's URL and the rules' newest
// evaluation.
func inViewStore(t *testing.T, fleets map[string][]string) (string, time.Time) {
	t.Helper()
	testutil.PrometheusTool(t, "promtool")
	end := time.Now().Add(-time.Minute).Truncate(time.Second)
	mfs, err := testutil.VLLMRegistry(t, 1).Gather()
	if err != nil {
		t.Fatal(err)
	}
	var page []*dto.MetricFamily
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "go_") && !strings.HasPrefix(mf.GetName(), "process_") {
			page = append(page, mf)
		}
	}
	evaluations := make([]time.Time, ivSteps)
	for k := range evaluations {
		evaluations[k] = end.Add(-time.Duration(ivSteps-1-k) * ivStep)
	}
	var om bytes.Buffer
	write := func(mf *dto.MetricFamily) {
		if _, err := expfmt.MetricFamilyToOpenMetrics(&om, mf); err != nil {
			t.Fatal(err)
		}
	}
	// value is a series' value at a time: 1, or for the rules' info the
	// time its evaluation read the store (as Prometheus's time() records it).
	gauge := func(name string, series [][]*dto.LabelPair, at []time.Time, value func(time.Time) float64) *dto.MetricFamily {
		mf := &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_GAUGE.Enum()}
		for _, labels := range series {
			for _, when := range at {
				mf.Metric = append(mf.Metric, &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: proto.Float64(value(when))}, TimestampMs: proto.Int64(when.UnixMilli())})
			}
		}
		return mf
	}
	scrapes := make([]time.Time, ivSteps)
	for k, e := range evaluations {
		scrapes[k] = e.Add(-ivScrapeLag)
	}
	var targets, rows [][]*dto.LabelPair
	for _, job := range slices.Sorted(maps.Keys(fleets)) {
		for _, instance := range fleets[job] {
			targets = append(targets, []*dto.LabelPair{omLabel("instance", instance), omLabel("job", job)})
			rows = append(rows, []*dto.LabelPair{omLabel("instance", instance)})
		}
	}
	// The raw series: each replica's page at each scrape, one family at a
	// time (OpenMetrics keeps a family's lines together).
	for _, mf := range page {
		out := &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: mf.Type, Unit: mf.Unit}
		for _, target := range targets {
			for _, m := range mf.Metric {
				for _, when := range scrapes {
					c := proto.Clone(m).(*dto.Metric)
					c.Label = append(slices.Clone(target), c.Label...)
					c.TimestampMs = proto.Int64(when.UnixMilli())
					out.Metric = append(out.Metric, c)
				}
			}
		}
		write(out)
	}
	one := func(time.Time) float64 { return 1 }
	write(gauge("up", targets, scrapes, one))
	for _, name := range promql.RecordedFigures {
		write(gauge(name, rows, evaluations, one))
	}
	rules := inViewRules()
	rules.GroupBy = []string{string(labelInstance)}
	var info []*dto.LabelPair
	for _, l := range promql.InfoLabels(rules, ivStep) {
		info = append(info, omLabel(l[0], l[1]))
	}
	readAt := func(when time.Time) float64 { return float64(when.UnixMilli()) / 1000 }
	write(gauge(promql.RecordedInfo, [][]*dto.LabelPair{info}, evaluations, readAt))
	om.WriteString("# EOF\n")
	path := filepath.Join(t.TempDir(), "history.om")
	if err := os.WriteFile(path, om.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return testutil.ServeBlocks(t, testutil.Backfill(t, path)).URL(), end
}

func omLabel(name, value string) *dto.LabelPair {
	return &dto.LabelPair{Name: proto.String(name), Value: proto.String(value)}
}

// queryLog is a proxy in front of the store that keeps every request it
// passes on.
type queryLog struct {
	mu    sync.Mutex
	exprs []string
}

func (l *queryLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.exprs
	l.exprs = nil
	return out
}

// proxy serves the store through the log.
func (l *queryLog) proxy(t *testing.T, store string) string {
	t.Helper()
	u, err := url.Parse(store)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form, _ := url.ParseQuery(string(body))
		// One entry a request: its expression, or the path of a request
		// that is not a query.
		expr := r.URL.Path
		if q := append(r.URL.Query()["query"], form["query"]...); len(q) > 0 {
			expr = strings.Join(q, " ")
		}
		l.mu.Lock()
		l.exprs = append(l.exprs, expr)
		l.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// namedInstances are the instances an expression names in an
// instance=~"a|b" matcher (instance="a" for one), sorted; nil when it
// names none.
func namedInstances(expr string) []string {
	m := instanceMatcher.FindStringSubmatch(expr)
	if m == nil {
		return nil
	}
	var out []string
	for _, q := range strings.Split(m[1], "|") {
		out = append(out, strings.ReplaceAll(q, `\\.`, "."))
	}
	slices.Sort(out)
	return out
}

var instanceMatcher = regexp.MustCompile(`instance=~?"([^"]*)"`)

// TestRulesPathReadsTheScreenRaw: through the store's recording rules, a
// refresh reads raw samples for the replicas on screen and the one in
// detail, and for no other: every query that names replicas names
// exactly those, the readings of those are raw (every figure) and the
// others' the rules' rows. The queries of a refresh are as many whatever
// the fleet's size and however many replicas are on screen: the raw set
// is one read, not one per replica.
func TestRulesPathReadsTheScreenRaw(t *testing.T) {
	fleets := map[string][]string{"small": inViewFleet("small", 3), "large": inViewFleet("large", 40)}
	var log queryLog
	store, end := inViewStore(t, fleets)
	proxied := log.proxy(t, store)
	tests := []struct {
		name           string
		job            string
		inView, detail []string
	}{
		{"small fleet, all on screen", "small", fleets["small"], nil},
		{"large fleet, a screenful", "large", fleets["large"][10:22], nil},
		{"large fleet, a screenful and the detail", "large", fleets["large"][10:22], []string{"large31:8000"}},
		{"large fleet, the detail alone", "large", nil, []string{"large05:8000"}},
		{"large fleet, a short screen", "large", fleets["large"][:2], nil},
	}
	queries := -1
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{URL: proxied, Selector: `{job="` + tt.job + `"}`, Interval: time.Minute, Window: ivWindow,
				Now: func() time.Time { return end.Add(settle) }, Rules: inViewRules()}
			src, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			readNow := src.SetInView(tt.inView)
			src.SetWanted(tt.detail)
			if readNow {
				t.Errorf("asked for a read before any refresh took the rules' path")
			}
			log.take()
			src.refresh(t.Context())
			exprs := log.take()
			if st := src.Status(); st.Path != PathRules || !st.OK() {
				t.Fatalf("path %q, status %+v: want the rules' path", st.Path, st)
			}
			want := slices.Sorted(slices.Values(slices.Concat(tt.inView, tt.detail)))
			named := 0
			for _, e := range exprs {
				if got := namedInstances(e); got != nil {
					named++
					if !slices.Equal(got, want) {
						t.Errorf("a query names %v, want %v: %s", got, want, e)
					}
				}
			}
			if named == 0 {
				t.Errorf("no query names the replicas wanted raw %v:\n%s", want, strings.Join(exprs, "\n"))
			}
			readings, _ := src.ReadingsAt(nil)
			if len(readings) != len(fleets[tt.job]) {
				t.Fatalf("%d replicas read, want the job's %d", len(readings), len(fleets[tt.job]))
			}
			for _, r := range readings {
				raw := len(r.Samples) > 0
				if raw != slices.Contains(want, r.Target) {
					t.Errorf("%s read raw %v, want %v (raw: %v)", r.Target, raw, !raw, want)
				}
			}
			if queries < 0 {
				queries = len(exprs)
			} else if len(exprs) != queries {
				t.Errorf("%d queries, want %d as with the others:\n%s", len(exprs), queries, strings.Join(exprs, "\n"))
			}
			if n := src.Stats().LastRequests; n != len(exprs) {
				t.Errorf("the source counts %d requests, the store saw %d", n, len(exprs))
			}
			// Scrolled to the last replica: brought into view, it calls for
			// a read at once, and is read raw with those that just left
			// the screen; a screen with none new calls for none.
			last := fleets[tt.job][len(fleets[tt.job])-1]
			if !src.SetInView([]string{last}) && !slices.Contains(want, last) {
				t.Errorf("a replica brought into view asked for no read")
			}
			if src.SetInView(nil) {
				t.Errorf("a screen with no replica asked for a read")
			}
			src.refresh(t.Context())
			want = slices.Sorted(slices.Values(slices.Compact(append(want, last))))
			for _, e := range log.take() {
				if got := namedInstances(e); got != nil && !slices.Equal(got, want) {
					t.Errorf("after the scroll a query names %v, want %v", got, want)
				}
			}
		})
	}
}

// TestRawNames: the replicas read raw beside the rules' rows are those
// wanted in detail, those on screen, and those that left the screen
// less than inViewLinger ago (a replica whose raw state sorts it off the
// screen stays raw, instead of its rows flipping between the two paths
// every refresh), the most recent first within maxInView; a replica
// that left longer ago is forgotten.
func TestRawNames(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	many := inViewFleet("r", maxInView)
	tests := []struct {
		name           string
		wanted, inView []string
		left           map[string]time.Time
		want           []string
		wantLeft       []string
	}{
		{"nothing", nil, nil, nil, nil, nil},
		{"on screen and in detail, once each", []string{"b"}, []string{"c", "b", "a"}, nil, []string{"a", "b", "c"}, nil},
		{"just left the screen", nil, []string{"c"}, map[string]time.Time{"a": ago(time.Second)}, []string{"a", "c"}, []string{"a"}},
		{"left long ago: forgotten", nil, []string{"c"}, map[string]time.Time{"a": ago(inViewLinger + time.Second)}, []string{"c"}, nil},
		{"a full screen: the most recent that left first", nil, many[2:],
			map[string]time.Time{"x": ago(3 * time.Second), "y": ago(time.Second), "z": ago(2 * time.Second)},
			slices.Sorted(slices.Values(append([]string{"y", "z"}, many[2:]...))), []string{"x", "y", "z"}},
		{"a full screen and the detail", []string{"d"}, many, map[string]time.Time{"x": ago(time.Second)},
			slices.Sorted(slices.Values(append([]string{"d"}, many...))), []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left := maps.Clone(tt.left)
			if left == nil {
				left = map[string]time.Time{}
			}
			if got := rawNames(tt.wanted, tt.inView, left, now); !slices.Equal(got, tt.want) {
				t.Errorf("read raw %v, want %v", got, tt.want)
			}
			if got := slices.Sorted(maps.Keys(left)); !slices.Equal(got, tt.wantLeft) {
				t.Errorf("remembered as left %v, want %v", got, tt.wantLeft)
			}
		})
	}
}
