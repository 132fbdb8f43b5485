package catalogue

import "math"

// Derive computes into s the figures an engine of that kind does not
// export from the ones it does (Derivations), then the finished requests
// of any reason where the engine counts them by reason only. It returns
// the figures Derivations computed: a Sample flags them in Derived. Every
// source derives through it, so an engine reads alike whatever the source.
func (s *Series) Derive(kind EngineKind) FigureSet {
	var derived FigureSet
	for _, d := range Derivations {
		if d.Engine == kind && s.apply(d) {
			derived.Add(d.Figure())
		}
	}
	if !math.IsNaN(s.Scalars[FinishedRequests]) {
		return derived
	}
	for _, v := range s.Finished {
		s.Scalars[FinishedRequests] = NanAdd(s.Scalars[FinishedRequests], v)
	}
	return derived
}

func (s *Series) apply(d Derivation) bool {
	for _, r := range d.Requires {
		if math.IsNaN(s.Scalars[r]) {
			return false
		}
	}
	switch d.Op {
	case DeriveMeanHistogram:
		return s.meanHistogram(d)
	case DeriveHistogramSum:
		return s.histogramSum(d)
	case DeriveCopy:
		return s.copyScalar(d)
	case DeriveAddFinished:
		return s.addFinished(d)
	case DeriveRatio:
		return s.ratio(d)
	}
	return false
}

func (s *Series) meanHistogram(d Derivation) bool {
	h := &s.Histograms[d.Histogram]
	sum, n := s.Scalars[d.From], s.Scalars[d.Scalar]
	if h.Present() || math.IsNaN(sum) || math.IsNaN(n) {
		return false
	}
	*h = Buckets{Bounds: []float64{math.Inf(1)}, Counts: []float64{n}, Sum: sum, Count: n}
	return true
}

func (s *Series) histogramSum(d Derivation) bool {
	dst, h := &s.Scalars[d.Scalar], &s.Histograms[d.Histogram]
	if !math.IsNaN(*dst) || !h.Present() || math.IsNaN(h.Sum) {
		return false
	}
	*dst = h.Sum
	return true
}

func (s *Series) copyScalar(d Derivation) bool {
	dst := &s.Scalars[d.Scalar]
	if !math.IsNaN(*dst) || math.IsNaN(s.Scalars[d.From]) {
		return false
	}
	*dst = s.Scalars[d.From]
	return true
}

func (s *Series) addFinished(d Derivation) bool {
	dst := &s.Scalars[d.Scalar]
	if math.IsNaN(*dst) || math.IsNaN(s.Finished[d.Finish]) {
		return false
	}
	*dst += s.Finished[d.Finish]
	return true
}

func (s *Series) ratio(d Derivation) bool {
	dst := &s.Scalars[d.Scalar]
	part, whole := s.Scalars[d.From], s.Scalars[d.Over]
	if !math.IsNaN(*dst) || math.IsNaN(part) || !(whole > 0) || part > whole {
		return false // a fraction is within 0–1
	}
	*dst = part / whole
	return true
}

// DeriveKVCapacity gives the sample its KV cache's capacity in tokens from
// the blocks and the tokens a block holds, where the page states no
// capacity in tokens: TensorRT-LLM's, Triton's and Dynamo's pages count
// blocks. Every source calls it once its Total is summed.
func (s *Sample) DeriveKVCapacity() {
	blocks, size := s.Total.Scalars[KVBlocks], s.Total.Scalars[KVBlockTokens]
	if math.IsNaN(s.KVCapacityTokens) && blocks > 0 && size > 0 {
		s.KVCapacityTokens = blocks * size
	}
}
