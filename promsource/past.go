package promsource

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/promql"
	"github.com/vtop-dev/vtop/safetext"
)

// The past: a stretch of what the server stored, read back as the scrapes
// Prometheus made, so that a recording of it replays through the same
// parser and analysis as a live watch. Prometheus keeps each scrape as
// samples stamped with the scrape's time; the samples of one target that
// share a timestamp are one scrape, and written back as a page of the
// Prometheus text format they parse to the sample the page gave.

// PastTarget is one scrape target of a replica in the past.
type PastTarget struct {
	// Name is the target as a recording names it: the replica's name as
	// the live source names it (the grouping label, else instance), with
	// the instance added when a replica has several targets.
	Name string
	// Job and Instance are the target's labels in Prometheus.
	Job, Instance string
}

// PastPage is one scrape of one target as Prometheus stored it.
type PastPage struct {
	// Target is the index of the target in Past.Targets.
	Target int
	// Time is the scrape's timestamp.
	Time time.Time
	// Body is the scrape as a page of the Prometheus text format (only the
	// series vtop reads); nil for a scrape Prometheus failed (up was 0).
	Body []byte
	// Err says why the scrape failed; empty for a good one.
	Err string
}

// PastContentType is the content type of PastPage.Body.
const PastContentType = "text/plain; version=0.0.4; charset=utf-8"

// Past reads a stretch of the past from the server, chunk by chunk, in
// time order. Make it with Source.Past; not safe for concurrent use, nor
// alongside Run.
type Past struct {
	src        *Source
	start, end time.Time
	// Targets are the scrape targets of the replicas seen in the stretch,
	// sorted by name.
	Targets []PastTarget
	index   map[scrapeTarget]int
	// Warnings are what the reading has to say: targets renamed apart.
	Warnings []string
	chunk    time.Duration
}

// Chunk bounds: a chunk is one raw read of every series over its span.
// It starts at DefaultPastChunk and halves, down to minPastChunk, when an
// answer passes its share of the memory bound.
const (
	DefaultPastChunk = 5 * time.Minute
	minPastChunk     = 10 * time.Second
)

// ErrNoPast is returned by Source.Past when the stretch holds no series
// vtop reads.
var ErrNoPast = errors.New("no series vtop reads")

