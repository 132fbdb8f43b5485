package promsource

import (
	"slices"

	"github.com/prometheus/common/model"
)

// matrix is a query's answer as the source decodes it: model.Matrix
// without a label map per series.
type matrix []*sampleStream

// sampleStream is one series of an answer: its labels and its points in
// time order.
type sampleStream struct {
	Metric labels
	Values []model.SamplePair
}

// labels are one series' labels. A large fleet's raw read is some 90
// series per scrape target, told apart by their name and, for a
// histogram's buckets, their bound; their other labels (job, instance,
// engine, model) are few sets, each shared by many series. So a series
// holds its name and bound, and a pointer to the one copy of its other
// labels that its answer keeps: a label map per series was half the heap
// a thousand replicas' window held between refreshes.
type labels struct {
	name, le string
	rest     *labelSet
}

// labelSet is the labels of a series but its name and bound, sorted by
// name, interned: the series of one answer with the same share one.
type labelSet struct{ pairs []labelPair }

// labelPair is one label.
type labelPair struct{ name, value string }

// get returns the value of the label name, "" where the series has none
// (an empty label is none: Prometheus's rule).
func (l labels) get(name string) string {
	switch name {
	case model.MetricNameLabel:
		return l.name
	case labelLE:
		return l.le
	}
	if l.rest != nil {
		for _, p := range l.rest.pairs { // a handful: no map is faster
			if p.name == name {
				return p.value
			}
		}
	}
	return ""
}

// each calls f with every label, in the order of their names.
func (l labels) each(f func(name, value string)) {
	// "__name__" sorts before "le"; a name before either is possible
	// ("A"), so the two are merged in.
	extra := [2]labelPair{{model.MetricNameLabel, l.name}, {labelLE, l.le}}
	i := 0
	flush := func(before string, all bool) {
		for ; i < len(extra) && (all || extra[i].name < before); i++ {
			if extra[i].value != "" {
				f(extra[i].name, extra[i].value)
			}
		}
	}
	if l.rest != nil {
		for _, p := range l.rest.pairs {
			flush(p.name, false)
			f(p.name, p.value)
		}
	}
	flush("", true)
}

// fingerprint is the series' identity from answer to answer: the
// model's own hash of a label set (model.Metric.Fingerprint), so that
// series sort alike whichever way they were decoded.
func (l labels) fingerprint() model.Fingerprint {
	const (
		offset = 14695981039346656037 // FNV-1a, as the model hashes
		prime  = 1099511628211
	)
	h := uint64(offset)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= prime
		}
		h ^= uint64(model.SeparatorByte)
		h *= prime
	}
	l.each(func(name, value string) {
		add(name)
		add(value)
	})
	return model.Fingerprint(h)
}

// labelsOf is a map's labels, for the answers the query client decodes;
// its empty labels are none, as the decoder's are.
func labelsOf(m model.Metric) labels {
	var l labels
	var rest []labelPair
	for name, value := range m {
		switch name {
		case model.MetricNameLabel:
			l.name = string(value)
		case labelLE:
			l.le = string(value)
		default:
			if value != "" {
				rest = append(rest, labelPair{string(name), string(value)})
			}
		}
	}
	if len(rest) > 0 {
		slices.SortFunc(rest, byLabelName)
		l.rest = &labelSet{pairs: rest}
	}
	return l
}

// interner keeps one copy of each label name and value, and of each
// label set, of an answer, counting the bytes of the copies it keeps.
type interner struct {
	strings map[string]string
	sets    map[string]*labelSet // by setKey
	key     []byte               // scratch: the key of the set being looked up
	bytes   int64                // kept since the last taken
}

func newInterner() interner {
	return interner{strings: map[string]string{}, sets: map[string]*labelSet{}}
}

// get returns the copy kept of s, keeping one if there is none.
func (in *interner) get(s string) string {
	if v, ok := in.strings[s]; ok {
		return v
	}
	in.strings[s] = s
	in.bytes += int64(len(s)) + stringBytes
	return s
}

// set returns the copy kept of a set of labels, sorted by name (pairs is
// the caller's scratch: a new set copies it), keeping one if there is
// none; nil for none.
func (in *interner) set(pairs []labelPair) *labelSet {
	if len(pairs) == 0 {
		return nil
	}
	in.key = in.key[:0]
	for _, p := range pairs {
		in.key = append(in.key, p.name...)
		in.key = append(in.key, model.SeparatorByte)
		in.key = append(in.key, p.value...)
		in.key = append(in.key, model.SeparatorByte)
	}
	if s, ok := in.sets[string(in.key)]; ok {
		return s
	}
	s := &labelSet{pairs: slices.Clone(pairs)}
	in.sets[string(in.key)] = s
	in.bytes += setBytes + int64(len(in.key)) + labelPairBytes*int64(len(pairs))
	return s
}

// taken returns the bytes kept since the last call.
func (in *interner) taken() int64 {
	n := in.bytes
	in.bytes = 0
	return n
}
