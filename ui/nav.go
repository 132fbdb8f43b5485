package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/vtop-dev/vtop/analysis"
)

// move returns the target selected after a key, in a list laid out in cols
// columns (the grid; the table has one), and whether the key was one of
// the list's. The selection stops at either end.
func (k listKeys) move(list []*analysis.ReplicaReport, selected string, cols int, msg tea.KeyMsg) (string, bool) {
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
		if msg.Type == tea.KeyShiftTab {
			i--
		} else {
			i = (i + 1) % len(list)
		}
	case msg.Type == tea.KeyPgDown:
		i += 10 * cols
	case msg.Type == tea.KeyPgUp:
		i -= 10 * cols
	case msg.Type == tea.KeyHome || msg.String() == "g":
		i = 0
	case msg.Type == tea.KeyEnd || msg.String() == "G":
		i = len(list) - 1
	default:
		return selected, false
	}
	i = min(max(i, 0), len(list)-1)
	return list[i].Target, true
}
