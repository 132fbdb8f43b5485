package command

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/analysis"
)

// defaultRules are the flags' defaults: the analysis's thresholds
// (FlagVars) and the rules' own.
func defaultRules() Rules {
	d := analysis.DefaultConfig()
	return Rules{SLOTTFT: d.SLOTTFT, SLOITL: d.SLOITL, Window: d.Window, Hysteresis: d.Hysteresis,
		EvaluationInterval: 5 * time.Second, GroupBy: []string{"instance"}, Format: "prometheus", KeepFiringFor: true}
}

// TestRulesOutput: -o writes what standard output gets; settings the rules
// cannot be written with are usage errors.
func TestRulesOutput(t *testing.T) {
	var stdout bytes.Buffer
	r := defaultRules()
	if err := r.Run(&Env{Stdout: &stdout}); err != nil {
		t.Fatal(err)
	}
	r.Output = filepath.Join(t.TempDir(), "vtop.yml")
	if err := r.Run(&Env{Stdout: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(r.Output)
	if err != nil || !bytes.Equal(file, stdout.Bytes()) || !strings.Contains(stdout.String(), "alert: VtopFull") {
		t.Fatalf("-o wrote %d bytes (%v), standard output %d", len(file), err, stdout.Len())
	}
	for _, edit := range []func(*Rules){
		func(r *Rules) { r.Window = 5 * time.Second },
		func(r *Rules) { r.GroupBy = []string{"pod-name"} },
		func(r *Rules) { r.Format = "yaml" },
	} {
		r := defaultRules()
		edit(&r)
		if err := r.Run(&Env{Stdout: &bytes.Buffer{}}); ExitCode(err) != ExitUsage {
			t.Errorf("%+v: got %v, want a usage error", r, err)
		}
	}
}
