package promsource

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	jsoniter "github.com/json-iterator/go"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/human"
	"github.com/vtop-dev/vtop/safetext"
)

// queryPath is the instant-query endpoint, under the server's URL.
const queryPath = "/api/v1/query"

// The result types the source decodes.
const (
	resultMatrix = "matrix"
	resultVector = "vector"
)

// stream runs an instant query whose result is of type want (a range
// vector's matrix, or a vector) and decodes the answer as it arrives
// instead of reading it whole first, as the query client does. The raw
// read is by far the largest answer of a refresh: the query client holds
// the whole body, then decodes it three times over (its envelope, its
// data, its result), which cost vtop more CPU and memory than the samples
// it held. Label values are interned, so the many series of one replica
// share one copy of each. Errors read as the query client's do, whichever
// query failed. uncached asks with nocache=1, as the fast path does:
// VictoriaMetrics answers a query of the last -search.latencyOffset (30 s
// by default) as of that long ago unless told so, and the rules' newest
// evaluation is seconds old. Prometheus ignores the parameter.
func (s *Source) stream(ctx context.Context, expr string, at time.Time, want string, uncached bool) (matrix, []string, error) {
	timeout := s.queryTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, warns, err := s.postQuery(ctx, expr, at, want, uncached)
	var over overBudgetError
	switch {
	case errors.Is(err, errTooManySeries):
		return nil, nil, s.tooManySeries()
	case errors.As(err, &over):
		return nil, nil, s.overBudget(expr, over)
	case errors.Is(err, errNoResult):
		return nil, nil, s.fail("not a Prometheus query API: the answer holds no query result")
	case errors.As(err, new(notMatrixError)):
		return nil, nil, s.fail("not a Prometheus query API: " + safetext.Sanitize(err.Error()))
	case err != nil:
		return nil, nil, s.fail(problem(err, timeout))
	}
	if want == resultVector { // an element without a value is no sample
		m = slices.DeleteFunc(m, func(ss *sampleStream) bool { return len(ss.Values) == 0 })
	}
	return m, s.cleanAll(warns), nil
}

// tooManySeries is the error of a read over the series cap.
func (s *Source) tooManySeries() error {
	return s.fail(fmt.Sprintf("the selector matches more than %d series, the cap; narrow it (e.g. by namespace or job) or raise --max-series", s.cfg.MaxSeries))
}

// overBudget is the error of an answer that passed the refresh's share
// of the memory bound. The problem and what to do come first, the query
// and the series read by then last: vtop's own queries run to hundreds
// of characters, and a screen that wraps the message must not push the
// advice out of sight.
func (s *Source) overBudget(expr string, over overBudgetError) error {
	at := fmt.Sprintf("at %d series of the answer to %s", over.series, shortExpr(expr))
	if over.labels > 0 {
		// One series of so many labels is no fleet's: say so, or the
		// advice to narrow the selector reads as the whole story.
		at += fmt.Sprintf(", and %d labels of the next", over.labels)
	}
	return s.fail(fmt.Sprintf("Prometheus's answers passed %s, their share of --max-memory %s; narrow the selector (e.g. by namespace or job) or raise --max-memory (%s)",
		human.Bytes(int64(s.answers.limit)), human.FlagBytes(int64(s.cfg.MaxMemory)), at))
}

// shortExprRunes is the most of a query a message shows.
const shortExprRunes = 120

// shortExpr is a query as a message shows it: its regex of names cut
// short, which is hundreds of characters of vtop's own names, its runs
// of spaces and line breaks one space, and the whole cut at
// shortExprRunes.
func shortExpr(expr string) string {
	const keep = 40
	if before, rest, ok := strings.Cut(expr, "__name__=~"); ok {
		if quoted, err := strconv.QuotedPrefix(rest); err == nil {
			re, _ := strconv.Unquote(quoted)
			if len(re) > keep {
				re = re[:keep] + "…"
			}
			expr = before + "__name__=~" + strconv.Quote(re) + rest[len(quoted):]
		}
	}
	short := []rune(safetext.Sanitize(strings.Join(strings.Fields(expr), " ")))
	if len(short) > shortExprRunes {
		return string(short[:shortExprRunes]) + "…"
	}
	return string(short)
}

