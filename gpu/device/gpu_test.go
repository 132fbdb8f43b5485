package device

import (
	"encoding/json"
	"math"
	"testing"
)

func TestJSONNulls(t *testing.T) {
	b, err := json.Marshal(Unknown())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"index", "uuid", "model", "mig", "utilization", "memory_used_bytes", "memory_total_bytes",
		"power_watts", "power_limit_watts", "temperature_celsius", "sm_clock_hz", "xid", "pod", "replica"}
	for _, k := range keys {
		v, ok := m[k]
		if !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if len(m) != len(keys)+2 { // plus host and source
		t.Errorf("%d keys: %v", len(m), m)
	}
}

func TestKeyAndMemoryShare(t *testing.T) {
	g := Unknown()
	g.Index = 3
	if g.Key() != "gpu3" {
		t.Errorf("key %q", g.Key())
	}
	g.UUID, g.MIGInstance = "GPU-a", 6
	if g.Key() != "GPU-a/6" {
		t.Errorf("key %q", g.Key())
	}
	if !math.IsNaN(g.MemoryShare()) {
		t.Error("share of unknown memory is known")
	}
	g.MemoryUsedBytes, g.MemoryTotalBytes = 30, 40
	if g.MemoryShare() != 0.75 {
		t.Errorf("share %v", g.MemoryShare())
	}
}
