package catalogue

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Accumulator builds one Sample, one scrape of a replica, from its
// resolved series: every source (a page, a Prometheus server) adds each
// series' value where its row of the alias table resolves it (Add,
// AddHistogram, AddLoRA), then Finish sums the engines. The rules of
// reading live here once: KV cache usage averaged over an engine's
// series, the latest process start, the deepest sleep level, the newest
// LoRA series, a refused value's figure n/a and said once per family.
type Accumulator struct {
	// Sample is what the scrape says so far; the caller sets its
	// description (model, role, router). Finish completes it.
	Sample    Sample
	shared    *Notes       // where the warnings go when samples share them
	own       Notes        // else the sample's own
	named     []*EngineAcc // in the order found, until Engines sorts them
	unlabeled *EngineAcc   // the series without an engine label
	kinds     [NumEngineKinds]int
	loraAt    float64 // the value of the LoRA series kept
	// MaxEngines caps the engines with a name: Engine gives nil for a
	// new one past it. 0 is no cap.
	MaxEngines int
}

// EngineAcc accumulates the series of one engine label value ("" for
// series without the label).
type EngineAcc struct {
	Name   string
	Series Series
	kvSum  float64 // KV cache usage is averaged, not summed
	kvN    int
}

// Notes is what building samples says: each warning once, and the first
// refused value of each family. The samples of one replica from one read
// may share theirs, so that a family is said once for all of them.
type Notes struct {
	Warnings []string
	said     []int // rows of Reads whose refused value was said
}

// Warn adds a warning once.
func (n *Notes) Warn(w string) {
	if !slices.Contains(n.Warnings, w) {
		n.Warnings = append(n.Warnings, w)
	}
}

// NewAccumulator starts the sample of a scrape at t. Its warnings go into
// shared when the samples of a replica share theirs (the caller then
// sets their Warnings), else into the sample's own.
func NewAccumulator(t time.Time, shared *Notes) Accumulator {
	return Accumulator{Sample: NewSample(t), shared: shared}
}

func (a *Accumulator) notes() *Notes {
	if a.shared != nil {
		return a.shared
	}
	return &a.own
}

// Warn adds a warning of the sample's, once.
func (a *Accumulator) Warn(w string) { a.notes().Warn(w) }

// Family counts a row of the alias table with series in the scrape,
// once per row: the engine kind of the most rows is the sample's.
func (a *Accumulator) Family(row int) { a.kinds[Reads[row].Engine]++ }

// Unlabeled returns the accumulator of the series without an engine
// label, made on first use.
func (a *Accumulator) Unlabeled() *EngineAcc {
	if a.unlabeled == nil {
		a.unlabeled = newEngineAcc("")
	}
	return a.unlabeled
}

// Engine returns the accumulator of an engine label's value, made on
// first use; nil for a new name past MaxEngines.
func (a *Accumulator) Engine(name string) *EngineAcc {
	for _, e := range a.named {
		if e.Name == name {
			return e
		}
	}
	if a.MaxEngines > 0 && len(a.named) >= a.MaxEngines {
		return nil
	}
	e := newEngineAcc(name)
	a.named = append(a.named, e)
	return e
}

func newEngineAcc(name string) *EngineAcc {
	return &EngineAcc{Name: name, Series: NewSeries(), kvSum: math.NaN()}
}

// Engines returns the engines so far in the order of the sample's: named
// ones by length then name, the unlabeled series last.
func (a *Accumulator) Engines() []*EngineAcc {
	slices.SortFunc(a.named, func(x, y *EngineAcc) int {
		return cmp.Or(cmp.Compare(len(x.Name), len(y.Name)), cmp.Compare(x.Name, y.Name))
	})
	if a.unlabeled != nil {
		return append(a.named[:len(a.named):len(a.named)], a.unlabeled)
	}
	return a.named
}

// Add folds v, the value of one series of row, into e (the series' engine,
// for a target of an engine) or into the sample, where to (the row's
// Resolve) says. A value the fold does not take (Fold.Refusal) leaves its
// figure n/a, marked in Sample.Refused, and the first refusal of each
// family is said. Histograms and LoRA have their own ways in.
func (a *Accumulator) Add(row int, to Fold, e *EngineAcc, v float64) {
	if to.Warning != "" {
		a.Warn(to.Warning)
	}
	if to.Labelled {
		v = to.Value
	}
	if !a.takes(row, to, v) {
		return
	}
	if Reads[row].Derived {
		a.Sample.Derived |= to.Figures()
	}
	if to.To.PerEngine() {
		e.add(to, v)
	} else {
		a.Sample.addWhole(to.To, v)
	}
}

