package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/testutil"
)

// One fleet's history, back-filled into two stores, read by vtop through
// each: Debian's Prometheus (blocks made by promtool) and VictoriaMetrics
// (the same OpenMetrics posted to its import API). vtop reads the raw
// samples of the window and computes every figure itself, so the same
// samples must give the same report, state for state and figure for
// figure. The stores do differ where they compute: VictoriaMetrics'
// rate() and increase() (MetricsQL) take the last sample before the
// window and do not extrapolate, so the same query answers differently;
// the test shows that difference on the same samples rather than hiding
// it, and vtop names the store it read and warns about it.

// storeReport is what the test reads of a `vtop --once --json` report.
type storeReport struct {
	Time          time.Time         `json:"time"`
	WindowSeconds float64           `json:"window_seconds"`
	Replicas      []json.RawMessage `json:"replicas"`
	Fleet         json.RawMessage   `json:"fleet"`
	Source        struct {
		Name, Problem, Store string
		StoreVersion         string   `json:"store_version"`
		Warnings             []string `json:"warnings"`
	} `json:"source"`
}

// TestStoresReadAlike back-fills five replicas of the mixed scenario
// (healthy with two engines, full, slow, preempting, healthy) into Prometheus and
// VictoriaMetrics and compares vtop's reports through each.
func TestStoresReadAlike(t *testing.T) {
	testutil.PrometheusTool(t, "promtool")
	VictoriaMetricsBinary(t)
	const (
		replicas = 5
		step     = 5 * time.Second
		window   = 30 * time.Second
	)
	// Two minutes of past, three ahead: vtop reads the present.
	history := filepath.Join(t.TempDir(), "history.om")
	if out, errOut, code := testutil.RunVtop(t, "sim", "--replicas", strconv.Itoa(replicas),
		"--scenario", "mixed", "--history", "5m", "--step", step.String(), "--end", "now+3m", "-o", history); code != 0 {
		t.Fatalf("vtop sim --history: exit %d\n%s%s", code, out, errOut)
	}
	stamps := scrapeTimes(t, history)

	prom := testutil.ServeBlocks(t, testutil.Backfill(t, history))
	vm := StartVictoriaMetrics(t)
	vm.Import(history, func() bool { return targetsIn(t, vm.URL()) == replicas })
	if n := targetsIn(t, prom.URL()); n != replicas {
		t.Fatalf("Prometheus holds %d targets of the history, want %d", n, replicas)
	}

	read := func(url string) storeReport {
		t.Helper()
		out, errOut, _ := testutil.RunVtop(t, "--prometheus", url, "--selector", `{job="vllm"}`, "--window", window.String(), "--once", "--json")
		var r storeReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("vtop --prometheus %s: %v\n%s\n%s", url, err, out, errOut)
		}
		if r.Source.Problem != "" || len(r.Replicas) != replicas {
			t.Fatalf("vtop --prometheus %s: %d replicas, problem %q", url, len(r.Replicas), r.Source.Problem)
		}
		return r
	}
	// The two runs evaluate at their own present, a moment apart: they
	// read the same samples unless a scrape falls at either edge of the
	// window in between; then they are run again.
	var fromProm, fromVM storeReport
	for try := 0; ; try++ {
		fromProm, fromVM = read(prom.URL()), read(vm.URL())
		w := time.Duration(fromProm.WindowSeconds * float64(time.Second))
		if !scrapeBetween(stamps, fromProm.Time, fromVM.Time, w) {
			break
		}
		if try == 4 {
			t.Fatalf("five tries, each with a scrape between the runs' windows (%s, %s)", fromProm.Time, fromVM.Time)
		}
	}

	// vtop says which store it read, and warns only where the semantics differ.
	if fromProm.Source.Store != "Prometheus" || !strings.HasPrefix(fromProm.Source.StoreVersion, "2.") || len(fromProm.Source.Warnings) != 0 {
		t.Errorf("through Prometheus: store %q version %q warnings %q; want Prometheus 2.x and no warning",
			fromProm.Source.Store, fromProm.Source.StoreVersion, fromProm.Source.Warnings)
	}
	if fromVM.Source.Store != "VictoriaMetrics" || !slices.ContainsFunc(fromVM.Source.Warnings, func(w string) bool {
		return strings.Contains(w, "MetricsQL") && strings.Contains(w, "extrapolate")
	}) {
		t.Errorf("through VictoriaMetrics: store %q warnings %q; want VictoriaMetrics and the note on its rate()",
			fromVM.Source.Store, fromVM.Source.Warnings)
	}

	// The same report: every replica, state and figure, and the fleet.
	// VictoriaMetrics keeps a float to some 12 significant digits (it
	// stores decimals), so a figure from a histogram's _sum may differ in
	// the last digits the report writes: figures are equal to 1e-9.
	states := map[string]int{}
	inexact := 0
	for i := range fromProm.Replicas {
		var p, v map[string]any
		if err := json.Unmarshal(fromProm.Replicas[i], &p); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(fromVM.Replicas[i], &v); err != nil {
			t.Fatal(err)
		}
		p, v = anyOf(p, fromProm.Time).(map[string]any), anyOf(v, fromVM.Time).(map[string]any)
		states[fmt.Sprint(p["state"])]++
		if p["state"] != v["state"] {
			t.Errorf("replica %v: %v through Prometheus, %v through VictoriaMetrics", p["target"], p["state"], v["state"])
		}
		if diffs := differences("", p, v, &inexact); len(diffs) > 0 {
			t.Errorf("replica %v differs between the stores:\n%s", p["target"], strings.Join(diffs, "\n"))
		}
	}
	var pf, vf map[string]any
	if err := json.Unmarshal(fromProm.Fleet, &pf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromVM.Fleet, &vf); err != nil {
		t.Fatal(err)
	}
	pf, vf = anyOf(pf, fromProm.Time).(map[string]any), anyOf(vf, fromVM.Time).(map[string]any)
	if diffs := differences("fleet", pf, vf, &inexact); len(diffs) > 0 {
		t.Errorf("the fleet differs between the stores:\n%s", strings.Join(diffs, "\n"))
	}
	if len(states) < 3 {
		t.Errorf("states %v: the mixed fleet should show at least three", states)
	}
	t.Logf("the same report through both stores at %s and %s: states %v; %d figures equal only to 1e-9 (VictoriaMetrics' decimals)",
		fromProm.Time.Format(time.RFC3339Nano), fromVM.Time.Format(time.RFC3339Nano), states, inexact)

	rateSemantics(t, prom.URL(), vm.URL(), fromProm.Time, window)
}

