// Package reportjson writes an analysis.Report as encoding/json writes it,
// byte for byte, without its costs: encoding/json calls the figures'
// MarshalJSON through an interface, copies each answer and then re-scans
// it to validate and compact it, which was most of the cost of a --jsonl
// line (BenchmarkReportJSON100: 2.9 → 0.75 ms).
package reportjson

import (
	"cmp"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vtop-dev/vtop/analysis"
)

// The writer here is encoding/json's own walk, compiled once per type from
// the same rules (field names from the tags, omitempty and omitzero,
// embedded structs and their precedence, sorted map keys, the same string
// escaping), that appends the analysis' figures directly (their
// AppendJSON). What it does not know it leaves to encoding/json: other
// Marshalers are called through json.Marshal, and a type whose encoding
// depends on being addressable, or that encoding/json rejects, is not
// compiled at all, so that the caller writes the value with encoding/json
// instead.
// TestAppendJSONGolden, TestAppendJSONFilledReports, TestAppendJSONEdges
// and FuzzReportJSON hold it to encoding/json.

// Append appends the report as json.Marshal writes it, or returns an
// error when this writer cannot be sure to: encoding/json would fail
// (a non-finite float64, a time beyond year 9999) or does something this
// writer does not copy. The caller then writes the report with
// encoding/json, which stays the encoding of record.
func Append(dst []byte, r *analysis.Report) ([]byte, error) {
	return appendJSON(dst, r)
}

// appendJSON appends v as json.Marshal(v) writes it, or fails and returns
// dst (whose spare capacity it may have written over).
func appendJSON(dst []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(dst, "null"...), nil
	}
	p, err := jsonPlanFor(rv.Type())
	if err != nil {
		return dst, err
	}
	var s jsonState
	out := p.append(&s, dst, rv)
	if s.err != nil {
		return dst, s.err
	}
	return out, nil
}

// jsonState is what one write carries: its depth, which bounds the walk
// of a cyclic value (encoding/json then reports the cycle), and its first
// error.
type jsonState struct {
	depth int
	err   error
}

// maxJSONDepth is how deep pointers, slices and maps may nest before the
// write gives up: encoding/json starts looking for cycles at 1000.
const maxJSONDepth = 500

var errJSONTooDeep = errors.New("json: nested too deep for the fast writer")

func (s *jsonState) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// enter counts one level of nesting; false when too deep.
func (s *jsonState) enter() bool {
	s.depth++
	if s.depth > maxJSONDepth {
		s.fail(errJSONTooDeep)
		return false
	}
	return true
}

// jsonAppender appends one value of a type.
type jsonAppender func(s *jsonState, b []byte, v reflect.Value) []byte

// jsonPlan is how values of one type are written. A plan is reached
// through its pointer so that a recursive type's plan can call itself
// before it is complete.
type jsonPlan struct {
	append jsonAppender
	err    error // why the type is left to encoding/json
}

var (
	jsonPlans     sync.Map // reflect.Type → *jsonPlan
	jsonCompileMu sync.Mutex
)

// jsonPlanFor returns the plan of t, compiling it the first time.
func jsonPlanFor(t reflect.Type) (*jsonPlan, error) {
	if p, ok := jsonPlans.Load(t); ok {
		p := p.(*jsonPlan)
		return p, p.err
	}
	jsonCompileMu.Lock()
	defer jsonCompileMu.Unlock()
	if p, ok := jsonPlans.Load(t); ok {
		p := p.(*jsonPlan)
		return p, p.err
	}
	c := jsonCompiler{building: map[reflect.Type]*jsonPlan{}}
	p, err := c.plan(t)
	if err != nil {
		// Only t is marked: the types compiled on the way may be fine.
		jsonPlans.Store(t, &jsonPlan{err: err})
		return nil, err
	}
	for bt, bp := range c.building {
		jsonPlans.Store(bt, bp)
	}
	return p, nil
}

