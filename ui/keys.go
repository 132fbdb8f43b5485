package ui

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
)

// Bindings are grouped by who handles them. The footer and the help
// overlay are generated from them, so what is shown is what works.

// globalKeys work on every screen; the root handles them.
type globalKeys struct {
	Quit, Help, Back                  key.Binding
	Detail, Table, Events, Filter     key.Binding
	Advice                            key.Binding
	Pause, Shorter, Longer, ScrapeNow key.Binding
}

func newGlobalKeys() globalKeys {
	return globalKeys{
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Detail:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
		Table:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "table")),
		Events:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "events")),
		Advice:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "advice")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Pause:     key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Shorter:   key.NewBinding(key.WithKeys("["), key.WithHelp("[", "shorter window")),
		Longer:    key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "longer window")),
		ScrapeNow: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "scrape now")),
	}
}

// filterKeys close the filter input; every other key is typed into it.
type filterKeys struct {
	Keep, Clear key.Binding
}

func newFilterKeys() filterKeys {
	return filterKeys{
		Keep:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep")),
		Clear: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear")),
	}
}

// listKeys move the selection in the grid and the table.
type listKeys struct {
	Up, Down, Left, Right key.Binding
	Next, Prev            key.Binding
	PageUp, PageDown      key.Binding
	First, Last           key.Binding
}

func newListKeys() listKeys {
	return listKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Left:     key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "left")),
		Right:    key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "right")),
		Next:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "prev pane")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		First:    key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "first, and stay there")),
		Last:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "last")),
	}
}

// bindings are the list keys in the order the help shows them.
func (k listKeys) bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Left, k.Right, k.Next, k.Prev, k.PageUp, k.PageDown, k.First, k.Last}
}

// scrollKeys scroll a viewport, named so that the help shows them; not
// sideways: the content is cut to the width.
func scrollKeys() viewport.KeyMap {
	return viewport.KeyMap{
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "line up")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "line down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("b/pgup", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", " ", "f"), key.WithHelp("f/pgdn", "page down")),
		HalfPageUp:   key.NewBinding(key.WithKeys("u", "ctrl+u"), key.WithHelp("u", "½ page up")),
		HalfPageDown: key.NewBinding(key.WithKeys("d", "ctrl+d"), key.WithHelp("d", "½ page down")),
	}
}

// sortKeys order the table, from every screen: it opens already sorted.
type sortKeys struct {
	Sort, SortBack, Reverse key.Binding
}

func newSortKeys() sortKeys {
	return sortKeys{
		Sort:     key.NewBinding(key.WithKeys("s", ">"), key.WithHelp("s/>", "sort by next column")),
		SortBack: key.NewBinding(key.WithKeys("S", "<"), key.WithHelp("S/<", "sort by previous column")),
		Reverse:  key.NewBinding(key.WithKeys("I"), key.WithHelp("I", "reverse sort")),
	}
}
