package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vtop-dev/vtop/analysis"
)

// fakePlayer notes the controls called and says it in its status line.
type fakePlayer struct {
	calls   []string
	changes bool      // whether a state change is found
	pos     time.Time // the position the player says it stands at
}

func (p *fakePlayer) note(s string)     { p.calls = append(p.calls, s) }
func (p *fakePlayer) TogglePause()      { p.note("pause") }
func (p *fakePlayer) StepBy(n int)      { p.note(fmt.Sprintf("step %+d", n)) }
func (p *fakePlayer) ChangeSpeed(d int) { p.note(fmt.Sprintf("speed %+d", d)) }
func (p *fakePlayer) NextChange(target string) bool {
	p.note(strings.TrimSpace("next change " + target))
	return p.changes
}
func (p *fakePlayer) PrevChange(target string) bool {
	p.note(strings.TrimSpace("prev change " + target))
	return p.changes
}
func (p *fakePlayer) Home()               { p.note("home") }
func (p *fakePlayer) End()                { p.note("end") }
func (p *fakePlayer) Position() time.Time { return p.pos }
func (p *fakePlayer) StatusLine() string {
	return fmt.Sprintf("REPLAY 14:01:05 (0m%02ds of 1m00s) ×1 paused", len(p.calls))
}

func replayModel(p Player, w, h int) Model {
	opts := testOptions()
	opts.Player = p
	opts.SetWindow = nil
	return sized(New(opts), w, h)
}

// runCmd runs a key's command, as the program would, and applies its
// message.
func runCmd(t *testing.T, m Model, cmd tea.Cmd) Model {
	t.Helper()
	if cmd == nil {
		return m
	}
	if msg := cmd(); msg != nil {
		m = send(m, msg)
	}
	return m
}

// In a replay the replay's keys win over the dashboard's keys they share,
// call the player from a command (never inside Update), and the header
// shows the line the player gives back.
func TestReplayKeysDrivePlayer(t *testing.T) {
	keys := []struct{ key, call string }{
		{" ", "pause"}, {"p", "pause"}, {",", "step -1"}, {".", "step +1"},
		{"<", "speed -1"}, {">", "speed +1"}, {"n", "next change"}, {"N", "prev change"},
		{"g", "home"}, {"G", "end"},
	}
	p := &fakePlayer{changes: true}
	m := send(replayModel(p, 120, 40), ReportMsg{Report: allStates(t0)})
	for i, k := range keys {
		next, cmd := m.Update(keyMsg(k.key))
		m = next.(Model)
		if len(p.calls) != i {
			t.Fatalf("%q called the player inside Update", k.key)
		}
		m = runCmd(t, m, cmd)
		if len(p.calls) != i+1 || p.calls[i] != k.call {
			t.Fatalf("%q: calls %v, want %q last", k.key, p.calls, k.call)
		}
		if want := fmt.Sprintf("(0m%02ds of 1m00s)", i+1); !strings.Contains(m.View(), want) {
			t.Fatalf("after %q the header lacks %q:\n%s", k.key, want, m.View())
		}
	}
	if m.table.sortCol != newTableScreen(PlainTheme(), analysis.DefaultConfig()).sortCol {
		t.Error("< or > sorted the table in a replay")
	}
}

// After a time key the header says, until the report at the new
// position comes, that the figures shown are of the time before: a jump
// runs the analysis first, seconds over a large fleet.
func TestReplayFiguresOfAnotherTime(t *testing.T) {
	const note = "computing;"
	tests := []struct {
		name     string
		key      string
		pos      time.Time // where the key leaves the player
		arrive   []tea.Msg // what the replay sends next
		wantNote string    // the header after the key, "" for none
	}{
		{"a jump to the end: said until the jump's report comes", "G", t0.Add(10 * time.Minute),
			[]tea.Msg{ReplayMsg{Status: "REPLAY", Restart: true, At: t0.Add(10 * time.Minute)}, ReportMsg{Report: allStates(t0.Add(10 * time.Minute))}},
			"computing; figures of 14:01:05"},
		{"a step forward: said until the report at the position", ".", t0.Add(5 * time.Second),
			[]tea.Msg{ReportMsg{Report: allStates(t0.Add(5 * time.Second))}},
			"computing; figures of 14:01:05"},
		{"a jump back to a state change", "N", t0.Add(-time.Minute),
			[]tea.Msg{ReplayMsg{Status: "REPLAY", Restart: true, At: t0.Add(-time.Minute)}, ReportMsg{Report: allStates(t0.Add(-time.Minute))}},
			"computing; figures of 14:01:05"},
		{"a key that does not move: nothing said", " ", t0, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePlayer{changes: true}
			m := send(replayModel(p, 120, 40), ReportMsg{Report: allStates(t0)})
			p.pos = tt.pos
			_, cmd := m.Update(keyMsg(tt.key))
			m = runCmd(t, m, cmd)
			header := strings.SplitN(m.View(), "\n", 4)
			got := strings.Join(header[:3], "\n")
			if tt.wantNote == "" && strings.Contains(got, note) || tt.wantNote != "" && !strings.Contains(got, tt.wantNote) {
				t.Errorf("after %q the header reads, want %q:\n%s", tt.key, tt.wantNote, got)
			}
			if v := send(m, tt.arrive...).View(); strings.Contains(v, note) {
				t.Errorf("the report at the position came, the header still waits:\n%s", v)
			}
		})
	}
}

