package ui

import (
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/gpu/device"
	"github.com/vtop-dev/vtop/ring"
)

// The body height from which the GPU strip draws a cell per GPU (below
// it, one line), and the width of a utilisation or memory bar.
const (
	stripFullHeight = 30
	gpuBarWidth     = 8
)

// gpuPoint is one GPU at one report, for the detail view's sparklines.
type gpuPoint struct {
	util, mem, watts, temp float32
}

// gpuHistory keeps each GPU's recent points, by gpuID.
type gpuHistory map[string]*ring.Ring[gpuPoint]

// gpuID names a GPU across reports: its host and its key there.
func gpuID(g device.GPU) string { return g.Host + "|" + g.Key() }

// record pushes a report's GPUs and forgets the ones that left.
func (h gpuHistory) record(gs []device.GPU, limit int) {
	seen := make(map[string]bool, len(gs))
	for _, g := range gs {
		id := gpuID(g)
		seen[id] = true
		r := h[id]
		if r == nil {
			r = ring.New[gpuPoint](limit)
			h[id] = r
		}
		r.Push(gpuPoint{util: float32(g.Utilization), mem: float32(g.MemoryShare()),
			watts: float32(g.PowerWatts), temp: float32(g.TemperatureCelsius)})
	}
	maps.DeleteFunc(h, func(id string, _ *ring.Ring[gpuPoint]) bool { return !seen[id] })
}

// gpuStrip is the GPUs above the grid: a cell per GPU, or one summary
// line when the body is short (80×24).
type gpuStrip struct {
	theme   *Theme
	width   int
	full    bool // a cell per GPU; otherwise one line
	compact bool // cells without clock, power limit and replica, two or more a row
	maxRows int  // rows of cells in full mode
	gpus    []device.GPU
	sources []analysis.GPUSource
}

// show gives the strip the report's GPUs.
func (s *gpuStrip) show(r analysis.Report) { s.gpus, s.sources = r.GPUs, r.GPUSources }

// setSize gives the strip the width and the body's height, and returns
// the lines it takes.
func (s *gpuStrip) setSize(w, bodyH int) int {
	s.width = w
	if len(s.gpus) == 0 && (len(s.sources) == 0 || bodyH < stripFullHeight) {
		// A short body spends no line on why: the event log says it.
		s.full = false
		return 0
	}
	s.full = bodyH >= stripFullHeight && len(s.gpus) > 0
	if !s.full {
		return 1
	}
	// Two compact cells a row rather than one whole one (120 columns).
	s.compact = false
	if len(s.gpus) > 1 && s.perRow() == 1 {
		s.compact = true // perRow measures compact cells now
		s.compact = s.perRow() > 1
	}
	// The replicas are what the screen is for: at most an eighth of the body.
	per := s.perRow()
	s.maxRows = min((len(s.gpus)+per-1)/per, max(bodyH/8, 1))
	return 1 + s.maxRows
}

// cellWidth is the width of one GPU's cell.
func (s *gpuStrip) cellWidth() int {
	if s.compact {
		return s.nameWidth() + 47
	}
	return s.nameWidth() + 68 + s.replicaWidth()
}

// replicaWidth is the room for "→ replica", at most 26 columns; 0 when no
// GPU is joined.
func (s *gpuStrip) replicaWidth() int {
	w := 0
	for _, g := range s.gpus {
		if g.Replica != "" {
			w = max(w, ansi.StringWidth(replicaLabel(g.Replica))+3)
		}
	}
	return w
}

// replicaLabel names a joined replica by its host and port: a path would
// push two cells a row down to one and tells no replica apart.
func replicaLabel(target string) string {
	hostPort := target
	if _, rest, ok := strings.Cut(hostPort, "://"); ok {
		hostPort = rest
	}
	hostPort, _, _ = strings.Cut(hostPort, "/")
	return ansi.Truncate(hostPort, maxReplicaLabel, "…")
}

