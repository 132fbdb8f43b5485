package command

import (
	"context"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/discover"
)

// With no target, a host where discovery finds no inference server (and
// nothing answers at vLLM's default port) is not a DOWN replica: vtop
// says what it looked for and how else to point it, and exits 3, nothing
// to judge. A scan that found nothing does not suggest the scan again.
func TestNothingFoundIsSaidWithTheWaysOut(t *testing.T) {
	const looked = "no inference server found on this host (looked for processes of vLLM, SGLang, TensorRT-LLM, TGI or llama.cpp among 12 listening sockets)"
	tests := []struct {
		name    string
		scan    bool
		want    []string
		wantNot string
	}{
		{"by process", false, []string{looked, "vtop HOST:PORT", "vtop -f targets.txt", "vtop --scan", "vtop --prometheus URL", "vtop --demo"}, ""},
		{"by scan", true, []string{looked, "vtop HOST:PORT", "vtop -f targets.txt", "vtop --demo"}, "--scan"},
	}
	for _, tt := range tests {
		w := &Watch{Scan: tt.scan, find: func(context.Context, discover.Options) discover.Result {
			return discover.Result{Summary: looked}
		}}
		targets, _, err := w.targets(context.Background())
		if err == nil || ExitCode(err) != ExitNoData {
			t.Fatalf("%s: targets %v, error %v (exit %d); want exit %d", tt.name, targets, err, ExitCode(err), ExitNoData)
		}
		msg := err.Error()
		for _, want := range tt.want {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q lacks %q", tt.name, msg, want)
			}
		}
		if tt.wantNot != "" && strings.Contains(msg, tt.wantNot) {
			t.Errorf("%s: message %q suggests %s again", tt.name, msg, tt.wantNot)
		}
	}
}