// A jump that finds no state change says so in the header.
func TestReplayNoStateChange(t *testing.T) {
	m := send(replayModel(&fakePlayer{}, 120, 40), ReportMsg{Report: allStates(t0)})
	_, cmd := m.Update(keyMsg("n"))
	if v := runCmd(t, m, cmd).View(); !strings.Contains(v, "no later change of the fleet") {
		t.Errorf("n without a later change:\n%s", v)
	}
}

// Outside a replay the shared keys keep the dashboard's meaning, and the
// help shows no replay group.
func TestSharedKeysOutsideReplay(t *testing.T) {
	m := send(newModel(120, 40), ReportMsg{Report: allStates(t0)})
	if _, cmd := m.Update(keyMsg("g")); cmd != nil {
		t.Error("g made a command outside a replay")
	}
	sorted := press(m, "t", ">")
	if sorted.table.sortCol == m.table.sortCol {
		t.Error("> no longer sorts the table outside a replay")
	}
	if strings.Contains(press(m, "?").View(), "replay") {
		t.Error("the help lists replay keys outside a replay")
	}
}

// The help lists the replay's keys, and the bindings that lost a key to
// the replay no longer show it.
func TestReplayHelp(t *testing.T) {
	v := press(send(replayModel(&fakePlayer{}, 120, 40), ReportMsg{Report: allStates(t0)}), "?").View()
	for _, want := range []string{"replay", "space pause", ", .   step", "< >   speed", "n N   change", "home      first", "s sort by next column"} {
		if !strings.Contains(v, want) {
			t.Errorf("help lacks %q:\n%s", want, v)
		}
	}
	for _, gone := range []string{"home/g", "s/>", "p pause"} {
		if strings.Contains(v, gone) {
			t.Errorf("help still shows %q:\n%s", gone, v)
		}
	}
}

// A jump back keeps the history before the new position; a jump forward
// drops it all, so sparklines never join two distant stretches.
func TestReplayRestartRewindsHistory(t *testing.T) {
	m := withHistory(replayModel(&fakePlayer{}, 120, 40), 10, func(_ int, at time.Time) analysis.Report { return allStates(at) })
	target := allStates(t0).Replicas[0].Target
	times := func(m Model) []time.Time {
		var out []time.Time
		for _, p := range pointsUntil(m.history[target], 100, t0.Add(time.Hour)) {
			out = append(out, p.Time)
		}
		return out
	}
	back := t0.Add(-4 * time.Second)
	m = send(m, ReplayMsg{Status: "REPLAY", Restart: true, At: back}, ReportMsg{Report: allStates(back)})
	got := times(m)
	if len(got) != 6 || !got[4].Before(back) || !got[5].Equal(back) || !slices.IsSortedFunc(got, time.Time.Compare) {
		t.Errorf("after a jump back to -4s: %v", got)
	}
	ahead := t0.Add(time.Minute)
	m = send(m, ReplayMsg{Status: "REPLAY", Restart: true, At: ahead}, ReportMsg{Report: allStates(ahead)})
	if got := times(m); len(got) != 1 || !got[0].Equal(ahead) {
		t.Errorf("after a jump forward: %v, want the new report's point only", got)
	}
}

