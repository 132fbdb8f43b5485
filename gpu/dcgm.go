package gpu

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/catalogue"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/page"
	"github.com/vtop-dev/vtop/safetext"
)

// Series is one DCGM series as a source delivers it: the family, its labels
// and its value. A Prometheus instant query yields these (the family is
// the __name__ label).
type Series struct {
	Family string
	Labels map[string]string
	Value  float64
}

// ParseDCGM reads a dcgm-exporter page: one GPU per UUID, or per MIG
// instance, with the figures of catalogue.DCGMReads under either DCGM
// spelling. source is the exporter's URL. Families vtop does not read are
// dropped before parsing, so a broken line of one of them costs nothing.
func ParseDCGM(body []byte, source string) ([]device.GPU, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(wantedLines(body)))
	if err != nil {
		return nil, fmt.Errorf("dcgm-exporter page: %w", err)
	}
	var series []Series
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			series = append(series, Series{Family: name, Labels: labelMap(m), Value: value(m)})
		}
	}
	return FromDCGMSeries(series, source, false), nil
}

// wantedLines keeps the HELP, TYPE and sample lines of the families vtop
// reads.
func wantedLines(body []byte) []byte {
	var out []byte
	for line := range bytes.Lines(body) {
		if _, ok := catalogue.FindDCGMRead(string(page.LineName(line))); !ok {
			continue
		}
		out = append(out, line...)
		if !bytes.HasSuffix(line, []byte("\n")) {
			out = append(out, '\n')
		}
	}
	return out
}

func labelMap(m *dto.Metric) map[string]string {
	l := make(map[string]string, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		l[lp.GetName()] = lp.GetValue()
	}
	return l
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return math.NaN()
}

// partial gathers the raw fields of one GPU before units are converted.
type partial struct {
	gpu    device.GPU
	fields [catalogue.NumGPUFields]float64
}

// FromDCGMSeries builds GPUs from DCGM series. viaPrometheus says the
// series come from a Prometheus server, whose own target labels (the
// exporter's pod) took the names pod and namespace: the workload is then
// read from exported_pod and exported_namespace only. On the exporter's
// own page the workload is pod and namespace.
func FromDCGMSeries(series []Series, source string, viaPrometheus bool) []device.GPU {
	byKey := map[string]*partial{}
	var order []string
	for _, s := range series {
		r, ok := catalogue.FindDCGMRead(s.Family)
		if !ok || math.IsNaN(s.Value) {
			continue
		}
		g := identity(s.Labels, source, viaPrometheus)
		k := g.Host + "|" + g.Key()
		p := byKey[k]
		if p == nil {
			p = &partial{gpu: g}
			for i := range p.fields {
				p.fields[i] = math.NaN()
			}
			byKey[k] = p
			order = append(order, k)
		}
		p.fields[r.Field] = s.Value
	}
	out := make([]device.GPU, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k].finish())
	}
	device.Sort(out)
	return out
}

// identity reads who a series is about from its labels, cleaned for the
// screen where they enter.
func identity(l map[string]string, source string, viaPrometheus bool) device.GPU {
	g := device.Unknown()
	g.Source = source
	clean := func(name string) string { return safetext.Sanitize(l[name]) }
	g.Host = cmp.Or(clean(catalogue.DCGMLabelHostname), clean(catalogue.DCGMLabelHostnameLC))
	if n, err := strconv.Atoi(l[catalogue.DCGMLabelGPU]); err == nil {
		g.Index = n
	}
	g.UUID = clean(catalogue.DCGMLabelUUID)
	g.Model = clean(catalogue.DCGMLabelModel)
	g.MIG = clean(catalogue.DCGMLabelMIGProfile)
	if n, err := strconv.Atoi(l[catalogue.DCGMLabelMIGID]); err == nil {
		g.MIGInstance = n
	}
	g.Pod = clean(catalogue.DCGMLabelExportedPod)
	g.Namespace = clean(catalogue.DCGMLabelExportedNamespace)
	g.Container = clean(catalogue.DCGMLabelExportedContainer)
	if g.Pod == "" && !viaPrometheus {
		g.Pod = clean(catalogue.DCGMLabelPod)
		g.Namespace = clean(catalogue.DCGMLabelNamespace)
		g.Container = clean(catalogue.DCGMLabelContainer)
	}
	return g
}

func (p *partial) finish() device.GPU {
	g, f := p.gpu, p.fields
	g.Utilization = f[catalogue.GPUUtil] / 100
	if math.IsNaN(g.Utilization) {
		g.Utilization = f[catalogue.GPUEngineActive]
	}
	g.MemoryUsedBytes = f[catalogue.GPUMemUsed] * mib
	// total = used + free (+ reserved, where the exporter reports it)
	g.MemoryTotalBytes = (f[catalogue.GPUMemUsed] + f[catalogue.GPUMemFree] + orZero(f[catalogue.GPUMemReserved])) * mib
	g.PowerWatts = f[catalogue.GPUPower]
	g.PowerLimitWatts = f[catalogue.GPUPowerLimit]
	g.TemperatureCelsius = f[catalogue.GPUTemp]
	g.SlowdownMarginCelsius = f[catalogue.GPUSlowdownTemp] - f[catalogue.GPUTemp]
	g.SMClockHz = f[catalogue.GPUSMClock] * 1e6
	g.MaxSMClockHz = f[catalogue.GPUMaxSMClock] * 1e6
	if x := f[catalogue.GPUXID]; x > 0 {
		g.XID = int(x)
	}
	g.UncorrectableRemappedRows = f[catalogue.GPUUncorrectableRemappedRows]
	g.RowRemapFailure = f[catalogue.GPURowRemapFailure]
	if r := f[catalogue.GPUClockEventReasons]; r >= 0 {
		g.ClockEventReasons = int64(r)
	}
	return g
}

func orZero(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return f
}
