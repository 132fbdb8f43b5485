package discover

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/vtop-dev/vtop/scrape"
	"github.com/vtop-dev/vtop/testutil"
)

// needProc skips where the system has no /proc socket tables.
func needProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp on this system")
	}
}

// find runs a discovery with a probe timeout generous enough for a helper
// that is still starting (its socket already listens).
func find(t *testing.T, o Options) Result {
	t.Helper()
	o.Timeout = 10 * time.Second
	return Find(context.Background(), o)
}

func byPort(r Result, port int) (Server, bool) {
	for _, s := range r.Servers {
		if s.Port == port {
			return s, true
		}
	}
	return Server{}, false
}

// TestFindWithNoArguments: servers of several engines on several ports,
// started as real processes under the engines' command lines, are found
// from /proc with default options; a web server that is no engine is not.
func TestFindWithNoArguments(t *testing.T) {
	needProc(t)
	type want struct {
		engine, target string
		up             bool
		problem        string
	}
	cases := []struct {
		name   string
		engine testutil.EngineSpec
		want   *want // nil: must not be listed
	}{
		{"vLLM on its own port", testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "vllm serve meta-llama/Llama-3.1-8B-Instruct --port {port}"},
			&want{"vLLM", "127.0.0.1:{port}", true, ""}},
		{"vLLM through python", testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "python3 -m vllm.entrypoints.openai.api_server --model m --port={port}"},
			&want{"vLLM", "127.0.0.1:{port}", true, ""}},
		{"SGLang", testutil.EngineSpec{Kind: testutil.EnginePage, Argv: "python3 -m sglang.launch_server --model-path m --port {port} --enable-metrics",
			Page: "testdata/sglang-via-dynamo.txt"}, &want{"SGLang", "127.0.0.1:{port}", true, ""}},
		{"TensorRT-LLM", testutil.EngineSpec{Kind: testutil.EnginePage, Argv: "/usr/bin/python3 /usr/local/bin/trtllm-serve model --port {port}",
			Page: "testdata/trtllm-serve-excerpt.txt", Path: "/prometheus/metrics"},
			&want{"TensorRT-LLM", "127.0.0.1:{port}/prometheus/metrics", true, ""}},
		{"TGI", testutil.EngineSpec{Kind: testutil.EnginePage, Argv: "text-generation-router --port {port} --tokenizer-name m",
			Page: "testdata/tgi-excerpt.txt"}, &want{"TGI", "127.0.0.1:{port}", true, ""}},
		{"llama.cpp", testutil.EngineSpec{Kind: testutil.EnginePage, Argv: "/opt/llama.cpp/llama-server -m model.gguf --port {port} --metrics",
			Page: "testdata/llamacpp.txt"}, &want{"llama.cpp", "127.0.0.1:{port}", true, ""}},
		{"SGLang without its metrics", testutil.EngineSpec{Kind: testutil.EngineRefuse, Argv: "python3 -m sglang.launch_server --model-path m --port {port}"},
			&want{"SGLang", "127.0.0.1:{port}", false, "GET http://127.0.0.1:{port}/metrics: HTTP 404 Not Found (SGLang serves metrics only when started with --enable-metrics)"}},
		{"vLLM serving another page", testutil.EngineSpec{Kind: testutil.EngineWeb, Argv: "vllm serve m --port {port}"},
			&want{"vLLM", "127.0.0.1:{port}", false, "GET http://127.0.0.1:{port}/metrics: the page has no vLLM metrics"}},
		{"a web server", testutil.EngineSpec{Kind: testutil.EngineWeb, Argv: "python3 -m http.server {port}"}, nil},
		{"an exporter", testutil.EngineSpec{Kind: testutil.EnginePage, Argv: "dcgm-exporter --address :{port}",
			Page: "testdata/dcgm-excerpt.txt"}, nil},
	}
	helpers := make([]testutil.Engine, len(cases))
	for i, c := range cases {
		helpers[i] = testutil.StartEngine(t, c.engine)
	}
	r := find(t, Options{})
	if r.Fallback {
		t.Fatalf("fell back: %+v", r)
	}
	for i, c := range cases {
		h := helpers[i]
		got, listed := byPort(r, h.Port)
		if c.want == nil {
			if listed {
				t.Errorf("%s: listed as %+v", c.name, got)
			}
			continue
		}
		p := strconv.Itoa(h.Port)
		w := *c.want
		w.target = strings.ReplaceAll(w.target, "{port}", p)
		w.problem = strings.ReplaceAll(w.problem, "{port}", p)
		if !listed {
			t.Errorf("%s: not found in %+v", c.name, r.Servers)
			continue
		}
		if got.Engine != w.engine || got.Target != w.target || got.Up != w.up || got.Problem != w.problem ||
			got.PID != h.PID || !got.Probed || !strings.Contains(got.Command, "--port") {
			t.Errorf("%s: got %+v\nwant %+v, pid %d", c.name, got, w, h.PID)
		}
	}
	if !strings.Contains(r.Summary, "found on this host") ||
		!strings.Contains(r.Summary, ": SGLang serves metrics only when started with --enable-metrics") {
		t.Errorf("summary %q", r.Summary)
	}
	for _, s := range r.Servers {
		if _, err := scrape.ParseTarget(s.Target); err != nil {
			t.Errorf("target: %v", err)
		}
	}
}