// The stretch a jump skipped, sent after the report at the new position,
// fills the charts before it; the stretch of a position jumped away from
// since is dropped.
func TestReplayJumpFillsTheStretchBefore(t *testing.T) {
	// Ten reports played, a second apart, up to t0.
	played := func() Model {
		return withHistory(replayModel(&fakePlayer{}, 120, 40), 10, func(_ int, at time.Time) analysis.Report { return allStates(at) })
	}
	target := allStates(t0).Replicas[0].Target
	stretch := func(end time.Time, n int, running float32) map[string][]analysis.Point {
		var pts []analysis.Point
		for i := n; i > 0; i-- {
			pts = append(pts, analysis.Point{Time: end.Add(-time.Duration(i) * time.Second), Running: running})
		}
		return map[string][]analysis.Point{target: pts}
	}
	points := func(m Model) []analysis.Point { return pointsUntil(m.history[target], 100, t0.Add(time.Hour)) }
	first := t0.Add(time.Minute)
	second := t0.Add(2 * time.Minute)
	tests := []struct {
		name    string
		msgs    []tea.Msg
		wantAt  time.Time // the newest point's time
		wantLen int
		wantRun float32 // Running of the oldest point
	}{
		{"a jump forward, then its stretch", []tea.Msg{
			ReplayMsg{Status: "REPLAY", Restart: true, At: first}, ReportMsg{Report: allStates(first)},
			HistoryMsg{Points: stretch(first, 5, 7), At: first}},
			first, 6, 7},
		{"a second jump before the first's stretch came", []tea.Msg{
			ReplayMsg{Status: "REPLAY", Restart: true, At: first}, ReportMsg{Report: allStates(first)},
			ReplayMsg{Status: "REPLAY", Restart: true, At: second}, ReportMsg{Report: allStates(second)},
			HistoryMsg{Points: stretch(first, 5, 7), At: first}},
			second, 1, 48},
		{"a jump back: the stretch replaces what was kept before it", []tea.Msg{
			ReplayMsg{Status: "REPLAY", Restart: true, At: t0.Add(-4 * time.Second)}, ReportMsg{Report: allStates(t0.Add(-4 * time.Second))},
			HistoryMsg{Points: stretch(t0.Add(-4*time.Second), 8, 9), At: t0.Add(-4 * time.Second)}},
			t0.Add(-4 * time.Second), 9, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := points(send(played(), tt.msgs...))
			if len(got) != tt.wantLen || !got[len(got)-1].Time.Equal(tt.wantAt) || got[0].Running != tt.wantRun ||
				!slices.IsSortedFunc(got, func(a, b analysis.Point) int { return a.Time.Compare(b.Time) }) {
				t.Errorf("%d points, oldest running %v, newest at %v; want %d, %v, %v", len(got), got[0].Running, got[len(got)-1].Time, tt.wantLen, tt.wantRun, tt.wantAt)
			}
		})
	}
}

// A recording made beside the screen shows in the title, and so does its
// stop.
func TestRecordingBadge(t *testing.T) {
	opts := testOptions()
	opts.Recording = "incident.vtrec"
	m := send(sized(New(opts), 120, 40), ReportMsg{Report: allStates(t0)})
	if !strings.Contains(m.View(), "REC incident.vtrec") {
		t.Errorf("no recording badge:\n%s", m.View())
	}
	m = send(m, RecordingMsg{Stopped: "recording stopped at --record-max-size 1GiB"})
	if v := m.View(); !strings.Contains(v, "recording stopped at --record-max-size 1GiB") || strings.Contains(v, "REC incident") {
		t.Errorf("the stop is not shown:\n%s", v)
	}
}

// The replay's frame at each golden size: the replay line under the
// title, the replay's keys first in the footer.
func TestGoldenReplay(t *testing.T) {
	for _, size := range goldenSizes {
		w, h := size[0], size[1]
		name := fmt.Sprintf("replay-%dx%d", w, h)
		t.Run(name, func(t *testing.T) {
			// A replay's event log is its stretch's, computed ahead.
			m := withHistory(replayModel(&fakePlayer{}, w, h), 20, func(_ int, at time.Time) analysis.Report {
				return allStates(at)
			})
			for i := range 20 {
				at := t0.Add(time.Duration(i-19) * time.Second)
				m = send(m, EventsMsg{Came: at, Events: allStates(at).Events})
			}
			m = send(m, ReplayMsg{Status: "REPLAY 14:01:05 (3m10s of 15m00s) ×10 paused"})
			frame := m.View()
			checkFrame(t, frame, w, h)
			golden(t, name, frame)
		})
	}
}

