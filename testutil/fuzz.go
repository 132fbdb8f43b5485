package testutil

// FuzzBytes reads a fuzz input a byte at a time, then zeros: a fuzz
// target draws each of its choices from it, so that every input, however
// short, makes a whole case.
type FuzzBytes struct {
	b []byte
	i int
}

// NewFuzzBytes returns a reader of the fuzz input b.
func NewFuzzBytes(b []byte) *FuzzBytes { return &FuzzBytes{b: b} }

// Next returns the input's next byte, or 0 past its end.
func (f *FuzzBytes) Next() byte {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return f.b[f.i-1]
}
