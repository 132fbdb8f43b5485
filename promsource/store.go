package promsource

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/vtop-dev/vtop/safetext"
)

// Names of the stores a source tells apart: the programs that answer
// Prometheus's query API.
const (
	StorePrometheus      = "Prometheus"
	StoreVictoriaMetrics = "VictoriaMetrics"
	StoreMimir           = "Grafana Mimir"
)

// victoriaMetricsNote is the warning a source reading VictoriaMetrics
// carries: the two stores agree on the raw samples, which vtop's live
// figures are computed from, and differ on rate(), which the history's
// charts ask of the store.
const victoriaMetricsNote = "VictoriaMetrics evaluates MetricsQL: its rate() and increase() use the last sample before the window and do not extrapolate to its edges, " +
	"so figures the store computes (the history's charts) differ from Prometheus's; the live figures are vtop's own, from the raw samples, with Prometheus's rules"

// storeIdentity is which program answers a source's queries.
type storeIdentity struct {
	name, version string
}

// buildInfoLimit caps the answer of the build-information endpoint,
// a few hundred bytes from every store known.
const buildInfoLimit = 64 << 10

// learnStore asks the server which program it is, with one request to
// /api/v1/status/buildinfo, and puts the answer in the status. It reads
// the answer and its headers:
//   - VictoriaMetrics (every component of it) sends an X-Server-Hostname
//     header, and its build information names no version, or
//     Prometheus's 2.24.0 which it imitates;
//   - Grafana Mimir names itself as the application;
//   - anything else with a version is taken for Prometheus, or something
//     that reports Prometheus's version as its own (Thanos, Cortex).
//
// A server that said nothing useful (an error, a proxy's 404) stays
// unknown and is not asked again.
func (s *Source) learnStore(ctx context.Context) {
	// As long as a whole read may take: nothing waits for the answer.
	ctx, cancel := context.WithTimeout(ctx, wholeReadTimeouts*s.cfg.Timeout)
	defer cancel()
	u := s.client.URL("/api/v1/status/buildinfo", nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return
	}
	resp, err := s.httpc.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, buildInfoLimit))
	if err != nil {
		return
	}
	id, ok := identify(resp.StatusCode, resp.Header, body)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.Store, s.status.StoreVersion, s.storeNote = id.name, id.version, id.note()
}

// identify reads a build-information answer (see learnStore).
func identify(status int, h http.Header, body []byte) (storeIdentity, bool) {
	var answer struct {
		Status string `json:"status"`
		Data   struct {
			Version     string `json:"version"`
			Application string `json:"application"`
		} `json:"data"`
	}
	parsed := json.Unmarshal(body, &answer) == nil && answer.Status == "success"
	version := safetext.Sanitize(strings.TrimSpace(answer.Data.Version))
	if h.Get("X-Server-Hostname") != "" && (!parsed || version == "" || version == "2.24.0") {
		// VictoriaMetrics reports no version of its own here.
		return storeIdentity{name: StoreVictoriaMetrics}, true
	}
	if status != http.StatusOK || !parsed {
		return storeIdentity{}, false
	}
	if strings.Contains(strings.ToLower(answer.Data.Application), "mimir") {
		return storeIdentity{name: StoreMimir, version: version}, true
	}
	if version == "" {
		return storeIdentity{}, false
	}
	return storeIdentity{name: StorePrometheus, version: version}, true
}

// note is the warning a store's semantics call for, "" for none.
func (id storeIdentity) note() string {
	if id.name == StoreVictoriaMetrics {
		return victoriaMetricsNote
	}
	return ""
}
