package analysis

// Alert names, by state: the alerting rules `vtop rules` writes and the
// alerts a running vtop posts to an Alertmanager name a state alike, so
// that routes and silences match either source of the same alert.
const (
	AlertDown       = "VtopDown"
	AlertStalled    = "VtopStalled"
	AlertPreempting = "VtopPreempting"
	AlertFull       = "VtopFull"
	AlertSlow       = "VtopSlow"
	AlertStale      = "VtopStale"
	AlertIdle       = "VtopIdle"
)

// Alert severities. A replica that serves nobody (DOWN, STALLED), or that
// needs more capacity now (FULL, PREEMPTING), pages; one that is slow or
// whose exporter is stuck is a ticket; an idle one is news, not a problem.
const (
	AlertCritical = "critical"
	AlertWarning  = "warning"
	AlertInfo     = "info"
)

// Alert is the alert a state raises.
type Alert struct{ Name, Severity string }

// AlertOf is the alert state s raises (states), and false for a state
// that raises none.
func AlertOf(s State) (Alert, bool) {
	if int(s) >= len(states) {
		return Alert{}, false
	}
	return states[s].alert, states[s].alert.Name != ""
}
