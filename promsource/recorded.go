package promsource

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/safetext"
)

// The fast path. Where the store evaluates vtop's recording rules (`vtop
// rules`) written with this vtop's settings, a refresh reads the rows the
// rules recorded at their newest evaluation, one per replica and figure,
// and the alerts that fire, instead of the raw series: its cost is in
// replicas, not in the series (most of them histogram buckets) the rules
// evaluated. The report is that of the evaluation's time, its figures and
// states the rules'; the replicas on screen and the one in detail
// (SetInView, SetWanted) are read raw beside them, in one read at the
// same time, for what the rules do not record. Where they are absent, or
// written with other settings, the refresh reads the raw series, and the
// status says why.

// The paths a refresh reads, as the status names them.
const (
	PathRules = "rules"
	PathRaw   = "raw"
)

// rulesStale is how many of their intervals the rules' newest evaluation
// may be old before they are taken for no longer evaluated.
const rulesStale = 3

// recordedRead is what one refresh of the fast path read.
type recordedRead struct {
	at time.Time // the rules' evaluation time
	// readAt is the time the evaluation's queries read the store as of,
	// which vtop:rules_info records; zero where its row is not read.
	readAt   time.Time
	readings []catalogue.Readings
	rows     int
	warnings []string
}

// rulesInfo is one vtop rule group's settings and its newest evaluation.
type rulesInfo struct {
	labels   labels
	at       time.Time
	interval time.Duration
}

// findRules asks which vtop rule groups the store evaluates at at, and
// returns the one written with this vtop's settings; note says why none
// is read ("" when no rules are loaded at all, which is no news).
func (s *Source) findRules(ctx context.Context, at time.Time) (info rulesInfo, note string, ok bool) {
	vec, _, err := s.stream(ctx, promql.RulesInfoQuery(), at, resultVector, true)
	if err != nil || len(vec) == 0 {
		return rulesInfo{}, "", false
	}
	want := s.wantedRules()
	var differs []string
	for _, row := range vec {
		diff := settingsDiffer(row.Metric, want)
		if len(diff) > 0 {
			differs = append(differs, strings.Join(diff, ", "))
			continue
		}
		ms := int64(math.Round(float64(row.Values[0].Value) * 1000))
		interval, _ := model.ParseDuration(row.Metric.get(promql.InfoInterval))
		info = rulesInfo{labels: row.Metric, at: time.UnixMilli(ms), interval: time.Duration(interval)}
		if age := at.Sub(info.at); info.interval > 0 && age > rulesStale*info.interval {
			return rulesInfo{}, fmt.Sprintf("vtop's recording rules were last evaluated %s ago: reading the raw series", age.Round(time.Second)), false
		}
		return info, "", true
	}
	return rulesInfo{}, safetext.Sanitize(fmt.Sprintf("vtop's recording rules in the store were written with other settings (%s): reading the raw series; `vtop rules` with this vtop's settings writes rules it reads",
		strings.Join(differs, "; "))), false
}

// wantedRules are the labels of promql.RecordedInfo for rules written
// with this vtop's settings, whatever their interval.
func (s *Source) wantedRules() map[string]string {
	r := s.cfg.Rules
	r.Window = s.analysisWindow()
	if len(r.GroupBy) == 0 {
		by := s.cfg.GroupBy
		if by == "" {
			by = string(labelInstance)
		}
		r.GroupBy = []string{by}
	}
	want := map[string]string{}
	for _, l := range promql.InfoLabels(r, 0) {
		if l[0] != promql.InfoInterval {
			want[l[0]] = l[1]
		}
	}
	return want
}

// settingsDiffer names the settings of a rule group's info row that are
// not those wanted, as "window 1m (this vtop: 30s)".
func settingsDiffer(m labels, want map[string]string) []string {
	var diff []string
	for _, name := range []string{promql.InfoVersion, promql.InfoWindow, promql.InfoSLOTTFT, promql.InfoSLOITL, promql.InfoHysteresis, promql.InfoGroupBy} {
		if got := m.get(name); got != want[name] {
			if got == "" {
				got = "none"
			}
			diff = append(diff, fmt.Sprintf("%s %s (this vtop: %s)", name, got, want[name]))
		}
	}
	return diff
}

