package analysis

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/human"
)

// Analyze evaluates every target over the window [now-cfg.Window, now]
// and returns the report; samples after now are ignored, and a cfg.Window
// not above zero is the default. prev is the previous evaluation (nil for
// the first, or for one-shot reports): hysteresis, events and the
// autoscaler's recent recommendations carry on from it.
func Analyze(now time.Time, targets []catalogue.Readings, cfg Config, prev *Report) Report {
	if cfg.Window <= 0 {
		cfg.Window = DefaultConfig().Window
	}
	r := Report{Time: now, WindowSeconds: cfg.Window.Seconds(), Replicas: make([]ReplicaReport, 0, len(targets))}
	befores := previousReports(prev, len(targets), func(i int) string { return targets[i].Target })
	var prevTime time.Time
	var prevFleet *FleetFigures
	if prev != nil {
		prevTime, prevFleet = prev.Time, &prev.Fleet
	}
	var w window
	late := lateRound(targets, befores, now)
	for i, t := range targets {
		if t.Recorded != nil && len(t.Samples) == 0 {
			r.Replicas = append(r.Replicas, recordedReplica(now, t.Target, t.Recorded, cfg))
			continue
		}
		r.Replicas = append(r.Replicas, analyzeReplica(&w, now, t, cfg, befores[i], prevTime, late != ""))
	}
	r.Fleet = fleetFigures(r.Replicas, cfg, now, prevFleet)
	r.Fleet.LateRound = late
	fleetGroups(&r.Fleet, r.Replicas, cfg, now, prevFleet)
	alignFullActions(r.Replicas, &r.Fleet)
	r.followChanges(prev, befores)
	r.Events = append(r.Events, events(now, r.Replicas, befores, cfg)...)
	return r
}

// previousReports finds the report in prev of each of n targets (nil
// where there is none), indexed: fleets run to hundreds of replicas.
func previousReports(prev *Report, n int, target func(i int) string) []*ReplicaReport {
	befores := make([]*ReplicaReport, n)
	if prev == nil {
		return befores
	}
	index := make(map[string]*ReplicaReport, len(prev.Replicas))
	for i := range prev.Replicas {
		index[prev.Replicas[i].Target] = &prev.Replicas[i]
	}
	for i := range befores {
		befores[i] = index[target(i)]
	}
	return befores
}

// analyzeReplica evaluates one target in w, whose scratch space it reuses.
// prev is the target's previous report, evaluated at prevTime (nil, and
// the zero time, when there is none).
func analyzeReplica(w *window, now time.Time, t catalogue.Readings, cfg Config, prev *ReplicaReport, prevTime time.Time, lateRound bool) ReplicaReport {
	samples := upTo(t.Samples, now)
	rep := naReport(t.Target)
	if len(samples) == 0 {
		rep.WarmingUp = true
		rep.State, rep.Pending = StateWarming, StateWarming
		rep.Reasons = []string{"waiting for the first scrape"}
		rep.Severity = SeverityOf(&rep, cfg)
		rep.Point = point(now, &rep, nil)
		return rep
	}
	w.reset(samples, now, cfg.Window)
	w.stored = t.Buckets
	rep.WarmingUp = len(w.samples) < 2
	rep.Samples = len(w.samples)
	if n := len(w.samples); n > 1 {
		rep.CoveredSeconds = w.samples[n-1].Time.Sub(w.samples[0].Time).Seconds()
	}
	run := failureRun(samples, prev, prevTime)
	rep.DownSince, rep.FailedScrapes = run.since, run.count
	rep.newestSample = samples[len(samples)-1].Time
	late := isLate(run, lateRound || behindPool(prev, run))
	if late && prev != nil {
		// A late answer proves nothing new: the last verdict stands.
		return lateReport(prev, run, &samples[len(samples)-1], now)
	}
	newestGood := lastGood(samples)
	rep.readNewestGood(newestGood)
	c := downOrLate(&rep, samples, run, now, late)
	var restart string
	switch last := lastGoodEvaluation(prev, run, newestGood); {
	case last != nil:
		lastSeenFigures(&rep, last)
	case newestGood != nil && run.count > 0:
		w.figuresAtLastGood(&rep, samples, newestGood, cfg)
	case newestGood != nil:
		c, restart = w.judge(&rep, c, samples, newestGood, prev, now, cfg)
	}
	rep.show(c, prev, run, restart, cfg)
	if run.count > 0 {
		rep.Point = gapPoint(now, rep.State)
	} else {
		rep.Point = point(now, &rep, w)
	}
	return rep
}