// rateSemantics shows the documented difference on the same samples: at
// one instant both stores hold the same raw samples of a counter, and
// VictoriaMetrics' rate() is the last value less the last value before
// the window, over the time between them (no extrapolation), while
// Prometheus's extrapolates to the window's edges: the two differ.
func rateSemantics(t *testing.T, promURL, vmURL string, at time.Time, window time.Duration) {
	t.Helper()
	const counter = `vllm:generation_tokens_total{job="vllm"}`
	sel := fmt.Sprintf("[%dms]", window.Milliseconds())
	wide := fmt.Sprintf("[%dms]", 2*window.Milliseconds())
	promRaw := matrixAt(t, promURL, counter+sel, at)
	vmRaw := matrixAt(t, vmURL, counter+sel, at)
	if len(promRaw) == 0 || !reflect.DeepEqual(byLabels(promRaw), byLabels(vmRaw)) {
		t.Fatalf("the raw samples of %s%s differ between the stores:\nPrometheus %v\nVictoriaMetrics %v", counter, sel, promRaw, vmRaw)
	}
	before := byLabels(matrixAt(t, vmURL, counter+wide, at))
	promRate := byValue(vectorAt(t, promURL, "rate("+counter+sel+")", at))
	vmRate := byValue(vectorAt(t, vmURL, "rate("+counter+sel+")", at))
	differ, checked := 0, 0
	for key, samples := range byLabels(promRaw) {
		last := samples[len(samples)-1]
		var prev model.SamplePair
		for _, p := range before[key] {
			if p.Timestamp.Before(samples[0].Timestamp) {
				prev = p
			}
		}
		if prev.Timestamp == 0 || last.Value < prev.Value {
			continue // no sample before the window, or a restart: not this rule
		}
		checked++
		want := float64(last.Value-prev.Value) / last.Timestamp.Sub(prev.Timestamp).Seconds()
		v, ok := vmRate[key]
		switch {
		case !ok:
			t.Errorf("%s: VictoriaMetrics gave no rate", key)
		case math.Abs(v-want) > 1e-9*math.Max(1, want):
			t.Errorf("%s: VictoriaMetrics' rate %v, want (last − the last before the window) ÷ their distance: (%v − %v) ÷ %s = %v",
				key, v, last.Value, prev.Value, last.Timestamp.Sub(prev.Timestamp), want)
		}
		if p, ok := promRate[key]; ok && math.Abs(p-v) > 1e-9*math.Max(1, math.Abs(v)) {
			differ++
		}
	}
	if checked == 0 || differ == 0 {
		t.Errorf("rate() of %s: %d series checked, %d differ between the stores: the documented difference did not show", counter, checked, differ)
	}
	t.Logf("rate(%s%s): %d of %d series differ between Prometheus (extrapolated) and VictoriaMetrics (from the last sample before the window)", counter, sel, differ, checked)
}

