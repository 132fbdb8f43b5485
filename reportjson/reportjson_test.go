package reportjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"github.com/vtop-dev/vtop/testutil"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// sameAsEncodingJSON checks that appendJSON writes v as json.Marshal does:
// the same bytes, appended after what dst held, or an error where
// encoding/json fails. It reports whether encoding/json succeeded.
// t0 is a time the tests write in several zones.
var t0 = time.Date(2026, 5, 4, 14, 0, 0, 0, time.UTC)

// numJSONCases are figures at the edges of their formatting: e-notation,
// rounding, zeros and their sign, subnormals, the largest floats.
var numJSONCases = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 11.100000000000001, 999999.5, 1e6, 1e21, 0.0001, 1e-5, 0.1 + 0.2,
	1.0 / 3, 9.999999999995e-5, 5e-324, 2.2250738585072009e-308, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1),
}

func sameAsEncodingJSON(t testing.TB, v any) bool {
	t.Helper()
	want, wantErr := json.Marshal(v)
	const prefix = "prefix "
	got, err := appendJSON([]byte(prefix), v)
	if wantErr != nil {
		if err == nil {
			t.Errorf("encoding/json fails (%v), the fast writer wrote %s", wantErr, got[len(prefix):])
		}
		return false
	}
	if err != nil {
		t.Errorf("encoding/json writes %s, the fast writer fails: %v", want, err)
		return true
	}
	if !bytes.Equal(got[len(prefix):], want) || !bytes.HasPrefix(got, []byte(prefix)) {
		t.Errorf("written\n%s\nencoding/json writes\n%s\nfirst difference at byte %d", got[len(prefix):], want, firstDifference(got[len(prefix):], want))
	}
	return true
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// The Report's plan compiles: nothing in it is left to encoding/json as
// a whole, so --jsonl takes the fast writer.
func TestReportJSONPlanCompiles(t *testing.T) {
	if _, err := jsonPlanFor(reflect.TypeFor[*analysis.Report]()); err != nil {
		t.Fatalf("the analysis.Report is left to encoding/json: %v", err)
	}
}

// TestAppendJSONGolden: the golden reports are written as encoding/json
// writes them, and the fast writer (with json.Indent for --json) rebuilds
// the golden file byte for byte.
func TestAppendJSONGolden(t *testing.T) {
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	lines, indentedReport := goldenReports(t, want)
	var out []byte
	for i := range lines {
		sameAsEncodingJSON(t, lines[i])
		if out, err = Append(out, &lines[i]); err != nil {
			t.Fatal(err)
		}
		out = append(out, '\n')
	}
	line, err := Append(nil, &indentedReport)
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, append(line, '\n'), "", "  "); err != nil {
		t.Fatal(err)
	}
	out = append(out, indented.Bytes()...)
	if !bytes.Equal(out, want) {
		t.Errorf("the fast writer writes the golden reports differently from %s (first difference at byte %d)", goldenPath, firstDifference(out, want))
	}
}

// goldenPath is the analysis' golden file of the reports' JSON: busy,
// warming, down, with n/a figures and infinite bounds, as three lines and
// last the first of them again, indented.
var goldenPath = filepath.Join("..", "analysis", "testdata", "reports.golden.jsonl")

// goldenReports reads the reports back from the golden file.
func goldenReports(t *testing.T, golden []byte) (lines []analysis.Report, indented analysis.Report) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(golden))
	for dec.More() {
		var r analysis.Report
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, r)
	}
	if len(lines) != 4 {
		t.Fatalf("%s holds %d reports, want 4", goldenPath, len(lines))
	}
	return lines[:3], lines[3]
}

