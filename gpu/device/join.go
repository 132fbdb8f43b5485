package device

import (
	"net"
	"slices"
	"strings"
)

// Replica is what the join knows of one replica.
type Replica struct {
	// Target is the replica's name (scrape.Target.Name): what a joined
	// GPU's Replica says.
	Target string
	// Host is the host of its address ("gpu-a" of gpu-a:8000); loopback
	// names and addresses mean this host.
	Host string
	// Pod and Namespace name its Kubernetes pod, when the source knows it.
	Pod, Namespace string
	// PID is its server process, when local discovery found it.
	PID int
}

// Join sets each GPU's Replica where the evidence names exactly one
// replica, and leaves it "" (the GPU is shown under its host) otherwise.
// The evidence, strongest first:
//   - the same pod: the exporter's workload pod is the replica's;
//   - the same process: a compute process on the GPU is the replica's
//     server process or one of its descendants (vLLM's engine cores and
//     workers), from parents (pid → parent pid);
//   - the same host, when only one replica runs there and no compute
//     process on the GPU contradicts it.
//
// localHost is this host's name, which loopback targets stand for.
func Join(gs []GPU, replicas []Replica, parents map[int]int, localHost string) {
	for i := range gs {
		gs[i].Replica = joinOne(gs[i], replicas, parents, localHost)
	}
}

func joinOne(g GPU, replicas []Replica, parents map[int]int, localHost string) string {
	if g.Pod != "" {
		return only(replicas, func(r Replica) bool {
			return r.Pod == g.Pod && (r.Namespace == "" || g.Namespace == "" || r.Namespace == g.Namespace)
		})
	}
	if len(g.PIDs) > 0 && slices.ContainsFunc(replicas, func(r Replica) bool { return r.PID > 0 }) {
		// the processes on the GPU decide, even when none is a replica's
		return only(replicas, func(r Replica) bool {
			return r.PID > 0 && slices.ContainsFunc(g.PIDs, func(p int) bool { return Descends(p, r.PID, parents) })
		})
	}
	host := canonicalHost(g.Host, localHost)
	if host == "" {
		return ""
	}
	return only(replicas, func(r Replica) bool { return sameHost(canonicalHost(r.Host, localHost), host) })
}

// only returns the target of the one replica that matches, or "".
func only(replicas []Replica, match func(Replica) bool) string {
	found := ""
	for _, r := range replicas {
		if !match(r) {
			continue
		}
		if found != "" && found != r.Target {
			return "" // two candidates: no guess
		}
		found = r.Target
	}
	return found
}

// Descends reports whether pid is root or one of its descendants, walking
// parents (pid → parent pid); a loop in the map ends the walk.
func Descends(pid, root int, parents map[int]int) bool {
	for range len(parents) + 1 {
		if pid == root {
			return true
		}
		pp, ok := parents[pid]
		if !ok || pp == pid || pp <= 0 {
			return false
		}
		pid = pp
	}
	return false
}

// canonicalHost lowercases a host name and maps loopback to localHost.
func canonicalHost(h, localHost string) string {
	h = strings.ToLower(strings.Trim(h, "[]"))
	if h == "localhost" {
		return strings.ToLower(localHost)
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return strings.ToLower(localHost)
	}
	return h
}

// sameHost compares host names; a short name matches a qualified one with
// that first label (the resolver's search domain), never two different
// domains.
func sameHost(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	if net.ParseIP(a) != nil || net.ParseIP(b) != nil {
		return false
	}
	sa, sb := strings.Contains(a, "."), strings.Contains(b, ".")
	switch {
	case sa && !sb:
		return strings.HasPrefix(a, b+".")
	case sb && !sa:
		return strings.HasPrefix(b, a+".")
	}
	return false
}
