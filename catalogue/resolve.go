package catalogue

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Target names the place in a Sample that one series' value goes to.
// Every source (a page, a Prometheus server, a recording) asks the row of
// the alias table through Resolve, so a family declared in Reads is read
// alike through all of them.
type Target uint8

// The places a series' value goes to. Those up to ToSpecPosition are an
// engine's (Series, split by the engine label); the rest are the
// Sample's, whatever the engine.
const (
	ToNothing      Target = iota // a label value vtop does not know, or a row that says nothing of where it goes
	ToScalar                     // Series.Scalars[Which], summed over series (KVCacheUsage averaged)
	ToFinished                   // Series.Finished[Which], summed over series
	ToHistogram                  // Series.Histograms[Which]: its _bucket, _sum and _count samples
	ToSleep                      // Series.Scalars[SleepLevel] is Which where the value is 1: the deepest such level
	ToSpecPosition               // Series.SpecAcceptedPerPos[Which], summed over series
	ToKVCapacity                 // Sample.KVCapacityTokens, summed over series; a negative value is not read
	ToProcessStart               // Sample.ProcessStartTime, the latest
	ToRSS                        // Sample.ProcessRSSBytes, summed over series
	ToGC                         // Sample.GCCollections, summed over series
	ToHTTP                       // Sample.HTTPRequests, summed over series
	ToLoRA                       // Sample.LoRA, from the labels of the newest series
)

// PerEngine reports whether the value goes to an engine's Series (the
// series is read by its engine and model labels) rather than to the
// Sample as a whole.
func (t Target) PerEngine() bool { return t >= ToScalar && t <= ToSpecPosition }

// Fold is where one series' value goes: Resolve's answer.
type Fold struct {
	To Target
	// Which is the scalar, finish reason, histogram, sleep level or draft
	// position, as To says.
	Which int
	// Labelled marks a value taken from the series' labels, not its
	// sample: Value is then the value to fold (the cache configuration's
	// blocks × block size).
	Labelled bool
	Value    float64
	// Warning says why a series that looks read is not (a draft position
	// beyond MaxSpecPositions); "" otherwise.
	Warning string
}

// Labels gives the value of a series' label by name, "" when absent.
type Labels func(name string) string

var warnSpecPositions = fmt.Sprintf("speculative decoding beyond %d draft positions ignored", MaxSpecPositions)

// Resolve says where the value of one series of the row goes, given the
// series' labels: the one place every source learns it from. The labels
// of the engine and the model, which split every per-engine family, are
// the caller's to read (Model, NoEngineLabel).
func (r *Read) Resolve(label Labels) Fold {
	switch r.Kind {
	case ReadScalar, ReadSplitScalar:
		if sp, ok := r.split(label); ok {
			return Fold{To: ToScalar, Which: int(sp.Scalar)}
		}
	case ReadHistogram, ReadSplitHistogram:
		if sp, ok := r.split(label); ok {
			return Fold{To: ToHistogram, Which: int(sp.Histogram)}
		}
	case ReadFinished:
		if reason, ok := FinishReasonOf(label(LabelFinishedReason)); ok {
			return Fold{To: ToFinished, Which: int(reason)}
		} // a reason newer than vtop: ignored rather than misfiled
	case ReadFinishedAs:
		if r.Split != nil {
			// a value the row names is another figure (TGI's shed requests)
			if sp, ok := r.split(label); ok {
				return Fold{To: ToScalar, Which: int(sp.Scalar)}
			}
		}
		return Fold{To: ToFinished, Which: int(r.Finish)}
	case ReadSleep:
		if level := slices.Index(SleepStates[:], label(LabelSleepState)); level >= 0 {
			return Fold{To: ToSleep, Which: level}
		} // a state newer than vtop
	case ReadSpecPerPos:
		return specPosition(label(LabelPosition))
	case ReadCacheConfig:
		return cacheConfig(label)
	default:
		return Fold{To: sampleTargets[r.Kind]}
	}
	return Fold{}
}