// postQuery sends the query as a form, falling back to GET where POST is
// refused (as the query client does), and decodes the answer.
func (s *Source) postQuery(ctx context.Context, expr string, at time.Time, want string, uncached bool) (matrix, []string, error) {
	// The query API's time: seconds with a fraction.
	form := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.Unix())+float64(at.Nanosecond())/1e9, 'f', -1, 64)}}
	if uncached {
		form.Set("nocache", "1")
	}
	u := s.client.URL(queryPath, nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.httpc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	switch resp.StatusCode {
	case http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		drain(resp)
		u.RawQuery = form.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return nil, nil, err
		}
		if resp, err = s.httpc.Do(req); err != nil {
			return nil, nil, err
		}
	}
	if resp.StatusCode/100 != 2 {
		defer drain(resp)
		return nil, nil, statusError(resp)
	}
	m, warns, err := decodeAnswer(resp.Body, want, s.cfg.MaxSeries, s.answers)
	if errors.Is(err, errTooManySeries) || errors.As(err, new(overBudgetError)) {
		// The rest of an answer over the cap is not worth reading to keep
		// the connection: close it.
		_ = resp.Body.Close()
		return nil, nil, err
	}
	drain(resp)
	return m, warns, err
}

// drain reads what is left of a body (capped by the transport) and closes
// it, so that the connection can be used again.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// statusError is the error of an answer with an error status, as the
// query client makes it: the API's own error where the body carries one
// (Prometheus answers 400 and 422 so), else the status.
func statusError(resp *http.Response) error {
	body, readErr := io.ReadAll(resp.Body)
	if readErr != nil {
		return readErr
	}
	code := resp.StatusCode
	if code == http.StatusBadRequest || code == http.StatusUnprocessableEntity {
		var e struct {
			Status    string       `json:"status"`
			ErrorType v1.ErrorType `json:"errorType"`
			Error     string       `json:"error"`
		}
		if jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(body, &e) == nil && e.Status == "error" {
			if e.ErrorType == "" {
				e.ErrorType = v1.ErrClient
			}
			if e.Error == "" {
				e.Error = fmt.Sprintf("client error: %d", code)
			}
			return &v1.Error{Type: e.ErrorType, Msg: e.Error}
		}
	}
	switch code / 100 {
	case 4:
		return &v1.Error{Type: v1.ErrClient, Msg: fmt.Sprintf("client error: %d", code), Detail: string(body)}
	case 5:
		return &v1.Error{Type: v1.ErrServer, Msg: fmt.Sprintf("server error: %d", code), Detail: string(body)}
	}
	return &v1.Error{Type: v1.ErrBadResponse, Msg: fmt.Sprintf("bad response code %d", code), Detail: string(body)}
}

// errNoResult is a JSON answer without a query result: not the query API.
var errNoResult = errors.New("no query result")

// errTooManySeries is an answer with more series than the source may hold.
var errTooManySeries = errors.New("too many series")

// decodeAnswer decodes a query answer whose result must be of type want
// (a matrix, or a vector whose elements become series of one point),
// returning its series and warnings; an error answer is a *v1.Error, a
// failed read the transport's error. An answer of more than maxSeries
// series stops at the first one over: the cap is checked as the answer
// arrives, so no count has to be asked first, and vtop never holds more.
// So does one whose decoded size passes what is left of b (nil: no
// bound), with an overBudgetError.
func decodeAnswer(body io.Reader, want string, maxSeries int, b *budget) (matrix, []string, error) {
	r := &recordingReader{r: bufio.NewReaderSize(body, 64<<10)}
	if first, err := r.firstByte(); err == nil && first == '<' {
		// The query client's words for it, which problem() knows: a UI
		// or a login page at the URL.
		return nil, nil, &v1.Error{Type: v1.ErrBadResponse, Msg: "invalid character '<' looking for beginning of value"}
	}
	it := jsoniter.Parse(jsoniter.ConfigDefault, r, 64<<10)
	a := answer{data: matrixData{want: want, in: newInterner()}}
	if err := a.read(it, maxSeries, b); err != nil {
		return nil, nil, err
	}
	if err := readFailure(r, it); err != nil {
		return nil, nil, err
	}
	return a.result(want)
}