// jsonTexts are strings at the edges of JSON's escaping: quotes and
// backslashes, every kind of control character, HTML's <, > and &,
// invalid and truncated UTF-8, surrogates, and U+2028 and U+2029.
var jsonTexts = []string{
	"", "gpu-a:8000", `say "hi" \ to C:\path\`, "\x00\x01\x07\x1f\b\f\n\r\t\x7f end",
	"<script>alert('&amp;')</script>", "\xff\xfe", "half \xe2\x80", "seps \u2028 and \u2029, raw \xe2\x80\xa8\xe2\x80\xa9",
	"é ü 中文 🙂", "\xed\xa0\x80 surrogate", "\xc0\xaf overlong", "end\\", "\xe2\x80\xa7 near the separators",
}

// plainFloats are float64s at the edges of encoding/json's float format
// (e-notation below 1e-6 and from 1e21); rejectedFloats those it rejects.
var (
	plainFloats = []float64{
		0, math.Copysign(0, -1), 1, -1.5, 30, 1e20, 1e21, 1e-6, 9.99999e-7, 1e-7, 123456789.125, 5e-324, math.MaxFloat64,
		1.0 / 3, 0.1 + 0.2, -2.5e-9, float64(float32(0.1)), 16777217,
	}
	rejectedFloats = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
)

// jsonTimes are times at the edges of Time.MarshalJSON: zones of hours,
// minutes and seconds, the largest zone it writes, years of four digits,
// nanoseconds, the zero time; rejectedTimes those it rejects (zones of 24
// hours and more, years of more or fewer than four digits).
var (
	jsonTimes = []time.Time{
		{}, t0, t0.Add(123456789), t0.Add(100), t0.Add(time.Millisecond),
		t0.In(time.FixedZone("IST", 5*3600+1800)), t0.In(time.FixedZone("PST", -8*3600)), t0.In(time.FixedZone("", 3600+30)),
		t0.In(time.FixedZone("", 23*3600+59*60)), t0.In(time.FixedZone("", -23*3600-59*60-59)),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), t0.Local(),
	}
	rejectedTimes = []time.Time{
		t0.In(time.FixedZone("", 24*3600)), t0.In(time.FixedZone("", -100*3600)), t0.In(time.FixedZone("", 1000*3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
)

// jsonInts are integers of every width's edges.
var jsonInts = []int64{0, 1, -1, 7, 255, -128, 1 << 31, math.MaxInt64, math.MinInt64}

// jsonFiller fills a value by reflection, every field it can reach,
// with the odd values above, slices and maps nil, empty or full, and
// pointers nil or not. It draws its choices from next.
type jsonFiller struct {
	t     testing.TB
	next  func() uint64
	texts []string
}

// maxFillDepth bounds the nesting of a recursive type (a group's groups).
const maxFillDepth = 4

func (f *jsonFiller) pick(n int) int { return int(f.next() % uint64(n)) }

// rare is true one time in 60: a value encoding/json rejects fails the
// whole report, so most reports get none.
func (f *jsonFiller) rare() bool { return f.next()%60 == 59 }

// choose picks one of values, or rarely one of rejected.
func choose[T any](f *jsonFiller, values, rejected []T) T {
	if len(rejected) > 0 && f.rare() {
		return rejected[f.pick(len(rejected))]
	}
	return values[f.pick(len(values))]
}

func (f *jsonFiller) fill(v reflect.Value, depth int) {
	switch v.Type() {
	case numType:
		v.SetFloat(numJSONCases[f.pick(len(numJSONCases))])
		return
	case timeType:
		v.Set(reflect.ValueOf(choose(f, jsonTimes, rejectedTimes)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(f.texts[f.pick(len(f.texts))])
	case reflect.Bool:
		v.SetBool(f.pick(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(jsonInts[f.pick(len(jsonInts))])
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(jsonInts[f.pick(len(jsonInts))]))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(choose(f, plainFloats, rejectedFloats))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth)
		}
	case reflect.Pointer:
		if depth < maxFillDepth && f.pick(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			f.fill(v.Elem(), depth+1)
		}
	case reflect.Slice:
		switch n := f.pick(5); {
		case depth >= maxFillDepth || n == 0:
		case n == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				f.fill(v.Index(i), depth+1)
			}
		}
	case reflect.Interface:
		if v.NumMethod() == 0 {
			values := []any{nil, f.texts[f.pick(len(f.texts))], plainFloats[f.pick(len(plainFloats))], analysis.Num(f.pick(3)), []any{"a", 1.5, nil}}
			if value := values[f.pick(len(values))]; value != nil {
				v.Set(reflect.ValueOf(value))
			}
		}
	case reflect.Map:
		switch n := f.pick(5); {
		case depth >= maxFillDepth || n == 0:
		case n == 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			v.Set(reflect.MakeMap(v.Type()))
			for range n - 1 {
				key, value := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				f.fill(key, depth+1)
				f.fill(value, depth+1)
				v.SetMapIndex(key, value)
			}
		}
	default:
		f.t.Fatalf("the filler cannot fill a %s: teach it, so that the JSON of the new field is tested", v.Type())
	}
}

// filledReport is a report with every field filled by f.
func filledReport(f *jsonFiller) analysis.Report {
	var r analysis.Report
	f.fill(reflect.ValueOf(&r).Elem(), 0)
	return r
}

// TestAppendJSONFilledReports: reports with every field set, at random,
// to odd values are written as encoding/json writes them, or both fail.
// A field added to the analysis.Report is filled and checked here too.
func TestAppendJSONFilledReports(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := &jsonFiller{t: t, next: rng.Uint64, texts: jsonTexts}
	written, failed := 0, 0
	for range 400 {
		r := filledReport(f)
		sameAsEncodingJSON(t, &r) // as writeJSON passes it: every value addressable
		if sameAsEncodingJSON(t, r) {
			written++
		} else {
			failed++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d reports written, %d rejected by encoding/json", written, failed)
	// Both outcomes are checked, not one of them vacuously.
	if written < 100 || failed == 0 {
		t.Errorf("%d reports written, %d failed: the filler should make mostly reports encoding/json writes, and some it rejects", written, failed)
	}
}

// FuzzReportJSON: a report filled from any bytes, with any text among
// its strings, is written as encoding/json writes it, or both fail.
func FuzzReportJSON(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 200, 100, 50}, "<&>\u2028\xff")
	f.Add(bytes.Repeat([]byte{4, 3, 2, 1, 9}, 200), "\"\\\x00")
	f.Fuzz(func(t *testing.T, choices []byte, text string) {
		in := testutil.NewFuzzBytes(choices)
		filler := &jsonFiller{t: t, next: func() uint64 { return uint64(in.Next()) }, texts: append([]string{text}, jsonTexts...)}
		r := filledReport(filler)
		sameAsEncodingJSON(t, &r)
	})
}

// TestAppendJSONFigures: the figures and their pointers, known, n/a and
// infinite, are written as their MarshalJSON writes them.
func TestAppendJSONFigures(t *testing.T) {
	for _, x := range numJSONCases {
		n := analysis.Num(x)
		b := analysis.QuantileBucket{Lower: n, Upper: analysis.Num(x * 2)}
		q := analysis.Quantiles{Mean: n, P50: analysis.Num(-x), P90: analysis.NA, P99: analysis.Num(math.Inf(1)), Observations: n, P50Bucket: b, P90Bucket: analysis.QuantileBucket{Lower: analysis.NA, Upper: n}, P99Bucket: analysis.QuantileBucket{Lower: n, Upper: analysis.Num(math.Inf(1))}}
		for _, v := range []any{n, &n, b, &b, q, &q, []analysis.Num{n, analysis.NA}, map[string]analysis.Num{"x": n}} {
			sameAsEncodingJSON(t, v)
		}
	}
	sameAsEncodingJSON(t, (*analysis.Num)(nil))
	sameAsEncodingJSON(t, (*analysis.Quantiles)(nil))
	for _, tm := range jsonTimes {
		sameAsEncodingJSON(t, tm)
		sameAsEncodingJSON(t, &tm)
	}
}

// Types at the edges of encoding/json's rules for structs.

type jsonEmbedA struct {
	X, Y int
	Z    string `json:"z"`
}

type jsonEmbedB struct {
	X int
	Y int `json:"Y"`
	W int
}

// JSONEmbedExported is embedded by pointer.
type JSONEmbedExported struct{ E, X int }

// JSONEmbedInt is an embedded non-struct: a field named by its type.
type JSONEmbedInt int

//lint:ignore U1000 embedded unexported non-structs are what encoding/json ignores
type jsonEmbedInt int

type jsonEmbedC struct{ jsonEmbedA }

type jsonEmbedD struct{ jsonEmbedA }

// jsonEmbedding has fields that tie (X, dropped), a tagged one that wins
// (Y), one promoted through a pointer (E), an embedded struct named by its
// tag, embedded non-structs exported and not.
type jsonEmbedding struct {
	jsonEmbedA
	jsonEmbedB
	*JSONEmbedExported
	Named jsonEmbedA `json:"named"`
	JSONEmbedInt
	jsonEmbedInt //lint:ignore U1000 written by neither
}

// jsonShallow's own X hides the embedded one.
type jsonShallow struct {
	jsonEmbedA
	X string
}

// jsonTwice embeds jsonEmbedA twice at one depth: its fields tie and are
// dropped, except W, which is shallower.
type jsonTwice struct {
	jsonEmbedC
	jsonEmbedD
	W string
}

type jsonZeroByPointer struct{ n int }

func (z *jsonZeroByPointer) IsZero() bool { return z.n%2 == 0 }

type jsonZeroByValue struct{ N int }

func (z jsonZeroByValue) IsZero() bool { return z.N < 10 }

// jsonSpaced is a Marshaler that writes spaced JSON with HTML in it:
// encoding/json compacts and escapes what a Marshaler writes.
type jsonSpaced struct{ Fail bool }

func (s jsonSpaced) MarshalJSON() ([]byte, error) {
	if s.Fail {
		return nil, errors.New("no")
	}
	return []byte(" { \"a\" : \"<&>\u2028\" ,\n \"b\":[1, 2.50] } "), nil
}

type jsonText struct{ S string }

func (x jsonText) MarshalText() ([]byte, error) {
	if x.S == "fail" {
		return nil, errors.New("no")
	}
	return []byte("text " + x.S), nil
}

type jsonNode struct {
	V    int       `json:"v"`
	Next *jsonNode `json:"next,omitempty"`
}

type jsonEdges struct {
	Skipped string `json:"-"`
	//lint:ignore SA5008 a field named "-", as encoding/json reads the tag
	Dash    string `json:"-,"`
	Renamed int    `json:"renamed"`
	//lint:ignore SA5008 a name encoding/json rejects: the field's own is written
	BadName    string            `json:"a\"b"`
	HTMLName   string            `json:"a<b>&c"`
	Spaced     string            `json:"with space"`
	Unicode    string            `json:"näme"`
	unexported int               //lint:ignore U1000 written by neither
	Empty      string            `json:",omitempty"`
	OmitInt    int               `json:",omitempty"`
	OmitNum    analysis.Num      `json:"omit_num,omitempty"`
	OmitSlice  []int             `json:",omitempty"`
	OmitMap    map[string]int    `json:",omitempty"`
	OmitPtr    *int              `json:",omitempty"`
	OmitAny    any               `json:",omitempty"`
	OmitStruct struct{}          `json:",omitempty"`
	OmitArray  [0]int            `json:",omitempty"`
	ZeroTime   time.Time         `json:",omitzero"`
	ZeroStruct struct{ A int }   `json:",omitzero"`
	ZeroByPtr  jsonZeroByPointer `json:",omitzero"`
	ZeroByVal  jsonZeroByValue   `json:",omitzero"`
	ZeroAny    interface {
		IsZero() bool
	} `json:",omitzero"`
	ZeroTimePtr *time.Time `json:",omitzero"`
	Both        int        `json:",omitempty,omitzero"`
	//lint:ignore SA5008 the string option on a type it does not apply to
	StringOfAny any `json:",string"`
	F32         float32
	F64         float64
	Bytes       []byte
	ByteArray   [3]byte
	Number      json.Number
	Any         any
	NumPtr      *analysis.Num
	Spaced2     jsonSpaced
	Text        jsonText
	TextPtr     *jsonText
	IntKeys     map[int]string
	TextKeys    map[jsonText]int
	Nested      [][]analysis.Num
	Strings     []string
	List        *jsonNode
	Embedding   jsonEmbedding
	Shallow     jsonShallow
	Twice       jsonTwice
	Empty2      struct{}
}

// TestAppendJSONEdges: values at the edges of encoding/json's rules —
// tags, omitempty and omitzero, embedding, Marshalers and TextMarshalers,
// byte slices, numbers, maps with other keys — are written as it writes
// them, filled at random many times over.
func TestAppendJSONEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := &jsonFiller{t: t, next: rng.Uint64, texts: append([]string{"fail", "12"}, jsonTexts...)}
	written := 0
	for range 2000 {
		var e jsonEdges
		f.fill(reflect.ValueOf(&e).Elem(), 0)
		e.Any = []any{e.F64, e.Strings, e.Text, nil, jsonTexts[rng.IntN(len(jsonTexts))]}[rng.IntN(5)]
		e.OmitAny = []any{nil, 0, ""}[rng.IntN(3)]
		e.ZeroAny = []interface{ IsZero() bool }{nil, (*jsonZeroByPointer)(nil), &jsonZeroByPointer{1}, jsonZeroByValue{20}, time.Time{}}[rng.IntN(5)]
		e.StringOfAny = []any{nil, 3, "x"}[rng.IntN(3)]
		e.Number = json.Number([]string{"", "12", "-1.5e+3", "01", "x"}[rng.IntN(5)])
		e.Spaced2.Fail = rng.IntN(20) == 0
		if sameAsEncodingJSON(t, e) {
			written++
		}
		if t.Failed() {
			t.Logf("%#v", e)
			return
		}
	}
	t.Logf("%d of 2000 values written", written)
	if written < 200 {
		t.Errorf("only %d of the values were written by encoding/json: the test checks mostly failures", written)
	}
	sameAsEncodingJSON(t, nil)
	sameAsEncodingJSON(t, jsonEdges{})
}

// A deep chain of pointers is left to encoding/json, as is a cycle
// (encoding/json's error): the fast writer stops before the stack does.
func TestAppendJSONDepth(t *testing.T) {
	var head *jsonNode
	for i := range 100 {
		head = &jsonNode{V: i, Next: head}
	}
	sameAsEncodingJSON(t, head)
	for range 2 * maxJSONDepth {
		head = &jsonNode{Next: head}
	}
	if _, err := appendJSON(nil, head); !errors.Is(err, errJSONTooDeep) {
		t.Errorf("a chain of %d pointers: %v, want errJSONTooDeep", 2*maxJSONDepth+100, err)
	}
	cycle := &jsonNode{}
	cycle.Next = cycle
	sameAsEncodingJSON(t, cycle)
}

type jsonPointerMarshaler struct{ A int }

func (*jsonPointerMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"by pointer"`), nil }

