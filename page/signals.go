package page

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/safetext"
)

// Caps on what one page may make the sample hold, beyond MaxEngines.
const (
	// maxSpecPositions caps the draft positions read.
	maxSpecPositions = catalogue.MaxSpecPositions
	// maxLoRANames caps the adapter names kept of lora_requests_info.
	maxLoRANames = 64
)

// readSleep reads vllm:engine_sleep_state, one 0/1 series per state, into
// the engine's SleepLevel: the level of the state that is 1.
func (b *builder) readSleep(acc *engineAcc, t dto.MetricType, m *dto.Metric) {
	v, ok := scalarValue(t, m)
	if !ok || v != 1 {
		return
	}
	level := slices.Index(catalogue.SleepStates[:], labelValue(m, catalogue.LabelSleepState))
	if level < 0 {
		return // a state newer than vtop
	}
	cur := &acc.series.Scalars[catalogue.SleepLevel]
	if math.IsNaN(*cur) || float64(level) > *cur {
		*cur = float64(level)
	}
}

// readSpecPerPos reads one position of
// vllm:spec_decode_num_accepted_tokens_per_pos_total.
func (b *builder) readSpecPerPos(acc *engineAcc, t dto.MetricType, m *dto.Metric) {
	pos, err := strconv.Atoi(labelValue(m, catalogue.LabelPosition))
	if err != nil || pos < 0 {
		return
	}
	if pos >= maxSpecPositions {
		b.warn(fmt.Sprintf("speculative decoding beyond %d draft positions ignored", maxSpecPositions))
		return
	}
	v, ok := scalarValue(t, m)
	if !ok {
		return
	}
	acc.series.SpecAcceptedPerPos = growNaN(acc.series.SpecAcceptedPerPos, pos+1)
	acc.series.SpecAcceptedPerPos[pos] = catalogue.NanAdd(acc.series.SpecAcceptedPerPos[pos], v)
}

// growNaN extends s to n entries, the new ones absent.
func growNaN(s []float64, n int) []float64 {
	for len(s) < n {
		s = append(s, math.NaN())
	}
	return s
}

// readLoRA reads vllm:lora_requests_info. Its value is the time of the
// last change and old series stay, so the newest one is the state.
func (b *builder) readLoRA(t dto.MetricType, m *dto.Metric) {
	v, ok := scalarValue(t, m)
	if !ok || (b.sample.LoRA.Present && !(v > b.loraAt)) {
		return
	}
	b.loraAt = v
	maxLoRA, err := strconv.ParseFloat(labelValue(m, "max_lora"), 64)
	if err != nil {
		maxLoRA = math.NaN()
	}
	b.sample.LoRA = catalogue.LoRA{
		Present:  true,
		MaxLoRAs: maxLoRA,
		Running:  adapterNames(labelValue(m, "running_lora_adapters")),
		Waiting:  adapterNames(labelValue(m, "waiting_lora_adapters")),
	}
}

// adapterNames splits a comma-joined list of adapters, made safe to draw.
func adapterNames(v string) []string {
	var out []string
	for name := range strings.SplitSeq(v, ",") {
		if name = strings.TrimSpace(name); name != "" && len(out) < maxLoRANames {
			out = append(out, safetext.Sanitize(name))
		}
	}
	return out
}

// derive computes the figures an engine's page lacks from the ones it has
// (catalogue.Derivations), flagging them, then the finished requests of
// any reason where the page counts them by reason only.
func (b *builder) derive(s *catalogue.Series, kind catalogue.EngineKind) {
	for _, d := range catalogue.Derivations {
		if d.Engine == kind && applyDerivation(s, d) {
			b.sample.Derived.Add(catalogue.ScalarFigure(d.Scalar))
		}
	}
	if !math.IsNaN(s.Scalars[catalogue.FinishedRequests]) {
		return
	}
	for _, v := range s.Finished {
		if !math.IsNaN(v) {
			s.Scalars[catalogue.FinishedRequests] = catalogue.NanAdd(s.Scalars[catalogue.FinishedRequests], v)
		}
	}
}

// applyDerivation computes d into s and reports whether it did.
func applyDerivation(s *catalogue.Series, d catalogue.Derivation) bool {
	for _, r := range d.Requires {
		if math.IsNaN(s.Scalars[r]) {
			return false
		}
	}
	dst := &s.Scalars[d.Scalar]
	switch d.Op {
	case catalogue.DeriveHistogramSum:
		h := s.Histograms[d.Histogram]
		if !math.IsNaN(*dst) || !h.Present() || math.IsNaN(h.Sum) {
			return false
		}
		*dst = h.Sum
	case catalogue.DeriveCopy:
		if !math.IsNaN(*dst) || math.IsNaN(s.Scalars[d.From]) {
			return false
		}
		*dst = s.Scalars[d.From]
	case catalogue.DeriveAddFinished:
		if math.IsNaN(*dst) || math.IsNaN(s.Finished[d.Finish]) {
			return false
		}
		*dst += s.Finished[d.Finish]
	default:
		return false
	}
	return true
}

// engineKind is the engine with the most families on the page; a tie goes
// to the first kind. EngineUnknown when no engine's family was there.
func (b *builder) engineKind() catalogue.EngineKind {
	best := catalogue.EngineUnknown
	for k := catalogue.EngineVLLM; k < catalogue.NumEngineKinds; k++ {
		if b.kinds[k] > b.kinds[best] {
			best = k
		}
	}
	return best
}

// routerBackends returns a router page's backends, sorted and safe.
func (b *builder) routerBackends() []string {
	if len(b.backends) == 0 {
		return nil
	}
	out := make([]string, len(b.backends))
	for i, raw := range b.backends {
		out[i] = safetext.Sanitize(raw)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