// jsonCompiler compiles the plans of one type and of the types inside it.
type jsonCompiler struct {
	building map[reflect.Type]*jsonPlan
}

func (c *jsonCompiler) plan(t reflect.Type) (*jsonPlan, error) {
	if p, ok := jsonPlans.Load(t); ok {
		p := p.(*jsonPlan)
		return p, p.err
	}
	if p, ok := c.building[t]; ok {
		return p, nil // recursion: filled in when its compilation ends
	}
	p := &jsonPlan{}
	c.building[t] = p
	fn, err := c.compile(t)
	if err != nil {
		return nil, err
	}
	p.append = fn
	return p, nil
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
	jsonNumberType    = reflect.TypeFor[json.Number]()
)

// compile chooses the appender of t in encoding/json's order: Marshaler,
// TextMarshaler, then the kind.
func (c *jsonCompiler) compile(t reflect.Type) (jsonAppender, error) {
	if fn := knownJSONAppender(t); fn != nil {
		return fn, nil
	}
	if t.Kind() != reflect.Pointer {
		// encoding/json calls a pointer method only on a value it can
		// address: what it writes then depends on where the value is.
		if reflect.PointerTo(t).Implements(jsonMarshalerType) && !t.Implements(jsonMarshalerType) {
			return nil, errors.New("json: " + t.String() + " has a pointer-receiver MarshalJSON")
		}
		if !t.Implements(jsonMarshalerType) && reflect.PointerTo(t).Implements(textMarshalerType) && !t.Implements(textMarshalerType) {
			return nil, errors.New("json: " + t.String() + " has a pointer-receiver MarshalText")
		}
	}
	if t.Kind() == reflect.Interface && (t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType)) {
		// encoding/json calls the interface's method, not what the value
		// in it would write on its own.
		return nil, errors.New("json: " + t.String() + " is an interface with a marshaling method")
	}
	if t.Kind() == reflect.Pointer && knownJSONAppender(t.Elem()) != nil {
		// A pointer to a figure calls the figure's own method.
		return c.pointerAppender(t)
	}
	if t.Implements(jsonMarshalerType) {
		return appendByEncodingJSON, nil
	}
	if t.Implements(textMarshalerType) {
		return appendText, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return appendBool, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return appendInt, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return appendUint, nil
	case reflect.Float32:
		return appendFloat32, nil
	case reflect.Float64:
		return appendFloat64, nil
	case reflect.String:
		if t == jsonNumberType {
			return appendByEncodingJSON, nil
		}
		return appendStringValue, nil
	case reflect.Interface:
		return appendByEncodingJSON, nil
	case reflect.Struct:
		return c.structAppender(t)
	case reflect.Map:
		return c.mapAppender(t)
	case reflect.Slice:
		return c.sliceAppender(t)
	case reflect.Array:
		return c.arrayAppender(t)
	case reflect.Pointer:
		return c.pointerAppender(t)
	}
	return nil, errors.New("json: unsupported type " + t.String())
}

var (
	numType       = reflect.TypeFor[analysis.Num]()
	quantilesType = reflect.TypeFor[analysis.Quantiles]()
	bucketType    = reflect.TypeFor[analysis.QuantileBucket]()
	timeType      = reflect.TypeFor[time.Time]()
)

// knownJSONAppender is the appender of a type whose MarshalJSON this
// package knows: the analysis' figures, written by the AppendJSON their
// MarshalJSON wraps (valid, compact JSON, so encoding/json's re-scan
// leaves it as it is), and times. Nil for any other type.
func knownJSONAppender(t reflect.Type) jsonAppender {
	switch t {
	case numType:
		return func(_ *jsonState, b []byte, v reflect.Value) []byte { return analysis.Num(v.Float()).AppendJSON(b) }
	case quantilesType:
		return func(_ *jsonState, b []byte, v reflect.Value) []byte {
			q, _ := reflect.TypeAssert[analysis.Quantiles](v)
			return q.AppendJSON(b)
		}
	case bucketType:
		return func(_ *jsonState, b []byte, v reflect.Value) []byte {
			q, _ := reflect.TypeAssert[analysis.QuantileBucket](v)
			return q.AppendJSON(b)
		}
	case timeType:
		return appendTime
	}
	return nil
}

