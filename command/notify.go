package command

import (
	"context"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/analysis"
	"github.com/vtop-dev/vtop/notify"
	"github.com/vtop-dev/vtop/promsource"
)

// notifyFlags tell the world outside the terminal what a running vtop
// sees: alerts to an Alertmanager, a command per state change, the bell.
// The resend's default is Prometheus's (--rules.alert.resend-delay): an
// Alertmanager restarted without its storage learns within a minute.
type notifyFlags struct {
	Alertmanager                string        `placeholder:"URL" help:"Post the replicas' problems (DOWN, STALLED, PREEMPTING, FULL: critical; SLOW, STALE: warning) to this Alertmanager's v2 API as alerts (labels alertname, replica, state, severity), sent again while they last and resolved on recovery."`
	AlertmanagerResend          time.Duration `default:"1m" placeholder:"D" help:"With --alertmanager: how often a firing alert is sent again; its endsAt is four of these ahead, so it resolves on its own if vtop stops."`
	AlertmanagerCAFile          string        `name:"alertmanager-ca-file" type:"existingfile" placeholder:"FILE" help:"With --alertmanager: PEM bundle of CAs to trust for it."`
	AlertmanagerInsecure        bool          `help:"With --alertmanager: skip its TLS certificate verification."`
	AlertmanagerBearerTokenFile string        `type:"existingfile" placeholder:"FILE" help:"With --alertmanager: send the token in FILE as Authorization: Bearer (re-read on each post; never shown)."`
	AlertmanagerBasicAuthFile   string        `type:"existingfile" placeholder:"FILE" help:"With --alertmanager: user:password in FILE for HTTP basic auth (never shown)."`
	AlertmanagerHeader          []string      `placeholder:"'K: V'" help:"With --alertmanager: extra request header, repeatable."`

	OnChange          string        `placeholder:"CMD" help:"Run CMD (sh -c) at each state change of a replica, as the event log shows them (a replica's first state is a change from none), the change as JSON on stdin (and VTOP_REPLICA, VTOP_FROM, VTOP_STATE, VTOP_SEVERITY, VTOP_TEXT); it never delays a frame or a report, and its failure is said, not fatal."`
	OnChangeTimeout   time.Duration `default:"10s" placeholder:"D" help:"With --on-change: kill a run (and what it started in its process group) after this long."`
	OnChangePerMinute int           `default:"10" placeholder:"N" help:"With --on-change: start at most N runs a minute; the changes past it are counted and said."`

	Bell string `placeholder:"STATES" help:"Ring the terminal's bell when a replica changes into one of STATES, its first state included, comma-separated (e.g. down,full,preempting)."`
}

// validate rejects the notify flags that cannot work.
func (f notifyFlags) validate(once, jsonl bool) error {
	return firstError(f.validateAlertmanager, func() error { return f.validateChanges(once, jsonl) })
}

// validateAlertmanager rejects its options without it, and a URL, a
// resend interval or a header it cannot be sent with.
func (f notifyFlags) validateAlertmanager() error {
	if f.Alertmanager == "" {
		return goesWith(givenFlag{"--alertmanager", false},
			givenFlag{"--alertmanager-ca-file", f.AlertmanagerCAFile != ""}, givenFlag{"--alertmanager-insecure", f.AlertmanagerInsecure},
			givenFlag{"--alertmanager-bearer-token-file", f.AlertmanagerBearerTokenFile != ""},
			givenFlag{"--alertmanager-basic-auth-file", f.AlertmanagerBasicAuthFile != ""},
			givenFlag{"--alertmanager-header", len(f.AlertmanagerHeader) > 0})
	}
	if _, err := notify.ParseAlertmanagerURL(f.Alertmanager); err != nil {
		return usagef("--alertmanager: %v", err)
	}
	if f.AlertmanagerResend < time.Second {
		return usagef("--alertmanager-resend %s: want 1s or more", f.AlertmanagerResend)
	}
	return checkHeaders("--alertmanager-header", f.AlertmanagerHeader)
}

