package analysis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// soleGroupBefore is how fleetGroups found a fleet of one group before
// soleGroup: the groups' keys in order, the silent replicas joining the
// one real group when there is exactly one.
func soleGroupBefore(reps []ReplicaReport) (groupKey, bool) {
	var keys []groupKey
	for i := range reps {
		k := groupKey{reps[i].Model, reps[i].Role}
		if k.role == catalogue.RoleUnified {
			// A unified server does both phases, as one that does not
			// say its role.
			k.role = catalogue.RoleUnknown
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 2 && (keys[0] == groupKey{} || keys[1] == groupKey{}) {
		// Only one real group: the silent replicas are its own.
		if keys[0] == (groupKey{}) {
			keys = keys[1:]
		} else {
			keys = keys[:1]
		}
	}
	switch len(keys) {
	case 0:
		return groupKey{}, true
	case 1:
		return keys[0], true
	}
	return groupKey{}, false
}

// TestFleetGroupsAsBefore: fleets of one model, of several, and of
// replicas that have not said theirs, are found of one group or not as
// they were, and a fleet of one group is that group.
func TestFleetGroupsAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	models := []string{"", "", "a", "b"}
	roles := []catalogue.Role{catalogue.RoleUnknown, catalogue.RoleUnknown, catalogue.RoleUnified, catalogue.RolePrefill}
	cfg := DefaultConfig()
	for range 3000 {
		reps := make([]ReplicaReport, rng.IntN(5))
		for i := range reps {
			reps[i] = ReplicaReport{Target: fmt.Sprint("r", i), Model: models[rng.IntN(len(models))],
				Role: roles[rng.IntN(len(roles))], Figures: naFigures()}
			if rng.IntN(3) == 0 {
				reps[i].Model = "a"
			}
		}
		got, gotOK := soleGroup(reps)
		want, wantOK := soleGroupBefore(reps)
		if got != want || gotOK != wantOK {
			t.Fatalf("replicas %+v: soleGroup %v %v, before %v %v", reps, got, gotOK, want, wantOK)
		}
		ff := fleetFigures(reps, cfg, t0, nil)
		fleetGroups(&ff, reps, cfg, t0, nil)
		if gotOK && (len(ff.Groups) != 1 || ff.Groups[0].Model != got.model || ff.Groups[0].Role != got.role ||
			len(ff.Groups[0].Targets) != len(reps)) {
			t.Fatalf("replicas %+v of one group %v: groups %+v", reps, got, ff.Groups)
		}
		if !gotOK && len(ff.Groups) < 2 {
			t.Fatalf("replicas %+v of several groups: groups %+v", reps, ff.Groups)
		}
	}
}
