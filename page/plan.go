package page

import (
	"slices"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/catalogue"
)

// A page read as values only (memo.go) is built from the very families,
// series and labels of the last page: only the values in them changed.
// Which engine a series belongs to, which figure its split label picks,
// whether its row is shadowed and what its buckets' bounds are come from
// the labels alone, and the builder found them out the last time. The
// first page read as values only after a full reading records them as a
// plan, a list of folds; the pages read as values only after it follow
// the plan and fold the values in, in the same order, without resolving
// a label again. A full reading of a page drops the plan (readPage), as
// its families are new.
//
// A plan is recorded only for a page whose reading warned of nothing: the
// warnings that come from labels (an engine or a series cap, buckets that
// disagree) would otherwise have to be replayed in their order among
// those that come from values.

// buildPlan is what a page's labels told the builder.
type buildPlan struct {
	folds     []fold
	engines   []string // the engines' names, in the order the page named them
	unlabeled bool     // some series had no engine label
	model     string
	router    catalogue.RouterKind
	role      catalogue.Role
	backends  []string // raw, as the builder keeps them
	kinds     [catalogue.NumEngineKinds]int
}

// fold is one series of the page and where its value goes.
type fold struct {
	m      *dto.Metric
	bounds []float64 // a histogram's interned bounds when its buckets come in order, else nil
	t      dto.MetricType
	row    int32
	acc    int8 // the engine, by its place in buildPlan.engines; -1 the unlabeled one
	op     foldOp
	which  uint8 // the scalar, finish reason or histogram op names
}

// foldOp is what a fold does with its series' value.
type foldOp uint8

const (
	foldPageWide foldOp = iota // readPageWide
	foldScalar
	foldFinished
	foldHistogram
	foldSleep
	foldSpecPerPos
)

// The places a fold stores must fit its fields.
var (
	_ [127 - MaxEngines]struct{}
	_ [255 - catalogue.NumScalars]struct{}
	_ [255 - catalogue.NumFinishReasons]struct{}
	_ [255 - catalogue.NumHistograms]struct{}
)

// record notes the fold a series of the page made, while a plan is
// recorded.
func (b *builder) record(f fold, acc *engineAcc) {
	if b.rec == nil {
		return
	}
	f.acc = -1
	if acc != b.unlabeled {
		f.acc = int8(slices.Index(b.engines, acc))
	}
	b.rec.folds = append(b.rec.folds, f)
}

// endRecording completes the plan the reading recorded, or returns nil
// when the reading warned of something after warned warnings.
func (b *builder) endRecording(warned int) *buildPlan {
	p := b.rec
	b.rec = nil
	if p == nil || len(b.sample.Warnings) != warned {
		return nil
	}
	p.engines = make([]string, len(b.engines))
	for i, e := range b.engines {
		p.engines[i] = e.name
	}
	p.unlabeled = b.unlabeled != nil
	p.model, p.router, p.role = b.sample.Model, b.sample.Router, b.sample.Role
	p.backends = slices.Clone(b.backends)
	p.kinds = b.kinds
	return p
}

// follow folds the page's values in as the plan says: what read would do
// with the page, without resolving its labels.
func (b *builder) follow(p *buildPlan) {
	b.sample.Model, b.sample.Router, b.sample.Role = p.model, p.router, p.role
	b.backends, b.kinds = p.backends, p.kinds
	accs := make([]engineAcc, len(p.engines), len(p.engines)+b2i(p.unlabeled))
	if p.unlabeled {
		accs = append(accs, newEngineAcc(""))
		b.unlabeled = &accs[len(p.engines)]
	}
	b.engines = make([]*engineAcc, len(p.engines))
	for i, name := range p.engines {
		accs[i] = newEngineAcc(name)
		b.engines[i] = &accs[i]
	}
	for i := range p.folds {
		f := &p.folds[i]
		acc := b.unlabeled
		if f.acc >= 0 {
			acc = b.engines[f.acc]
		}
		b.apply(f, acc)
	}
}

// build folds the page's families into the sample: by the plan when the
// page was read as values only into the families it was recorded on,
// else by reading them, recording the plan when it may serve next time.
func (b *builder) build(fams map[string]*dto.MetricFamily) {
	memo := &b.in.memo
	if b.in.replayed && memo.plan != nil {
		b.follow(memo.plan)
		return
	}
	if b.in.replayed {
		b.rec = &buildPlan{}
	}
	warned := len(b.sample.Warnings)
	b.read(fams)
	memo.plan = b.endRecording(warned)
}

// b2i is 1 for true.
func b2i(t bool) int {
	if t {
		return 1
	}
	return 0
}
