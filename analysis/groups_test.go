package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// TestGroupsByModelAndRole: replicas of two models are two groups, each
// with its own totals, worst replica and advice; one model's queue adds
// no replica to the other. A replica that never answered joins the only
// model there is.
func TestGroupsByModelAndRole(t *testing.T) {
	withModel := func(samples []catalogue.Sample, model string, role catalogue.Role) []catalogue.Sample {
		for i := range samples {
			samples[i].Model, samples[i].Role = model, role
		}
		return samples
	}
	full, now := fullBatch(80)
	s := newServer()
	s.running, s.kv = 20, 0.2
	calm, _ := run(s, 10, time.Second, finishing(2, chat))
	s = newServer()
	s.running, s.kv = 15, 0.2
	prefill, _ := run(s, 10, time.Second, finishing(2, chat))
	unified, _ := run(newServer(), 10, time.Second)

	rep := Analyze(now, []catalogue.Readings{
		{Target: "llama-1", Samples: withModel(full, "llama", catalogue.RoleUnknown)},
		{Target: "qwen-1", Samples: withModel(calm, "qwen", catalogue.RoleUnknown)},
		{Target: "qwen-p", Samples: withModel(prefill, "qwen", catalogue.RolePrefill)},
		{Target: "qwen-u", Samples: withModel(unified, "qwen", catalogue.RoleUnified)},
	}, DefaultConfig(), nil)
	groups := rep.Fleet.Groups
	if len(groups) != 3 {
		t.Fatalf("%d groups, want 3 (llama; qwen; qwen prefill): %+v", len(groups), groups)
	}
	llama, qwen, qwenPrefill := groups[0], groups[1], groups[2]
	if llama.Name() != "llama" || qwen.Name() != "qwen" || qwenPrefill.Name() != "qwen (prefill)" {
		t.Errorf("names %q %q %q", llama.Name(), qwen.Name(), qwenPrefill.Name())
	}
	if strings.Join(qwen.Targets, " ") != "qwen-1 qwen-u" {
		t.Errorf("qwen targets %v: a unified server groups with the ones that state no role", qwen.Targets)
	}
	if llama.Worst != "llama-1" || llama.States["full"] != 1 || llama.Waiting != 80 {
		t.Errorf("llama group: worst %q, states %v, waiting %v", llama.Worst, llama.States, llama.Waiting)
	}
	if qwen.Waiting != 0 || qwen.Running != 20 {
		t.Errorf("qwen group: waiting %v, running %v; want 0, 20", qwen.Waiting, qwen.Running)
	}
	if !strings.HasPrefix(qwen.Advice.Recommendation, "keep 2 replicas") {
		t.Errorf("qwen advice %q: the llama queue must not add qwen replicas", qwen.Advice.Recommendation)
	}
	if rep.Fleet.Advice.Basis != "groups" || len(rep.Fleet.Advice.Summary) != 4 {
		t.Errorf("fleet advice %q basis %q, summary %q", rep.Fleet.Advice.Recommendation, rep.Fleet.Advice.Basis, rep.Fleet.Advice.Summary)
	}
	if llama.Groups != nil {
		t.Error("a group has no groups of its own")
	}

	// One model: one group, the fleet itself; a replica that never
	// answered belongs to it.
	one := Analyze(now, []catalogue.Readings{
		{Target: "qwen-1", Samples: withModel(calm, "qwen", catalogue.RoleUnknown)},
		{Target: "silent", Samples: []catalogue.Sample{{Time: now, Err: "connection refused"}}},
	}, DefaultConfig(), nil)
	if g := one.Fleet.Groups; len(g) != 1 || g[0].Model != "qwen" || len(g[0].Targets) != 2 || g[0].Replicas != 2 {
		t.Errorf("one model: groups %+v", g)
	}
	if one.Fleet.Advice.Basis == "groups" {
		t.Error("one group: the fleet's own advice")
	}
}

// TestSoleGroup: a fleet is of one group when at most one model and role
// is said, the replicas that said none joining it, a unified server
// counted as one that does not say its role; and fleetGroups then makes
// that one group of every replica, else one group per key.
func TestSoleGroup(t *testing.T) {
	type rep struct {
		model string
		role  catalogue.Role
	}
	silent := rep{}
	a, b := rep{"a", catalogue.RoleUnknown}, rep{"b", catalogue.RoleUnknown}
	aUnified, aPrefill := rep{"a", catalogue.RoleUnified}, rep{"a", catalogue.RolePrefill}
	tests := []struct {
		name   string
		reps   []rep
		want   groupKey
		wantOK bool
	}{
		{"no replica", nil, groupKey{}, true},
		{"none said its model", []rep{silent, silent}, groupKey{}, true},
		{"one model", []rep{a, a}, groupKey{"a", catalogue.RoleUnknown}, true},
		{"the silent join the one model", []rep{silent, a, silent}, groupKey{"a", catalogue.RoleUnknown}, true},
		{"unified is no role", []rep{a, aUnified}, groupKey{"a", catalogue.RoleUnknown}, true},
		{"a silent prefill group", []rep{aPrefill, silent}, groupKey{"a", catalogue.RolePrefill}, true},
		{"two models", []rep{a, b}, groupKey{}, false},
		{"two models and the silent", []rep{silent, a, silent, b}, groupKey{}, false},
		{"one model, two roles", []rep{a, aPrefill}, groupKey{}, false},
	}
	cfg := DefaultConfig()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reps := make([]ReplicaReport, len(tt.reps))
			for i, r := range tt.reps {
				reps[i] = ReplicaReport{Target: fmt.Sprint("r", i), Model: r.model, Role: r.role, Figures: naFigures()}
			}
			got, ok := soleGroup(reps)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("soleGroup = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
			ff := fleetFigures(reps, cfg, t0, nil)
			fleetGroups(&ff, reps, cfg, t0, nil)
			switch {
			case ok && (len(ff.Groups) != 1 || ff.Groups[0].Model != got.model || ff.Groups[0].Role != got.role ||
				len(ff.Groups[0].Targets) != len(reps)):
				t.Errorf("one group %v: groups %+v", got, ff.Groups)
			case !ok && len(ff.Groups) < 2:
				t.Errorf("several groups: groups %+v", ff.Groups)
			}
		})
	}
}