// appendTime appends a time as Time.MarshalJSON writes it: RFC 3339
// with nanoseconds, where the year has four digits and the zone's hours
// are below 24. A time beyond those goes through MarshalJSON itself, for
// its error.
func appendTime(s *jsonState, b []byte, v reflect.Value) []byte {
	t, _ := reflect.TypeAssert[time.Time](v)
	n := len(b)
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	if writableRFC3339(b[n+1:]) {
		return append(b, '"')
	}
	out, err := t.MarshalJSON()
	if err != nil {
		s.fail(err)
		return b
	}
	return append(b[:n], out...)
}

// writableRFC3339 is Time.MarshalJSON's test of its text: a year of four
// digits, and a zone of Z or of fewer than 24 hours (±hh:mm).
func writableRFC3339(text []byte) bool {
	if len(text) < len("2006-01-02T15:04:05Z") || text[4] != '-' {
		return false
	}
	if text[len(text)-1] == 'Z' {
		return true
	}
	zone := text[len(text)-len("+07:00"):]
	return (zone[0] == '+' || zone[0] == '-') && zone[1] >= '0' && zone[1] <= '9' && zone[2] >= '0' && zone[2] <= '9' &&
		10*(zone[1]-'0')+(zone[2]-'0') < 24
}

// appendByEncodingJSON leaves the value to encoding/json: a Marshaler
// this package does not know (called, checked and compacted as inside
// any value), an interface, a json.Number.
func appendByEncodingJSON(s *jsonState, b []byte, v reflect.Value) []byte {
	if !v.CanInterface() {
		s.fail(errors.New("json: a value reached through an unexported field"))
		return b
	}
	out, err := json.Marshal(v.Interface())
	if err != nil {
		s.fail(err)
		return b
	}
	return append(b, out...)
}

// appendText writes a TextMarshaler's text as a JSON string.
func appendText(s *jsonState, b []byte, v reflect.Value) []byte {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(b, "null"...)
	}
	m, ok := reflect.TypeAssert[encoding.TextMarshaler](addressed(v))
	if !ok {
		s.fail(errors.New("json: a value reached through an unexported field"))
		return b
	}
	text, err := m.MarshalText()
	if err != nil {
		s.fail(err)
		return b
	}
	return appendJSONString(b, text)
}

// addressed is v's address when v has one, else v: a method of v's type
// called through its address is the same method, without the copy that
// putting v itself in an interface makes.
func addressed(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface && v.CanAddr() {
		return v.Addr()
	}
	return v
}

func appendBool(_ *jsonState, b []byte, v reflect.Value) []byte {
	return strconv.AppendBool(b, v.Bool())
}

func appendInt(_ *jsonState, b []byte, v reflect.Value) []byte {
	return strconv.AppendInt(b, v.Int(), 10)
}

func appendUint(_ *jsonState, b []byte, v reflect.Value) []byte {
	return strconv.AppendUint(b, v.Uint(), 10)
}

func appendFloat32(s *jsonState, b []byte, v reflect.Value) []byte {
	return appendJSONFloat(s, b, v.Float(), 32)
}

func appendFloat64(s *jsonState, b []byte, v reflect.Value) []byte {
	return appendJSONFloat(s, b, v.Float(), 64)
}