type jsonPointerText struct{ A int }

func (*jsonPointerText) MarshalText() ([]byte, error) { return []byte("by pointer"), nil }

// Types whose JSON depends on whether encoding/json can take their
// address, or that it rejects, are not compiled: their values go to
// encoding/json whole.
func TestAppendJSONLeavesToEncodingJSON(t *testing.T) {
	for _, v := range []any{
		struct{ M jsonPointerMarshaler }{},
		struct{ T jsonPointerText }{},
		struct{ C chan int }{},
		struct {
			N int `json:",string"`
		}{},
		struct{ F func() }{},
		struct{ T encoding.TextMarshaler }{jsonText{"x"}},
		struct{ M json.Marshaler }{},
	} {
		if out, err := appendJSON(nil, v); err == nil {
			t.Errorf("%T written %s, want it left to encoding/json", v, out)
		}
	}
	// Inside a pointer, a type's pointer methods are what encoding/json
	// calls, wherever the pointer is.
	sameAsEncodingJSON(t, struct{ M *jsonPointerMarshaler }{&jsonPointerMarshaler{}})
	sameAsEncodingJSON(t, struct{ T []*jsonPointerText }{[]*jsonPointerText{{}, nil}})
}

// The fast writer's strings are encoding/json's for every byte and for
// runes at the edges of UTF-8.
func TestAppendJSONStrings(t *testing.T) {
	for c := range 256 {
		sameAsEncodingJSON(t, "a"+string(rune(c))+string([]byte{byte(c)})+"z")
	}
	for _, r := range []rune{0x7ff, 0x800, 0xfffd, 0xffff, 0x10000, 0x10ffff, 0x2027, 0x2028, 0x2029, 0x202a} {
		sameAsEncodingJSON(t, string(r)+strings.Repeat(string(r), 2))
	}
	for _, s := range jsonTexts {
		sameAsEncodingJSON(t, s)
		sameAsEncodingJSON(t, map[string]string{s: s, s + "2": ""})
	}
}