// add folds a value the fold takes into the engine's series.
func (e *EngineAcc) add(to Fold, v float64) {
	s := &e.Series
	switch to.To {
	case ToScalar:
		if k := Scalar(to.Which); k != KVCacheUsage {
			s.Scalars[k] = FoldScalar(k, s.Scalars[k], v)
		} else {
			e.kvSum, e.kvN = NanAdd(e.kvSum, v), e.kvN+1
		}
	case ToFinished:
		s.Finished[to.Which] = NanAdd(s.Finished[to.Which], v)
	case ToSleep: // a level's state: the deepest level whose state is 1
		if v == 1 {
			s.Scalars[SleepLevel] = nanMax(s.Scalars[SleepLevel], float64(to.Which))
		}
	case ToSpecPosition:
		for len(s.SpecAcceptedPerPos) <= to.Which {
			s.SpecAcceptedPerPos = append(s.SpecAcceptedPerPos, math.NaN())
		}
		s.SpecAcceptedPerPos[to.Which] = NanAdd(s.SpecAcceptedPerPos[to.Which], v)
	}
}

// takes reports whether the fold reads the row's value v (Fold.Refusal);
// when it does not, the figure is n/a, marked refused, and the first
// refusal of each family is said.
func (a *Accumulator) takes(row int, to Fold, v float64) bool {
	why := to.Refusal(v)
	if why == "" {
		return true
	}
	a.Sample.Refused |= to.Refuses()
	if n := a.notes(); !slices.Contains(n.said, row) {
		n.said = append(n.said, row)
		n.Warn(fmt.Sprintf("%s: value %s is out of its domain (%s); the figure is n/a", Reads[row].Name, strconv.FormatFloat(v, 'g', 6, 64), why))
	}
	return false
}

// AddHistogram adds src, buckets of histogram h of row's family (one
// series', or one scrape's), into e's histogram; said when they lie on
// bounds unlike those already there.
func (a *Accumulator) AddHistogram(row int, e *EngineAcc, h Histogram, src Buckets) {
	f := &Reads[row]
	if f.Derived {
		a.Sample.Derived.Add(HistogramFigure(h))
	}
	if !e.Series.Histograms[h].Add(src) {
		a.Warn(fmt.Sprintf("%s: series with different buckets; one was ignored", f.Name))
	}
}

// RefuseHistogram leaves out buckets of histogram h of row's family for
// a value out of its domain (why, HistogramRefusal's words): its figures
// are n/a, marked refused, and said.
func (a *Accumulator) RefuseHistogram(row int, h Histogram, why string) {
	f := &Reads[row]
	if f.Derived {
		a.Sample.Derived.Add(HistogramFigure(h))
	}
	a.Warn(f.Name + ": " + why + "; its figures are n/a")
	a.Sample.Refused.Add(HistogramFigure(h))
}

// AddLoRA keeps what the newest series of vllm:lora_requests_info says:
// its value v is the time of the last change, and old series stay. of
// reads the series' labels (LoRAOf), asked only of a newer series.
func (a *Accumulator) AddLoRA(v float64, of func() LoRA) {
	if a.Sample.LoRA.Present && !(v > a.loraAt) {
		return
	}
	a.loraAt, a.Sample.LoRA = v, of()
}

// Finish derives what each engine lacks (Series.Derive), sums the engines
// into Total and lists them when two or more have a name.
func (a *Accumulator) Finish() Sample {
	s := &a.Sample
	s.EngineKind = EngineUnknown
	for k := EngineVLLM; k < NumEngineKinds; k++ { // the kind of the most families; a tie to the first
		if a.kinds[k] > a.kinds[s.EngineKind] {
			s.EngineKind = k
		}
	}
	all := a.Engines()
	for _, e := range all {
		if e.kvN > 0 {
			e.Series.Scalars[KVCacheUsage] = e.kvSum / float64(e.kvN)
		}
		s.Derived |= e.Series.Derive(s.EngineKind)
	}
	if len(all) > 0 {
		s.Total = a.total(all)
		s.DeriveKVCapacity()
	}
	if len(a.named) >= 2 {
		s.Engines = make([]Engine, len(a.named))
		for i, e := range a.named {
			s.Engines[i] = Engine{Name: e.Name, Series: e.Series}
		}
	}
	if a.shared == nil {
		s.Warnings = a.own.Warnings
	}
	return *s
}

// total sums the engines into the replica's series (Merge), one engine
// being the sum itself; an engine
// whose buckets of a histogram differ from the others' is left out of
// that histogram's sum, and said.
func (a *Accumulator) total(all []*EngineAcc) Series {
	if len(all) == 1 {
		return all[0].Series
	}
	var m Merge
	for _, e := range all {
		refused := m.Add(&e.Series)
		for h := range NumHistograms {
			if refused.Has(h) {
				a.Warn(fmt.Sprintf("engines disagree on the buckets of %s; engine %s left out of the total", HistogramName(h), e.Name))
			}
		}
	}
	return m.Series()
}