// maxReplicaLabel is the most a joined replica's name takes in a cell.
const maxReplicaLabel = 23

// perRow is how many cells fit side by side.
func (s *gpuStrip) perRow() int { return max(1, (s.width+2)/(s.cellWidth()+2)) }

// view draws the strip.
func (s gpuStrip) view() []string {
	if len(s.sources) == 0 && len(s.gpus) == 0 {
		return nil
	}
	if !s.full {
		return []string{s.summaryLine()}
	}
	lines := []string{s.titleLine()}
	per := s.perRow()
	shown := min(len(s.gpus), per*s.maxRows)
	cw := s.cellWidth()
	for start := 0; start < shown; start += per {
		cells := make([]string, 0, per)
		for _, g := range s.gpus[start:min(start+per, shown)] {
			cells = append(cells, fitWidth(s.cell(g), cw))
		}
		lines = append(lines, strings.Join(cells, "  "))
	}
	return lines
}

// titleLine names the strip's sources, their notes, and what is not shown.
func (s gpuStrip) titleLine() string {
	th := s.theme
	shown := min(len(s.gpus), s.perRow()*s.maxRows)
	title := th.headerRow.Render("GPUs") + " " + strconv.Itoa(len(s.gpus))
	if shown < len(s.gpus) {
		title += th.warn.Render(fmt.Sprintf(" (%d shown: a taller terminal shows more)", shown))
	}
	return title + "  " + s.sourcesText()
}

// sourcesText says where the GPUs come from and what is wrong with a
// source: "from nvidia-smi", "dcgm-exporter ×6", a source's note.
func (s gpuStrip) sourcesText() string {
	th := s.theme
	var kinds, notes []string
	counts := map[string]int{}
	for _, src := range s.sources {
		if src.Note != "" {
			notes = append(notes, th.warn.Render(src.Note))
			continue
		}
		kind := src.Name
		if strings.HasPrefix(kind, "dcgm-exporter ") {
			kind = "dcgm-exporter"
		}
		if counts[kind]++; counts[kind] == 1 {
			kinds = append(kinds, kind)
		}
	}
	for i, k := range kinds {
		if counts[k] > 1 {
			kinds[i] += " ×" + strconv.Itoa(counts[k])
		}
	}
	var parts []string
	if len(kinds) > 0 {
		parts = append(parts, th.dim.Render("from "+strings.Join(kinds, ", ")))
	}
	if len(notes) > 0 {
		parts = append(parts, strings.Join(notes, th.dim.Render(" · ")))
	}
	return strings.Join(parts, " ")
}

// summaryLine is the strip folded into one line.
func (s gpuStrip) summaryLine() string {
	th := s.theme
	if len(s.gpus) == 0 {
		return th.headerRow.Render("GPUs") + " none  " + s.sourcesText()
	}
	var util, used, total, watts, limit, temp stats
	var xids []string
	for _, g := range s.gpus {
		util.add(g.Utilization)
		// A share is summed over the GPUs that give both of its figures.
		if !math.IsNaN(g.MemoryUsedBytes) && !math.IsNaN(g.MemoryTotalBytes) {
			used.add(g.MemoryUsedBytes)
			total.add(g.MemoryTotalBytes)
		}
		watts.add(g.PowerWatts)
		if !math.IsNaN(g.PowerWatts) {
			limit.add(g.PowerLimitWatts)
		}
		temp.add(g.TemperatureCelsius)
		if g.XID > 0 {
			xids = append(xids, fmt.Sprintf("XID %d on %s", g.XID, s.name(g)))
		}
	}
	// A fault first: a line cut at the edge must not lose it.
	segs := []string{th.headerRow.Render("GPUs") + " " + strconv.Itoa(len(s.gpus))}
	for _, x := range xids {
		segs = append(segs, th.alert.Render(x))
	}
	segs = append(segs,
		"util "+analysis.Num(util.mean()).Percent()+" avg "+analysis.Num(util.peak()).Percent()+" max",
		"mem "+analysis.Num(used.total()/total.total()).Percent(),
		fmtWatts(watts.total(), limit.total()),
		"max "+fmtUnit(temp.peak(), "°C"),
	)
	if src := s.sourcesText(); src != "" {
		segs = append(segs, src)
	}
	return strings.Join(segs, "  ")
}

