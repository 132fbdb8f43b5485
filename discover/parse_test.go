package discover

import (
	"bytes"
	"net"
	"os"
	"testing"
	"testing/fstest"

	"github.com/vtop-dev/vtop/catalogue"
)

// Rows in the kernel's format (little-endian host), as /proc/net/tcp and
// tcp6 print them.
const netTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:7530 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1002 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F40 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 20 4 30 10 -1
   3: 0500000A:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0
`

const netTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000001000000:24E0 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2002 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000500000A:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2003 1 0000000000000000 100 0 0 10 0
`

func TestParseNetTCP(t *testing.T) {
	if !littleEndian() {
		t.Skip("the rows above are a little-endian host's")
	}
	socks, err := listeningSockets(fstest.MapFS{"net/tcp": {Data: []byte(netTCP)}, "net/tcp6": {Data: []byte(netTCP6)}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		addr  string
		inode uint64
	}{
		{"127.0.0.1:8000", 1001},  // 0.0.0.0:8000
		{"127.0.0.1:30000", 1002}, // 127.0.0.1:30000
		// row 2 is a connection, row 3 has no inode
		{"[::1]:8080", 2001},    // [::]:8080
		{"[::1]:9440", 2002},    // [::1]:9440
		{"10.0.0.5:3000", 2003}, // ::ffff:10.0.0.5
	}
	if len(socks) != len(want) {
		t.Fatalf("%d sockets: %+v", len(socks), socks)
	}
	for i, w := range want {
		if got := dialAddr(socks[i]); got != w.addr || socks[i].inode != w.inode {
			t.Errorf("socket %d: %s inode %d, want %s %d", i, got, socks[i].inode, w.addr, w.inode)
		}
	}
}

func littleEndian() bool {
	return parseHexIP("0100007F").Equal(net.IPv4(127, 0, 0, 1))
}

func TestClassify(t *testing.T) {
	tests := []struct {
		argv   []string
		engine string
		port   int
	}{
		{[]string{"vllm", "serve", "m", "--port", "8001"}, "vLLM", 8001},
		{[]string{"/usr/bin/python3", "/usr/local/bin/vllm", "serve", "m"}, "vLLM", 0},
		{[]string{"python", "-m", "vllm.entrypoints.openai.api_server", "--port=9000"}, "vLLM", 9000},
		{[]string{"vllm", "bench", "serve", "--port", "8000"}, "", 8000}, // a client of a server
		{[]string{"python3", "-m", "sglang.launch_server", "--port", "30001"}, "SGLang", 30001},
		{[]string{"trtllm-serve", "model"}, "TensorRT-LLM", 0},
		{[]string{"text-generation-launcher", "--port", "80"}, "TGI", 80},
		{[]string{"/app/llama-server", "-m", "x.gguf", "--port", "99999"}, "llama.cpp", 0},
		{[]string{"python3", "-m", "http.server", "8000"}, "", 0},
		{[]string{"VLLM::EngineCore"}, "", 0},
		{nil, "", 0},
	}
	for _, tt := range tests {
		if got := classify(tt.argv); got != tt.engine {
			t.Errorf("%q: engine %q, want %q", tt.argv, got, tt.engine)
		}
		if got := portFlag(tt.argv); got != tt.port {
			t.Errorf("%q: port %d, want %d", tt.argv, got, tt.port)
		}
	}
}

// TestPageEngineRealPages: each engine is recognised by its real page, and
// a page of no engine by none.
func TestPageEngineRealPages(t *testing.T) {
	tests := []struct {
		file, engine string
		cut          bool
	}{
		{"vllm-v0.29.0-trimmed.txt", "vLLM", false},
		{"sglang-via-dynamo.txt", "SGLang", false},
		{"trtllm-via-dynamo.txt", "TensorRT-LLM", false},
		{"trtllm-serve-excerpt.txt", "TensorRT-LLM", true},
		{"tgi-excerpt.txt", "TGI", false},
		{"llamacpp.txt", "llama.cpp", false},
		{"dcgm-excerpt.txt", "", false},
	}
	for _, tt := range tests {
		b, err := os.ReadFile("testdata/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		if tt.cut {
			b = b[:bytes.LastIndexByte(bytes.TrimRight(b, "\n"), '\n')+1]
		}
		if got := pageEngine(b, catalogue.EngineSignatures); got != tt.engine {
			t.Errorf("%s: %q, want %q", tt.file, got, tt.engine)
		}
	}
	// HELP and TYPE alone are no series
	if pageEngine([]byte("# TYPE vllm:num_requests_running gauge\n"), catalogue.EngineSignatures) != "" {
		t.Error("a TYPE line alone counted")
	}
}

func TestSummary(t *testing.T) {
	vllm := Server{Engine: "vLLM"}
	tests := []struct {
		servers []Server
		scan    bool
		denied  int
		want    string
	}{
		{[]Server{vllm, vllm, vllm}, false, 0, "3 vLLM servers found on this host"},
		{[]Server{vllm, {Engine: "SGLang"}}, false, 2, "1 vLLM server, 1 SGLang server found on this host; 2 processes of other users skipped (run as root or use --scan)"},
		{nil, false, 1, "no inference server found on this host (looked for processes of vLLM, SGLang, TensorRT-LLM, TGI or llama.cpp among 7 listening sockets); 1 process of other users skipped (run as root or use --scan)"},
		{nil, true, 1, "no inference server found on this host (looked for metrics pages among 7 listening sockets)"},
		{[]Server{vllm, {Engine: "SGLang", Target: "127.0.0.1:30000", Hint: "SGLang serves metrics only when started with --enable-metrics"}}, false, 0,
			"1 vLLM server, 1 SGLang server found on this host; 127.0.0.1:30000: SGLang serves metrics only when started with --enable-metrics"},
	}
	for _, tt := range tests {
		if got := summary(tt.servers, tt.scan, 7, tt.denied); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}
}

func TestParentOf(t *testing.T) {
	proc := fstest.MapFS{
		"10/stat": {Data: []byte("10 (python3) S 1 10 10 0 -1 4194304\n")},
		"11/stat": {Data: []byte("11 (VLLM::Engine) (x)) S 10 10 10 0 -1\n")},
		"12/stat": {Data: []byte("garbage")},
	}
	got := Parents(proc)
	if len(got) != 2 || got[10] != 1 || got[11] != 10 {
		t.Errorf("parents %v", got)
	}
}
