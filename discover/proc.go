package discover

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"net"
	"slices"
	"strconv"
	"strings"
)

// socket is one listening TCP socket of /proc/net/tcp or tcp6.
type socket struct {
	ip    net.IP
	port  int
	inode uint64
}

// tcpListen is the st value of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// errNoProc says the system has no Linux /proc (macOS, a locked-down
// container): discovery falls back to the default target.
var errNoProc = errors.New("no /proc/net/tcp on this system")

// listeningSockets reads the listening TCP sockets of both families.
func listeningSockets(proc fs.FS) ([]socket, error) {
	var out []socket
	found := false
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		b, err := fs.ReadFile(proc, name)
		if err != nil {
			continue // tcp6 is absent when IPv6 is off
		}
		found = true
		out = append(out, parseNetTCP(string(b))...)
	}
	if !found {
		return nil, errNoProc
	}
	return out, nil
}

// parseNetTCP reads the LISTEN rows of one /proc/net/tcp{,6} table.
func parseNetTCP(table string) []socket {
	var out []socket
	sc := bufio.NewScanner(strings.NewReader(table))
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		addr, port, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		ip := parseHexIP(addr)
		p, err1 := strconv.ParseUint(port, 16, 16)
		inode, err2 := strconv.ParseUint(f[9], 10, 64)
		if ip == nil || err1 != nil || err2 != nil || inode == 0 {
			continue
		}
		out = append(out, socket{ip: ip, port: int(p), inode: inode})
	}
	return out
}

// parseHexIP decodes the kernel's address: 32-bit words printed as hex in
// the host's byte order.
func parseHexIP(s string) net.IP {
	raw, err := hex.DecodeString(s)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return ip
}

// owners maps socket inodes to the processes holding them, and counts the
// processes whose descriptors could not be read (other users' when vtop
// is not root).
type owners struct {
	byInode map[uint64][]int
	denied  int
}

// socketOwners walks /proc/PID/fd for links "socket:[inode]" to the
// wanted inodes.
func socketOwners(proc fs.FS, wanted map[uint64]bool) owners {
	o := owners{byInode: map[uint64][]int{}}
	for _, pid := range pids(proc) {
		dir := strconv.Itoa(pid) + "/fd"
		fds, err := fs.ReadDir(proc, dir)
		if errors.Is(err, fs.ErrPermission) {
			o.denied++
			continue
		}
		for _, fd := range fds {
			link, err := fs.ReadLink(proc, dir+"/"+fd.Name())
			if err != nil {
				continue
			}
			if ino, ok := socketInode(link); ok && wanted[ino] {
				o.byInode[ino] = append(o.byInode[ino], pid)
			}
		}
	}
	return o
}

func socketInode(link string) (uint64, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64)
	return n, err == nil
}

// pids lists the processes of /proc.
func pids(proc fs.FS) []int {
	ents, err := fs.ReadDir(proc, ".")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// cmdline returns a process's argv ("" arguments kept).
func cmdline(proc fs.FS, pid int) []string {
	b, err := fs.ReadFile(proc, strconv.Itoa(pid)+"/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// Parents maps every visible process to its parent, from /proc/PID/stat:
// what the GPU join walks to find a server's engine cores and workers.
func Parents(proc fs.FS) map[int]int {
	out := map[int]int{}
	for _, pid := range pids(proc) {
		if pp, ok := parentOf(proc, pid); ok {
			out[pid] = pp
		}
	}
	return out
}

// parentOf reads the ppid of /proc/PID/stat: "pid (comm) state ppid …",
// where comm may hold spaces and parentheses, so fields are counted
// after the last ')'.
func parentOf(proc fs.FS, pid int) (int, bool) {
	b, err := fs.ReadFile(proc, strconv.Itoa(pid)+"/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

// Listeners maps each of ports to the process listening on it on this
// host, for targets given by hand on loopback: their GPUs are then the
// ones their process tree computes on, as for servers discovery finds. A
// port whose process cannot be attributed (another user's) or that
// nothing listens on is left out; so is every port without /proc.
func Listeners(proc fs.FS, ports []int) map[int]int {
	out := map[int]int{}
	if len(ports) == 0 {
		return out
	}
	socks, err := listeningSockets(proc)
	if err != nil {
		return out
	}
	wanted := map[uint64]bool{}
	for _, s := range socks {
		if slices.Contains(ports, s.port) {
			wanted[s.inode] = true
		}
	}
	if len(wanted) == 0 {
		return out
	}
	own := socketOwners(proc, wanted)
	for _, s := range socks {
		if !wanted[s.inode] {
			continue
		}
		if pid := holder(proc, own.byInode[s.inode]); pid != 0 {
			out[s.port] = pid
		}
	}
	return out
}
