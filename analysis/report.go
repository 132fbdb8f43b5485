package analysis

import (
	"encoding/json"
	"errors"
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
// JSON: every digit a scraped value or a rate carries, without the noise
// of binary floating point (11.100000000000001 is written 11.1).
const jsonDigits = 12

// MarshalJSON writes the figure rounded to jsonDigits significant digits,
// then shortest (strconv's 'g'), or null when it is unknown.
func (n Num) MarshalJSON() ([]byte, error) {
	return n.appendJSON(make([]byte, 0, 24)), nil
}

// appendJSON appends the figure as MarshalJSON writes it. It lays out the
// digits of one formatting instead of a format, a parse and a format,
// which were nearly half of the cost of writing a report.
func (n Num) appendJSON(dst []byte) []byte {
	f := float64(n)
	if !n.Known() {
		return append(dst, "null"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	if math.Abs(f) < minExactNormal {
		// Subnormal: the long way.
		rounded, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', jsonDigits, 64), 64) // strconv's own text parses
		return strconv.AppendFloat(dst, rounded, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e6 {
		// A whole figure below e-notation: its text is the integer's.
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	return appendRounded(dst, f)
}

// appendRounded appends f (positive, normal) rounded to jsonDigits and
// written shortest: the rounding's digits without their trailing zeros,
// since a decimal of at most 15 digits reads back to itself.
func appendRounded(dst []byte, f float64) []byte {
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
// digits may read back shorter than jsonDigits decimal ones.
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

// The states, from best to worst; docs/verdicts.md writes down the
// evidence of each. UNJUDGED and WARMING (not proven healthy) rank above
// the states that prove a replica fine and below every problem; SLEEPING
// ranks above IDLE because it may be asleep by mistake.
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

// states are, by state: its name, as in JSON; its meaning in one short
// line, the help overlay's legend (docs/verdicts.md writes each rule
// whole); its rank in severity, which the urgent states share
// (severityRank); the alert it raises, if any (AlertOf); and its first
// action where one replica's figures do not change it (FirstAction).
var states = [...]struct {
	name, meaning string
	rank          float64
	alert         Alert
	action        string
}{
	StateHealthy:    {"healthy", "serving within its SLOs, on enough evidence", 0, Alert{}, ""},
	StateIdle:       {"idle", "no request finished, ran or waited over the window", 1, Alert{AlertIdle, AlertInfo}, ""},
	StateSleeping:   {"sleeping", "the engine says it sleeps (vLLM's /sleep): it cannot serve", 2, Alert{}, ""},
	StateUnjudged:   {"unjudged", "no problem seen, but health cannot be proven from this page", 3, Alert{}, ""},
	StateWarming:    {"warming", "too few readings yet to judge: no problem shown so far", 3, Alert{}, ""},
	StateRecovering: {"recovering", "its problem has passed; the window's figures still hold it", 3, Alert{}, recoveringAction},
	StateStale:      {"stale", "telemetry frozen: no counter moves while requests run", 4, Alert{AlertStale, AlertWarning}, staleAction},
	StateSlow:       {"slow", "not full, but p99 TTFT or ITL over its SLO", 5, Alert{AlertSlow, AlertWarning}, slowAction},
	StateFull:       {"full", "a queue that persists: the batch is at its capacity", 5, Alert{AlertFull, AlertCritical}, ""}, // FirstAction names the metric
	StatePreempting: {"preempting", "the KV cache is too small for the batch: work is recomputed", 5, Alert{AlertPreempting, AlertCritical}, preemptingAction},
	StateStalled:    {"stalled", "the engine stopped stepping: work is there, no token moves", 5, Alert{AlertStalled, AlertCritical}, stalledAction},
	StateDown:       {"down", "the scrape fails: refused, an HTTP error, or no engine metrics", 6, Alert{AlertDown, AlertCritical}, downAction},
}

// String returns the state's lowercase name, as in JSON.
func (s State) String() string {
	if int(s) < len(states) {
		return states[s].name
	}
	return "unknown"
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state's name.
func (s *State) UnmarshalText(b []byte) error {
	for i := range states {
		if states[i].name == string(b) {
			*s = State(i)
			return nil
		}
	}
	return errors.New("unknown state " + strconv.Quote(string(b)))
}

// Quantiles summarises one latency histogram over the window.
type Quantiles struct {
	Mean Num `json:"mean"`
	P50  Num `json:"p50"`
	P90  Num `json:"p90"`
	P99  Num `json:"p99"`
	// Observations is increase() of the histogram's _count (not always
	// whole): the requests, or tokens for ITL, the quantiles are read from.
	Observations Num `json:"observations"`
	// P50Bucket, P90Bucket and P99Bucket are the buckets the quantiles
	// fell in, inside which histogram_quantile interpolates them.
	P50Bucket QuantileBucket `json:"p50_bucket"`
	P90Bucket QuantileBucket `json:"p90_bucket"`
	P99Bucket QuantileBucket `json:"p99_bucket"`
}

// QuantileBucket is the histogram bucket a quantile fell in: Lower is 0 in
// the first bucket, Upper +Inf beyond the last finite bound.
type QuantileBucket struct{ Lower, Upper Num }

// known reports whether the bucket has bounds (its quantile is known).
func (b QuantileBucket) known() bool {
	return b.Upper.Float() > b.Lower.Float()
}

// wideBucketRatio is how many times its lower bound a bucket's upper
// bound may be for a quantile interpolated inside it to be shown: in a
// wider bucket the value is a guess that may contradict the other figures
// (a p50 TTFT of "400s" in (160 s, 640 s] beside a p50 e2e of 184 s), so
// the bounds are shown instead.
const wideBucketRatio = 2

// Shown is what every screen and reason writes for the quantile v that
// fell in b: "<" and the upper bound in the first bucket (interpolated
// from 0, the value says nothing more), ">" and the last finite bound
// beyond it, the bounds x to upTo in a bucket too wide to place it
// (wideBucketRatio), otherwise v. upTo is n/a but in a wide bucket.
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
	// Severity orders replicas worst first (SeverityOf).
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
	// CoveredSeconds is the time the window's good scrapes span (the
	// header's "so far").
	CoveredSeconds float64 `json:"-"`
	// SourceStale is set while the source that reads this replica (a
	// Prometheus server) fails: the state and figures are those of its
	// last good data; the replica itself may be fine.
	SourceStale bool `json:"source_stale,omitempty"`
	// Recorded is set when the replica was reported from vtop's recording
	// rules in the store rather than its raw series.
	Recorded bool `json:"recorded,omitempty"`
	// Instances is how many scrape targets the replica's figures sum
	// (--group-by); 0 for a replica of one target.
	Instances int `json:"instances,omitempty"`
	// WarmingUp is true while the window holds fewer than two good samples.
	WarmingUp bool `json:"warming_up"`
	// Restarted is true when a counter reset or a new process start time
	// was seen in the window; RestartedAt is the new process's first scrape.
	Restarted    bool      `json:"restarted"`
	RestartedAt  time.Time `json:"restarted_at,omitzero"`
	restartCause string    // how the restart shows, for its event
	// LastGood is the time of the newest good scrape (zero if none).
	LastGood time.Time `json:"last_good_scrape,omitzero"`
	// DownSince is the first failed scrape of the run the newest scrape
	// ends, and FailedScrapes how many in a row: carried from the previous
	// report, so that an outage longer than the samples in hand keeps its
	// start. Zero while the newest scrape succeeds.
	DownSince     time.Time `json:"down_since,omitzero"`
	FailedScrapes int       `json:"failed_scrapes,omitempty"`
	// Late is set while the newest scrapes timed out without proving the
	// replica down (lateScrapes, FleetFigures.LateRound): a note on the
	// replica, which keeps its last evaluation, not a state.
	Late bool `json:"late,omitempty"`
	// newestSample is the time of the newest sample the evaluation held,
	// good or failed: the next evaluation counts the failures after it.
	newestSample time.Time
	// LastToken is, while a replica is STALLED, the newest reading at
	// which a token was generated or a request finished (lastTokenBound
	// when vtop has seen none, and it is the oldest reading in hand),
	// carried from the previous report so that a long stall keeps its start.
	LastToken      time.Time `json:"last_token,omitzero"`
	lastTokenBound bool
	// Warnings are scrape problems that did not fail the scrape, and
	// failures the engine reports beside its state (failing KV transfers).
	Warnings []string `json:"warnings,omitempty"`

	// AtCapacity is set when FULL's evidence holds whatever state is
	// shown: a PREEMPTING replica with a standing queue is at capacity too.
	AtCapacity bool `json:"at_capacity"`
	// AtCapacitySeconds is how long the replica has been at its capacity
	// (atCapacity); CapacityPerSecond what it finished successfully per
	// second over that span, n/a with fewer than two readings.
	AtCapacitySeconds float64 `json:"at_capacity_seconds"`
	CapacityPerSecond Num     `json:"capacity_per_second"`
	// CapacitySettled is set once the replica has been at capacity for
	// capacitySettle with its finish rate no longer rising: only then does
	// the advice read the AtCapacity figures as the replica's.
	CapacitySettled bool `json:"capacity_settled"`
	// finishUncounted is set when the newest good page counts no finished
	// requests (llama.cpp): no capacity or arrivals can be read of it.
	finishUncounted bool
	// trailQueue is the queue over the newest readings (evidence.Trail's),
	// whose trend the advice says (queueTrend).
	trailQueue gaugeStats
	// busyOnPool is set when the newest page showed requests running on
	// a server whose HTTP pool may be fixed (behindPool).
	busyOnPool bool
	// ArrivalsAtCapacity and WaitingGrowthAtCapacity are the arrivals and
	// the queue's growth per second over the newest capacitySettle at
	// capacity (n/a when shorter): a spike's demand from its own seconds.
	ArrivalsAtCapacity      Num `json:"arrivals_at_capacity_per_second"`
	WaitingGrowthAtCapacity Num `json:"waiting_growth_at_capacity_per_second"`
	// BatchCap is the most requests the replica runs at once: the cap the
	// page states (BatchCapStated), or else the highest running seen since
	// BatchCapSince, carried between evaluations and restarted by a restart.
	BatchCap       Num       `json:"batch_cap"`
	BatchCapSince  time.Time `json:"batch_cap_since,omitzero"`
	BatchCapStated bool      `json:"batch_cap_stated,omitempty"`

	// Pending and PendingCount carry the hysteresis between evaluations.
	Pending      State `json:"-"`
	PendingCount int   `json:"-"`
	// told is set once the replica has told a state (Report.Changes).
	told bool

	// Point is this evaluation reduced for the history (sparklines, charts).
	Point Point `json:"-"`

	// Fault is the badge of a hardware fault on a GPU joined to the
	// replica ("XID 79"); "" when none (ApplyGPUs).
	Fault string `json:"gpu_fault,omitempty"`
	// GPUCount is how many GPUs are joined to the replica; GPUUtilization
	// and GPUMemoryUsage their mean busy and memory shares.
	GPUCount       int `json:"gpu_count,omitempty"`
	GPUUtilization Num `json:"-"`
	GPUMemoryUsage Num `json:"-"`
	// EngineKind is the inference engine whose page this is.
	EngineKind catalogue.EngineKind `json:"engine_kind"`
	// Router names a router whose page describes Backends: its figures are
	// theirs, never added to the fleet's totals beside them.
	Router   catalogue.RouterKind `json:"router,omitempty"`
	Backends []string             `json:"backends,omitempty"`
	// Role is the prefill/decode role the page states, if any.
	Role catalogue.Role `json:"role,omitempty"`
	// Derived says, per figure (its JSON name), how a figure the engine
	// does not export as such was computed.
	Derived map[string]string `json:"derived,omitempty"`
	// LoRA lists the adapters of running and waiting requests; nil when
	// the page does not say.
	LoRA *LoRAReport `json:"lora,omitempty"`
}

// Advice is the fleet's scaling advice, from one model: ONE action with
// its count, the figures it rests on, and beside it the autoscaler's line,
// a setting rather than a count to act on. While any counted replica is
// FULL the action is never "keep"; replicas down are neither demand nor
// capacity (Uncounted).
type Advice struct {
	// Replicas is how many replicas the advice counts: those up, routers
	// and frontends left out; Uncounted how many are down.
	Replicas  int `json:"replicas"`
	Uncounted int `json:"uncounted"`
	// Full is how many counted replicas are FULL; AtCapacity how many are
	// FULL or PREEMPTING with a standing queue; CapacityReplicas how many
	// of those a capacity is read from.
	Full             int `json:"full"`
	AtCapacity       int `json:"at_capacity"`
	CapacityReplicas int `json:"capacity_replicas"`
	// ArrivalsPerSecond is the demand: what arrives at the counted
	// replicas, plus the admissions they refused.
	ArrivalsPerSecond Num `json:"arrivals_per_second"`
	// SuccessfulPerSecond is what the counted replicas finish successfully.
	SuccessfulPerSecond Num `json:"successful_per_second"`
	// QueueGrowthPerSecond is how fast the counted replicas' queue grows
	// (negative when it drains).
	QueueGrowthPerSecond Num `json:"queue_growth_per_second"`
	// TargetQueueSeconds is the acceptable queue time (Config).
	TargetQueueSeconds Num `json:"target_queue_seconds"`
	// WaitingTargetPerReplica is the autoscaling target on the waiting
	// requests per replica (waitingTarget); n/a without a capacity.
	WaitingTargetPerReplica Num `json:"waiting_target_per_replica"`
	// MeanWaitingPerReplica is the metric's value as an HPA averages it.
	MeanWaitingPerReplica Num `json:"mean_waiting_per_replica"`
	// ReplicasByQueue is what a Kubernetes HPA on HPAMetric with that
	// target would recommend: HPADesired after the scale-down window.
	ReplicasByQueue Num `json:"replicas_by_queue"`
	// HPADesired is this evaluation's count by the HPA rule (hpaDesired).
	HPADesired         Num  `json:"hpa_desired"`
	HPAWithinTolerance bool `json:"hpa_within_tolerance"`
	// HPAMetric is the waiting-requests family an HPA would read, joined
	// with " or " when the engines differ.
	HPAMetric string `json:"hpa_metric"`
	// HPAWindow are the desired counts of the scale-down window that may
	// still be its highest, highest first, for the next evaluation.
	HPAWindow []HPARecommendation `json:"hpa_window,omitempty"`
	// CapacityPerReplica is the mean CapacityPerSecond of the
	// CapacityReplicas; ReplicasByCapacity is ceil(demand ÷ it).
	CapacityPerReplica Num `json:"capacity_per_replica"`
	ReplicasByCapacity Num `json:"replicas_by_capacity"`
	// SettlingSeconds is, while no replica at capacity has settled
	// (capacitySettle), the longest any has been there; n/a otherwise.
	SettlingSeconds Num `json:"settling_seconds"`

	// Action is "add", "keep", "rebalance" (spread the load), "drain" (the
	// backlog clears without more), or "" (no advice); Add is how many
	// replicas to add, n/a when none or uncounted.
	Action string `json:"action"`
	Add    Num    `json:"add"`
	// RecommendedReplicas is the count the fleet should have, n/a without
	// one; Basis is "capacity", "queue", "groups" or ""; Recommendation
	// says the action with its inputs.
	RecommendedReplicas Num    `json:"recommended_replicas"`
	Basis               string `json:"basis"`
	Recommendation      string `json:"recommendation"`
	// BacklogClearSeconds is how long the recommended replicas take to
	// clear the standing queue at their spare capacity; n/a without one.
	BacklogClearSeconds Num `json:"backlog_clear_seconds"`

	// Summary is the recommendation, then the sentences with the numbers.
	Summary []string `json:"summary"`

	// RejectionsPerSecond are the admissions refused (HTTP 503), counted
	// in ArrivalsPerSecond.
	RejectionsPerSecond Num `json:"rejections_per_second"`

	// pendingKey and pendingCount carry the change the advice holds within
	// its noise (hold), and on how many evaluations in a row.
	pendingKey   string
	pendingCount int
	// uncounted and uncountedAtCapacity are how many counted replicas,
	// and of those at capacity, count no finished requests.
	uncounted, uncountedAtCapacity int
}

// Imbalance names a replica far from the fleet median, once per metric.
type Imbalance struct {
	Target string `json:"target"`
	Metric string `json:"metric"`
	Value  Num    `json:"value"`
	Median Num    `json:"median"`
	// Ratio is the larger of value and median over the smaller, each with
	// the metric's minimum gap added, so that a value near zero does not
	// outrank a large one.
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
	// Late counts the replicas marked late (ReplicaReport.Late), counted up.
	Late int `json:"late"`
	// LateRound says when most targets timed out at once (lateRound).
	LateRound string      `json:"late_round,omitempty"`
	Imbalance []Imbalance `json:"imbalance"`
	Advice    Advice      `json:"advice"`

	// Routers counts the router and frontend pages left out of the totals.
	Routers int `json:"routers"`
	// Groups are the replicas by model and role, each with its own totals,
	// worst replica and advice. Nil inside a group.
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
	// Changes are the replicas' state changes since the previous
	// evaluation: the one stream the event log, hooks and Alertmanager read.
	Changes []Change `json:"-"`
	// Source is the health of a source that reads many targets at once
	// (a Prometheus server); nil for direct scrapes (SetSource).
	Source *catalogue.SourceStatus `json:"source,omitempty"`
	// GPUs are the GPUs under the fleet, each with its replica; empty when
	// no GPU source answers, nil when none was asked (ApplyGPUs).
	GPUs []device.GPU `json:"gpus"`
	// GPUSources are the sources of the GPU figures and their notes.
	GPUSources []GPUSource `json:"gpu_sources,omitempty"`
}

// SetSource gives the report the health of its source. While the source
// fails, every replica keeps the verdict of the last good data, marked
// SourceStale: the source failed, not the replicas.
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