// readRecorded reads the rows the rules recorded at their evaluation
// info.at, the alerts that fired then, and up then: one reading per
// replica the selector's up names.
func (s *Source) readRecorded(ctx context.Context, info rulesInfo) (recordedRead, error) {
	// The alerts of the evaluation are those written within its interval
	// from its time (alertsOf), asked for at the interval's end.
	every := max(info.interval, time.Millisecond)
	rows, alerts, ups, warnings, err := s.askRecorded(ctx, info, every)
	if err != nil {
		return recordedRead{}, err
	}
	r := recordedRead{at: info.at, warnings: warnings, rows: len(rows) + len(alerts) + len(ups)}
	by := info.labels.get(promql.InfoGroupBy)
	if strings.Contains(by, ",") {
		return recordedRead{}, s.fail("vtop's rules group by several labels, which the fast path does not read")
	}
	replicas := map[string]*catalogue.Recorded{}
	for _, u := range ups {
		name := u.Metric.get(by)
		if name == "" {
			continue
		}
		rec := replicas[name]
		if rec == nil {
			rec = newRecorded(info.at, s.analysisWindow())
			replicas[name] = rec
		}
		rec.Up = rec.Up || u.Values[0].Value == 1
	}
	atMs := info.at.UnixMilli()
	r.readRows(rows, replicas, by, info.labels, atMs)
	for _, a := range alerts {
		rec := replicas[a.Metric.get(by)]
		if alertsOf(a.Values, atMs, every) && rec != nil {
			rec.Firing = append(rec.Firing, strings.ToLower(a.Metric.get(promql.StateLabel)))
		}
	}
	for name, rec := range replicas {
		r.readings = append(r.readings, catalogue.Readings{Target: safetext.Sanitize(name), Recorded: rec})
	}
	slices.SortFunc(r.readings, func(a, b catalogue.Readings) int { return strings.Compare(a.Target, b.Target) })
	return r, nil
}

// askRecorded asks, side by side, for the rows the rules recorded at
// info.at, the alerts that fired within every of it, and up then.
func (s *Source) askRecorded(ctx context.Context, info rulesInfo, every time.Duration) (rows, alerts, ups matrix, warnings []string, err error) {
	span := max(info.interval/2, time.Millisecond)
	up := "up"
	if s.q.matchers != "" {
		up = "up{" + s.q.matchers + "}"
	}
	answers, warns, errs := s.streamAll(ctx, []streamed{{promql.RecordedRowsQuery(span), resultMatrix, info.at},
		{promql.FiringStatesQuery(every), resultMatrix, info.at.Add(every - time.Millisecond)}, {up, resultVector, info.at}}, true)
	if err := cmp.Or(errs...); err != nil {
		return nil, nil, nil, nil, err
	}
	return answers[0], answers[1], answers[2], slices.Concat(warns...), nil
}

// readRows sets each replica's recorded figures from the rows at atMs,
// and r's readAt from the rules' info row of the group whose labels are
// info; rows of replicas outside the selector are left.
func (r *recordedRead) readRows(rows matrix, replicas map[string]*catalogue.Recorded, by string, info labels, atMs int64) {
	for _, row := range rows {
		name := row.Metric.get(model.MetricNameLabel)
		if name == promql.RecordedInfo {
			if v, ok := valueAt(row.Values, atMs); ok && sameGroup(row.Metric, info) {
				r.readAt = time.UnixMilli(int64(math.Round(v * 1000)))
			}
			continue
		}
		rec := replicas[row.Metric.get(by)]
		if rec == nil {
			continue // outside the selector
		}
		if v, ok := valueAt(row.Values, atMs); ok {
			if field, ok := recordedFields[name]; ok {
				*field(rec) = v
			}
		}
	}
}