// TestFindOtherUsersProcess: a server whose descriptors cannot be read is
// skipped and counted; a scan still finds it, without a PID.
func TestFindOtherUsersProcess(t *testing.T) {
	needProc(t)
	h := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "vllm serve m --port {port}"})
	proc := onlyPorts{FS: denyFD{FS: os.DirFS("/proc"), pid: h.PID}, ports: []int{h.Port}}
	r := find(t, Options{Proc: proc})
	if len(r.Servers) != 0 || r.Denied < 1 {
		t.Errorf("denied process: %+v", r)
	}
	if !strings.Contains(r.Summary, "of other users skipped (run as root or use --scan)") {
		t.Errorf("summary %q", r.Summary)
	}
	r = find(t, Options{Proc: proc, Scan: true})
	if s, ok := byPort(r, h.Port); !ok || !s.Up || s.PID != 0 || s.Engine != "vLLM" {
		t.Errorf("scan: %+v", r)
	}
}

// TestScan: every listening port is probed, whatever holds it; only
// metrics pages of an engine are listed.
func TestScan(t *testing.T) {
	needProc(t)
	vllm := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "/srv/bin/custom-launcher --listen {port}"})
	tgi := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EnginePage, Argv: "router {port}", Page: "testdata/tgi-excerpt.txt"})
	web := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineWeb, Argv: "nginx"})
	refuse := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineRefuse, Argv: "vllm serve m --port {port}"})
	proc := onlyPorts{FS: os.DirFS("/proc"), ports: []int{vllm.Port, tgi.Port, web.Port, refuse.Port}}

	r := find(t, Options{Proc: proc})
	if len(r.Servers) != 1 || r.Servers[0].Port != refuse.Port || r.Servers[0].Up {
		t.Errorf("by process: only the refusing vLLM has an engine's command line: %+v", r.Servers)
	}
	r = find(t, Options{Proc: proc, Scan: true, Concurrency: 2})
	if len(r.Servers) != 2 {
		t.Fatalf("scan found %+v", r.Servers)
	}
	for _, w := range []struct {
		h      testutil.Engine
		engine string
	}{{vllm, "vLLM"}, {tgi, "TGI"}} {
		s, ok := byPort(r, w.h.Port)
		if !ok || s.Engine != w.engine || !s.Up || s.PID != w.h.PID {
			t.Errorf("scan: %s = %+v", w.engine, s)
		}
	}
	if r.Summary != "1 vLLM server, 1 TGI server found on this host" && r.Summary != "1 TGI server, 1 vLLM server found on this host" {
		t.Errorf("summary %q", r.Summary)
	}
}