// readNewestGood takes what the newest good scrape says of the replica.
func (rep *ReplicaReport) readNewestGood(newestGood *catalogue.Sample) {
	if newestGood == nil {
		return
	}
	rep.LastGood = newestGood.Time
	rep.Model = newestGood.Model
	rep.ProcessRSSBytes = Num(newestGood.ProcessRSSBytes)
	rep.Warnings = newestGood.Warnings
	rep.Instances = newestGood.Instances
}

// downOrLate is the verdict of a replica whose scrapes fail (DOWN, or
// late); the zero verdict while it answers.
func downOrLate(rep *ReplicaReport, samples []catalogue.Sample, run failures, now time.Time, late bool) verdict {
	c, down := downVerdict(samples, run, rep.Target, now)
	if !down {
		return verdict{}
	}
	newest := &samples[len(samples)-1]
	if !newest.OK() {
		rep.Error = newest.Err
	}
	if late {
		c, rep.Late = lateVerdict(newest), true
	}
	return c
}

// figuresAtLastGood gives a failing replica with no earlier evaluation
// the figures an evaluation at its last good scrape would have had.
func (w *window) figuresAtLastGood(rep *ReplicaReport, samples []catalogue.Sample, newestGood *catalogue.Sample, cfg Config) {
	w.reset(samples, newestGood.Time, cfg.Window)
	w.replicaFigures(rep, newestGood, cfg)
	describeEngine(rep, newestGood)
	rep.Restarted, rep.RestartedAt, rep.restartCause = false, time.Time{}, ""
	rep.finishUncounted = !countsFinished(&newestGood.Total)
}

// judge reads the figures and the evidence of a replica whose newest scrape
// is good, and classifies it unless c says it is DOWN; it returns the
// verdict and the restart note ("" when none).
func (w *window) judge(rep *ReplicaReport, c verdict, samples []catalogue.Sample, newestGood *catalogue.Sample, prev *ReplicaReport, now time.Time, cfg Config) (verdict, string) {
	ev, restart := w.replicaFigures(rep, newestGood, cfg)
	ev.WasSlow = prev != nil && prev.State == StateSlow
	ev.WasFull = prev != nil && prev.State == StateFull
	ev.WasRecovering = prev != nil && prev.State == StateRecovering
	w.capacity(rep, &ev, newestGood, prev)
	rep.finishUncounted, rep.trailQueue = !countsFinished(&newestGood.Total), ev.Trail.Queue
	describeEngine(rep, newestGood)
	ev.Kind, ev.Router, ev.Derived = rep.EngineKind, rep.Router != catalogue.RouterNone, newestGood.Derived
	ev.NoLatency = !hasLatency(newestGood)
	ev.Quiet = quietSpan(samples, prev)
	ev.Refused = w.refusedUnknown()
	ev.GCMoved = w.sampleIncrease(func(s *catalogue.Sample) float64 { return s.GCCollections }) > 0
	ev.HTTPIncrease = w.sampleIncrease(func(s *catalogue.Sample) float64 { return s.HTTPRequests })
	ev.PoolQueue = poolQueueOf(samples, now, newestGood.EngineKind)
	rep.busyOnPool = busyOnPool(newestGood)
	if c.State != StateDown {
		c = w.classifyReplica(rep, &ev, cfg)
	}
	return c, restart
}

