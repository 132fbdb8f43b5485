package command

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// --record through Prometheus is refused, naming $VTOP_PROMETHEUS only when
// the server came from it, not when the flag gave the same URL.
func TestRecordRefusalNamesTheEnvironmentWhenItGaveTheServer(t *testing.T) {
	t.Setenv(prometheusEnv, "http://prom:9090")
	for _, tt := range []struct {
		name string
		flag string
		want bool
	}{{"from the environment", "", true}, {"the same URL by the flag", "http://prom:9090", false}} {
		w := Watch{prometheusFlags: prometheusFlags{Prometheus: tt.flag}, recordFlags: recordFlags{Record: "x.vtrec"}}
		w.resolve()
		err := w.validateRecord(&w)
		if err == nil || strings.Contains(err.Error(), "from $"+prometheusEnv) != tt.want {
			t.Errorf("%s: %v; want the environment named: %t", tt.name, err, tt.want)
		}
	}
}

// A recording keeps the command line, but never a --header value: it may
// carry a credential.
func TestRedactArgs(t *testing.T) {
	in := []string{"--record", "f.vtrec", "--header", "Authorization: Bearer s3cret", "--header=X-Key: s3cret", "gpu-a:8000"}
	want := []string{"--record", "f.vtrec", "--header", "REDACTED", "--header=REDACTED", "gpu-a:8000"}
	if got := redactArgs(in); !slices.Equal(got, want) {
		t.Errorf("redactArgs = %q, want %q", got, want)
	}
}

func TestParseWindow(t *testing.T) {
	cases := []struct {
		in           string
		skip, length time.Duration
		ok           bool
	}{
		{"", 0, 0, true},
		{"5m", 0, 5 * time.Minute, true},
		{"2m:7m", 2 * time.Minute, 5 * time.Minute, true},
		{"2m:", 2 * time.Minute, 0, true},
		{":3m", 0, 3 * time.Minute, true},
		{"7m:2m", 0, 0, false},
		{"2m:2m", 0, 0, false},
		{"-1m:", 0, 0, false},
		{"soon", 0, 0, false},
		{"1m:later", 0, 0, false},
	}
	for _, c := range cases {
		skip, length, err := parseWindow(c.in)
		if (err == nil) != c.ok || skip != c.skip || length != c.length {
			t.Errorf("parseWindow(%q) = %v, %v, %v", c.in, skip, length, err)
		}
	}
}

func TestNextSpeed(t *testing.T) {
	cases := []struct{ cur, dir, want int }{
		{1, +1, 10}, {10, +1, 60}, {60, +1, 60}, {60, -1, 10}, {10, -1, 1}, {1, -1, 1}, {5, +1, 10}, {5, -1, 1},
	}
	for _, c := range cases {
		if got := nextSpeed(c.cur, c.dir); got != c.want {
			t.Errorf("nextSpeed(%d, %+d) = %d, want %d", c.cur, c.dir, got, c.want)
		}
	}
}
