package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