// capacity sets the replica's batch cap, how long it has been at capacity
// and what it finishes there, into rep and ev.
func (w *window) capacity(rep *ReplicaReport, ev *evidence, newestGood *catalogue.Sample, prev *ReplicaReport) {
	if stated := statedBatchCap(newestGood, ev.Running.Max); stated > 0 {
		rep.BatchCap, rep.BatchCapSince, rep.BatchCapStated = Num(stated), time.Time{}, true
	} else {
		rep.BatchCap, rep.BatchCapSince = batchCap(rep, prev, ev, w)
	}
	ev.BatchCap, ev.BatchCapSince, ev.BatchCapStated = rep.BatchCap.Float(), rep.BatchCapSince, rep.BatchCapStated
	var rising bool
	rep.AtCapacitySeconds, rep.CapacityPerSecond, rep.ArrivalsAtCapacity, rep.WaitingGrowthAtCapacity, rising = w.atCapacity(ev)
	rep.CapacitySettled = capacitySettled(rep.AtCapacitySeconds, rising, prev)
}

// classifyReplica is the verdict of a replica that answers, with the notes
// its router and its failing transfers add.
func (w *window) classifyReplica(rep *ReplicaReport, ev *evidence, cfg Config) verdict {
	rep.AtCapacity = ev.canJudge(catalogue.JudgeFull) && fullEvidence(&rep.Figures, ev, cfg)
	c := classify(&rep.Figures, ev, cfg)
	if c.State == StateStalled {
		rep.LastToken, rep.lastTokenBound = ev.Quiet.Since, !ev.Quiet.Found
	}
	if ev.Router {
		c.Reasons = append(c.Reasons, routerNote(rep))
	}
	if ev.NIXLFailed > 0 {
		// Failing transfers lose work whatever the state: a warning.
		rep.Warnings = append(slices.Clip(rep.Warnings), nixlFailureText(&rep.Figures, ev))
	}
	return c
}

// show sets the state shown, held by hysteresis against prev, its reasons,
// what is pending and the severity.
func (rep *ReplicaReport) show(c verdict, prev *ReplicaReport, run failures, restart string, cfg Config) {
	shown, pending, pendingCount := hysteresis(c, prev, cfg.Hysteresis, &rep.Figures)
	if shown.State == StateHealthy && c.State != StateHealthy && len(overSLOFigures(&rep.Figures, cfg, false)) > 0 {
		// HEALTHY is never shown beside a window figure over its SLO.
		shown, pending, pendingCount = c, c.State, 0
	}
	rep.State, rep.Reasons, rep.Action = shown.State, shown.Reasons, shown.Action
	if c.State != StateDown && run.count == 0 {
		rep.Reasons = withAbortReason(rep.Reasons, &rep.Figures, rep.AtCapacity)
	}
	if restart != "" {
		rep.Reasons = append(rep.Reasons, restart)
	}
	rep.Pending, rep.PendingCount = pending, pendingCount
	rep.Severity = SeverityOf(rep, cfg)
}

// batchCap is the most requests the replica has been seen running at once,
// and since when: carried from the previous evaluation, not across a
// restart (the new process may run with another --max-num-seqs).
func batchCap(rep, prev *ReplicaReport, ev *evidence, w *window) (Num, time.Time) {
	seen := ev.Running.Max
	carried := prev != nil && prev.BatchCap.Known() && !(rep.Restarted && prev.BatchCapSince.Before(rep.RestartedAt))
	if carried {
		if math.IsNaN(seen) || seen <= prev.BatchCap.Float() {
			return prev.BatchCap, prev.BatchCapSince
		}
		return Num(seen), prev.BatchCapSince
	}
	if math.IsNaN(seen) || len(w.samples) == 0 {
		return NA, time.Time{}
	}
	since := w.samples[0].Time
	if rep.Restarted {
		since = rep.RestartedAt
	}
	return Num(seen), since
}

