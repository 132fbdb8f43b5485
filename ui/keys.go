package ui

import "github.com/charmbracelet/bubbles/key"

// keyMap holds every binding. The footer and the help overlay are generated
// from it, so what is shown is what works.
type keyMap struct {
	Quit, Help, Back                  key.Binding
	Up, Down, Left, Right, Next       key.Binding
	Detail, Table, Events             key.Binding
	Filter, Sort, Reverse             key.Binding
	Pause, Shorter, Longer, ScrapeNow key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Back:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Left:      key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←/h", "left")),
		Right:     key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→/l", "right")),
		Next:      key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "next pane")),
		Detail:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
		Table:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "table")),
		Events:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "events")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Sort:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort column")),
		Reverse:   key.NewBinding(key.WithKeys("S", "I"), key.WithHelp("S/I", "reverse sort")),
		Pause:     key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Shorter:   key.NewBinding(key.WithKeys("["), key.WithHelp("[", "shorter window")),
		Longer:    key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "longer window")),
		ScrapeNow: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "scrape now")),
	}
}

// ShortHelp is the footer: the keys an on-call engineer needs first.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Quit, k.Help, k.Detail, k.Table, k.Events, k.Filter, k.Pause, k.Shorter, k.Longer, k.ScrapeNow, k.Back}
}

// FullHelp is the help overlay, one column per group.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Left, k.Right, k.Next},
		{k.Detail, k.Table, k.Events, k.Back, k.Help},
		{k.Filter, k.Sort, k.Reverse},
		{k.Pause, k.Shorter, k.Longer, k.ScrapeNow, k.Quit},
	}
}