// scrapeTimes are the distinct timestamps of a history file.
func scrapeTimes(t *testing.T, path string) []time.Time {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []time.Time
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		ts := line[strings.LastIndexByte(line, ' ')+1:]
		if seen[ts] {
			continue
		}
		seen[ts] = true
		secs, err := strconv.ParseFloat(ts, 64)
		if err != nil {
			t.Fatalf("%s: timestamp %q: %v", path, ts, err)
		}
		out = append(out, time.UnixMilli(int64(math.Round(secs*1000))))
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scrapeBetween reports whether a scrape falls where two windows of width
// w ending at a and b hold different samples: at either edge between them.
func scrapeBetween(stamps []time.Time, a, b time.Time, w time.Duration) bool {
	if b.Before(a) {
		a, b = b, a
	}
	for _, s := range stamps {
		if (!s.Before(a.Add(-w)) && !s.After(b.Add(-w))) || (!s.Before(a) && !s.After(b)) {
			return true
		}
	}
	return false
}

// targetsIn counts the targets a store holds now (up{job="vllm"}).
func targetsIn(t *testing.T, url string) int {
	t.Helper()
	return len(vectorAt(t, url, `up{job="vllm"}`, time.Now()))
}

// queryAt asks a store's /api/v1/query for expr at a time, with
// nocache=1: VictoriaMetrics otherwise leaves the newest samples out of
// what it computes at a time near the present (its -search.latencyOffset,
// 30 s by default); Prometheus ignores the parameter.
func queryAt(t *testing.T, url, expr string, at time.Time) model.Value {
	t.Helper()
	form := neturl.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}, "nocache": {"1"}}
	resp, err := http.PostForm(url+"/api/v1/query", form)
	if err != nil {
		t.Fatalf("%s: %s: %v", url, expr, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Status != "success" {
		t.Fatalf("%s at %s: %s: %s %v %s", url, at, expr, resp.Status, err, answer.Error)
	}
	var v model.Value
	switch answer.Data.ResultType {
	case "vector":
		var vec model.Vector
		err = json.Unmarshal(answer.Data.Result, &vec)
		v = vec
	case "matrix":
		var m model.Matrix
		err = json.Unmarshal(answer.Data.Result, &m)
		v = m
	default:
		t.Fatalf("%s: %s answered a %s", url, expr, answer.Data.ResultType)
	}
	if err != nil {
		t.Fatalf("%s: %s: %v", url, expr, err)
	}
	return v
}

func vectorAt(t *testing.T, url, expr string, at time.Time) model.Vector {
	t.Helper()
	v, ok := queryAt(t, url, expr, at).(model.Vector)
	if !ok {
		t.Fatalf("%s: %s answered no vector", url, expr)
	}
	return v
}

func matrixAt(t *testing.T, url, expr string, at time.Time) model.Matrix {
	t.Helper()
	m, ok := queryAt(t, url, expr, at).(model.Matrix)
	if !ok {
		t.Fatalf("%s: %s answered no matrix", url, expr)
	}
	return m
}

// seriesKey names a series by its labels without its name (functions
// drop it).
func seriesKey(m model.Metric) string {
	m = m.Clone()
	delete(m, model.MetricNameLabel)
	return m.String()
}

func byLabels(m model.Matrix) map[string][]model.SamplePair {
	out := map[string][]model.SamplePair{}
	for _, s := range m {
		out[seriesKey(s.Metric)] = s.Values
	}
	return out
}

func byValue(v model.Vector) map[string]float64 {
	out := map[string]float64{}
	for _, s := range v {
		out[seriesKey(s.Metric)] = float64(s.Value)
	}
	return out
}

// anyOf is a decoded JSON value with the report's own time (each run's
// present, which a figure such as the advice's window may carry) put as
// "<report time>".
func anyOf(v any, reportTime time.Time) any {
	switch x := v.(type) {
	case string:
		if x == reportTime.UTC().Format(time.RFC3339Nano) {
			return "<report time>"
		}
	case map[string]any:
		for k, e := range x {
			x[k] = anyOf(e, reportTime)
		}
	case []any:
		for i, e := range x {
			x[i] = anyOf(e, reportTime)
		}
	}
	return v
}

// differences lists where two decoded JSON values differ, numbers
// compared to 1e-9 relative (inexact counts those equal only so), the
// rest exactly.
func differences(path string, a, b any, inexact *int) []string {
	switch av := a.(type) {
	case float64:
		bv, ok := b.(float64)
		if !ok || math.Abs(av-bv) > 1e-9*math.Max(1e-12, math.Max(math.Abs(av), math.Abs(bv))) {
			return []string{fmt.Sprintf("  %s: Prometheus %v, VictoriaMetrics %v", path, a, b)}
		}
		if av != bv {
			*inexact++
		}
		return nil
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("  %s: Prometheus %v, VictoriaMetrics %v", path, a, b)}
		}
		var out []string
		for k := range av {
			out = append(out, differences(path+"."+k, av[k], bv[k], inexact)...)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				out = append(out, "  "+path+"."+k+": only through VictoriaMetrics")
			}
		}
		slices.Sort(out)
		return out
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return []string{fmt.Sprintf("  %s: Prometheus %v, VictoriaMetrics %v", path, a, b)}
		}
		var out []string
		for i := range av {
			out = append(out, differences(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], inexact)...)
		}
		return out
	}
	if !reflect.DeepEqual(a, b) {
		return []string{fmt.Sprintf("  %s: Prometheus %v, VictoriaMetrics %v", path, a, b)}
	}
	return nil
}
