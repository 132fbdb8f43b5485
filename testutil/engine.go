package testutil

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// The test binary doubles as a server process for local discovery to find:
// re-executed under an engine's command line ("vllm serve … --port N"),
// it serves on the listening socket it inherits as fd 3 and exits when its
// stdin closes. TestMain calls MainIfEngine first.
const (
	envEngine      = "VTOP_TEST_ENGINE"       // what to serve: an EngineKind
	envEnginePage  = "VTOP_TEST_ENGINE_PAGE"  // the page file of EnginePage
	envEnginePath  = "VTOP_TEST_ENGINE_PATH"  // where EnginePage serves it
	envEngineChild = "VTOP_TEST_ENGINE_CHILD" // "1": start a child first, as vLLM starts its engine core
)

// EngineKind is what a test engine process serves.
type EngineKind string

// The kinds of test engine processes.
const (
	// EngineSim serves what MainIfEngine's replica makes: a simulated
	// vLLM replica's /metrics.
	EngineSim EngineKind = "sim"
	// EnginePage serves a saved page (EngineSpec.Page) at EngineSpec.Path.
	EnginePage EngineKind = "page"
	// EngineRefuse answers 404 Not Found to every request, /metrics
	// included, as SGLang does without --enable-metrics.
	EngineRefuse EngineKind = "refuse"
	// EngineWeb is a web server that is no inference server: an HTML page
	// at every path.
	EngineWeb   EngineKind = "web"
	engineChild EngineKind = "child"
)

// EngineSpec is a test engine process to start.
type EngineSpec struct {
	// Kind is what it serves.
	Kind EngineKind
	// Argv is its command line, words separated by spaces, with "{port}"
	// standing for the loopback port it alone holds.
	Argv string
	// Page and Path are the file an EnginePage serves and where (default
	// /metrics).
	Page, Path string
	// Child starts a child process too (vLLM's engine core), whose pid
	// the server reports.
	Child bool
}

// Engine is one running test server process.
type Engine struct {
	// PID is the server process; Child its child process (0 without
	// one).
	PID, Child int
	// Port is the loopback port it listens on.
	Port int
}

// StartEngine runs the test binary as the server spec describes. The
// process ends with the test.
func StartEngine(t testing.TB, spec EngineSpec) Engine {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), envEngine+"="+string(spec.Kind), envEnginePage+"="+abs(t, spec.Page), envEnginePath+"="+spec.Path)
	if spec.Child {
		env = append(env, envEngineChild+"=1")
	}
	cmd := &exec.Cmd{Path: exe, Args: strings.Fields(strings.ReplaceAll(spec.Argv, "{port}", strconv.Itoa(port))),
		ExtraFiles: []*os.File{f}, Env: env}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// From here only the server holds the socket.
	l.Close()
	f.Close()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	e := Engine{PID: cmd.Process.Pid, Port: port}
	if spec.Child {
		line := make([]byte, 32)
		n, _ := io.ReadAtLeast(stdout, line, 1)
		e.Child, _ = strconv.Atoi(strings.TrimSpace(string(line[:n])))
		if e.Child == 0 {
			t.Fatalf("engine %q: no child pid on its stdout", spec.Argv)
		}
	}
	return e
}

// MainIfEngine serves as a test engine and exits when the test binary was
// started as one by StartEngine; otherwise it returns at once. replica
// makes the handler of EngineSim (testutil cannot import the simulator,
// whose own tests use testutil).
func MainIfEngine(replica func() http.Handler) {
	kind := EngineKind(os.Getenv(envEngine))
	if kind == "" {
		return
	}
	os.Exit(runEngine(kind, replica))
}

func runEngine(kind EngineKind, replica func() http.Handler) int {
	if kind == engineChild {
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	if os.Getenv(envEngineChild) == "1" {
		exe, _ := os.Executable()
		child := &exec.Cmd{Path: exe, Args: []string{"VLLM::EngineCore"},
			Env: append(os.Environ(), envEngine+"="+string(engineChild)), Stdin: os.Stdin} // ends with ours
		if err := child.Start(); err != nil {
			return 3
		}
		_, _ = io.WriteString(os.Stdout, strconv.Itoa(child.Process.Pid)+"\n")
	}
	h, err := engineHandler(kind, replica)
	if err != nil {
		return 4
	}
	l, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return 2
	}
	go func() { _ = http.Serve(l, h) }()
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func engineHandler(kind EngineKind, replica func() http.Handler) (http.Handler, error) {
	switch kind {
	case EngineSim:
		return replica(), nil
	case EnginePage:
		page, err := os.ReadFile(os.Getenv(envEnginePage))
		if err != nil {
			return nil, err
		}
		path := os.Getenv(envEnginePath)
		if path == "" {
			path = "/metrics"
		}
		mux := http.NewServeMux()
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(page) })
		return mux, nil
	case EngineWeb:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "<!DOCTYPE html><html><body>Directory listing</body></html>\n")
		}), nil
	}
	return http.NotFoundHandler(), nil
}