// A replay's event log is its stretch's, sent once as the analysis ahead
// computes it: a jump forward or back keeps it, the log shows what
// happened up to the position, and a report's own events are not logged
// twice.
func TestReplayEventsKeptAcrossJumps(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	event := func(s int, target string) EventsMsg {
		return EventsMsg{Came: at(s), Events: []analysis.Event{{Time: at(s), Target: target, State: analysis.StateFull, Text: "FULL at " + fmt.Sprint(s)}}}
	}
	reportAt := func(s int) ReportMsg {
		r := allStates(at(s))
		r.Events = []analysis.Event{{Time: at(s), Target: "gpu-x:8000", State: analysis.StateFull, Text: "the report's own"}}
		return ReportMsg{Report: r}
	}
	jump := func(s int) []tea.Msg {
		return []tea.Msg{ReplayMsg{Status: "REPLAY", Restart: true, At: at(s)}, reportAt(s)}
	}
	m := send(replayModel(&fakePlayer{}, 120, 40), reportAt(0))
	for _, s := range []int{0, 10, 100, 200} {
		m = send(m, event(s, fmt.Sprintf("gpu-%d:8000", s)))
	}
	logAt := func(m Model) string { return strings.Join(press(m, "e").log.view(), "\n") }
	cases := []struct {
		name      string
		to        int
		want, not []string
	}{
		{"forward past two events", 150, []string{"FULL at 0", "FULL at 10", "FULL at 100"}, []string{"FULL at 200"}},
		{"back before the third", 50, []string{"FULL at 0", "FULL at 10"}, []string{"FULL at 100", "FULL at 200"}},
		{"forward to the end", 300, []string{"FULL at 0", "FULL at 10", "FULL at 100", "FULL at 200"}, nil},
		{"back to the start", 0, []string{"FULL at 0"}, []string{"FULL at 10"}},
	}
	for _, c := range cases {
		m = send(m, jump(c.to)...)
		log := logAt(m)
		for _, w := range c.want {
			if !strings.Contains(log, w) {
				t.Errorf("%s: the log lacks %q:\n%s", c.name, w, log)
			}
		}
		for _, n := range append(c.not, "the report's own") {
			if strings.Contains(log, n) {
				t.Errorf("%s: the log shows %q:\n%s", c.name, n, log)
			}
		}
	}
}

// The header never names a position over another position's figures
// without saying so, at every width: the notice comes right after the
// position, before the notes that may be cut, and on a line of its own
// when both do not fit one.
func TestReplayNoticeAtEveryWidth(t *testing.T) {
	const notice = "computing; figures of 14:01:05"
	moved := t0.Add(45 * time.Second)
	for _, size := range [][2]int{{80, 24}, {60, 16}, {220, 60}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			opts := testOptions()
			opts.Player = &fakePlayer{pos: moved}
			opts.ReplayNote = "2026-12-07 UTC+00:00 local, from Prometheus"
			m := send(sized(New(opts), w, h), ReportMsg{Report: allStates(t0)})
			_, cmd := m.Update(keyMsg("G"))
			m = runCmd(t, m, cmd)
			frame := m.View()
			checkFrame(t, frame, w, h)
			if !strings.Contains(frame, notice) {
				t.Fatalf("a key moved the replay, the figures are of the time before; the header does not say so whole:\n%s", frame)
			}
			// A report of yet another time (the one in flight when the key
			// came) under the line of the moved position: still said.
			m = send(m, ReportMsg{Report: allStates(t0.Add(5 * time.Second)), Replay: &ReplayMsg{Status: "REPLAY 14:01:50", Position: moved}})
			if v := m.View(); !strings.Contains(v, "computing; figures of 14:01:10") {
				t.Fatalf("a report of another time than the line's, not said:\n%s", v)
			}
			m = send(m, ReportMsg{Report: allStates(moved), Replay: &ReplayMsg{Status: "REPLAY 14:01:50", Position: moved}})
			if v := m.View(); strings.Contains(v, "computing;") {
				t.Fatalf("the position's report came, the header still waits:\n%s", v)
			}
		})
	}
}

// In a replica's detail n and N move by that replica's state; elsewhere
// by the fleet's picture.
func TestReplayChangeOfTheReplicaInDetail(t *testing.T) {
	p := &fakePlayer{changes: true}
	m := send(replayModel(p, 120, 40), ReportMsg{Report: allStates(t0)})
	for _, k := range []string{"n", "N"} {
		_, cmd := m.Update(keyMsg(k))
		runCmd(t, m, cmd)
	}
	detail := press(m, "enter")
	worst := detail.selectedReport().Target
	for _, k := range []string{"n", "N"} {
		_, cmd := detail.Update(keyMsg(k))
		runCmd(t, detail, cmd)
	}
	want := []string{"next change", "prev change", "next change " + worst, "prev change " + worst}
	if !slices.Equal(p.calls, want) {
		t.Errorf("calls %q, want %q", p.calls, want)
	}
}
