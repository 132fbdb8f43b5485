package rules

import (
	"bytes"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// outputs are the rule files the tests hold: the defaults in each format
// (the goldens), and settings that change every part of the file.
var outputs = []struct {
	name   string
	format Format
	edit   func(*Options)
	golden bool
}{
	{"default", FormatPrometheus, func(*Options) {}, true},
	{"default-operator", FormatOperator, func(*Options) {}, true},
	// Debian's vmalert (1.79) does not read keep_firing_for.
	{"vmalert-no-keep", FormatVMAlert, func(o *Options) { o.KeepFiringFor = false }, true},
	{"pods-15s-no-keep", FormatPrometheus, func(o *Options) {
		o.GroupBy, o.EvaluationInterval, o.KeepFiringFor = []string{"namespace", "pod"}, 15*time.Second, false
		o.Config.Window, o.Config.Hysteresis, o.Config.SLOTTFT = 2*time.Minute, 3, 2500*time.Millisecond
	}, false},
	// The edges of what Validate accepts: promtool takes every file
	// vtop rules writes.
	{"the longest window and interval", FormatPrometheus, func(o *Options) {
		o.Config.Window, o.EvaluationInterval = math.MaxInt64, time.Duration(math.MaxInt64/thresholdReadings())
	}, false},
	{"the longest for: accepted", FormatPrometheus, func(o *Options) {
		e := o.EvaluationInterval
		o.Config.Hysteresis = int((math.MaxInt64-e/2)/e) + 1
	}, false},
	{"SLOs of 1ns and of 2562047h", FormatOperator, func(o *Options) {
		o.Config.SLOTTFT, o.Config.SLOITL = 1, 2562047*time.Hour
	}, false},
	{"labels named like PromQL's functions and aggregations", FormatPrometheus, func(o *Options) {
		o.GroupBy = []string{"sum", "rate", "count", "topk", "start", "end", "step", "le"}
	}, false},
}

// render writes one of the outputs.
func render(t *testing.T, format Format, edit func(*Options)) []byte {
	t.Helper()
	o := DefaultOptions()
	edit(&o)
	f, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, f, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestGolden holds the default rule files to testdata (go test ./rules
// -run TestGolden -update rewrites them).
func TestGolden(t *testing.T) {
	for _, out := range outputs {
		if !out.golden {
			continue
		}
		t.Run(out.name, func(t *testing.T) {
			got := render(t, out.format, out.edit)
			path := filepath.Join("testdata", out.name+".yml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rules written now; go test ./rules -run TestGolden -update rewrites it", path)
			}
		})
	}
}

// TestPromtoolCheck runs Prometheus's own checker on every output: the
// rule file, and the spec of the PrometheusRule object.
func TestPromtoolCheck(t *testing.T) {
	promtool := testutil.PrometheusTool(t, "promtool")
	for _, out := range outputs {
		if out.format == FormatVMAlert {
			continue // vmalert's params: is no Prometheus field (TestVMAlertCheck)
		}
		t.Run(out.name, func(t *testing.T) {
			text := render(t, out.format, out.edit)
			if out.format == FormatOperator {
				text = operatorSpec(t, text)
			}
			path := filepath.Join(t.TempDir(), "rules.yml")
			if err := os.WriteFile(path, text, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(promtool, "check", "rules", path)
			msg, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(msg), "SUCCESS") {
				t.Fatalf("promtool check rules: %v\n%s", err, msg)
			}
		})
	}
}

// TestVMAlertCheck runs vmalert's own checker (-dryRun, which refuses a
// field it does not know) on the outputs in vmalert's format.
func TestVMAlertCheck(t *testing.T) {
	vmalert := testutil.VMAlertBinary(t)
	for _, out := range outputs {
		if out.format != FormatVMAlert {
			continue
		}
		t.Run(out.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rules.yml")
			if err := os.WriteFile(path, render(t, out.format, out.edit), 0o644); err != nil {
				t.Fatal(err)
			}
			msg, err := exec.Command(vmalert, "-dryRun", "-rule="+path).CombinedOutput()
			if err != nil || strings.Contains(string(msg), "fatal") {
				t.Fatalf("vmalert -dryRun: %v\n%s", err, msg)
			}
		})
	}
}

// operatorSpec is the rule file inside a PrometheusRule object: its spec,
// unindented.
func operatorSpec(t *testing.T, text []byte) []byte {
	t.Helper()
	_, spec, ok := strings.Cut(string(text), "\nspec:\n")
	if !ok {
		t.Fatal("no spec: in the PrometheusRule object")
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(spec, "\n") {
		if line != "" && !strings.HasPrefix(line, "  ") {
			t.Fatalf("a line of the spec outside it: %q", line)
		}
		b.WriteString(strings.TrimPrefix(line, "  "))
	}
	return []byte(b.String())
}