// answer is a query answer's envelope as decoded so far: its status, its
// error, its warnings and its data.
type answer struct {
	status, errType, errMsg string
	warnings                []string
	data                    matrixData
}

// read decodes the answer's fields from it; the error is the data's (too
// many series, over the budget), a failed read being left in it.Error.
func (a *answer) read(it *jsoniter.Iterator, maxSeries int, b *budget) error {
	for field := it.ReadObject(); field != "" && it.Error == nil; field = it.ReadObject() {
		switch field {
		case "status":
			a.status = it.ReadString()
		case "errorType":
			a.errType = it.ReadString()
		case "error":
			a.errMsg = it.ReadString()
		case "warnings":
			for it.ReadArray() {
				a.warnings = append(a.warnings, it.ReadString())
			}
		case "data":
			if err := a.data.decode(it, maxSeries, b); err != nil {
				return err
			}
		default:
			it.Skip()
		}
	}
	return nil
}

// readFailure is the error of a read that failed: the transport's (a
// timeout, the body cap), an answer that ends early, or invalid JSON; nil
// when the answer was read whole.
func readFailure(r *recordingReader, it *jsoniter.Iterator) error {
	switch {
	case r.err != nil && r.err != io.EOF:
		return r.err
	case it.Error == io.EOF || (it.Error != nil && r.err == io.EOF):
		return &v1.Error{Type: v1.ErrBadResponse, Msg: "the answer ends early (truncated JSON)"}
	case it.Error != nil:
		return &v1.Error{Type: v1.ErrBadResponse, Msg: "invalid JSON: " + it.Error.Error()}
	}
	return nil
}

// result is the series of an answer read whole and its warnings, or the
// error it states: an error status, no result, or a result of another
// type than want.
func (a *answer) result(want string) (matrix, []string, error) {
	d := &a.data
	switch {
	case a.status == "error":
		return nil, a.warnings, &v1.Error{Type: v1.ErrorType(a.errType), Msg: a.errMsg}
	case !d.gotResult:
		return nil, a.warnings, errNoResult
	case d.resultType != want:
		return nil, a.warnings, notMatrixError{got: safetext.Sanitize(d.resultType), want: want}
	}
	if d.disordered > 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("%d series answered points out of time order or twice at one time; read in time order, the first point of each time kept, as Prometheus stores them", d.disordered))
	}
	return d.result, a.warnings, nil
}

// matrixData is the data of a query answer as decoded so far.
type matrixData struct {
	want       string // the result type asked for
	resultType string
	result     matrix
	gotResult  bool
	disordered int // series whose points were put in order
	in         interner
}

// decode reads the data object of an answer into d; an error stops the
// read: the series cap (errTooManySeries) or the budget
// (overBudgetError).
func (d *matrixData) decode(it *jsoniter.Iterator, maxSeries int, b *budget) error {
	if it.WhatIsNext() != jsoniter.ObjectValue {
		it.Skip()
		return nil
	}
	for f := it.ReadObject(); f != "" && it.Error == nil; f = it.ReadObject() {
		switch f {
		case "resultType":
			d.resultType = it.ReadString()
		case "result":
			d.gotResult = true
			if d.resultType != "" && d.resultType != d.want || it.WhatIsNext() != jsoniter.ArrayValue {
				it.Skip()
				continue
			}
			if labels, over := d.decodeSeries(it, maxSeries, b); over {
				return overBudgetError{series: len(d.result), labels: labels}
			}
			if len(d.result) > maxSeries {
				return errTooManySeries
			}
		default:
			it.Skip()
		}
	}
	return nil
}

// notMatrixError is an answer of another type than the query's: a range
// selector's matrix, or an aggregation's vector.
type notMatrixError struct{ got, want string }

func (e notMatrixError) Error() string {
	if e.want == resultVector {
		return "an aggregation answered " + e.got + ", not a vector"
	}
	return "a range selector answered " + e.got + ", not a matrix"
}