// cell is one GPU: name, utilisation and memory bars, power, temperature,
// SM clock, XID and the replica it is joined to; compact, without the
// memory bar, power limit, clock and replica.
func (s gpuStrip) cell(g device.GPU) string {
	th := s.theme
	xid := "      "
	if g.XID > 0 {
		xid = th.alert.Render(fitWidth("XID "+strconv.Itoa(g.XID), 6))
	}
	mem := padLeft(analysis.Num(g.MemoryShare()).Percent(), 4)
	parts := []string{th.title.Render(fitWidth(s.name(g), s.nameWidth())),
		"util " + gpuBar(th, g.Utilization) + " " + padLeft(analysis.Num(g.Utilization).Percent(), 4)}
	if s.compact {
		parts = append(parts, "mem "+mem, padLeft(fmtWatts(g.PowerWatts, math.NaN()), 5), padLeft(fmtUnit(g.TemperatureCelsius, "°C"), 5), xid)
		return strings.Join(parts, " ")
	}
	parts = append(parts, "mem "+gpuBar(th, g.MemoryShare())+" "+mem, padLeft(fmtWatts(g.PowerWatts, g.PowerLimitWatts), 9),
		padLeft(fmtUnit(g.TemperatureCelsius, "°C"), 5), padLeft(fmtUnit(g.SMClockHz/1e6, "MHz"), 7), xid)
	if g.Replica != "" {
		parts = append(parts, th.dim.Render("→ "+replicaLabel(g.Replica)))
	}
	return strings.Join(parts, " ")
}

// name is "GPU 3", or "host/3" when the GPUs span hosts, and a MIG profile.
func (s gpuStrip) name(g device.GPU) string {
	n := "GPU " + indexText(g.Index)
	if s.manyHosts() {
		n = shortHost(g.Host) + "/" + indexText(g.Index)
	}
	if g.MIG != "" {
		n += " " + g.MIG
	}
	return n
}

// nameWidth is the widest name, at most 20 columns.
func (s gpuStrip) nameWidth() int {
	w := 5
	for _, g := range s.gpus {
		w = max(w, ansi.StringWidth(s.name(g)))
	}
	return min(w, 20)
}

// manyHosts reports whether the GPUs are on more than one host.
func (s gpuStrip) manyHosts() bool {
	for _, g := range s.gpus {
		if g.Host != s.gpus[0].Host {
			return true
		}
	}
	return false
}

// shortHost is a host's first label.
func shortHost(h string) string {
	if net, _, ok := strings.Cut(h, "."); ok && net != "" {
		if _, err := strconv.Atoi(net); err != nil { // not an IP address
			return net
		}
	}
	return h
}

func indexText(i int) string {
	if i < 0 {
		return "?"
	}
	return strconv.Itoa(i)
}

// gpuBar draws a 0–1 share as a bar of gpuBarWidth cells; "n/a" when unknown.
func gpuBar(th *Theme, f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return th.dim.Render(fitWidth(na, gpuBarWidth))
	}
	n := int(math.Round(min(max(f, 0), 1) * gpuBarWidth))
	return strings.Repeat("█", n) + th.dim.Render(strings.Repeat("░", gpuBarWidth-n))
}

// fmtWatts is "266/700W", "266W" without a limit, "1.5/2.8kW" above 10 kW.
func fmtWatts(w, limit float64) string {
	switch {
	case math.IsNaN(w):
		return na + " W"
	case w >= 10000 || limit >= 10000:
		if math.IsNaN(limit) {
			return fmt.Sprintf("%.1fkW", w/1000)
		}
		return fmt.Sprintf("%.1f/%.1fkW", w/1000, limit/1000)
	case math.IsNaN(limit):
		return fmt.Sprintf("%.0fW", w)
	}
	return fmt.Sprintf("%.0f/%.0fW", w, limit)
}