// sameGroup reports whether a row of vtop:rules_info is that of the
// group whose labels (without the name) are info: the same labels but
// the name, by their hash, as the raw window tells series apart.
func sameGroup(row, info labels) bool {
	return labels{le: row.le, rest: row.rest}.fingerprint() == info.fingerprint()
}

// laggedNote says, where the rules' evaluation at stamp read the store
// as of another time, readAt, that the rules are not read, and why; ""
// where it read the store at its own time (to half an interval: the
// store's clock and the stamp's rounding). VictoriaMetrics answers a
// query of its last -search.latencyOffset (30 s by default) as of that
// long ago unless asked with nocache=1: vmalert evaluating rules that do
// not ask so records at T the figures of T−30s, and its states, which
// read them back, later still.
func laggedNote(stamp, readAt time.Time, interval time.Duration) string {
	lag := stamp.Sub(readAt)
	if readAt.IsZero() || lag.Abs() <= interval/2 {
		return ""
	}
	return fmt.Sprintf("vtop's recording rules in the store read it %s before the time they record (VictoriaMetrics' -search.latencyOffset, where the rules' queries do not ask with nocache=1): their figures and states are of the past; reading the raw series; `vtop rules --format vmalert` writes rules that ask so",
		lag.Round(time.Millisecond))
}

// alertsOf reports whether an alert's series has a sample of the
// evaluation at ms, whose interval is every: one within [ms, ms+every).
// Prometheus writes an evaluation's alerts at its time, as it writes its
// records; vmalert writes the records at the evaluation's time aligned to
// the interval and the alerts at the second the evaluation began, up to
// an interval later.
func alertsOf(values []model.SamplePair, ms int64, every time.Duration) bool {
	for _, p := range values {
		if t := int64(p.Timestamp); t >= ms && t < ms+every.Milliseconds() {
			return true
		}
	}
	return false
}

// valueAt is the value of the sample at ms, if there is one.
func valueAt(values []model.SamplePair, ms int64) (float64, bool) {
	for _, p := range values {
		if int64(p.Timestamp) == ms {
			return float64(p.Value), true
		}
	}
	return 0, false
}

// newRecorded is a replica with nothing recorded yet.
func newRecorded(at time.Time, window time.Duration) *catalogue.Recorded {
	nan := math.NaN()
	l := catalogue.RecordedLatency{P99: nan, P50: nan, Observations: nan}
	return &catalogue.Recorded{At: at, Window: window, Running: nan, Waiting: nan, Requests: nan, PromptTokens: nan,
		GenerationTokens: nan, Preemptions: nan, RecomputedTokens: nan, TTFT: l, ITL: l}
}

// recordedFields are the recorded series by name, built once: every row of
// every refresh is looked up.
var recordedFields = map[string]func(*catalogue.Recorded) *float64{
	promql.RecordedRunning:                             func(r *catalogue.Recorded) *float64 { return &r.Running },
	promql.RecordedWaiting:                             func(r *catalogue.Recorded) *float64 { return &r.Waiting },
	promql.RecordedRequests:                            func(r *catalogue.Recorded) *float64 { return &r.Requests },
	promql.RecordedPrompted:                            func(r *catalogue.Recorded) *float64 { return &r.PromptTokens },
	promql.RecordedGenerated:                           func(r *catalogue.Recorded) *float64 { return &r.GenerationTokens },
	promql.RecordedPreempted:                           func(r *catalogue.Recorded) *float64 { return &r.Preemptions },
	promql.RecordedRecomputed:                          func(r *catalogue.Recorded) *float64 { return &r.RecomputedTokens },
	promql.RecordedQuantile(promql.LatencyTTFT, "p99"): func(r *catalogue.Recorded) *float64 { return &r.TTFT.P99 },
	promql.RecordedQuantile(promql.LatencyTTFT, "p50"): func(r *catalogue.Recorded) *float64 { return &r.TTFT.P50 },
	promql.RecordedObservations(promql.LatencyTTFT):    func(r *catalogue.Recorded) *float64 { return &r.TTFT.Observations },
	promql.RecordedQuantile(promql.LatencyITL, "p99"):  func(r *catalogue.Recorded) *float64 { return &r.ITL.P99 },
	promql.RecordedQuantile(promql.LatencyITL, "p50"):  func(r *catalogue.Recorded) *float64 { return &r.ITL.P50 },
	promql.RecordedObservations(promql.LatencyITL):     func(r *catalogue.Recorded) *float64 { return &r.ITL.Observations },
}