// decodeSeries appends the series of a matrix result to d.result,
// stopping once it holds more than maxSeries or b is spent (over, after
// labels of the series being read when that was in its labels), each
// with its points in time order (see inOrder); d.disordered counts the
// series that were not. Every part of a series is taken from b as it is
// decoded, its labels too: one series of a million labels passes the
// budget as it arrives, not once it is whole.
func (d *matrixData) decodeSeries(it *jsoniter.Iterator, maxSeries int, b *budget) (labels int, over bool) {
	var scratch []labelPair // a series' labels as they are read
	for len(d.result) <= maxSeries && it.ReadArray() {
		ss := &sampleStream{}
		if !b.take(seriesBytes) {
			return 0, true
		}
		for f := it.ReadObject(); f != "" && it.Error == nil; f = it.ReadObject() {
			switch f {
			case "metric":
				if ss.Metric, scratch, labels, over = decodeLabels(it, &d.in, scratch, b); over {
					return labels, true
				}
			case "values":
				if ss.Values, over = decodeValues(it, ss.Values, b); over {
					return 0, true
				}
			case "value": // an instant vector's element
				ss.Values = append(ss.Values[:0], decodePoint(it))
				if !b.take(pointBytes) {
					return 0, true
				}
			default: // native histograms: vtop reads classic buckets only
				it.Skip()
			}
		}
		if it.Error != nil {
			return 0, false
		}
		var changed bool
		if ss.Values, changed = inOrder(ss.Values); changed {
			d.disordered++
		}
		d.result = append(d.result, ss)
	}
	return 0, false
}

// labelsPerTake is how many labels of a series are read between takes
// from the budget: often enough that a series of a million labels is
// refused within a small part of it, seldom enough that the shared count
// is not asked twice per label.
const labelsPerTake = 256

// decodeLabels reads a series' labels (a JSON object of strings) into its
// name, its bound and the interned set of the others, taking from b the
// bytes of what it keeps as it goes (over: b is spent). scratch is the
// caller's, handed back to be used again; read is how many labels were.
func decodeLabels(it *jsoniter.Iterator, in *interner, scratch []labelPair, b *budget) (l labels, _ []labelPair, read int, over bool) {
	pairs := scratch[:0]
	for name := it.ReadObject(); name != "" && it.Error == nil; name = it.ReadObject() {
		read++
		value := in.get(it.ReadString())
		switch name {
		case model.MetricNameLabel:
			l.name = value
		case labelLE:
			l.le = value
		default:
			pairs = append(pairs, labelPair{in.get(name), value})
		}
		if read%labelsPerTake == 0 && !b.take(in.taken()+labelPairBytes*labelsPerTake) {
			return l, pairs, read, true
		}
	}
	if !b.take(in.taken()) {
		return l, pairs, read, true
	}
	l.rest = in.set(sortedLabels(pairs))
	return l, pairs, read, !b.take(in.taken())
}

// sortedLabels sorts labels by name in place, keeps the last of any name
// given twice, as a map of them would, and drops the empty ones: an empty
// label is no label (Prometheus's rule; it answers none).
func sortedLabels(pairs []labelPair) []labelPair {
	if slices.IsSortedFunc(pairs, byLabelName) && !hasRepeats(pairs) && !slices.ContainsFunc(pairs, emptyLabel) {
		return pairs // as Prometheus writes them
	}
	slices.SortStableFunc(pairs, byLabelName)
	out := pairs[:0]
	for i, p := range pairs {
		if i+1 < len(pairs) && pairs[i+1].name == p.name {
			continue
		}
		out = append(out, p)
	}
	return slices.DeleteFunc(out, emptyLabel)
}

func emptyLabel(p labelPair) bool { return p.value == "" }

func byLabelName(a, b labelPair) int { return strings.Compare(a.name, b.name) }

// hasRepeats reports whether sorted labels name one label twice.
func hasRepeats(sorted []labelPair) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i].name == sorted[i-1].name {
			return true
		}
	}
	return false
}

// decodeValues appends a series' points to vs, taking their size from b
// as they come, pointsPerTake at a time.
func decodeValues(it *jsoniter.Iterator, vs []model.SamplePair, b *budget) (_ []model.SamplePair, over bool) {
	taken := cap(vs)
	for it.ReadArray() {
		vs = append(vs, decodePoint(it))
		if cap(vs) > taken {
			if !b.take(pointBytes * int64(cap(vs)-taken)) {
				return vs, true
			}
			taken = cap(vs)
		}
	}
	return vs, false
}

