package analysis

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vtop-dev/vtop/catalogue"
)

// fleetGroupsBefore is fleetGroups as it was, with a map of members for
// every fleet.
func fleetGroupsBefore(ff *FleetFigures, reps []ReplicaReport, cfg Config) {
	var keys []groupKey
	members := map[groupKey][]int{}
	for i := range reps {
		k := groupKey{reps[i].Model, reps[i].Role}
		if k.role == catalogue.RoleUnified {
			// A unified server does both phases, as one that does not
			// say its role.
			k.role = catalogue.RoleUnknown
		}
		if _, ok := members[k]; !ok {
			keys = append(keys, k)
		}
		members[k] = append(members[k], i)
	}
	if unknown, ok := members[groupKey{}]; ok && len(keys) == 2 {
		// Only one real group: the silent replicas are its own.
		other := keys[0]
		if other == (groupKey{}) {
			other = keys[1]
		}
		members[other] = append(members[other], unknown...)
		delete(members, groupKey{})
		keys = []groupKey{other}
	}
	if len(keys) <= 1 {
		g := FleetGroup{FleetFigures: *ff, Targets: targetsOf(reps, nil)}
		if len(keys) == 1 {
			g.Model, g.Role = keys[0].model, keys[0].role
		}
		g.Groups = nil
		ff.Groups = []FleetGroup{g}
		return
	}
	ff.Groups = make([]FleetGroup, 0, len(keys))
	for _, k := range keys {
		idx := members[k]
		subset := make([]ReplicaReport, len(idx))
		for j, i := range idx {
			subset[j] = reps[i]
		}
		ff.Groups = append(ff.Groups, FleetGroup{Model: k.model, Role: k.role, Targets: targetsOf(reps, idx),
			FleetFigures: fleetFigures(subset, cfg)})
	}
	ff.Advice = groupedAdvice(ff.Groups, ff.Advice)
}

// TestFleetGroupsAsBefore: fleets of one model, of several, and of
// replicas that have not said theirs, are grouped as they were.
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
		got, want := fleetFigures(reps, cfg), fleetFigures(reps, cfg)
		fleetGroups(&got, reps, cfg)
		fleetGroupsBefore(&want, reps, cfg)
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			t.Fatalf("replicas %+v:\n got %s\nwant %s", reps, g, w)
		}
	}
}