// rulesRecheck is how long a store that showed no vtop rules is read raw
// before it is asked again.
const rulesRecheck = time.Minute

// refreshRecorded is a refresh through the fast path; false when the
// rules are not there to read (the raw path then reads the window).
func (s *Source) refreshRecorded(ctx context.Context, start time.Time, sent int64) bool {
	if s.cfg.Rules.SLOTTFT <= 0 || !s.noRulesAt.IsZero() && time.Since(s.noRulesAt) < rulesRecheck {
		return false
	}
	// The question is one small series: a store that cannot answer it
	// within half the timeout is read raw, not made to wait twice.
	askCtx, cancel := context.WithTimeout(ctx, s.cfg.Timeout/2)
	info, note, ok := s.findRules(askCtx, s.evaluationTime())
	cancel()
	s.mu.Lock()
	s.rulesNote = note
	s.mu.Unlock()
	if !ok {
		if note == "" {
			s.noRulesAt = time.Now()
		}
		return false
	}
	s.noRulesAt = time.Time{}
	// The raw read of the replicas on screen is asked beside the rules'
	// rows, not after them: the refresh waits for the slower of the two.
	besideIn := make(chan []catalogue.Readings, 1)
	go func() { besideIn <- s.besideRaw(ctx, info.labels.get(promql.InfoGroupBy), info.at) }()
	r, err := s.readRecorded(ctx, info)
	raw := <-besideIn
	if note := laggedNote(r.at, r.readAt, info.interval); err == nil && note != "" {
		s.mu.Lock()
		s.rulesNote = note
		s.mu.Unlock()
		s.noRulesAt = time.Now() // asked again a minute later, as a store without rules is
		return false
	}
	if ctx.Err() != nil {
		return true
	}
	if err == nil {
		r.readings = withRaw(r.readings, raw)
		s.raw.reset() // the raw window is read whole when the raw path is next taken
	}
	s.publish(start, sent, info.at, err, r.readings, r.warnings, Stats{Series: r.rows, Samples: r.rows, Path: PathRules})
	return true
}

// overrunNote says, when a refresh of the raw path took longer than the
// interval, that the store's recording rules would make it cheap.
func overrunNote(st catalogue.SourceStatus, interval time.Duration) string {
	took := time.Duration(st.RefreshSeconds * float64(time.Second))
	if st.Path != PathRaw || took <= interval {
		return ""
	}
	return fmt.Sprintf("a refresh of the raw series took %s, longer than the %s interval: `vtop rules` loaded into the store makes it cheap (vtop then reads what the rules recorded)",
		took.Round(10*time.Millisecond), interval)
}

// maxInView bounds the replicas on screen read raw beside the fast path
// (SetInView): a screenful of the tallest terminal. The raw read's cost
// is in those replicas, so that the refresh's stays constant in the
// fleet's size.
const maxInView = 200

// SetInView names the replicas on screen (the panes of the grid's page,
// the rows of the table in view), in the order drawn; nil for none. On
// the fast path their raw series are read beside the rules' rows, from
// the next refresh on, for what the rules do not record, and for
// inViewLinger after they leave the screen. It reports
// whether the set calls for a refresh now: the fast path is read and the
// set names a replica not read raw already (monitor.Source.SetInView).
func (s *Source) SetInView(replicas []string) (readNow bool) {
	replicas = slices.Clone(replicas[:min(len(replicas), maxInView)])
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leftView == nil {
		s.leftView = map[string]time.Time{}
	}
	for _, r := range s.inView {
		if !slices.Contains(replicas, r) {
			s.leftView[r] = now
		}
	}
	for _, r := range replicas {
		_, lingers := s.leftView[r]
		if s.stats.Path == PathRules && !lingers && !slices.Contains(s.inView, r) && !slices.Contains(s.wanted, r) {
			readNow = true
		}
		delete(s.leftView, r)
	}
	s.inView = replicas
	return readNow
}

