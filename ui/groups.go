package ui

import (
	"fmt"
	"strings"

	"github.com/vtop-dev/vtop/analysis"
)

// maxGroupLinesSmall is the group lines of a terminal under 30 rows.
const maxGroupLinesSmall = 2

// groupLines are a header line per group of replicas (model and role)
// when the fleet has several.
func (m Model) groupLines() []string {
	groups := m.shown.Fleet.Groups
	if len(groups) < 2 {
		return nil
	}
	shown := groups
	if m.height < 30 && len(groups) > maxGroupLinesSmall {
		shown = groups[:maxGroupLinesSmall-1]
	}
	lines := make([]string, 0, len(shown)+1)
	for i := range shown {
		lines = append(lines, m.groupLine(&shown[i]))
	}
	if len(shown) < len(groups) {
		lines = append(lines, m.theme.dim.Render(fmt.Sprintf("+%d more groups (models or roles): the table shows each replica's model", len(groups)-len(shown))))
	}
	return lines
}

// groupLine is one group: "▪ model (role) up 3/3 12 req/s run 40 wait 0
// worst gpu-a FULL → advice".
func (m Model) groupLine(g *analysis.FleetGroup) string {
	th := m.theme
	segs := []string{
		th.title.Render("▪ " + g.Name()),
		fmt.Sprintf("up %d/%d", g.Up, g.Replicas),
		fmtRate(g.RequestsPerSecond) + " req/s",
		"run " + fmtCount(g.Running),
		"wait " + fmtCount(g.Waiting),
	}
	if worst := m.worstOf(g.Targets); worst != nil && len(g.Targets) > 0 {
		segs = append(segs, "worst "+worst.Target+" "+th.badge(worst.State))
	}
	if g.Advice.Recommendation != "" {
		segs = append(segs, th.action.Render("→ "+g.Advice.Recommendation))
	}
	return strings.Join(segs, "  ")
}
