package promsource

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"github.com/vtop-dev/vtop/testutil"
	"math"
	"slices"
	"testing"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// answerBytes draws the parts of an answer from a fuzz input.
type answerBytes struct{ *testutil.FuzzBytes }

// float is eight bytes as a float64's bits: any value, NaN and ±Inf
// included.
func (a *answerBytes) float() float64 {
	var b [8]byte
	for i := range b {
		b[i] = a.Next()
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
}

// text is up to seven bytes as a string: any bytes, invalid UTF-8 and
// control characters included.
func (a *answerBytes) text() string {
	s := make([]byte, a.Next()%8)
	for i := range s {
		s[i] = a.Next()
	}
	return string(s)
}

// matrixAnswerFrom builds a query answer from fuzz bytes as Prometheus's
// API writes one: up to three series of up to three labels and five
// points each, their times on a few seconds (so some repeat and some
// come out of order), any values.
func matrixAnswerFrom(data []byte) []byte {
	a := &answerBytes{testutil.NewFuzzBytes(data)}
	names := []model.LabelName{"__name__", "instance", "job", "le", "finished_reason", "ü"}
	m := model.Matrix{}
	for range a.Next() % 4 {
		ss := &model.SampleStream{Metric: model.Metric{}}
		for range a.Next() % 4 {
			ss.Metric[names[int(a.Next())%len(names)]] = model.LabelValue(a.text())
		}
		for range a.Next() % 6 {
			at := model.Time(1_700_000_000_000 + int64(a.Next()%8)*1000 + int64(a.Next()%3))
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: at, Value: model.SampleValue(a.float())})
		}
		m = append(m, ss)
	}
	var warnings []string
	if a.Next()%2 == 1 {
		warnings = []string{a.text()}
	}
	out, err := json.Marshal(map[string]any{"status": "success", "warnings": warnings,
		"data": map[string]any{"resultType": "matrix", "result": m}})
	if err != nil {
		panic(err)
	}
	return out
}

// referenceMatrix decodes an answer with encoding/json and the model's
// types, as the query client does, then orders each series as
// Prometheus's storage would hold it, and drops its empty labels (an
// empty label is none: Prometheus's rule).
func referenceMatrix(t *testing.T, answer []byte) (model.Matrix, []string) {
	var ref struct {
		Data struct {
			Result model.Matrix `json:"result"`
		} `json:"data"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(answer, &ref); err != nil {
		t.Fatalf("encoding/json refuses an answer it wrote: %v\n%s", err, answer)
	}
	for _, ss := range ref.Data.Result {
		ss.Values, _ = inOrder(ss.Values)
		ss.Metric = withoutEmpty(ss.Metric)
	}
	return ref.Data.Result, ref.Warnings
}

// sameMatrix reports whether two matrices hold the same series, labels
// and points (NaN equal to NaN).
func sameMatrix(a, b model.Matrix) bool {
	return slices.EqualFunc(a, b, func(x, y *model.SampleStream) bool {
		return x.Metric.Equal(y.Metric) && slices.EqualFunc(x.Values, y.Values, func(p, q model.SamplePair) bool { return p.Equal(&q) })
	})
}

// FuzzDecodeMatrix checks the decoder of the query answers: any bytes
// are decoded or refused with one of its errors (never a panic or a
// hang), and an answer as Prometheus writes it, built from the same
// bytes, decodes as encoding/json and the model's types decode it, each
// series put in time order.
func FuzzDecodeMatrix(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up"},"values":[[1.5,"1"],[1,"NaN"]]}]}}`))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"vector","result":[]},"warnings":["w"]}`))
	f.Add([]byte(`<html>`))
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"","le":"","a":""},"values":null}]}}`))
	f.Add([]byte{3, 2, 0, 5, 'a', 'b', 0xff, '"', 1, 4, 1, 1, 2, 3, 4, 5, 6, 7, 8, 3, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, _, err := decodeMatrix(bytes.NewReader(data), 3, newBudget(1<<20)); err != nil && !knownDecodeError(err) {
			t.Fatalf("an error of an unknown kind: %T %v", err, err)
		}
		answer := matrixAnswerFrom(data)
		want, wantWarns := referenceMatrix(t, answer)
		got, warns, err := decodeMatrix(bytes.NewReader(answer), 3, newBudget(1<<20))
		if err != nil {
			t.Fatalf("a valid answer refused: %v\n%s", err, answer)
		}
		if !sameMatrix(modelOf(got), want) {
			t.Fatalf("decoded %v, encoding/json gives %v\n%s", got, want, answer)
		}
		if n := len(warns) - len(wantWarns); n < 0 || n > 1 || !slices.Equal(warns[:len(wantWarns)], wantWarns) {
			t.Fatalf("warnings %q, the answer's are %q", warns, wantWarns)
		}
	})
}

// knownDecodeError reports whether err is one decodeMatrix documents.
func knownDecodeError(err error) bool {
	var apiErr *v1.Error
	return errors.As(err, &apiErr) || errors.Is(err, errNoResult) || errors.Is(err, errTooManySeries) ||
		errors.As(err, new(notMatrixError))
}
