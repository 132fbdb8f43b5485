package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/vtop-dev/vtop/analysis"
)

// move returns the target selected after a key in a list of cols columns
// shown page items at a time, and whether the key was the list's. The
// selection stops at either end.
func (k listKeys) move(list []*analysis.ReplicaReport, selected string, cols, page int, msg tea.KeyMsg) (string, bool) {
	if len(list) == 0 {
		return selected, false
	}
	i := max(indexOf(list, selected), 0)
	switch {
	case key.Matches(msg, k.Up):
		i -= cols
	case key.Matches(msg, k.Down):
		i += cols
	case key.Matches(msg, k.Left):
		i--
	case key.Matches(msg, k.Right):
		i++
	case key.Matches(msg, k.Next):
		i = (i + 1) % len(list) // tab cycles through every pane
	case key.Matches(msg, k.Prev):
		i--
	case key.Matches(msg, k.PageDown):
		// To the same place on the next page, as the "+N more" hint promises.
		i += max(page, 1)
	case key.Matches(msg, k.PageUp):
		i -= max(page, 1)
	case key.Matches(msg, k.First):
		i = 0
	case key.Matches(msg, k.Last):
		i = len(list) - 1
	default:
		return selected, false
	}
	i = min(max(i, 0), len(list)-1)
	return list[i].Target, true
}