// Past finds the targets of the replicas with samples in [start, end]
// and prepares to read them. It asks one range query of the targets
// alone, so that a recording can name them all before its first page.
func (s *Source) Past(ctx context.Context, start, end time.Time) (*Past, error) {
	start, end = start.Truncate(time.Millisecond), end.Truncate(time.Millisecond)
	if !start.Before(end) {
		return nil, fmt.Errorf("the stretch starts at %s, not before its end %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	p := &Past{src: s, start: start, end: end, index: map[scrapeTarget]int{}, chunk: DefaultPastChunk}
	m, failed, err := s.pastTargets(ctx, start, end)
	if err != nil {
		return nil, err
	}
	p.name(m, failed)
	if len(p.Targets) == 0 {
		return nil, ErrNoPast
	}
	return p, nil
}

// pastTargets asks which targets had series vtop reads in the stretch,
// and which had their scrapes failing (up is 0; a dead server leaves no
// other series), grouped by the labels that name a replica: two range
// queries side by side. The step stays under Prometheus's lookback period
// (5 minutes by default), so every series with a sample in the stretch is
// seen at some step, and a target failing through a whole step is seen
// failing at it.
func (s *Source) pastTargets(ctx context.Context, start, end time.Time) (withSeries, failed model.Matrix, err error) {
	by := []string{labelJob, labelInstance, labelPod}
	if s.cfg.GroupBy != "" {
		by = []string{labelJob, labelInstance, s.cfg.GroupBy}
	}
	step := max(time.Minute, end.Sub(start)/maxPoints+time.Millisecond)
	exprs := []string{
		promql.Aggregate("group", strings.Join(by, ", "), s.q.selector(promql.ReadNames())),
		promql.FailedTargets(by, s.q.matchers),
	}
	answers := make([]model.Matrix, len(exprs))
	errs := make([]error, len(exprs))
	var wg sync.WaitGroup
	for i, expr := range exprs {
		wg.Go(func() {
			r := v1.Range{Start: start, End: end.Add(step - time.Millisecond), Step: step}
			answers[i], errs[i] = s.queryRange(ctx, "the targets of the stretch", expr, r, wholeReadTimeouts*s.cfg.Timeout)
		})
	}
	wg.Wait()
	if err := cmp.Or(errs...); err != nil {
		return nil, nil, err
	}
	return answers[0], answers[1], nil
}

// name lists the targets, each under its replica's name: those with
// series vtop reads (withSeries) and the failing ones of the fleet
// (failed; fleetTargets.owns, the live source's rule). The targets of a
// replica that has several (a group, a pod's sidecar) are told apart by
// their instance, since a recording keeps each target's pages apart.
func (p *Past) name(withSeries, failed model.Matrix) {
	byName := map[string][]scrapeTarget{}
	fleet := newFleetTargets(p.src.group)
	for _, ss := range withSeries {
		l := labelsOf(ss.Metric)
		fleet.add(safetext.Sanitize(p.src.group.name(l)), map[scrapeTarget]bool{targetOf(l): true})
	}
	for _, ss := range slices.Concat(withSeries, slices.DeleteFunc(slices.Clone(failed), func(ss *model.SampleStream) bool {
		return !fleet.owns(labelsOf(ss.Metric))
	})) {
		l := labelsOf(ss.Metric)
		t := targetOf(l)
		if _, seen := p.index[t]; seen {
			continue
		}
		p.index[t] = -1
		n := p.src.group.name(l)
		byName[n] = append(byName[n], t)
	}
	for n, ts := range byName {
		for _, t := range ts {
			name := n
			if len(ts) > 1 {
				name = n + " " + t.job + "/" + t.instance
			}
			p.Targets = append(p.Targets, PastTarget{Name: safetext.Sanitize(name), Job: t.job, Instance: t.instance})
		}
		if len(ts) > 1 {
			p.Warnings = append(p.Warnings, safetext.Sanitize(fmt.Sprintf(
				"replica %s has %d scrape targets; the past shows each apart (%s), where a live watch sums them", n, len(ts), describeTargets(ts))))
		}
	}
	slices.SortFunc(p.Targets, func(a, b PastTarget) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Job, b.Job), strings.Compare(a.Instance, b.Instance))
	})
	for i, t := range p.Targets {
		p.index[scrapeTarget{job: t.Job, instance: t.Instance}] = i
	}
	slices.Sort(p.Warnings)
}

// Read reads the stretch chunk by chunk, oldest first, and hands visit
// the pages of each chunk sorted by time (then target); a page of a chunk
// is never older than one of the chunk before. An error of visit stops
// the reading and is returned.
func (p *Past) Read(ctx context.Context, visit func(pages []PastPage) error) error {
	return p.read(ctx, func(raw, up matrix, after, through model.Time) error {
		return p.eachPages(raw, up, after, through, visit)
	})
}