// sampleTargets are the targets of the kinds that feed the Sample with
// the series' value as it is.
var sampleTargets = [ReadSplitHistogram + 1]Target{
	ReadKVCapacity:   ToKVCapacity,
	ReadProcessStart: ToProcessStart,
	ReadRSS:          ToRSS,
	ReadGC:           ToGC,
	ReadHTTP:         ToHTTP,
	ReadLoRA:         ToLoRA,
}

// split returns the row's own figure, or the one its Label's value picks;
// false for a value the row does not read.
func (r *Read) split(label Labels) (Split, bool) {
	if r.Split == nil {
		return Split{Scalar: r.Scalar, Histogram: r.Histogram}, true
	}
	v := label(r.Label)
	for _, sp := range r.Split {
		if sp.Value == v {
			return sp, true
		}
	}
	return Split{}, false
}

func specPosition(v string) Fold {
	pos, err := strconv.Atoi(v)
	switch {
	case err != nil || pos < 0:
		return Fold{}
	case pos >= MaxSpecPositions:
		return Fold{Warning: warnSpecPositions}
	}
	return Fold{To: ToSpecPosition, Which: pos}
}

// cacheConfig resolves vllm:cache_config_info: the KV cache's capacity in
// tokens is in its labels.
func cacheConfig(label Labels) Fold {
	blocks, err1 := strconv.ParseFloat(label("num_gpu_blocks"), 64)
	size, err2 := strconv.ParseFloat(label("block_size"), 64)
	if err1 != nil || err2 != nil {
		return Fold{}
	}
	return Fold{To: ToKVCapacity, Labelled: true, Value: blocks * size}
}

// FigureSet is the set of figures the row feeds (Figures, as a set).
func (r *Read) FigureSet() FigureSet {
	var s FigureSet
	switch {
	case r.Kind == ReadScalar:
		s.Add(ScalarFigure(r.Scalar))
	case r.Kind == ReadHistogram:
		s.Add(HistogramFigure(r.Histogram))
	case r.Kind == ReadSleep:
		s.Add(ScalarFigure(SleepLevel))
	}
	for _, sp := range r.Split {
		if r.Kind == ReadSplitScalar || r.Kind == ReadFinishedAs {
			s.Add(ScalarFigure(sp.Scalar))
		} else {
			s.Add(HistogramFigure(sp.Histogram))
		}
	}
	return s
}

// Shadowed reports whether a legacy row is not read because the current
// families of the same replica (current: the union of their FigureSets)
// feed all its figures. A legacy count by finished reason is never read:
// its figures are not in a FigureSet.
func (r *Read) Shadowed(current FigureSet) bool {
	if !r.Legacy {
		return false
	}
	figs := r.FigureSet()
	return (figs != 0 && figs&^current == 0) || r.Kind == ReadFinished
}

// SampleNames returns the names of the samples of the row's series as a
// page or a Prometheus server spells them: the family's own, or a
// histogram's _bucket, _sum and _count.
func (r *Read) SampleNames() []string {
	if !r.Kind.IsHistogram() {
		return []string{r.Name}
	}
	names := make([]string, len(histogramSuffixes))
	for i, suf := range histogramSuffixes {
		names[i] = r.Name + suf
	}
	return names
}

// UseReads adds rows to the alias table, as a test family that no engine
// exports, and returns the function that restores the table. Not safe to
// call while anything reads the table: tests only, one at a time.
func UseReads(rows ...Read) (restore func()) {
	old := Reads
	Reads = slices.Concat(old, rows)
	readIndex = indexReads(Reads)
	return func() { Reads, readIndex = old, indexReads(old) }
}

// PerEngine reports whether a family of the kind is read by engine (and
// model): its series feed an engine's Series. The others describe the
// server as a whole.
func (k ReadKind) PerEngine() bool { return k != ReadCacheConfig && sampleTargets[k] == ToNothing }