// appendJSONFloat writes a float as encoding/json does: as ES6 writes a
// number, shortest, in e-notation below 1e-6 and from 1e21 up, with the
// exponent's leading zero dropped; a NaN or an infinity is an error.
func appendJSONFloat(s *jsonState, b []byte, f float64, bits int) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		s.fail(errors.New("json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, bits)))
		return b
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func appendStringValue(_ *jsonState, b []byte, v reflect.Value) []byte {
	return appendJSONString(b, v.String())
}

// jsonSafe marks the ASCII bytes a JSON string holds as they are:
// encoding/json escapes quotes, backslashes, control characters and, for
// HTML, <, > and &.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := range safe {
		safe[c] = c >= 0x20 && !strings.ContainsRune(`"\<>&`, rune(c))
	}
	return safe
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends src as a JSON string, escaped as encoding/json
// escapes it with HTML escaping on (its default): invalid UTF-8 as
// U+FFFD, and U+2028 and U+2029, which JavaScript reads as line ends.
func appendJSONString[S []byte | string](dst []byte, src S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(src); {
		if c := src[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, src[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(src[i:min(len(src), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, src[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, src[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, src[start:]...), '"')
}

// jsonField is one field a struct writes.
type jsonField struct {
	name      string
	key       string // `"name":`, escaped
	index     []int  // through embedded structs
	tagged    bool
	omitEmpty bool
	omitZero  bool
	isZero    func(reflect.Value) bool // the type's IsZero, for omitzero
	plan      *jsonPlan
	num       bool // a figure, written without the call through plan
}

func (c *jsonCompiler) structAppender(t reflect.Type) (jsonAppender, error) {
	fields, err := jsonFields(t)
	if err != nil {
		return nil, err
	}
	for i := range fields {
		f := &fields[i]
		ft := fieldType(t, f.index)
		if f.plan, err = c.plan(ft); err != nil {
			return nil, err
		}
		f.num = ft == numType
	}
	return func(s *jsonState, b []byte, v reflect.Value) []byte {
		b = append(b, '{')
		first := true
	fields:
		for i := range fields {
			f := &fields[i]
			fv := v
			for _, j := range f.index {
				if fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue fields
					}
					fv = fv.Elem()
				}
				fv = fv.Field(j)
			}
			if f.omitEmpty && isEmptyJSON(fv) || f.omitZero && (f.isZero == nil && fv.IsZero() || f.isZero != nil && f.isZero(fv)) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			if f.num {
				b = analysis.Num(fv.Float()).AppendJSON(append(b, f.key...))
				continue
			}
			b = f.plan.append(s, append(b, f.key...), fv)
		}
		return append(b, '}')
	}, nil
}

// fieldType is the type of the field at index, through embedded structs
// and pointers to them.
func fieldType(t reflect.Type, index []int) reflect.Type {
	for _, i := range index {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		t = t.Field(i).Type
	}
	return t
}

// isEmptyJSON is omitempty's test.
func isEmptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// jsonFields lists the fields a struct writes, in order, by encoding/json's
// rules: exported fields and those promoted from embedded structs,
// breadth first; of several fields with one name, the shallowest wins,
// then the tagged one, and a tie drops them all.
func jsonFields(t reflect.Type) ([]jsonField, error) {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var fields []jsonField
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validJSONName(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if hasJSONOption(opts, "string") {
					switch ft.Kind() {
					case reflect.Bool,
						reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
						reflect.Float32, reflect.Float64, reflect.String:
						return nil, errors.New("json: the string option of " + t.String() + "." + sf.Name)
					}
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, embedded{typ: ft, index: index})
					}
					continue
				}
				f := jsonField{name: name, tagged: name != "", index: index,
					omitEmpty: hasJSONOption(opts, "omitempty"), omitZero: hasJSONOption(opts, "omitzero")}
				if f.name == "" {
					f.name = sf.Name
				}
				f.key = string(appendJSONString(nil, f.name)) + ":"
				if f.omitZero {
					f.isZero = isZeroMethod(sf.Type)
				}
				fields = append(fields, f)
				if count[e.typ] > 1 {
					// The same struct embedded twice at this depth: its
					// fields tie with themselves and are dropped.
					fields = append(fields, f)
				}
			}
		}
	}
	return dominantFields(fields), nil
}

// dominantFields keeps, of each name, the field Go's embedding rules and
// the tags let through, in the order of the struct.
func dominantFields(fields []jsonField) []jsonField {
	slices.SortFunc(fields, func(a, b jsonField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var out []jsonField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			out = append(out, fields[i])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return out
}

// validJSONName is encoding/json's test of a tag's name: letters, digits
// and punctuation other than quotes and backslashes.
func validJSONName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// hasJSONOption reports whether a tag's comma-separated options hold name.
func hasJSONOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

// isZeroMethod is omitzero's test by the type's own IsZero method, as
// encoding/json calls it; nil when the type has none (reflect's zero
// test then).
func isZeroMethod(t reflect.Type) func(reflect.Value) bool {
	zero := func(v reflect.Value) bool {
		z, _ := reflect.TypeAssert[interface{ IsZero() bool }](addressed(v))
		return z.IsZero()
	}
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil() || zero(v)
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || zero(v) }
	case t.Implements(isZeroerType):
		return zero
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				boxed := reflect.New(v.Type()).Elem()
				boxed.Set(v)
				v = boxed
			}
			return zero(v.Addr())
		}
	}
	return nil
}