// inViewLinger is how long a replica that left the screen is still read
// raw. A replica whose raw state and the rules' differ is sorted apart by
// each: read raw, it could leave the screen, fall back to the rules'
// state, come back into view, and so flip between the two every refresh
// (each flip an event); lingering, it stays read raw while the screen
// holds it.
const inViewLinger = time.Minute

// rawNames are the replicas read raw beside the fast path, sorted: those
// wanted in detail, those on screen, and those that left the screen (left,
// by when) less than inViewLinger before now, the most recent first
// within maxInView. Those that left longer ago are forgotten from left.
func rawNames(wanted, inView []string, left map[string]time.Time, now time.Time) []string {
	var recent []string
	for name, when := range left {
		if now.Sub(when) >= inViewLinger {
			delete(left, name)
		} else if !slices.Contains(inView, name) {
			recent = append(recent, name)
		}
	}
	slices.SortFunc(recent, func(a, b string) int { return left[b].Compare(left[a]) })
	room := max(maxInView-len(inView), 0)
	names := slices.Concat(wanted, inView, recent[:min(len(recent), room)])
	slices.Sort(names)
	return slices.Compact(names)
}

// rawBeside is the raw path for the replicas on screen and wanted in
// detail (SetInView, SetWanted), beside the fast path: a source of its own
// over the selector narrowed to them, kept while they stay the same so
// that its reads are increments, evaluated at the rules' time. Its
// queries are those of a raw refresh, as many whatever the replicas: one
// selector names them all.
type rawBeside struct {
	names []string
	src   *Source
	at    time.Time // the evaluation its next refresh reads
}

// besideRaw reads the raw series of the replicas on screen (or just
// left it) and wanted at at, the group label by naming them (rawNames);
// nil when there are none.
func (s *Source) besideRaw(ctx context.Context, by string, at time.Time) []catalogue.Readings {
	s.mu.Lock()
	names := rawNames(s.wanted, s.inView, s.leftView, time.Now())
	s.mu.Unlock()
	if len(names) == 0 {
		s.beside = nil
		return nil
	}
	if s.beside == nil || !slices.Equal(s.beside.names, names) {
		b := &rawBeside{names: names}
		cfg := s.cfg
		cfg.Rules, cfg.GPUs, cfg.IdentifyStore, cfg.BucketsAbove = promql.RulesSettings{}, false, false, -1
		cfg.Window = s.analysisWindow()
		cfg.Now = func() time.Time { return b.at.Add(settle) }
		cfg.Selector = promql.Selector("", s.q.matchers, promql.MatchAny(by, names...))
		src, err := New(cfg)
		if err != nil {
			return nil // a replica's name that makes no selector: its rows stand
		}
		b.src, s.beside = src, b
	}
	s.beside.at = at
	s.beside.src.SetWindow(s.analysisWindow())
	s.beside.src.refresh(ctx)
	s.requests.Add(int64(s.beside.src.Stats().LastRequests)) // the refresh's queries count them
	readings, when := s.beside.src.ReadingsAt(nil)
	if !when.Equal(at) {
		return nil // its read failed: the rules' rows stand
	}
	return readings
}

// withRaw puts the raw readings in place of the recorded ones of the
// same replicas.
func withRaw(recorded, raw []catalogue.Readings) []catalogue.Readings {
	byName := map[string]catalogue.Readings{}
	for _, r := range raw {
		if len(r.Samples) > 0 {
			byName[r.Target] = r
		}
	}
	for i, r := range recorded {
		if w, ok := byName[r.Target]; ok {
			recorded[i] = w
		}
	}
	return recorded
}