// read reads the stretch chunk by chunk, oldest first, and hands visit
// the raw samples and Prometheus's record of the scrapes (up) of each
// chunk, which holds the samples in (after, through]. The next chunk is
// read while visit works on one: Prometheus answers while vtop computes.
func (p *Past) read(ctx context.Context, visit func(raw, up matrix, after, through model.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	chunks := make(chan pastChunk)
	go p.fetch(ctx, chunks)
	defer func() {
		cancel()
		for range chunks { // the reader has stopped when it closes them
		}
	}()
	for c := range chunks {
		if c.err != nil {
			return c.err
		}
		if err := visit(c.raw, c.up, c.after, c.through); err != nil {
			return err
		}
	}
	return nil
}

// pastChunk is one chunk read, or the error that ended the reading.
type pastChunk struct {
	raw, up        matrix
	after, through model.Time
	err            error
}

// fetch reads the chunks in order into out, halving the chunk while its
// answers pass their budget, and closes out after the last or an error.
func (p *Past) fetch(ctx context.Context, out chan<- pastChunk) {
	defer close(out)
	after := model.TimeFromUnixNano(p.start.UnixNano()) - 1 // the stretch's first millisecond is in
	end := model.TimeFromUnixNano(p.end.UnixNano())
	for after < end {
		through := min(after+model.Time(p.chunk.Milliseconds()), end)
		raw, up, err := p.readChunk(ctx, after, through)
		if err != nil && p.src.answers.left.Load() < 0 { // the chunk's answers passed their budget
			if p.chunk > minPastChunk {
				p.chunk = max(p.chunk/2, minPastChunk)
				continue
			}
			// Even the least chunk is too big: the answer's own error says
			// by how much and what to do (--max-memory, the selector).
			err = p.src.fail(problemOf(err) + fmt.Sprintf("; the stretch was read %s at a time, the least", minPastChunk))
		}
		select {
		case out <- pastChunk{raw: raw, up: up, after: after, through: through, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		after = through
	}
}

// readChunk reads the samples in (after, through] of every series vtop
// reads, and Prometheus's record of the scrapes (up).
func (p *Past) readChunk(ctx context.Context, after, through model.Time) (raw, up matrix, err error) {
	s := p.src
	at := through.Time()
	width := time.Duration(through-after) * time.Millisecond
	s.whole = true // a chunk is a whole read: it gets a whole read's timeout
	// Two chunks are held at once, the one being reported on and the next
	// being read: each gets half the answers' share of the memory bound.
	s.answers = newBudget(s.cfg.answerBudget() / 2)
	qs := make([]streamed, 0, rawSplit+1)
	for _, half := range s.q.halves {
		qs = append(qs, streamed{s.q.raw(half, width), resultMatrix, at})
	}
	answers, _, errs := s.streamAll(ctx, append(qs, streamed{s.q.up(width), resultMatrix, at}), false)
	if err := cmp.Or(errs...); err != nil {
		return nil, nil, err
	}
	raw = slices.Concat(answers[:len(s.q.halves)]...)
	if len(raw) > s.cfg.MaxSeries {
		return nil, nil, s.tooManySeries()
	}
	return raw, answers[len(answers)-1], nil
}

// pastBatchBytes is about the most page text Read hands on at once. A
// chunk's pages are several times its samples (every series' name and
// labels on every page): five minutes of 200 two-engine replicas are
// some 800 MB of text, which written at once set the peak.
const pastBatchBytes = 8 << 20

// eachPages hands visit the pages of the samples in (after, through],
// one per target and timestamp and a failed one where up was 0 and no
// sample was written, in time order (by target within a time), in
// batches of about pastBatchBytes of text that never split the pages of
// one time: a batch's pages are all those at or before its last.
func (p *Past) eachPages(raw, up matrix, after, through model.Time, visit func([]PastPage) error) error {
	perTarget := make([][]*sampleStream, len(p.Targets))
	for _, ss := range raw {
		if i, ok := p.index[targetOf(ss.Metric)]; ok && i >= 0 {
			perTarget[i] = append(perTarget[i], ss)
		}
	}
	writers := make([]pageWriter, len(p.Targets))
	var slots []PastPage // the pages to write, bodies not yet written
	for i, series := range perTarget {
		for _, t := range writers[i].prepare(series, after, through) {
			slots = append(slots, PastPage{Target: i, Time: t.Time()})
		}
	}
	slots = p.appendFailures(slots, up, after, through)
	slices.SortStableFunc(slots, func(a, b PastPage) int { return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Target, b.Target)) })
	var batch []PastPage
	size := 0
	for k, pg := range slots {
		if size >= pastBatchBytes && !pg.Time.Equal(slots[k-1].Time) {
			if err := visit(batch); err != nil {
				return err
			}
			batch, size = nil, 0
		}
		if pg.Err == "" {
			pg.Body = writers[pg.Target].page(model.TimeFromUnixNano(pg.Time.UnixNano()))
			size += len(pg.Body)
		}
		batch = append(batch, pg)
	}
	if len(batch) == 0 {
		return nil
	}
	return visit(batch)
}

// appendFailures appends a failed page for each scrape of a target that
// Prometheus failed (up is 0) in (after, through]. A failed scrape writes
// no series, so its time has no page already.
func (p *Past) appendFailures(out []PastPage, up matrix, after, through model.Time) []PastPage {
	for _, ss := range up {
		i, ok := p.index[targetOf(ss.Metric)]
		if !ok || i < 0 {
			continue
		}
		problem := upProblem(ss.Metric)
		for _, v := range ss.Values {
			if v.Value == 0 && v.Timestamp > after && v.Timestamp <= through {
				out = append(out, PastPage{Target: i, Time: v.Timestamp.Time(), Err: problem})
			}
		}
	}
	return out
}
