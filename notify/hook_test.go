package notify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

func change(replica string, s analysis.State) Change {
	return Change{Time: t0, Replica: replica, From: "healthy", State: s.String(), Severity: Severity(s), Text: strings.ToUpper(s.String()) + ": because"}
}

func newHook(t *testing.T, cfg HookConfig) (*Hook, *notices) {
	t.Helper()
	var said notices
	cfg.Say = said.say
	ctx, cancel := context.WithCancel(context.Background())
	h, err := NewHook(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); h.Wait() })
	return h, &said
}

func TestHookGetsTheChangeOnStdinAndInItsEnvironment(t *testing.T) {
	dir := t.TempDir()
	h, said := newHook(t, HookConfig{Command: `cat > "$DIR/in.json"; echo "$VTOP_REPLICA $VTOP_FROM $VTOP_STATE $VTOP_SEVERITY" > "$DIR/env"`})
	t.Setenv("DIR", dir)
	h.Fire(change("gpu-a:8000", analysis.StateFull))
	h.Wait()
	var got Change
	b, err := os.ReadFile(filepath.Join(dir, "in.json"))
	if err == nil {
		err = json.Unmarshal(b, &got)
	}
	if err != nil || got.Replica != "gpu-a:8000" || got.State != "full" || got.From != "healthy" || got.Severity != "critical" {
		t.Errorf("stdin %s (%v)", b, err)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	if strings.TrimSpace(string(env)) != "gpu-a:8000 HEALTHY FULL critical" {
		t.Errorf("environment %q", env)
	}
	if s := said.all(); len(s) != 0 {
		t.Errorf("said %q for a run that succeeded", s)
	}
}

func TestHookFailuresAreSaid(t *testing.T) {
	tests := []struct {
		name, command string
		timeout       time.Duration
		want          string
	}{
		{"an exit status, with the output", "echo 'no route to pager' >&2; exit 3", 0, "on-change for a FULL: exit status 3: no route to pager"},
		{"a timeout kills the whole group", "sleep 30", 200 * time.Millisecond, "on-change for a FULL: killed after 200ms"},
		{"a command that is not there", "/nonexistent/pager", 0, "on-change for a FULL: exit status 127"},
		{"escape sequences in the output are not drawn", "printf 'bad\\033]0;owned\\007'; exit 1", 0, "exit status 1: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, said := newHook(t, HookConfig{Command: tt.command, Timeout: tt.timeout})
			start := time.Now()
			h.Fire(change("a", analysis.StateFull))
			h.Wait()
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the run took %s", took)
			}
			s := said.all()
			if len(s) != 1 || !strings.Contains(s[0], tt.want) || strings.ContainsAny(s[0], "\x1b\x07") {
				t.Errorf("said %q, want %q", s, tt.want)
			}
			if st := h.Stats(); st.Runs != 1 || st.Failed != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestHookFireNeverWaits(t *testing.T) {
	h, said := newHook(t, HookConfig{Command: "sleep 10", Concurrent: 2, PerMinute: 100})
	start := time.Now()
	for range 5 {
		h.Fire(change("a", analysis.StateDown))
	}
	// Far under the hook's 10 s, and far over a loaded machine's scheduling.
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("5 fires of a 10 s hook took %s", took)
	}
	eventually(t, "the changes not run said", func() bool { return len(said.all()) == 1 })
	if st := h.Stats(); st.Runs != 2 || st.Busy != 3 {
		t.Errorf("stats %+v, want 2 runs and 3 refused while they run", st)
	}
	if s := said.all(); !strings.Contains(s[0], "2 runs still under way (1 changes not run for it so far)") {
		t.Errorf("said %q, want the first refusal said once", s)
	}
}

func TestHookRateLimit(t *testing.T) {
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h, said := newHook(t, HookConfig{Command: "true", PerMinute: 3, Now: clock})
	fire := func(n int) {
		for range n {
			h.Fire(change("a", analysis.StateFull))
		}
		h.Wait()
	}
	fire(5)
	if st := h.Stats(); st.Runs != 3 || st.RateLimited != 2 {
		t.Errorf("5 changes at once: %+v, want 3 run and 2 limited", st)
	}
	mu.Lock()
	now = now.Add(59 * time.Second)
	mu.Unlock()
	fire(1)
	if st := h.Stats(); st.Runs != 3 {
		t.Errorf("59 s later: %+v, want none run (the minute is not over)", st)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	fire(4)
	if st := h.Stats(); st.Runs != 6 || st.RateLimited != 4 {
		t.Errorf("a minute later: %+v, want 3 more run", st)
	}
	if s := said.all(); len(s) != 2 || !strings.Contains(s[1], "3 runs in the last minute already (4 changes not run for the rate so far)") {
		t.Errorf("said %q, want one notice per run of refusals, with the count so far", s)
	}
}

// Stats returns the hook's counts so far.
func (h *Hook) Stats() HookStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}
