package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vtop-dev/vtop/analysis"
)

// Flags and targets mix in any order, as in other command-line tools: a
// flag's value is never taken for a target, "--" ends the flags, and a
// sub-command's own arguments mix with its flags alike.
func TestFlagsAndTargetsMix(t *testing.T) {
	type parsed struct {
		command string
		targets []string
		caFile  string
		once    bool
	}
	read := func(c *cli, command string) parsed {
		p := parsed{command: command}
		switch {
		case strings.HasPrefix(command, "record"):
			p.targets, p.caFile = c.Record.Targets, c.Record.CAFile
		case strings.HasPrefix(command, "analyze"):
			p.targets = []string{filepath.Base(c.Analyze.Before), filepath.Base(c.Analyze.After)}
		default:
			p.targets, p.caFile, p.once = c.Watch.Targets, c.Watch.CAFile, c.Watch.Once
		}
		if p.caFile != "" {
			p.caFile = filepath.Base(p.caFile) // kong makes it absolute
		}
		return p
	}
	tests := []struct {
		name string
		args []string
		want parsed
	}{
		{"flags first", []string{"--ca-file", "ca.pem", "t1", "t2"},
			parsed{"watch <target>", []string{"t1", "t2"}, "ca.pem", false}},
		{"a flag between targets", []string{"t1", "--ca-file", "ca.pem", "t2"},
			parsed{"watch <target>", []string{"t1", "t2"}, "ca.pem", false}},
		{"flags between and after, = and boolean", []string{"t1", "--once", "t2", "--ca-file=ca.pem", "t3"},
			parsed{"watch <target>", []string{"t1", "t2", "t3"}, "ca.pem", true}},
		{"short flag with its value", []string{"t1", "-f", "targets.txt", "t2"},
			parsed{"watch <target>", []string{"t1", "t2"}, "", false}},
		{"after --, all targets", []string{"t1", "--once", "--", "t2"},
			parsed{"watch <target>", []string{"t1", "t2"}, "", true}},
		{"the watch command named", []string{"watch", "t1", "--once", "t2"},
			parsed{"watch <target>", []string{"t1", "t2"}, "", true}},
		{"record: a flag between targets", []string{"record", "t1", "-o", "out.rec", "t2", "--ca-file", "ca.pem", "t3"},
			parsed{"record <target>", []string{"t1", "t2", "t3"}, "ca.pem", false}},
		{"analyze: a flag between the pages", []string{"analyze", "a.txt", "--seconds", "60", "b.txt"},
			parsed{"analyze <before> <after>", []string{"a.txt", "b.txt"}, "", false}},
	}
	// The files the flags and pages name exist (kong checks).
	t.Chdir(t.TempDir())
	for _, name := range []string{"ca.pem", "targets.txt", "a.txt", "b.txt"} {
		if err := os.WriteFile(name, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range tests {
		var c cli
		parser, err := newParser(&c)
		if err != nil {
			t.Fatal(err)
		}
		kctx, err := parse(parser, tt.args)
		if err != nil {
			t.Errorf("%s: %q: %v", tt.name, tt.args, err)
			continue
		}
		got := read(&c, kctx.Command())
		if got.command != tt.want.command || !slices.Equal(got.targets, tt.want.targets) || got.caFile != tt.want.caFile || got.once != tt.want.once {
			t.Errorf("%s: %q parsed as %+v, want %+v", tt.name, tt.args, got, tt.want)
		}
	}
}

// The flags' defaults are the analysis's (analysis.DefaultConfig) in every
// command that has them: a default changed in its home changes them all.
func TestFlagDefaultsAreTheAnalysisDefaults(t *testing.T) {
	d := analysis.DefaultConfig()
	t.Chdir(t.TempDir())
	for _, name := range []string{"a.rec", "b.rec"} {
		if err := os.WriteFile(name, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	parsed := func(args ...string) *cli {
		var c cli
		parser, err := newParser(&c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parse(parser, args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return &c
	}
	w, r, rec, diff := parsed().Watch, parsed("rules").Rules, parsed("record", "-o", "x.rec").Record, parsed("diff", "a.rec", "b.rec").Diff
	got := map[string][2]any{
		"watch --window":              {w.Window, d.Window},
		"watch --slo-ttft":            {w.SLOTTFT, d.SLOTTFT},
		"watch --slo-itl":             {w.SLOITL, d.SLOITL},
		"watch --target-queue-time":   {w.TargetQueueTime, d.TargetQueueTime},
		"rules --window":              {r.Window, d.Window},
		"rules --slo-ttft":            {r.SLOTTFT, d.SLOTTFT},
		"rules --slo-itl":             {r.SLOITL, d.SLOITL},
		"rules --hysteresis":          {r.Hysteresis, d.Hysteresis},
		"record --window":             {rec.Window, d.Window},
		"record --slo-ttft":           {rec.SLOTTFT, d.SLOTTFT},
		"diff --slo-ttft":             {diff.SLOTTFT, d.SLOTTFT},
		"analyze --target-queue-time": {parsed("analyze", "a.rec", "b.rec").Analyze.TargetQueueTime, d.TargetQueueTime},
	}
	for flag, v := range got {
		if v[0] != v[1] {
			t.Errorf("%s defaults to %v, analysis.DefaultConfig to %v", flag, v[0], v[1])
		}
	}
}

// The documents state the defaults the flags have (analysis.DefaultConfig):
// a default changed in its home fails here until they say it too.
func TestDocumentsStateTheAnalysisDefaults(t *testing.T) {
	d := analysis.DefaultConfig()
	docs := map[string][]string{
		"docs/flags.md": {
			fmt.Sprintf("| `--window` | %s |", d.Window),
			fmt.Sprintf("| `--slo-ttft`, `--slo-itl` | %s, %s |", d.SLOTTFT, d.SLOITL),
			fmt.Sprintf("| `--target-queue-time` | %s |", d.TargetQueueTime),
		},
		"README.md":          {fmt.Sprintf("# --slo-ttft %s --slo-itl %s --window %s,", d.SLOTTFT, d.SLOITL, d.Window)},
		"docs/prometheus.md": {fmt.Sprintf("`--window` (%s)", d.Window)},
		"docs/recordings.md": {fmt.Sprintf("(`--window`, %g s)", d.Window.Seconds())},
		"docs/verdicts.md":   {fmt.Sprintf("(`--window`, %g s by default)", d.Window.Seconds())},
	}
	for name, says := range docs {
		doc, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range says {
			if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), text) {
				t.Errorf("%s does not say %q", name, text)
			}
		}
	}
}
