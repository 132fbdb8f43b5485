package testutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// RequirePrometheusEnv makes a missing prometheus or promtool binary a
// failure instead of a skip (CI sets it: the tests against a real
// Prometheus must run there).
const RequirePrometheusEnv = "VTOP_REQUIRE_PROMETHEUS"

// PrometheusTool returns the path of a binary of Debian's prometheus
// package (prometheus, promtool), or skips the test (fails it when
// RequirePrometheusEnv is set); under -short it skips it.
func PrometheusTool(t testing.TB, name string) string {
	t.Helper()
	return Binary(t, name, "prometheus", RequirePrometheusEnv)
}

// Prometheus is a real Prometheus server run by a test on a free loopback
// port: scraping loopback targets, or serving blocks made beforehand.
type Prometheus struct {
	Server  // its directory holds the config and the log
	bin     string
	data    string // the TSDB
	addr    string // host:port it listens on
	extra   []string
	scrape  time.Duration
	targets []string
}

// StartPrometheus runs Prometheus scraping targets (host:port, /metrics)
// every scrape interval, as job "vllm", with its data in a directory of
// the test. It is stopped when the test ends.
func StartPrometheus(t testing.TB, scrape time.Duration, targets []string) *Prometheus {
	t.Helper()
	return StartPrometheusJobs(t, scrape, targets, vllmJob(targets))
}

// vllmJob is the scrape_configs of one job "vllm" scraping targets.
func vllmJob(targets []string) string {
	return "  - job_name: vllm\n    static_configs:\n      - targets: [" + quoteAll(targets) + "]\n"
}

// quoteAll is each of s quoted, comma-separated, for a YAML list.
func quoteAll(s []string) string {
	quoted := make([]string, len(s))
	for i, x := range s {
		quoted[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(quoted, ", ")
}

// StartPrometheusRules is StartPrometheus that also loads the rule files
// and evaluates them every evaluation interval (the rule groups' own
// interval: wins over it).
func StartPrometheusRules(t testing.TB, scrape, evaluation time.Duration, targets []string, ruleFiles ...string) *Prometheus {
	t.Helper()
	return startScraping(t, scrape, targets, fmt.Sprintf("  evaluation_interval: %dms\nrule_files: [%s]\n", evaluation.Milliseconds(), quoteAll(ruleFiles)), vllmJob(targets))
}

// StartPrometheusJobs is StartPrometheus with the scrape_configs given
// as YAML (a list, indented by two spaces): targets with labels of their
// own, relabelling. targets are the addresses they scrape, for
// WaitForWindow.
func StartPrometheusJobs(t testing.TB, scrape time.Duration, targets []string, scrapeConfigs string) *Prometheus {
	t.Helper()
	return startScraping(t, scrape, targets, "", scrapeConfigs)
}

// startScraping runs Prometheus scraping every scrape interval with the
// scrape_configs given; more is further YAML of the config, global's
// lines (indented) first.
func startScraping(t testing.TB, scrape time.Duration, targets []string, more, scrapeConfigs string) *Prometheus {
	t.Helper()
	p := newPrometheus(t)
	p.scrape, p.targets = scrape, targets
	p.writeConfig(fmt.Sprintf("global:\n  scrape_interval: %dms\n  scrape_timeout: %dms\n%sscrape_configs:\n%s",
		scrape.Milliseconds(), (scrape * 9 / 10).Milliseconds(), more, scrapeConfigs))
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

// ServeBlocks runs Prometheus over the TSDB blocks in dir (made by
// promtool), scraping nothing and keeping every block however old. It is
// stopped when the test ends.
func ServeBlocks(t testing.TB, dir string) *Prometheus {
	t.Helper()
	p := newPrometheus(t)
	p.data = dir
	p.extra = []string{"--storage.tsdb.retention.time=100y"}
	p.writeConfig("scrape_configs: []\n")
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

// EvaluateRules runs a second Prometheus that evaluates the rule files
// every evaluation interval (a group's own interval wins over it) over
// the samples of over, read through its remote-read API, and keeps what
// they record: back-filled blocks that reach past the present (ServeBlocks)
// refuse the rules' samples of the present, which fall before their end.
// It is stopped when the test ends.
func EvaluateRules(t testing.TB, over *Prometheus, evaluation time.Duration, ruleFiles ...string) *Prometheus {
	t.Helper()
	p := newPrometheus(t)
	p.writeConfig(fmt.Sprintf("global:\n  evaluation_interval: %dms\nrule_files: [%s]\nscrape_configs: []\nremote_read:\n  - url: %q\n    read_recent: true\n",
		evaluation.Milliseconds(), quoteAll(ruleFiles), over.URL()+"/api/v1/read"))
	p.Start()
	t.Cleanup(p.Stop)
	return p
}

func newPrometheus(t testing.TB) *Prometheus {
	p := &Prometheus{Server: NewServer(t, "prometheus"), bin: PrometheusTool(t, "prometheus"), addr: ClosedPort(t)}
	p.data = filepath.Join(p.Dir, "data")
	return p
}

func (p *Prometheus) writeConfig(cfg string) {
	p.T.Helper()
	if err := os.WriteFile(filepath.Join(p.Dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		p.T.Fatal(err)
	}
}

// URL is the server's base URL.
func (p *Prometheus) URL() string { return "http://" + p.addr }

// Start runs the server on its address and data directory (again, after
// Stop) and waits until it is ready.
func (p *Prometheus) Start() {
	p.T.Helper()
	p.Run(p.bin, append([]string{"--config.file=" + filepath.Join(p.Dir, "prometheus.yml"),
		"--storage.tsdb.path=" + p.data, "--web.listen-address=" + p.addr}, p.extra...), p.URL()+"/-/ready", time.Minute)
}

// API returns a query client of the server.
func (p *Prometheus) API() v1.API {
	p.T.Helper()
	c, err := api.NewClient(api.Config{Address: p.URL()})
	if err != nil {
		p.T.Fatal(err)
	}
	return v1.NewAPI(c)
}

// Vector runs an instant query at t.
func (p *Prometheus) Vector(expr string, t time.Time) model.Vector {
	p.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, _, err := p.API().Query(ctx, expr, t)
	if err != nil {
		p.T.Fatalf("%s: %v", expr, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		p.T.Fatalf("%s: answered %s", expr, v.Type())
	}
	return vec
}

// WaitForWindow waits until the server holds a full window of scrapes of
// every target.
func (p *Prometheus) WaitForWindow(window time.Duration) {
	p.T.Helper()
	need := int(window / p.scrape)
	expr := fmt.Sprintf("count_over_time(up{job=\"vllm\"}[%dms])", window.Milliseconds())
	WaitFor(p.T, window+time.Minute, "a full window in Prometheus", func() bool {
		vec := p.Vector(expr, time.Now())
		if len(vec) < len(p.targets) {
			return false
		}
		for _, s := range vec {
			if int(s.Value) < need {
				return false
			}
		}
		return true
	})
}

// WaitFor polls cond every 100 ms until it holds, failing the test after
// limit.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Backfill makes Prometheus blocks of an OpenMetrics file with
// timestamps (promtool tsdb create-blocks-from openmetrics) in a new
// directory of the test, for ServeBlocks.
func Backfill(t testing.TB, openMetrics string) string {
	t.Helper()
	promtool := PrometheusTool(t, "promtool")
	dir := filepath.Join(t.TempDir(), "blocks")
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", openMetrics, dir).CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics %s: %v\n%s", openMetrics, err, out)
	}
	return dir
}