// fmtUnit is a whole number and its unit: "74°C", "1980MHz".
func fmtUnit(v float64, unit string) string {
	if math.IsNaN(v) {
		return na + unit
	}
	return fmt.Sprintf("%.0f%s", v, unit)
}

func padLeft(s string, w int) string {
	if pad := w - ansi.StringWidth(s); pad > 0 {
		return strings.Repeat(" ", pad) + s
	}
	return s
}

// stats sums known values: NaN is left out, never read as 0, and with no
// value known each figure is NaN.
type stats struct {
	sum, max float64
	n        int
}

func (s stats) total() float64 { return s.or(s.sum) }
func (s stats) peak() float64  { return s.or(s.max) }
func (s stats) mean() float64  { return s.or(s.sum / float64(s.n)) }

// or is v when a value is known, else NaN.
func (s stats) or(v float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return v
}

func (s *stats) add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.sum += v
	s.n++
}

// gpuDetail is the GPU section of a replica's detail view: a line per
// joined GPU and sparklines of its utilisation, memory and power.
func gpuDetail(th *Theme, gs []device.GPU, hist gpuHistory, w int) []string {
	if len(gs) == 0 {
		return nil
	}
	lines := []string{th.headerRow.Render("GPUs") + th.dim.Render("  (joined by "+joinEvidence(gs[0])+")")}
	strip := gpuStrip{theme: th, gpus: gs, width: w}
	sparkW := max(min((w-strip.cellWidth()-24)/3, 30), 0)
	for _, g := range gs {
		line := strip.cell(g)
		if g.Model != "" {
			line = th.dim.Render(g.Model) + "  " + line
		}
		lines = append(lines, line)
		if r := hist[gpuID(g)]; r != nil && sparkW >= 6 {
			var util, mem, watts []float64
			for i := 0; i < r.Len(); i++ {
				p := r.At(i)
				util, mem, watts = append(util, float64(p.util)), append(mem, float64(p.mem)), append(watts, float64(p.watts))
			}
			hi := g.PowerLimitWatts
			if math.IsNaN(hi) {
				hi = 0 // scale to the largest value shown
			}
			lines = append(lines, "  util "+sparkline(util, sparkW, 0, 1)+"  mem "+sparkline(mem, sparkW, 0, 1)+"  power "+sparkline(watts, sparkW, 0, hi))
		}
	}
	return lines
}

// joinEvidence says how a GPU came to be joined to its replica.
func joinEvidence(g device.GPU) string {
	switch {
	case g.Pod != "":
		return "pod " + g.Pod
	case len(g.PIDs) > 0:
		return "process"
	}
	return "host " + g.Host
}

// gpuNoneNote says why a report has no GPU figures: "GPUs none: " and its
// sources' notes; "" when it has GPUs or no source has a note.
func gpuNoneNote(r analysis.Report) string {
	if len(r.GPUs) > 0 {
		return ""
	}
	var notes []string
	for _, src := range r.GPUSources {
		if src.Note != "" {
			notes = append(notes, src.Note)
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "GPUs none: " + strings.Join(notes, "; ")
}

// gpuNoteReports is how many reports in a row must give the same reason
// for having no GPU figures before the event log says it: a source that
// is starting says so in its note, and that is no event.
const gpuNoteReports = 3

// noteNoGPUs says in the event log, once, why there are no GPU figures.
func (m *Model) noteNoGPUs(r analysis.Report) {
	note := gpuNoneNote(r)
	if note != m.noGPUs {
		m.noGPUs, m.noGPUsCount = note, 0
	}
	if note == "" {
		return
	}
	m.noGPUsCount++
	if m.noGPUsCount == gpuNoteReports {
		m.notice(r.Time, note)
	}
}
