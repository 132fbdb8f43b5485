package promsource

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/vtop-dev/vtop/testutil"
)

// requireEnv makes a missing prometheus binary a failure instead of a skip
// (set it where the integration tests must run, e.g. in CI).
const requireEnv = "VTOP_REQUIRE_PROMETHEUS"

// prometheusBinary returns the path of the prometheus server binary, or
// skips the test (fails it when requireEnv is set).
func prometheusBinary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "no prometheus binary on PATH (Debian: apt-get install prometheus); set " + requireEnv + "=1 to make this a failure"
		if os.Getenv(requireEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// promServer is a real Prometheus server run by a test, scraping
// loopback targets.
type promServer struct {
	t       testing.TB
	bin     string
	dir     string // config, data and log live here
	addr    string // host:port it listens on
	cmd     *exec.Cmd
	done    chan struct{}
	scrape  time.Duration
	targets []string
}

// startPrometheus runs Prometheus scraping targets (host:port, /metrics)
// every scrape interval, as job "vllm", on a free loopback port, with its
// data in a directory of the test. It is stopped when the test ends.
func startPrometheus(t testing.TB, scrape time.Duration, targets []string) *promServer {
	t.Helper()
	p := &promServer{t: t, bin: prometheusBinary(t), dir: t.TempDir(), addr: testutil.ClosedPort(t), scrape: scrape, targets: targets}
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = fmt.Sprintf("%q", tg)
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: %dms
  scrape_timeout: %dms
scrape_configs:
  - job_name: vllm
    static_configs:
      - targets: [%s]
`, scrape.Milliseconds(), (scrape * 9 / 10).Milliseconds(), strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(p.dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p.start()
	t.Cleanup(p.stop)
	return p
}

// url is the server's base URL.
func (p *promServer) url() string { return "http://" + p.addr }

// start runs the server on its address and data directory and waits until
// it is ready.
func (p *promServer) start() {
	p.t.Helper()
	log, err := os.OpenFile(filepath.Join(p.dir, "prometheus.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd = exec.Command(p.bin,
		"--config.file="+filepath.Join(p.dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(p.dir, "data"),
		"--web.listen-address="+p.addr)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() { _ = p.cmd.Wait(); log.Close(); close(p.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.url() + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			p.t.Fatalf("prometheus exited at start; its log: %s", p.log())
		case <-time.After(100 * time.Millisecond):
		}
	}
	p.t.Fatalf("prometheus not ready within a minute; its log: %s", p.log())
}

// stop ends the server (SIGTERM, then SIGKILL) and waits for it.
func (p *promServer) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// log returns the tail of the server's log.
func (p *promServer) log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "prometheus.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// api returns a query client of the server.
func (p *promServer) api() v1.API {
	p.t.Helper()
	c, err := api.NewClient(api.Config{Address: p.url()})
	if err != nil {
		p.t.Fatal(err)
	}
	return v1.NewAPI(c)
}

// vector runs an instant query at t.
func (p *promServer) vector(expr string, t time.Time) model.Vector {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, _, _, err := p.api().Query(ctx, expr, t)
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		p.t.Fatalf("%s: answered %s", expr, v.Type())
	}
	return vec
}

// waitFor polls cond every 100 ms until it holds, failing the test after
// limit.
func waitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForWindow waits until Prometheus holds a full window of scrapes of
// every target.
func (p *promServer) waitForWindow(window time.Duration) {
	p.t.Helper()
	need := int(window / p.scrape)
	expr := fmt.Sprintf("count_over_time(up{job=\"vllm\"}[%dms])", window.Milliseconds())
	waitFor(p.t, window+time.Minute, "a full window in Prometheus", func() bool {
		vec := p.vector(expr, time.Now())
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
