package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/vtop-dev/vtop/httperr"
	"github.com/vtop-dev/vtop/safetext"
)

// AlertmanagerConfig configures the posting of alerts.
type AlertmanagerConfig struct {
	// URL is the Alertmanager's base URL, http(s)://host:port[/prefix].
	URL string
	// Client sends the posts, with the TLS and credentials of the flags;
	// http.DefaultClient when nil.
	Client *http.Client
	// Timeout bounds one post (DefaultPostTimeout when zero).
	Timeout time.Duration
	// MaxPending bounds the alerts waiting to be posted (DefaultMaxPending
	// when zero); past it the oldest is dropped and counted.
	MaxPending int
	// Say receives a notice, on the sender's goroutine: the first failure
	// of a run of them, and the first success after one. Nil says nothing.
	Say func(string)
}

// Defaults of AlertmanagerConfig.
const (
	DefaultPostTimeout = 10 * time.Second
	DefaultMaxPending  = 1000
)

// maxBackoff is the longest wait between two failed posts.
const maxBackoff = 30 * time.Second

// Alertmanager posts alerts to an Alertmanager's v2 API on a goroutine of
// its own (Run). Enqueue never blocks: alerts wait in a queue keyed by
// their labels, a newer state replacing the older, so a slow Alertmanager
// delays alerts but loses none of the newest; past MaxPending the oldest
// is dropped, counted and said. A failed post is tried again, with a
// backoff, unless a newer state of the alert came meanwhile.
type Alertmanager struct {
	cfg      AlertmanagerConfig
	endpoint string // …/api/v2/alerts
	name     string // the URL as shown: scheme, host, path

	mu      sync.Mutex
	pending map[string]Alert
	order   []string // keys of pending, oldest first
	stats   Stats
	wake    chan struct{}
}

// Stats count what the sender did.
type Stats struct {
	// Posts and Failures count the requests made and those that failed;
	// Alerts the alerts delivered.
	Posts, Failures, Alerts int
	// Dropped counts alerts dropped from a full queue, Replaced those
	// replaced in it by a newer state of the same alert before they were
	// sent.
	Dropped, Replaced int
	// LastError is the problem of the newest failed post, "" after a
	// success.
	LastError string
}

// ParseAlertmanagerURL checks an Alertmanager's base URL: http or https,
// a host, no credentials in it (they go in files: the flags say which),
// no query. Errors never repeat the URL's credentials.
func ParseAlertmanagerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL: want http(s)://host:port[/prefix]", safetext.Sanitize(redact(raw, u)))
	}
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%s: credentials do not go in the URL; use a bearer token or basic auth file", redact(raw, u))
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%s: want a base URL without query or fragment", redact(raw, u))
	}
	return u, nil
}

// redact is the URL without its user information.
func redact(raw string, u *url.URL) string {
	if u == nil || u.User == nil {
		return raw
	}
	c := *u
	c.User = nil
	return c.String()
}

// NewAlertmanager prepares a sender; nothing is posted until Run.
func NewAlertmanager(cfg AlertmanagerConfig) (*Alertmanager, error) {
	u, err := ParseAlertmanagerURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultPostTimeout
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.Say == nil {
		cfg.Say = func(string) {}
	}
	name := u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/")
	return &Alertmanager{cfg: cfg, endpoint: name + "/api/v2/alerts", name: name,
		pending: map[string]Alert{}, wake: make(chan struct{}, 1)}, nil
}

// Stats returns the counts so far.
func (s *Alertmanager) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Enqueue queues alerts for the next post and returns at once (drops are
// said on the sender's goroutine: saying may wait for the screen).
func (s *Alertmanager) Enqueue(alerts []Alert) {
	if len(alerts) == 0 {
		return
	}
	s.mu.Lock()
	for _, a := range alerts {
		s.put(a.key(), a, true)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// put adds a to the queue under key; newer replaces what the queue holds
// for key (else a older than the queue's is left out). Past MaxPending
// the oldest alert is dropped to make room. s.mu is held.
func (s *Alertmanager) put(key string, a Alert, newer bool) {
	if _, ok := s.pending[key]; ok {
		if newer {
			s.pending[key] = a
			s.stats.Replaced++
		}
		return
	}
	s.pending[key] = a
	s.order = append(s.order, key)
	if len(s.order) > s.cfg.MaxPending {
		delete(s.pending, s.order[0])
		s.order = s.order[1:]
		s.stats.Dropped++
	}
}

// take empties the queue, oldest first.
func (s *Alertmanager) take() ([]string, []Alert) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.order
	alerts := make([]Alert, len(keys))
	for i, k := range keys {
		alerts[i] = s.pending[k]
	}
	s.order, s.pending = nil, map[string]Alert{}
	return keys, alerts
}

// Run posts what is queued until ctx ends.
func (s *Alertmanager) Run(ctx context.Context) {
	backoff := time.Duration(0)
	failing, droppedSaid := 0, 0
	for {
		if st := s.Stats(); st.Dropped > droppedSaid {
			s.cfg.Say(fmt.Sprintf("alertmanager %s: %d alerts dropped so far, the oldest of more than %d waiting: it does not keep up", s.name, st.Dropped, s.cfg.MaxPending))
			droppedSaid = st.Dropped
		}
		wake, retry := s.wake, (<-chan time.Time)(nil) // after a failure, the backoff alone
		if backoff > 0 {
			wake, retry = nil, time.After(backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-retry:
		}
		keys, alerts := s.take()
		if len(alerts) == 0 {
			backoff = 0
			continue
		}
		err := s.post(ctx, alerts)
		s.mu.Lock()
		s.stats.Posts++
		if err == nil {
			s.stats.Alerts += len(alerts)
			s.stats.LastError = ""
			s.mu.Unlock()
			if failing > 0 {
				s.cfg.Say(fmt.Sprintf("alertmanager %s: alerts delivered again, after %d failed posts", s.name, failing))
			}
			failing, backoff = 0, 0
			continue
		}
		if ctx.Err() != nil {
			s.mu.Unlock()
			return
		}
		s.stats.Failures++
		s.stats.LastError = err.Error()
		// Back in the queue, oldest first, unless a newer state of the
		// same alert came while this post was out.
		for i, k := range keys {
			s.put(k, alerts[i], false)
		}
		s.mu.Unlock()
		failing++
		if failing == 1 {
			s.cfg.Say(fmt.Sprintf("alertmanager %s: %v; alerts kept and tried again", s.name, err))
		}
		backoff = min(max(2*backoff, time.Second), maxBackoff)
	}
}

// post sends alerts in one request.
func (s *Alertmanager) post(ctx context.Context, alerts []Alert) error {
	body, err := json.Marshal(alerts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "vtop")
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("posting alerts: %s", httperr.Describe(err, s.cfg.Timeout))
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		problem := httperr.Status(resp.StatusCode)
		if text := strings.TrimSpace(safetext.Sanitize(string(answer))); text != "" {
			problem += ": " + text
		}
		return fmt.Errorf("posting alerts: %s", problem)
	}
	return nil
}
