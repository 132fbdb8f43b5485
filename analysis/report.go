package analysis

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/gpu/device"
)

// Num is a figure that may be unknown. NaN means "n/a": the server does not
// export the metric, or the window holds too little to compute it. It is
// written as null in JSON, never as 0.
type Num float64

// NA is the unknown figure.
var NA = Num(math.NaN())

// Known reports whether the figure has a value.
func (n Num) Known() bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }

// Float returns the figure as a float64 (NaN when unknown).
func (n Num) Float() float64 { return float64(n) }

// jsonDigits is how many significant digits a figure is written with in
// JSON: enough for every digit a scraped value or a Prometheus rate
// carries, few enough to drop the noise of binary floating point
// (11.100000000000001 is written 11.1).
const jsonDigits = 12

// MarshalJSON writes the figure rounded to jsonDigits significant digits
// and then written shortest (strconv's 'g' of the rounded value:
// e-notation for an exponent below -4 or from 6 up), or null when it is
// unknown. It is the one definition of a figure's JSON.
func (n Num) MarshalJSON() ([]byte, error) {
	return n.appendJSON(make([]byte, 0, 24)), nil
}

// appendJSON appends the figure as MarshalJSON writes it, for the
// QuantileBucket's two bounds. It lays out the digits of one formatting
// instead of a format, a parse and a format, which were nearly half of the
// cost of writing a report.
func (n Num) appendJSON(dst []byte) []byte {
	f := float64(n)
	if !n.Known() {
		return append(dst, "null"...)
	}
	if f == 0 {
		// A fifth of a report's figures (a reason never seen, a queue that
		// is empty): the long way below writes them so.
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	if math.Abs(f) < minExactNormal {
		// Values so small that their binary digits are fewer than
		// jsonDigits decimal ones: the long way.
		rounded, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', jsonDigits, 64), 64)
		if err != nil {
			return append(dst, "null"...) // unreachable: the text is strconv's own
		}
		return strconv.AppendFloat(dst, rounded, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e6 {
		// A whole figure below e-notation (a gauge, a count, a bucket's
		// bound; a third of a report's figures): its few digits are
		// exact, and its text is the integer's.
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	return appendRounded(dst, f)
}

// appendRounded appends f (positive, normal) rounded to jsonDigits and
// written shortest, as MarshalJSON does.
func appendRounded(dst []byte, f float64) []byte {
	// The jsonDigits digits of the rounding and their exponent. Those
	// digits, without their trailing zeros, are the shortest text of the
	// rounded value: a decimal of at most 15 significant digits reads back
	// to itself through a normal float64.
	digits, exp := figureDigits(f)
	nd := jsonDigits
	for nd > 1 && digits[nd-1] == '0' {
		nd--
	}
	if exp < -4 || exp >= 6 {
		dst = append(dst, digits[0])
		if nd > 1 {
			dst = append(append(dst, '.'), digits[1:nd]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for range -exp - 1 {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	whole := exp + 1
	if nd <= whole {
		dst = append(dst, digits[:nd]...)
		for range whole - nd {
			dst = append(dst, '0')
		}
		return dst
	}
	return append(append(append(dst, digits[:whole]...), '.'), digits[whole:nd]...)
}

// figureDigits returns the jsonDigits digits of f (positive, normal)
// rounded, and the decimal exponent of the first, from strconv's
// d.ddddddddddde±XX.
func figureDigits(f float64) (digits [jsonDigits]byte, exp int) {
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', jsonDigits-1, 64)
	digits[0] = e[0]
	copy(digits[1:], e[2:jsonDigits+1])
	for _, c := range e[jsonDigits+3:] {
		exp = exp*10 + int(c-'0')
	}
	if e[jsonDigits+2] == '-' {
		exp = -exp
	}
	return digits, exp
}

// minExactNormal is well above the subnormal floats, whose few binary
// digits may read back shorter than their jsonDigits decimal ones.
const minExactNormal = 1e-290

// UnmarshalJSON reads a figure; null reads as unknown.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NA
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// State is the one label a replica gets. Higher values are worse: the fleet
// view sorts by it, and when several conditions hold the highest wins.
type State uint8

// The states, from best to worst (docs/verdicts.md writes down the evidence
// of each). StateUnjudged is a replica whose page cannot show whether it is
// SLOW (no latency histograms), or whose window holds too few requests to
// read a p99 by while some of them missed the SLO: none of the problems it
// can be judged on is there, but it is not proven healthy. StateWarming is
// a replica that cannot be judged yet, its window short of the least
// evidence a verdict of health needs. Both rank above the states that prove
// a replica fine, so that they are not read as one of them, and below
// every state that proves a problem, which needs the engineer first. StateSleeping is an engine put
// to sleep (vLLM's /sleep): it answers, so it is not down, and it could
// not serve if asked, so it is not idle; it ranks above idle because it
// may be asleep by mistake. StateRecovering is a replica whose problem has
// passed while its window's figures still hold it (a p99 over the SLO from
// a backlog that is gone): not a problem to act on, not healthy either.
// StateStalled is an engine that stopped stepping while its API server
// still answers: work is there and no token moves.
const (
	StateHealthy State = iota
	StateIdle
	StateSleeping
	StateUnjudged
	StateWarming
	StateRecovering
	StateStale
	StateSlow
	StateFull
	StatePreempting
	StateStalled
	StateDown
)

var stateNames = [...]string{"healthy", "idle", "sleeping", "unjudged", "warming", "recovering", "stale", "slow", "full", "preempting", "stalled", "down"}

// String returns the state's lowercase name, as in JSON.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state's name.
func (s *State) UnmarshalText(b []byte) error {
	for i, name := range stateNames {
		if name == string(b) {
			*s = State(i)
			return nil
		}
	}
	return &unknownStateError{string(b)}
}

type unknownStateError struct{ name string }

func (e *unknownStateError) Error() string { return "unknown state " + strconv.Quote(e.name) }

// Quantiles summarises one latency histogram over the window.
type Quantiles struct {
	Mean Num `json:"mean"`
	P50  Num `json:"p50"`
	P90  Num `json:"p90"`
	P99  Num `json:"p99"`
	// Observations is the increase of the histogram's _count over the
	// window (Prometheus's increase(), so not always whole): how many
	// requests, or tokens for ITL, the quantiles are read from.
	Observations Num `json:"observations"`
	// P50Bucket, P90Bucket and P99Bucket are the buckets the quantiles
	// fell in: the quantile is known to lie between their bounds, and its
	// value is histogram_quantile's linear interpolation inside them.
	P50Bucket QuantileBucket `json:"p50_bucket"`
	P90Bucket QuantileBucket `json:"p90_bucket"`
	P99Bucket QuantileBucket `json:"p99_bucket"`
}

// QuantileBucket is the histogram bucket a quantile fell in. Lower is 0 in
// the first bucket (histogram_quantile interpolates from 0 there); Upper is
// +Inf beyond the last finite bound, where histogram_quantile returns that
// bound. JSON writes it as [lower, upper], an infinite bound as null, and
// the whole as null when the quantile is n/a.
type QuantileBucket struct{ Lower, Upper Num }

// known reports whether the bucket has bounds, an upper above its lower
// (its quantile is known): a zero bucket is none.
func (b QuantileBucket) known() bool {
	return b.Upper.Float() > b.Lower.Float()
}

// wideBucketRatio is how many times its lower bound a bucket's upper
// bound may be for an interpolated quantile inside it to be shown: in a
// wider bucket the value (histogram_quantile's straight line through
// it) is no better than a guess, and may contradict the other figures
// (a p50 TTFT of "400s" inside vLLM's (160 s, 640 s] beside a p50 e2e of
// 184 s), so the bucket's bounds are shown instead. vLLM's 2-fold
// buckets, (2.5 s, 5 s] say, keep their value.
const wideBucketRatio = 2

// Shown is what a screen writes for the quantile v that fell in b: "<" and
// the upper bound in the first bucket, where the value is interpolated from
// 0 and says nothing the bound does not; ">" and the last finite bound
// beyond it, where the value is that bound; the bucket's bounds x to upTo
// in a bucket too wide to place it (wideBucketRatio); otherwise no prefix
// and v. upTo is n/a but in a wide bucket. Every screen, reason and text
// report writes a quantile through it.
func (b QuantileBucket) Shown(v Num) (prefix string, x, upTo Num) {
	switch {
	case !b.known() || !v.Known():
		return "", v, NA
	case math.IsInf(b.Upper.Float(), 1):
		return ">", b.Lower, NA
	case b.Lower == 0 || math.IsInf(b.Lower.Float(), -1):
		return "<", b.Upper, NA
	case b.Lower > 0 && b.Upper.Float() > wideBucketRatio*b.Lower.Float():
		return "", b.Lower, b.Upper
	}
	return "", v, NA
}

// Seconds writes the latency quantile v that fell in b as the reasons do:
// "<300ms", ">80s", "160s–640s", "2.48s", or "n/a".
func (b QuantileBucket) Seconds(v Num) string {
	prefix, x, upTo := b.Shown(v)
	if upTo.Known() {
		return x.Seconds() + "–" + upTo.Seconds()
	}
	return prefix + x.Seconds()
}

// MarshalJSON writes [lower, upper], an infinite bound as null, or null
// when the quantile is n/a.
func (b QuantileBucket) MarshalJSON() ([]byte, error) {
	if !b.known() {
		return []byte("null"), nil
	}
	dst := make([]byte, 0, 64)
	dst = b.Lower.appendJSON(append(dst, '['))
	return append(b.Upper.appendJSON(append(dst, ',')), ']'), nil
}

// UnmarshalJSON reads [lower, upper]; a null upper bound is +Inf, a null
// lower bound -Inf, and null the bucket of an n/a quantile.
func (b *QuantileBucket) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*b = QuantileBucket{Lower: NA, Upper: NA}
		return nil
	}
	var bounds [2]*float64
	if err := json.Unmarshal(data, &bounds); err != nil {
		return err
	}
	b.Lower, b.Upper = Num(math.Inf(-1)), Num(math.Inf(1))
	if bounds[0] != nil {
		b.Lower = Num(*bounds[0])
	}
	if bounds[1] != nil {
		b.Upper = Num(*bounds[1])
	}
	return nil
}

// FinishRates are finished requests per second by finished_reason.
type FinishRates struct {
	Stop       Num `json:"stop"`
	Length     Num `json:"length"`
	Abort      Num `json:"abort"`
	Error      Num `json:"error"`
	Repetition Num `json:"repetition"`
}

// Figures are everything vtop computes for one replica, or one engine of a
// replica, over the analysis window.
type Figures struct {
	// Gauges, at the newest sample.
	Running      Num `json:"running"`
	Waiting      Num `json:"waiting"`
	KVCacheUsage Num `json:"kv_cache_usage"` // 0–1 fraction

	// Rates over the window, with Prometheus rate() semantics.
	RequestsPerSecond         Num         `json:"requests_per_second"`
	FinishedPerSecond         FinishRates `json:"finished_per_second"`
	SuccessRate               Num         `json:"success_rate"` // stop ÷ all finished
	LengthShare               Num         `json:"length_share"`
	AbortShare                Num         `json:"abort_share"`
	PromptTokensPerSecond     Num         `json:"prompt_tokens_per_second"`
	GenerationTokensPerSecond Num         `json:"generation_tokens_per_second"`
	IORatio                   Num         `json:"io_ratio"` // prompt ÷ generation tokens
	PreemptionsPerSecond      Num         `json:"preemptions_per_second"`
	RecomputedTokensPerSecond Num         `json:"recomputed_tokens_per_second"`

	// Little's law.
	TimeRunningSeconds Num `json:"time_running_seconds"` // running ÷ finish rate
	ArrivalsPerSecond  Num `json:"arrivals_per_second"`  // finish rate + growth of running and waiting
	Efficiency         Num `json:"efficiency"`           // finish rate ÷ arrival rate
	WaitingGrowth      Num `json:"waiting_growth_per_second"`

	// Caches.
	PrefixCacheHitRate         Num `json:"prefix_cache_hit_rate"`
	SpecDecodeAcceptanceRate   Num `json:"spec_decode_acceptance_rate"`
	SpecDecodeAcceptedPerDraft Num `json:"spec_decode_accepted_per_draft"`

	// Request shape, from the length histograms.
	MeanPromptTokens     Num `json:"mean_prompt_tokens"`
	MeanGenerationTokens Num `json:"mean_generation_tokens"`

	// KV capacity and the batch it holds.
	KVCapacityTokens Num `json:"kv_capacity_tokens"`
	MaxSeqsKVHolds   Num `json:"max_num_seqs_kv_holds"`

	// Latency quantiles over the window (histogram_quantile semantics).
	TTFT    Quantiles `json:"ttft_seconds"`
	ITL     Quantiles `json:"itl_seconds"`
	E2E     Quantiles `json:"e2e_seconds"`
	Queue   Quantiles `json:"queue_seconds"`
	Prefill Quantiles `json:"prefill_seconds"`
	Decode  Quantiles `json:"decode_seconds"`

	// Goodput is the share of requests within both the TTFT and the e2e
	// SLO, read off the buckets (a lower bound when an SLO falls inside a
	// bucket).
	Goodput Num `json:"goodput"`

	// Signals are the figures of vLLM's newest families.
	Signals
}

// EngineReport is one data-parallel engine of a replica.
type EngineReport struct {
	Engine string `json:"engine"`
	Figures
}

// ReplicaReport is one target's state and figures.
type ReplicaReport struct {
	Target string `json:"target"`
	Model  string `json:"model"`
	State  State  `json:"state"`
	// Severity orders replicas worst first: 100 × the state's rank plus
	// the evidence in doublings (waiting, p99 TTFT beyond the SLO,
	// preemptions per minute); see SeverityOf for the whole rule.
	Severity float64 `json:"severity"`
	// Reasons are sentences with the numbers that prove the state.
	Reasons []string `json:"reasons"`
	// Action is the first thing to do; empty for healthy and idle.
	Action string `json:"action"`
	// Error is the last scrape error, when the newest scrape failed.
	Error string `json:"error"`
	Figures
	Engines []EngineReport `json:"engines,omitempty"`

	// ProcessRSSBytes and GCPerSecond describe the server process.
	ProcessRSSBytes Num `json:"process_rss_bytes"`
	GCPerSecond     Num `json:"gc_collections_per_second"`

	// Samples is how many good scrapes the window holds.
	Samples int `json:"samples"`
	// CoveredSeconds is the time the window's good scrapes span, oldest
	// to newest: how much of the window the figures cover (the header's
	// "so far"). Not in the JSON report, which has window_seconds and
	// samples.
	CoveredSeconds float64 `json:"-"`
	// SourceStale is set while the source that reads this replica (a
	// Prometheus server) fails: the state and figures are those of its
	// last good data, Report.Source says why and how old. The replica
	// itself may be fine.
	SourceStale bool `json:"source_stale,omitempty"`
	// Recorded is set when the replica was reported from the store's
	// recording rules of vtop (catalogue.Recorded) rather than its raw
	// series: its state is the rules' and the figures they do not record
	// are n/a.
	Recorded bool `json:"recorded,omitempty"`
	// Instances is how many scrape targets the replica's figures sum when
	// there are several (a group of a Prometheus source, such as
	// --group-by job): its rates and gauges are their totals. 0 for a
	// replica of one target.
	Instances int `json:"instances,omitempty"`
	// WarmingUp is true while the window holds fewer than two good samples:
	// gauges are shown, rates and quantiles are not yet known.
	WarmingUp bool `json:"warming_up"`
	// Restarted is true when a counter reset or a new process start time
	// was seen in the window: rates count across it (Prometheus's reset
	// rule) while gauge trends (arrivals, queue growth) are skewed by it.
	Restarted bool `json:"restarted"`
	// RestartedAt is the first scrape of the new process, the newest
	// restart in the window; zero when Restarted is false.
	RestartedAt  time.Time `json:"restarted_at,omitzero"`
	restartCause string    // how the restart shows, for its event
	// LastGood is the time of the newest good scrape (zero if none).
	LastGood time.Time `json:"last_good_scrape,omitzero"`
	// DownSince is the first failed scrape of the run of failures the
	// newest scrape ends, and FailedScrapes how many scrapes in a row have
	// failed since: both carried from the previous report, so that an
	// outage longer than the samples in hand keeps its start and its count
	// rises. Zero while the newest scrape succeeds.
	DownSince     time.Time `json:"down_since,omitzero"`
	FailedScrapes int       `json:"failed_scrapes,omitempty"`
	// Late is set while the newest scrapes got no answer within the
	// scrape timeout and have not repeated enough to prove the replica
	// down (lateScrapes), or while most of the fleet timed out at once
	// (FleetFigures.LateRound): the state, reasons, action and figures are
	// those of the last evaluation, Error says what failed and
	// FailedScrapes how many in a row (LateNote says it in a sentence). A
	// note on the replica, not a state.
	Late bool `json:"late,omitempty"`
	// newestSample is the time of the newest sample the evaluation held,
	// good or failed: the next evaluation counts the failures after it.
	newestSample time.Time
	// LastToken is, while a replica is STALLED, the newest reading at
	// which a token was generated or a request finished (when vtop has
	// seen none, the oldest reading it has without one, and
	// lastTokenBound is set): carried from the previous report when no
	// reading in hand shows it, so that a stall longer than the samples
	// in hand keeps its start. Zero otherwise.
	LastToken      time.Time `json:"last_token,omitzero"`
	lastTokenBound bool
	// Warnings are scrape problems that did not fail the scrape, and
	// failures the engine reports beside its state (failing KV transfers).
	Warnings []string `json:"warnings,omitempty"`

	// AtCapacity is set when FULL's evidence holds (a queue that persisted
	// over the newest readings) whatever state is shown: a PREEMPTING
	// replica with a standing queue is at its capacity too, and the fleet
	// advice reads what it finishes as one.
	AtCapacity bool `json:"at_capacity"`
	// AtCapacitySeconds is how long the replica has been at its capacity:
	// the span of its newest readings that each hold a queue with requests
	// running, one reading without a queue allowed inside it or at its
	// end as FULL allows it (0 when neither of the two newest holds one). CapacityPerSecond is what it
	// finished successfully per second over that span (stop and length;
	// every finished request where the page has no finish reasons), n/a
	// with fewer than two such readings: what the fleet advice reads as a
	// replica's capacity once capacitySettle of it is in, rather than the
	// window's rate, most of which may be from before the queue.
	AtCapacitySeconds float64 `json:"at_capacity_seconds"`
	CapacityPerSecond Num     `json:"capacity_per_second"`
	// CapacitySettled is set once the replica has been at capacity for
	// capacitySettle with its successful finish rate no longer rising (the
	// newest half of the span not above the whole beyond a Poisson count's
	// noise), and stays set while it stays at capacity: the advice reads
	// CapacityPerSecond, ArrivalsAtCapacity and WaitingGrowthAtCapacity as
	// the replica's only then.
	CapacitySettled bool `json:"capacity_settled"`
	// finishUncounted is set when the newest good page counts no finished
	// requests, neither a total nor by finish reason (llama.cpp): no
	// capacity can ever be read of the replica, nor its arrivals, and the
	// advice says so rather than promise a count.
	finishUncounted bool
	// trailQueue is the queue over the newest readings (evidence.Trail's):
	// the advice says of the replica's queue only the trend they show
	// (queueTrend), not its window's slope alone.
	trailQueue gaugeStats
	// busyOnPool is set when the newest page showed requests running on
	// a server whose HTTP pool may be fixed (poolQueue): its late scrapes
	// are likely that pool taken, not an outage, for longer (behindPool).
	busyOnPool bool
	// ArrivalsAtCapacity is what arrived per second over the newest
	// capacitySettle of that span (what finished, of every reason, plus the
	// growth of batch and queue between its ends); n/a when the span is
	// shorter. The fleet advice reads it as the replica's demand: a
	// spike's arrivals from its own seconds, not from the window's.
	ArrivalsAtCapacity Num `json:"arrivals_at_capacity_per_second"`
	// WaitingGrowthAtCapacity is how fast the queue grew over the same
	// seconds (negative when it shrank): the advice's queue growth for a
	// replica settled at capacity.
	WaitingGrowthAtCapacity Num `json:"waiting_growth_at_capacity_per_second"`
	// BatchCap is the most requests the replica runs at once. Where the
	// page states it (TensorRT-LLM's max_num_active_requests, Triton's
	// max) it is the stated cap, and BatchCapStated is set. Elsewhere
	// (vLLM does not export --max-num-seqs; a Dynamo frontend states a
	// worker's cap, not that of the running it sums) it is the most
	// requests seen running at once since BatchCapSince: the highest
	// running seen, carried from one evaluation to the next and started
	// afresh by a restart. n/a before the first good scrape.
	BatchCap       Num       `json:"batch_cap"`
	BatchCapSince  time.Time `json:"batch_cap_since,omitzero"`
	BatchCapStated bool      `json:"batch_cap_stated,omitempty"`

	// Pending and PendingCount carry the hysteresis between evaluations: a
	// new state must hold on consecutive evaluations before it is shown.
	Pending      State `json:"-"`
	PendingCount int   `json:"-"`
	// told carries the stream of changes between evaluations: set once
	// the replica has told a state (Report.Changes), unset while a target
	// vtop has just started reading is warming up.
	told bool

	// Point is this evaluation reduced for the history (sparklines, charts).
	Point Point `json:"-"`

	// Fault is the badge of a hardware fault on a GPU joined to the
	// replica ("XID 79"); "" when none (ApplyGPUs).
	Fault string `json:"gpu_fault,omitempty"`
	// GPUCount is how many GPUs the evidence joins to the replica;
	// GPUUtilization is their mean busy share and GPUMemoryUsage their
	// framebuffer used ÷ total, both meaningful only when GPUCount > 0
	// (the report's gpus list has every figure for JSON readers).
	GPUCount       int `json:"gpu_count,omitempty"`
	GPUUtilization Num `json:"-"`
	GPUMemoryUsage Num `json:"-"`
	// EngineKind is the inference engine whose page this is ("unknown"
	// before the first good scrape, or for a router's page of no engine).
	EngineKind catalogue.EngineKind `json:"engine_kind"`
	// Router names a router whose page describes Backends rather than one
	// replica; its figures are theirs, summed, and never added to the
	// fleet's totals beside them.
	Router   catalogue.RouterKind `json:"router,omitempty"`
	Backends []string             `json:"backends,omitempty"`
	// Role is the prefill/decode role the page states, if any.
	Role catalogue.Role `json:"role,omitempty"`
	// Derived says, per figure (its JSON name), how a figure the engine
	// does not export as such was computed from what it does export.
	Derived map[string]string `json:"derived,omitempty"`
	// LoRA lists the adapters of running and waiting requests; nil when
	// the page does not say.
	LoRA *LoRAReport `json:"lora,omitempty"`
}

// Advice is the fleet's scaling advice, from one model: ONE action
// (Action, with the count RecommendedReplicas when it has one, by Basis,
// said in Recommendation), the figures it rests on, and beside it the
// autoscaler's line, a setting rather than a count to act on.
//
// Demand (ArrivalsPerSecond) is what arrives, not what finishes; capacity
// is what a FULL replica finishes successfully at its cap; the backlog's
// drain time follows. While any counted replica is FULL the action is
// "add", "rebalance" or "drain", never "keep". Replicas down are neither
// demand nor capacity: Uncounted says how many.
type Advice struct {
	// Replicas is how many replicas the advice counts: those up, routers
	// and frontends left out (their figures are their backends').
	Replicas int `json:"replicas"`
	// Uncounted is how many replicas are down: the advice reads neither
	// their demand nor their capacity, and says so.
	Uncounted int `json:"uncounted"`
	// Full is how many counted replicas are FULL; AtCapacity how many are
	// at their capacity, FULL or PREEMPTING with a standing queue;
	// CapacityReplicas how many of those have been so long enough
	// (fullMinSamples readings) to read a capacity from.
	Full             int `json:"full"`
	AtCapacity       int `json:"at_capacity"`
	CapacityReplicas int `json:"capacity_replicas"`
	// ArrivalsPerSecond is the demand: what arrives at the counted
	// replicas (finished, aborts included, plus the growth of their batch
	// and queue), plus the admissions they refused.
	ArrivalsPerSecond Num `json:"arrivals_per_second"`
	// SuccessfulPerSecond is what the counted replicas finish
	// successfully (stop and length; every finished request where the
	// page has no finish reasons): the demand less it is what the fleet as
	// it stands falls short by.
	SuccessfulPerSecond Num `json:"successful_per_second"`
	// QueueGrowthPerSecond is how fast the counted replicas' queue grows
	// (negative when it drains).
	QueueGrowthPerSecond Num `json:"queue_growth_per_second"`
	// TargetQueueSeconds is the acceptable queue time (Config).
	TargetQueueSeconds Num `json:"target_queue_seconds"`
	// WaitingTargetPerReplica is the autoscaling target on the waiting
	// requests per replica: CapacityPerReplica × TargetQueueSeconds
	// (Little's law); n/a without a capacity. FULL replicas' actions
	// state the same target.
	WaitingTargetPerReplica Num `json:"waiting_target_per_replica"`
	// MeanWaitingPerReplica is the metric's value as an HPA averages it.
	MeanWaitingPerReplica Num `json:"mean_waiting_per_replica"`
	// ReplicasByQueue is what a Kubernetes HPA on HPAMetric with that
	// target would recommend: HPADesired after the scale-down
	// stabilisation window (the highest desired count within it). An
	// autoscaler's setting, not a count to act on.
	ReplicasByQueue Num `json:"replicas_by_queue"`
	// HPADesired is this evaluation's ceil(replicas × mean waiting ÷
	// target), or the replicas up when HPAWithinTolerance (the ratio is
	// within the HPA's 10 % tolerance).
	HPADesired         Num  `json:"hpa_desired"`
	HPAWithinTolerance bool `json:"hpa_within_tolerance"`
	// HPAMetric is the waiting-requests family an HPA would read, one per
	// engine among the replicas, joined with " or " when they differ.
	HPAMetric string `json:"hpa_metric"`
	// HPAWindow are the desired counts of the scale-down window that may
	// still be its highest, highest first; the next evaluation reads them
	// from the previous report.
	HPAWindow []HPARecommendation `json:"hpa_window,omitempty"`
	// CapacityPerReplica is what a FULL replica finishes successfully
	// (stop and length, not aborts) per second while at its capacity
	// (ReplicaReport.CapacityPerSecond), the mean over the
	// CapacityReplicas; ReplicasByCapacity is ceil(demand ÷ it).
	CapacityPerReplica Num `json:"capacity_per_replica"`
	ReplicasByCapacity Num `json:"replicas_by_capacity"`
	// SettlingSeconds is, while replicas are at capacity but none has
	// been so for capacitySettle, the longest any of them has: the
	// capacity is not settled and the advice gives no count. n/a
	// otherwise.
	SettlingSeconds Num `json:"settling_seconds"`

	// Action is "add", "keep", "rebalance" (replicas are FULL while the
	// fleet up carries the demand: spread the load), "drain" (replicas are
	// FULL with a backlog the fleet up clears without more), or "" (no
	// advice yet, or no replica up). Add is how many replicas to add; n/a
	// when the action is to add but no capacity is measured to count by,
	// or when it is not to add.
	Action string `json:"action"`
	Add    Num    `json:"add"`
	// RecommendedReplicas is the count the fleet should have (the replicas
	// down included when the action is to keep and bring them back); n/a
	// when there is no count. Basis is "capacity" (counted by a FULL
	// replica's capacity), "queue" (judged by the states and the queue
	// alone), "groups", or "" when none; Recommendation says the action
	// with its inputs, in a sentence.
	RecommendedReplicas Num    `json:"recommended_replicas"`
	Basis               string `json:"basis"`
	Recommendation      string `json:"recommendation"`
	// BacklogClearSeconds is how long the recommended replicas take to
	// clear the queue standing now at their spare capacity; n/a without a
	// count, or when there is no backlog.
	BacklogClearSeconds Num `json:"backlog_clear_seconds"`

	// Summary is the recommendation, then the sentences with the numbers:
	// demand, capacity, backlog, the autoscaler line, the replicas not
	// counted, refusals.
	Summary []string `json:"summary"`

	// RejectionsPerSecond are the admissions the replicas refused (HTTP
	// 503); they are demand, so ArrivalsPerSecond includes them.
	RejectionsPerSecond Num `json:"rejections_per_second"`

	// pendingKey and pendingCount carry, from one evaluation to the next,
	// the change the advice holds within its noise (hold): the action and
	// the direction of the count the inputs said, and on how many
	// evaluations in a row.
	pendingKey   string
	pendingCount int
	// uncounted and uncountedAtCapacity are how many counted replicas,
	// and of those at capacity, count no finished requests
	// (ReplicaReport.finishUncounted): the advice says why it has no
	// count where they are all it has.
	uncounted, uncountedAtCapacity int
}

// Imbalance names a replica far from the fleet median. The fleet lists
// them most extreme first (the largest Ratio); a replica far in several
// metrics is listed once per metric.
type Imbalance struct {
	Target string `json:"target"`
	Metric string `json:"metric"`
	Value  Num    `json:"value"`
	Median Num    `json:"median"`
	// Ratio is how far the value is from the median: the larger of the two
	// over the smaller, each with the metric's minimum gap added, so that
	// a value near zero does not outrank a large one (waiting 0 against a
	// median of 6 is ×2.2, waiting 1,072 against 6 is ×98).
	Ratio Num    `json:"ratio"`
	Text  string `json:"text"`
}

// FleetFigures are totals across replicas.
type FleetFigures struct {
	Replicas                  int            `json:"replicas"`
	Up                        int            `json:"up"`
	Down                      int            `json:"down"`
	Restarted                 int            `json:"restarted"` // replicas with a restart in the window
	States                    map[string]int `json:"states"`
	RequestsPerSecond         Num            `json:"requests_per_second"`
	PromptTokensPerSecond     Num            `json:"prompt_tokens_per_second"`
	GenerationTokensPerSecond Num            `json:"generation_tokens_per_second"`
	Running                   Num            `json:"running"`
	Waiting                   Num            `json:"waiting"`
	WorstTTFTP99              Num            `json:"worst_ttft_p99_seconds"`
	SuccessRate               Num            `json:"success_rate"`
	Worst                     string         `json:"worst"` // target of the worst replica
	// Late counts the replicas marked late (ReplicaReport.Late): counted
	// up, at their last figures, not down.
	Late int `json:"late"`
	// LateRound says, when most targets timed out in the same
	// evaluation, that the failure is likely vtop's host or network, not
	// the replicas' ("26 of 47 targets at once: …"); empty otherwise.
	LateRound string      `json:"late_round,omitempty"`
	Imbalance []Imbalance `json:"imbalance"`
	Advice    Advice      `json:"advice"`

	// Routers counts the router and frontend pages left out of the
	// totals: their figures are those of replicas counted already.
	Routers int `json:"routers"`
	// Groups are the replicas by model and role, each with its own totals,
	// worst replica and advice: arrivals of one model say nothing about
	// another's queue. Nil inside a group.
	Groups []FleetGroup `json:"groups,omitempty"`
}

// Report is the whole analysis of one evaluation: every replica and the
// fleet.
type Report struct {
	Time          time.Time       `json:"time"`
	WindowSeconds float64         `json:"window_seconds"`
	Replicas      []ReplicaReport `json:"replicas"`
	Fleet         FleetFigures    `json:"fleet"`
	// Events are the state changes and threshold crossings since the
	// previous evaluation.
	Events []Event `json:"events,omitempty"`
	// Changes are the changes of the replicas' states since the previous
	// evaluation: the one stream the event log, a hook, the bell and
	// Alertmanager read (Change). Each is also in Events.
	Changes []Change `json:"-"`
	// Source is the health of a source that reads many targets at once
	// (a Prometheus server); nil for direct scrapes, where each target's
	// own error says everything. The monitor fills it (SetSource).
	Source *catalogue.SourceStatus `json:"source,omitempty"`
	// GPUs are the GPUs (or MIG instances) under the fleet, each with the
	// replica the evidence joins it to; empty when no GPU source answers,
	// nil when none was asked (ApplyGPUs).
	GPUs []device.GPU `json:"gpus"`
	// GPUSources are the sources of the GPU figures and their notes.
	GPUSources []GPUSource `json:"gpu_sources,omitempty"`
}

// SetSource gives the report the health of its source. While the source
// fails, every replica keeps the verdict of the last good data and is
// marked SourceStale: the source failed, not the replicas, so none is
// DOWN for it, and none passes for live either; the source says how old
// that data is (DataAgeSeconds).
func (r *Report) SetSource(st *catalogue.SourceStatus) {
	r.Source = st
	stale := st.Failing()
	if stale && !st.LastGood.IsZero() && st.Checked.After(st.LastGood) {
		st.DataAgeSeconds = st.Checked.Sub(st.LastGood).Seconds()
	}
	for i := range r.Replicas {
		r.Replicas[i].SourceStale = stale
	}
}
