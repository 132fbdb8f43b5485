package discover

import (
	"bytes"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/sim"
)

// The test binary doubles as the servers discovery must find: re-executed
// under an engine's command line (argv[0] "vllm", …), it serves on the
// listening socket it inherits as fd 3 and exits when its stdin closes.
const (
	envHelper     = "VTOP_DISCOVER_HELPER" // what to serve: sim, page, refuse, html, child
	envHelperPage = "VTOP_DISCOVER_PAGE"   // the page file of "page"
	envHelperPath = "VTOP_DISCOVER_PATH"   // where "page" serves it (default /metrics)
	envHelperKids = "VTOP_DISCOVER_CHILD"  // "1": start a child process first, as vLLM starts its engine core
)

func TestMain(m *testing.M) {
	if kind := os.Getenv(envHelper); kind != "" {
		os.Exit(runHelper(kind))
	}
	os.Exit(m.Run())
}

func runHelper(kind string) int {
	if kind == "child" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	if os.Getenv(envHelperKids) == "1" {
		exe, _ := os.Executable()
		child := &exec.Cmd{Path: exe, Args: []string{"VLLM::EngineCore"}, Env: append(os.Environ(), envHelper+"=child"),
			Stdin: os.Stdin} // ends with ours
		if err := child.Start(); err != nil {
			return 3
		}
	}
	l, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return 2
	}
	go func() { _ = http.Serve(l, handler(kind)) }()
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func handler(kind string) http.Handler {
	switch kind {
	case "sim":
		f, err := sim.NewFleet(sim.Options{Replicas: 1})
		if err != nil {
			panic(err)
		}
		return f.Replicas()[0].Handler()
	case "page":
		page, err := os.ReadFile(os.Getenv(envHelperPage))
		if err != nil {
			panic(err)
		}
		path := os.Getenv(envHelperPath)
		if path == "" {
			path = "/metrics"
		}
		mux := http.NewServeMux()
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(page) })
		return mux
	case "html":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "<!DOCTYPE html><html><body>Directory listing</body></html>\n")
		})
	}
	return http.NotFoundHandler() // "refuse"
}

// helper is one running server process.
type helper struct {
	pid, port int
}

// startHelper runs the test binary as a server under the command line
// argv(port), listening on a loopback port it alone holds.
func startHelper(t *testing.T, kind string, argv func(port int) []string, env ...string) helper {
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
	cmd := &exec.Cmd{Path: exe, Args: argv(port), ExtraFiles: []*os.File{f},
		Env: append(os.Environ(), append(env, envHelper+"="+kind)...)}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// from here only the helper holds the socket
	l.Close()
	f.Close()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	return helper{pid: cmd.Process.Pid, port: port}
}

// argv builds a command line with the port in place of {port}.
func argv(words string) func(int) []string {
	return func(port int) []string {
		return strings.Fields(strings.ReplaceAll(words, "{port}", strconv.Itoa(port)))
	}
}

// onlyPorts is the system's /proc with the socket tables cut down to some
// ports, so a scan in a test probes its own servers, not the host's.
type onlyPorts struct {
	fs.FS
	ports []int
}

func (o onlyPorts) ReadFile(name string) ([]byte, error) {
	b, err := fs.ReadFile(o.FS, name)
	if err != nil || (name != "net/tcp" && name != "net/tcp6") {
		return b, err
	}
	var out bytes.Buffer
	for i, line := range strings.SplitAfter(string(b), "\n") {
		if i == 0 || o.keeps(line) {
			out.WriteString(line)
		}
	}
	return out.Bytes(), nil
}

func (o onlyPorts) keeps(line string) bool {
	f := strings.Fields(line)
	if len(f) < 2 {
		return false
	}
	_, hexPort, _ := strings.Cut(f[1], ":")
	p, err := strconv.ParseUint(hexPort, 16, 16)
	return err == nil && slices.Contains(o.ports, int(p))
}

func (o onlyPorts) ReadLink(name string) (string, error) { return fs.ReadLink(o.FS, name) }

func (o onlyPorts) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(o.FS, name) }

func (o onlyPorts) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(o.FS, name) }

// denyFD is the system's /proc where one process's descriptors cannot be
// read, as another user's cannot when vtop is not root.
type denyFD struct {
	fs.FS
	pid int
}

func (d denyFD) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == strconv.Itoa(d.pid)+"/fd" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return fs.ReadDir(d.FS, name)
}

func (d denyFD) ReadLink(name string) (string, error) { return fs.ReadLink(d.FS, name) }

func (d denyFD) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(d.FS, name) }
