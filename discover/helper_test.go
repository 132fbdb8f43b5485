package discover

import (
	"bytes"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// The test binary doubles as the servers discovery must find
// (testutil.StartEngine): re-executed under an engine's command line, it
// serves on a listening socket it alone holds.

func TestMain(m *testing.M) {
	testutil.MainIfEngine(simrec.OneReplica)
	os.Exit(m.Run())
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
