package ui

import (
	"fmt"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/human"
)

// eventsScreen is the event log on its own screen, newest first.
type eventsScreen struct {
	theme *Theme
	loc   *time.Location
	log   *eventLog

	width, height int
	until         time.Time // the time of the report shown: later events wait
}

func newEventsScreen(theme *Theme, loc *time.Location, log *eventLog) eventsScreen {
	return eventsScreen{theme: theme, loc: loc, log: log}
}

func (e *eventsScreen) setSize(w, h int) { e.width, e.height = w, h }

// show sets the time of the report shown: events after it wait.
func (e *eventsScreen) show(until time.Time) { e.until = until }

// view draws a title and as many of the newest events as fit.
func (e eventsScreen) view() []string {
	th := e.theme
	title := th.headerRow.Render(fmt.Sprintf("events, newest first (%d kept)", len(e.log.events)))
	return eventLines(th, e.loc, title, e.log.newest(max(e.height-1, 0), e.until), th.dim.Render(noEvents))
}

const noEvents = "no state changes yet"

// eventLines are a title over events, a line each ("14:01:05 gpu-b FULL:
// waiting 41 → 95, running 256 flat"), or over empty when there are none.
func eventLines(th *Theme, loc *time.Location, title string, evs []analysis.Event, empty string) []string {
	lines := []string{title}
	if len(evs) == 0 {
		return append(lines, empty)
	}
	for _, e := range evs {
		lines = append(lines, th.dim.Render(e.Time.In(loc).Format(human.Clock))+" "+e.Target+" "+th.state(e.State).Render(e.Text))
	}
	return lines
}