// Figures is the figure of a Series the fold feeds, as a set: empty for
// the figures of a Sample as a whole.
func (f Fold) Figures() FigureSet {
	var s FigureSet
	switch f.To {
	case ToScalar:
		s.Add(ScalarFigure(Scalar(f.Which)))
	case ToHistogram:
		s.Add(HistogramFigure(Histogram(f.Which)))
	case ToSleep:
		s.Add(ScalarFigure(SleepLevel))
	}
	return s
}

// Refuses is the figure a refused value of the fold leaves n/a, as a
// set (Sample.Refused): Figures, and for a finish count the finished
// requests it is one of.
func (f Fold) Refuses() FigureSet {
	if f.To == ToFinished {
		var s FigureSet
		s.Add(ScalarFigure(FinishedRequests))
		return s
	}
	return f.Figures()
}

// MaxMagnitude is the largest value read: past 2^53 a float no longer
// counts by ones, so a counter there cannot move and a gauge that large
// counts nothing a server holds.
const MaxMagnitude = 1 << 53

// Refusal says why the fold does not read a series' value v, "" when it
// does: the one rule of which values are read, that every source asks.
// Every number vtop reads counts something or is a fraction: a value that
// is not a finite number, or past MaxMagnitude, or negative, is not a
// reading, nor a fraction outside 0–1. A counter that falls is another
// matter (a reset, the analysis' to find). A histogram's values and the
// labels of a sleep level or a LoRA series are judged where they are read.
func (f Fold) Refusal(v float64) string {
	switch f.To {
	case ToNothing, ToHistogram, ToSleep, ToLoRA:
		return ""
	}
	switch {
	case !(math.Abs(v) <= MaxMagnitude): // NaN, ±Inf or too large
		return CountRefusal(v)
	case f.To == ToScalar && Scalar(f.Which) == KVCacheUsage && !(v >= 0 && v <= 1):
		return "a fraction is within 0–1"
	case v < 0 && !f.To.PerEngine():
		return "a size, a time or a count is ≥ 0"
	}
	return CountRefusal(v)
}

// CountRefusal says why a count (or a histogram's sum) v is not read, ""
// when it is: it is a finite number, within MaxMagnitude, ≥ 0.
func CountRefusal(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "not a finite number"
	case math.Abs(v) > MaxMagnitude:
		return "past 2^53, where a float no longer counts"
	case v < 0:
		return "a count is ≥ 0"
	}
	return ""
}

// HistogramRefusal says which value of a histogram is out of its domain
// (CountRefusal), "" when none is: the first bucket count (bounds[i] is
// the upper bound of counts[i]), then _count, then _sum. A value not sent
// is given as 0. Every source leaves a histogram with such a value out,
// its figures n/a, so that no drop between two refused values reads as a
// reset.
func HistogramRefusal(bounds, counts []float64, count, sum float64) string {
	for i, c := range counts {
		if why := BucketRefusal(bounds[i], c); why != "" {
			return why
		}
	}
	return cmp.Or(HistogramCountRefusal(count), HistogramSumRefusal(sum))
}

// BucketRefusal says why the count c of the bucket le is not read.
func BucketRefusal(le, c float64) string {
	if why := CountRefusal(c); why != "" {
		return fmt.Sprintf("count %s of le=%s is out of its domain (%s)", formatG(c), formatG(le), why)
	}
	return ""
}

// HistogramCountRefusal says why a histogram's _count c is not read.
func HistogramCountRefusal(c float64) string {
	if why := CountRefusal(c); why != "" {
		return fmt.Sprintf("_count %s is out of its domain (%s)", formatG(c), why)
	}
	return ""
}

// HistogramSumRefusal says why a histogram's _sum v is not read.
func HistogramSumRefusal(v float64) string {
	if why := CountRefusal(v); why != "" {
		return fmt.Sprintf("sum %s is out of its domain (%s)", formatG(v), why)
	}
	return ""
}