// statedBatchCap is the batch cap the newest page states (TensorRT-LLM,
// Triton), NaN where it states none or not the cap of the running it
// counts: a frontend states a worker's cap while its running sums theirs,
// and a cap the window's running went beyond is not the one it runs at.
func statedBatchCap(s *catalogue.Sample, runningMax float64) float64 {
	c := s.Total.Scalars[catalogue.MaxRunning]
	if !(c > 0) || runningMax > c || s.EngineKind < catalogue.NumEngineKinds && catalogue.Capabilities[s.EngineKind].FrontsWorkers {
		return math.NaN()
	}
	return c
}

// lastGoodEvaluation is the previous report whose figures a failing
// target keeps; nil when the newest scrape succeeded, there is none, or
// a newer good scrape is in hand.
func lastGoodEvaluation(prev *ReplicaReport, run failures, newestGood *catalogue.Sample) *ReplicaReport {
	if run.count == 0 || prev == nil || prev.LastGood.IsZero() {
		return nil
	}
	if newestGood != nil && newestGood.Time.After(prev.LastGood) {
		return nil
	}
	return prev
}

// lastSeenFigures gives a failing replica the figures of the last good
// evaluation, frozen and dated by LastGood.
func lastSeenFigures(rep *ReplicaReport, last *ReplicaReport) {
	rep.Figures, rep.Engines = last.Figures, last.Engines
	rep.LastGood, rep.Model = last.LastGood, last.Model
	rep.ProcessRSSBytes, rep.GCPerSecond = last.ProcessRSSBytes, last.GCPerSecond
	rep.EngineKind, rep.Router, rep.Backends, rep.Role = last.EngineKind, last.Router, last.Backends, last.Role
	rep.Derived, rep.LoRA = last.Derived, last.LoRA
	rep.BatchCap, rep.BatchCapSince, rep.BatchCapStated = last.BatchCap, last.BatchCapSince, last.BatchCapStated
	rep.finishUncounted, rep.trailQueue = last.finishUncounted, last.trailQueue
}

// replicaFigures fills the figures of the replica and of its engines and
// returns the evidence of the replica as a whole, and the restart reason
// when the window holds a restart. Gauges come from the newest good
// sample even when it is older than the window.
func (w *window) replicaFigures(rep *ReplicaReport, newestGood *catalogue.Sample, cfg Config) (ev evidence, note string) {
	if len(w.samples) == 0 {
		w.onlySample(newestGood)
	}
	series := w.seriesScratch()
	for i, s := range w.samples {
		series[i] = &s.Total
	}
	ev = w.figures(&rep.Figures, series, newestGood.KVCapacityTokens, cfg)
	w.stored = nil // the store's buckets are the replica's, not an engine's
	gc := w.sampleRun(func(s *catalogue.Sample) float64 { return s.GCCollections })
	rep.GCPerSecond = Num(w.rateOf(&gc))
	rep.RestartedAt, rep.restartCause = w.restart(ev.ResetMs)
	rep.Restarted = !rep.RestartedAt.IsZero()
	ev.EvidenceSeconds = ev.SpanSeconds
	if rep.Restarted {
		note = restartNote(rep.RestartedAt, rep.restartCause, cfg.Window)
		// The old process's readings prove nothing of the new one.
		ev.EvidenceSeconds, ev.RestartedAt = newestGood.Time.Sub(rep.RestartedAt).Seconds(), rep.RestartedAt
	}
	if len(w.samples) < 2 {
		// One reading: gauges only. Rates and quantiles need two.
		rep.Figures = gaugesOnly(rep.Figures)
		rep.GCPerSecond = NA
	}
	if len(newestGood.Engines) >= 2 {
		rep.Engines = w.engineReports(newestGood.Engines, cfg, len(w.samples) < 2)
	}
	return ev, note
}