// inOrder puts a series' points in time order, keeping the first of
// each timestamp, as Prometheus's storage holds a series (it refuses a
// sample older than the newest and a second one at the same time); it
// reports whether it had to. A proxy, a federation or a broken remote
// store can answer points out of order or twice, which read as counter
// resets: 457 requests a second for a true 16.
func inOrder(ps []model.SamplePair) ([]model.SamplePair, bool) {
	ordered := true
	for i := 1; i < len(ps) && ordered; i++ {
		ordered = ps[i].Timestamp > ps[i-1].Timestamp
	}
	if ordered {
		return ps, false
	}
	slices.SortStableFunc(ps, func(a, b model.SamplePair) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	return slices.CompactFunc(ps, func(a, b model.SamplePair) bool { return a.Timestamp == b.Timestamp }), true
}

// decodePoint decodes [time, "value"]; a malformed point sets the
// iterator's error.
func decodePoint(it *jsoniter.Iterator) model.SamplePair {
	var p model.SamplePair
	if !it.ReadArray() {
		it.ReportError("decodePoint", "empty point")
		return p
	}
	if err := p.Timestamp.UnmarshalJSON([]byte(it.ReadNumber())); err != nil {
		it.ReportError("decodePoint", "time: "+err.Error())
		return p
	}
	if !it.ReadArray() {
		it.ReportError("decodePoint", "point without a value")
		return p
	}
	v, err := pointValue(it)
	if err != nil {
		it.ReportError("decodePoint", "value: "+err.Error())
		return p
	}
	p.Value = model.SampleValue(v)
	for it.ReadArray() {
		it.Skip()
	}
	return p
}

// pointValue reads a point's value, a number in a JSON string, without
// copying the string where it has no escapes (Prometheus writes none in
// a number): the copy of every point of an answer was a third of what
// decoding it allocated.
func pointValue(it *jsoniter.Iterator) (float64, error) {
	if it.WhatIsNext() != jsoniter.StringValue {
		return strconv.ParseFloat(it.ReadString(), 64) // its error
	}
	raw := it.ReadStringAsSlice()
	if bytes.IndexByte(raw, '\\') < 0 {
		return strconv.ParseFloat(string(raw), 64) // on the stack
	}
	var v string
	if err := json.Unmarshal(slices.Concat([]byte{'"'}, raw, []byte{'"'}), &v); err != nil {
		return 0, err
	}
	return strconv.ParseFloat(v, 64)
}

// recordingReader keeps the error of the reader below, which the JSON
// iterator does not tell apart from its own.
type recordingReader struct {
	r   *bufio.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// firstByte peeks at the first byte past white space.
func (r *recordingReader) firstByte() (byte, error) {
	for {
		b, err := r.r.ReadByte()
		if err != nil {
			r.err = err
			return 0, err
		}
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return b, r.r.UnreadByte()
		}
	}
}

// The sizes a decoded answer is counted in, as the Go runtime holds it
// on 64-bit machines: a series (its sampleStream and the matrix's pointer
// to it), each point, each string kept (its header in the interner's map,
// beside its bytes), each set of labels kept (the set, the interner's
// entry for it, beside its key's bytes) and each label of such a set, or
// of a series being read.
const (
	seriesBytes    = 64 + 8
	pointBytes     = 16
	stringBytes    = 64
	setBytes       = 24 + 64
	labelPairBytes = 32
)

// budget is the bytes the decoded answers of one refresh may still
// take, shared by its queries.
type budget struct {
	limit int64
	left  atomic.Int64
}

// newBudget is a budget of limit bytes.
func newBudget(limit int64) *budget {
	b := &budget{limit: limit}
	b.left.Store(limit)
	return b
}

// take counts n more bytes, reporting whether they fit; a nil budget
// has no bound.
func (b *budget) take(n int64) bool {
	return b == nil || b.left.Add(-n) >= 0
}

// overBudgetError is an answer refused once its decoded size passed its
// budget, after series of it and, when it passed in the labels of the
// next, labels of that one.
type overBudgetError struct{ series, labels int }

func (e overBudgetError) Error() string {
	return fmt.Sprintf("the answer passed its memory budget at %d series", e.series)
}
