package device

import "testing"

func TestJoin(t *testing.T) {
	parents := map[int]int{
		1000: 1, 1001: 1000, 1002: 1001, // server 1000 → engine core 1001 → worker 1002
		2000: 1, 2001: 2000,
		3000: 1,
		4000: 4000, // a loop must not hang the walk
	}
	gpu := func(host, pod string, pids ...int) GPU {
		g := Unknown()
		g.Host, g.Pod, g.PIDs = host, pod, pids
		return g
	}
	a := Replica{Target: "gpu-a:8000", Host: "gpu-a"}
	b := Replica{Target: "gpu-b:8000", Host: "gpu-b.example.com"}
	b2 := Replica{Target: "gpu-b:8001", Host: "gpu-b"}
	local1 := Replica{Target: "127.0.0.1:8000", Host: "127.0.0.1", PID: 1000}
	local2 := Replica{Target: "127.0.0.1:8001", Host: "127.0.0.1", PID: 2000}
	podA := Replica{Target: "10.1.2.3:8000", Host: "10.1.2.3", Pod: "vllm-0", Namespace: "llm"}
	podB := Replica{Target: "10.1.2.4:8000", Host: "10.1.2.4", Pod: "vllm-1", Namespace: "llm"}

	tests := []struct {
		name     string
		g        GPU
		replicas []Replica
		want     string
	}{
		{"same host", gpu("gpu-a", ""), []Replica{a, b}, "gpu-a:8000"},
		{"host case and search domain", gpu("GPU-B", ""), []Replica{a, b}, "gpu-b:8000"},
		{"two replicas on the host: no guess", gpu("gpu-b", ""), []Replica{b, b2}, ""},
		{"other host", gpu("gpu-c", ""), []Replica{a, b}, ""},
		{"different domains", gpu("gpu-a.other.net", ""), []Replica{{Target: "x", Host: "gpu-a.example.com"}}, ""},
		{"unknown host", gpu("", ""), []Replica{a}, ""},
		{"IP target, named exporter", gpu("gpu-node-1", ""), []Replica{podA}, ""},
		{"same pod", gpu("dcgm-exporter-x", "vllm-1"), []Replica{podA, podB}, "10.1.2.4:8000"},
		{"pod of no replica", gpu("gpu-a", "trainer-0"), []Replica{a}, ""},
		{"the server's worker", gpu("me", "", 1002), []Replica{local1, local2}, "127.0.0.1:8000"},
		{"the server itself", gpu("me", "", 2000), []Replica{local1, local2}, "127.0.0.1:8001"},
		{"a stranger's process", gpu("me", "", 3000), []Replica{local1}, ""},
		{"processes of two servers", gpu("me", "", 1002, 2001), []Replica{local1, local2}, ""},
		{"pid loop", gpu("me", "", 4000), []Replica{local1}, ""},
		{"loopback target, no process known", gpu("me", ""), []Replica{{Target: "localhost:8000", Host: "localhost"}}, "localhost:8000"},
		{"loopback, two servers", gpu("me", ""), []Replica{local1, local2}, ""},
	}
	for _, tt := range tests {
		gs := []GPU{tt.g}
		Join(gs, tt.replicas, parents, "me")
		if gs[0].Replica != tt.want {
			t.Errorf("%s: joined %q, want %q", tt.name, gs[0].Replica, tt.want)
		}
	}
}

func TestDescends(t *testing.T) {
	parents := map[int]int{2: 1, 3: 2, 4: 3, 9: 8, 8: 9}
	tests := []struct {
		pid, root int
		want      bool
	}{{4, 1, true}, {4, 4, true}, {1, 4, false}, {9, 1, false}, {5, 1, false}}
	for _, tt := range tests {
		if got := Descends(tt.pid, tt.root, parents); got != tt.want {
			t.Errorf("Descends(%d, %d) = %v", tt.pid, tt.root, got)
		}
	}
}