// engineReports computes each data-parallel engine's figures, matching the
// engines of older samples by name.
func (w *window) engineReports(engines []catalogue.Engine, cfg Config, gaugesOnlyFigures bool) []EngineReport {
	out := make([]EngineReport, len(engines))
	w.markEnginesInOrder(engines)
	for e := range engines {
		series := w.seriesScratch()
		for i, s := range w.samples {
			if w.inOrder[i] {
				series[i] = &s.Engines[e].Series
			} else {
				series[i] = s.EngineSeries(engines[e].Name)
			}
		}
		r := &out[e]
		r.Engine = engines[e].Name
		w.figures(&r.Figures, series, math.NaN(), cfg)
		if gaugesOnlyFigures {
			r.Figures = gaugesOnly(r.Figures)
		}
	}
	return out
}

// markEnginesInOrder marks the samples whose engines are named as engines
// are, in the same order, with no name twice: there an engine is at its
// index. Names seldom change, so they are compared once per sample rather
// than searched for per engine.
func (w *window) markEnginesInOrder(engines []catalogue.Engine) {
	if cap(w.inOrder) < len(w.samples) {
		w.inOrder = make([]bool, 0, len(w.samples))
	}
	w.inOrder = w.inOrder[:0]
	distinct := distinctEngineNames(engines)
	for _, s := range w.samples {
		w.inOrder = append(w.inOrder, distinct && sameEngineNames(s.Engines, engines))
	}
}

// distinctEngineNames reports whether no two engines share a name (indexed:
// a range would copy each engine's whole series).
func distinctEngineNames(engines []catalogue.Engine) bool {
	for e := range engines {
		for before := range e {
			if engines[before].Name == engines[e].Name {
				return false
			}
		}
	}
	return true
}

// sameEngineNames reports whether a and b name the same engines in the
// same order.
func sameEngineNames(a, b []catalogue.Engine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// sampleIncrease is increase() of a process-level counter of the samples.
func (w *window) sampleIncrease(value func(*catalogue.Sample) float64) float64 {
	r := w.sampleRun(value)
	return w.increaseOf(&r)
}

// sampleRun is the run of a process-level counter over the samples.
func (w *window) sampleRun(value func(*catalogue.Sample) float64) counterRun {
	var r counterRun
	for i, s := range w.samples {
		r.add(w.ms[i], value(s))
	}
	return r
}

// restart returns the first scrape of the newest process in the window and
// how the restart shows: process_start_time_seconds changing, or a counter
// going down at resetMs (Unix ms, 0 for none). Zero time when neither.
func (w *window) restart(resetMs int64) (time.Time, string) {
	var started time.Time
	last := math.NaN()
	for _, s := range w.samples {
		if v := s.ProcessStartTime; !math.IsNaN(v) {
			if !math.IsNaN(last) && v != last {
				started = s.Time
			}
			last = v
		}
	}
	if !started.IsZero() && started.UnixMilli() >= resetMs {
		return started, "process_start_time_seconds changed"
	}
	for _, s := range w.samples {
		if resetMs > 0 && s.Time.UnixMilli() == resetMs {
			return s.Time, "a counter went down"
		}
	}
	return time.Time{}, ""
}

// restartNote is the reason a replica with a restart in its window is
// given, whatever its state: the gauges fell to zero with it, skewing the
// growth and arrivals read off them until it leaves the window.
func restartNote(at time.Time, cause string, window time.Duration) string {
	return fmt.Sprintf("%s%s (%s): rates count across it (Prometheus's reset rule); arrivals and queue growth are skewed until %s",
		restartPrefix, at.Format(human.Clock), cause, at.Add(window).Format(human.Clock))
}

// restartPrefix starts the restart reason, so that a held reason can
// leave an old one out.
const restartPrefix = "window holds a restart at "

// upTo returns the prefix of samples (oldest first) taken at or before now.
func upTo(samples []catalogue.Sample, now time.Time) []catalogue.Sample {
	n := len(samples)
	for n > 0 && samples[n-1].Time.After(now) {
		n--
	}
	return samples[:n]
}

// lastGood returns the newest successful sample, nil when there is none.
func lastGood(samples []catalogue.Sample) *catalogue.Sample {
	for i := len(samples) - 1; i >= 0; i-- {
		if samples[i].OK() {
			return &samples[i]
		}
	}
	return nil
}

// naReport is the report of target before anything is read of it.
func naReport(target string) ReplicaReport {
	return ReplicaReport{Target: target, Figures: naFigures(), ProcessRSSBytes: NA, GCPerSecond: NA, BatchCap: NA,
		CapacityPerSecond: NA, ArrivalsAtCapacity: NA, WaitingGrowthAtCapacity: NA}
}

// naFigures returns Figures in which everything is unknown.
func naFigures() Figures { return unknownFigures }

// unknownFigures and unknownAdvice have every figure n/a (allNA).
var unknownFigures, unknownAdvice = allNA[Figures](), allNA[Advice]()

// allNA returns a T whose every Num, in nested structs too, is n/a: a
// figure is unknown until computed, so that a field added later is n/a,
// never 0.
func allNA[T any]() T {
	var t T
	setNA(reflect.ValueOf(&t).Elem())
	return t
}

// setNA sets every settable Num of v, in nested structs too, to NA.
func setNA(v reflect.Value) {
	if v.Type() == reflect.TypeFor[Num]() {
		v.Set(reflect.ValueOf(NA))
		return
	}
	if v.Kind() == reflect.Struct {
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				setNA(f)
			}
		}
	}
}

