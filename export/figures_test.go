package export

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/record"
	"github.com/vtop-dev/vtop/sim"
	"github.com/vtop-dev/vtop/testutil/simrec"
)

// TestFigures measures bytes per replica-hour of a recording against
// Prometheus's blocks for the same samples: one simulated hour at 1 s of
// a one-engine and an eight-engine V1 replica. It takes about a minute,
// so it runs only with VTOP_FIGURES set.
func TestFigures(t *testing.T) {
	if os.Getenv("VTOP_FIGURES") == "" {
		t.Skip("set VTOP_FIGURES=1 to measure the recording's size against Prometheus's blocks")
	}
	promtool := promtoolPath(t)
	for _, c := range []struct {
		name    string
		engines int
	}{{"one engine", 1}, {"eight engines", 8}} {
		t.Run(c.name, func(t *testing.T) {
			path := simrec.Record(t, sim.Options{Replicas: 1, Scenario: sim.Healthy, Seed: 1,
				Configure: func(_ int, rc *sim.ReplicaConfig) { rc.Engines = c.engines }}, 3600, time.Second)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := record.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			dir, stats := blocks(t, promtool, rec)
			tsdb := dirSize(t, dir)
			t.Logf("%s: recording %d bytes per replica-hour; Prometheus blocks %d bytes (%d series, %d samples); ratio %.2f",
				c.name, st.Size(), tsdb, stats.Series, stats.Samples, float64(st.Size())/float64(tsdb))
		})
	}
}

// dirSize adds up the sizes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