func (c *jsonCompiler) mapAppender(t reflect.Type) (jsonAppender, error) {
	if t.Key().Kind() != reflect.String {
		// Numbers and TextMarshalers as keys, sorted by their text.
		return appendByEncodingJSON, nil
	}
	elem, err := c.plan(t.Elem())
	if err != nil {
		return nil, err
	}
	type entry struct {
		key   string
		value reflect.Value
	}
	return nested(func(s *jsonState, b []byte, v reflect.Value) []byte {
		entries := make([]entry, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			entries = append(entries, entry{it.Key().String(), it.Value()})
		}
		slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
		b = append(b, '{')
		for i, e := range entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendJSONString(b, e.key), ':')
			b = elem.append(s, b, e.value)
		}
		return append(b, '}')
	}), nil
}

func (c *jsonCompiler) sliceAppender(t reflect.Type) (jsonAppender, error) {
	if t.Elem().Kind() == reflect.Uint8 {
		p := reflect.PointerTo(t.Elem())
		if !p.Implements(jsonMarshalerType) && !p.Implements(textMarshalerType) {
			return appendBase64, nil
		}
	}
	array, err := c.arrayAppender(t)
	if err != nil {
		return nil, err
	}
	return nested(array), nil
}

// nested wraps inner for a kind that can be nil (a slice, a map, a
// pointer): null when nil, else inner one level deeper.
func nested(inner jsonAppender) jsonAppender {
	return func(s *jsonState, b []byte, v reflect.Value) []byte {
		if v.IsNil() {
			return append(b, "null"...)
		}
		if !s.enter() {
			return b
		}
		b = inner(s, b, v)
		s.depth--
		return b
	}
}

// appendBase64 writes a []byte as encoding/json does: base64 in a string.
func appendBase64(_ *jsonState, b []byte, v reflect.Value) []byte {
	if v.IsNil() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v.Bytes())
	return append(b, '"')
}

func (c *jsonCompiler) arrayAppender(t reflect.Type) (jsonAppender, error) {
	elem, err := c.plan(t.Elem())
	if err != nil {
		return nil, err
	}
	return func(s *jsonState, b []byte, v reflect.Value) []byte {
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			b = elem.append(s, b, v.Index(i))
		}
		return append(b, ']')
	}, nil
}

func (c *jsonCompiler) pointerAppender(t reflect.Type) (jsonAppender, error) {
	elem, err := c.plan(t.Elem())
	if err != nil {
		return nil, err
	}
	// elem.append is read at each call: a recursive type's plan is
	// completed after this closure is made.
	return nested(func(s *jsonState, b []byte, v reflect.Value) []byte {
		return elem.append(s, b, v.Elem())
	}), nil
}