// validateChanges rejects --on-change's limits that stop every run, and
// telling of changes where there are none (--once) or ringing where there
// is no terminal (--jsonl).
func (f notifyFlags) validateChanges(once, jsonl bool) error {
	switch {
	case f.OnChangeTimeout <= 0:
		return usagef("--on-change-timeout %s: want a positive duration", f.OnChangeTimeout)
	case f.OnChangePerMinute < 1:
		return usagef("--on-change-per-minute %d: want 1 or more", f.OnChangePerMinute)
	case once && (f.Alertmanager != "" || f.OnChange != "" || f.Bell != ""):
		return usagef("--alertmanager, --on-change and --bell tell of changes while vtop watches: not with --once (one report)")
	case jsonl && f.Bell != "":
		return usagef("--bell rings the dashboard's terminal: not with --jsonl")
	case f.Bell == "":
		return nil
	}
	if _, err := notify.ParseStates(f.Bell); err != nil {
		return usagef("--bell: %v", err)
	}
	return nil
}

// alertmanager prepares the sender of --alertmanager, nil without it.
func (f notifyFlags) alertmanager(say func(string)) (*notify.Alertmanager, error) {
	if f.Alertmanager == "" {
		return nil, nil
	}
	u, err := notify.ParseAlertmanagerURL(f.Alertmanager)
	if err != nil {
		return nil, usagef("--alertmanager: %v", err)
	}
	client, err := promsource.HTTPClient(u, promsource.Access{
		BearerTokenFile: f.AlertmanagerBearerTokenFile,
		BasicAuthFile:   f.AlertmanagerBasicAuthFile,
		CAFile:          f.AlertmanagerCAFile,
		Insecure:        f.AlertmanagerInsecure,
		Headers:         f.AlertmanagerHeader,
	}, 1<<20)
	if err != nil {
		return nil, usagef("--alertmanager: %v", err)
	}
	am, err := notify.NewAlertmanager(notify.AlertmanagerConfig{URL: f.Alertmanager, Client: client, Say: say})
	if err != nil {
		return nil, usagef("--alertmanager: %v", err)
	}
	return am, nil
}

// notifier is what the notify flags start: observe takes each report on
// the monitor's goroutine and hands the work to goroutines of its own.
type notifier struct {
	am      *notify.Alertmanager
	tracker *notify.Tracker
	post    func([]notify.Alert) // the tracker's alerts to am (Enqueue)
	hook    *notify.Hook
	bell    []analysis.State

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startNotifier starts what the flags ask for (nil for nothing); say
// receives the notices (a failed post, a failed hook) on a goroutine of
// the notifier's.
func (f notifyFlags) startNotifier(ctx context.Context, say func(string)) (*notifier, error) {
	if f.Alertmanager == "" && f.OnChange == "" && f.Bell == "" {
		return nil, nil
	}
	am, err := f.alertmanager(say)
	if err != nil {
		return nil, err
	}
	n := &notifier{am: am}
	if f.Bell != "" {
		if n.bell, err = notify.ParseStates(f.Bell); err != nil {
			return nil, usagef("--bell: %v", err)
		}
	}
	ctx, n.cancel = context.WithCancel(ctx)
	if f.OnChange != "" {
		n.hook, err = notify.NewHook(ctx, notify.HookConfig{Command: f.OnChange, Timeout: f.OnChangeTimeout, PerMinute: f.OnChangePerMinute, Say: say})
		if err != nil {
			n.cancel()
			return nil, usagef("--on-change: %v", err)
		}
	}
	if am != nil {
		n.tracker, n.post = notify.NewTracker(f.AlertmanagerResend), am.Enqueue
		n.wg.Go(func() { am.Run(ctx) })
	}
	return n, nil
}

// observe queues a report's alerts, starts its hooks and says whether the
// bell rings, all from its one stream of state changes; it returns at once.
func (n *notifier) observe(r analysis.Report) (ring bool) {
	if n == nil {
		return false
	}
	if n.tracker != nil {
		n.post(n.tracker.Update(&r))
	}
	if n.hook != nil {
		for _, c := range notify.Changes(&r) {
			n.hook.Fire(c)
		}
	}
	return notify.Rings(&r, n.bell)
}

// stop ends the posting, kills the hooks still running, and waits for both.
func (n *notifier) stop() {
	if n == nil {
		return
	}
	n.cancel()
	n.wg.Wait()
	if n.hook != nil {
		n.hook.Wait()
	}
}