// gaugesOnly keeps the gauges and the KV capacity of f; everything that
// needs two readings becomes n/a.
func gaugesOnly(f Figures) Figures {
	g := naFigures()
	g.Running, g.Waiting, g.KVCacheUsage, g.KVCapacityTokens = f.Running, f.Waiting, f.KVCacheUsage, f.KVCapacityTokens
	g.WaitingCapacity, g.WaitingDeferred, g.SleepLevel = f.WaitingCapacity, f.WaitingDeferred, f.SleepLevel
	return g
}

// gapPoint is the history point of an evaluation that read nothing: a
// gap, not old figures drawn as if current.
func gapPoint(now time.Time, s State) Point {
	return point(now, &ReplicaReport{State: s, Figures: naFigures()}, nil)
}

// point reduces the evaluation to a history point. w may be nil.
func point(now time.Time, rep *ReplicaReport, w *window) Point {
	f := &rep.Figures
	p := Point{Time: now, State: rep.State}
	for c := range catalogue.NumChartFigures {
		*p.Chart(c) = float32(f.Chart(c)) // unknown stays NaN
	}
	if w != nil {
		p.PromptLengthBounds, p.PromptLengthDeltas = w.promptLengthColumn()
	}
	return p
}

// promptLengthColumn is one column of the prompt-length heatmap: the
// requests that finished in each bucket of vllm:request_prompt_tokens
// between the last two good samples (a reset counts the new value). Nil
// when either lacks its buckets or the bounds changed.
func (w *window) promptLengthColumn() ([]float64, []float32) {
	n := len(w.samples)
	if n < 2 {
		return nil, nil
	}
	a, b := &w.samples[n-2].Total.Histograms[catalogue.PromptLength], &w.samples[n-1].Total.Histograms[catalogue.PromptLength]
	if !catalogue.Comparable(a, b) || len(b.Bounds) == 0 {
		return nil, nil

	}
	deltas := make([]float32, len(b.Bounds))
	prevCum := 0.0
	for j := range b.Bounds {
		cum := b.Counts[j] - a.Counts[j]
		if b.Counts[j] < a.Counts[j] {
			cum = b.Counts[j]
		}
		d := cum - prevCum
		if !(d > 0) {
			d = 0
		}
		deltas[j] = float32(d)
		if cum > prevCum {
			prevCum = cum
		}
	}
	return b.Bounds, deltas
}