// TestParentsOfRealProcesses: a vLLM-like server's child (its engine core)
// is found under it, which the GPU join relies on.
func TestParentsOfRealProcesses(t *testing.T) {
	needProc(t)
	h := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "vllm serve m --port {port}", Child: true})
	var child int
	// the child may not be forked or exec'd yet; each look is a full /proc walk
	for i := 0; i < 1000 && child == 0; i++ {
		for pid, pp := range Parents(os.DirFS("/proc")) {
			if argv := cmdline(os.DirFS("/proc"), pid); pp == h.PID && len(argv) == 1 && argv[0] == "VLLM::EngineCore" {
				child = pid
			}
		}
	}
	if child == 0 {
		t.Fatal("no engine core under the server")
	}
	if p := Parents(os.DirFS("/proc"))[h.PID]; p != os.Getpid() {
		t.Errorf("server's parent %d, want the test %d", p, os.Getpid())
	}
}

func TestFallbackWithoutProc(t *testing.T) {
	r := Find(context.Background(), Options{Proc: fstest.MapFS{}})
	if !r.Fallback || len(r.Servers) != 1 || r.Servers[0].Target != "localhost:8000" || r.Servers[0].Probed {
		t.Errorf("fallback %+v", r)
	}
	if r.Summary != "no /proc on this system to find servers by: watching localhost:8000, vLLM's default port" {
		t.Errorf("summary %q", r.Summary)
	}
	ts, err := scrape.ParseTarget(r.Servers[0].Target)
	if err != nil || ts.URL != "http://localhost:8000/metrics" {
		t.Errorf("target %v %v", ts, err)
	}
}

// TestListeners: the process listening on a port given by hand is found,
// as the process join of its GPUs needs; a port nothing listens on is
// left out, and so is everything without /proc.
func TestListeners(t *testing.T) {
	needProc(t)
	h := testutil.StartEngine(t, testutil.EngineSpec{Kind: testutil.EngineSim, Argv: "vllm serve m --port {port}"})
	free := testutil.ClosedPort(t)
	_, freePort, _ := strings.Cut(free, ":")
	closed, _ := strconv.Atoi(freePort)
	got := Listeners(os.DirFS("/proc"), []int{h.Port, closed})
	if got[h.Port] != h.PID || len(got) != 1 {
		t.Errorf("listeners %v, want port %d → pid %d only", got, h.Port, h.PID)
	}
	if got := Listeners(fstest.MapFS{}, []int{h.Port}); len(got) != 0 {
		t.Errorf("without /proc: %v", got)
	}
}

// TestDefaultPortWhenNothingIsFound: when no engine process is found (a
// server in a container shows only its proxy), vLLM's default port is
// probed: a server answering there is found; when nothing answers, no
// server is listed, so the caller can say so rather than watch a port
// that nothing serves.
func TestDefaultPortWhenNothingIsFound(t *testing.T) {
	page, err := os.ReadFile("testdata/vllm-v0.29.0-trimmed.txt")
	if err != nil {
		t.Fatal(err)
	}
	answering := strings.TrimSuffix(strings.TrimPrefix(testutil.StartServer(t, testutil.ServePage(string(page), "text/plain")), "http://"), "/metrics")
	noSockets := fstest.MapFS{"net/tcp": {Data: []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")}}
	tests := []struct {
		name        string
		def         string
		wantServers int
		wantSummary string
	}{
		{"a server answers at the default port", answering, 1, "vLLM answers at " + answering},
		{"nothing answers", testutil.ClosedPort(t), 0, "no inference server found on this host"},
	}
	for _, tt := range tests {
		r := Find(context.Background(), Options{Proc: noSockets, Default: tt.def})
		if len(r.Servers) != tt.wantServers || r.Fallback || !strings.Contains(r.Summary, tt.wantSummary) {
			t.Errorf("%s: servers %+v, summary %q; want %d, %q", tt.name, r.Servers, r.Summary, tt.wantServers, tt.wantSummary)
		}
		if tt.wantServers == 1 && (r.Servers[0].Target != tt.def || !r.Servers[0].Up || r.Servers[0].Engine != "vLLM") {
			t.Errorf("%s: server %+v, want vLLM up at %s", tt.name, r.Servers[0], tt.def)
		}
	}
}
