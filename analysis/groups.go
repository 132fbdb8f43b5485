package analysis

import (
	"fmt"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// FleetGroup is the replicas serving one model in one role: their totals,
// worst replica and scaling advice, apart from the rest of the fleet.
type FleetGroup struct {
	// Model is the model served; "" when no replica has said.
	Model string `json:"model"`
	// Role is the prefill/decode role of the group, when the pages say.
	Role catalogue.Role `json:"role,omitempty"`
	// Targets are the group's replicas, in the order of the report.
	Targets []string `json:"targets"`
	FleetFigures
}

// Name is how screens name the group: the model, and its role if any.
func (g *FleetGroup) Name() string {
	name := g.Model
	if name == "" {
		name = "model unknown"
	}
	if g.Role != catalogue.RoleUnknown {
		name += " (" + g.Role.String() + ")"
	}
	return name
}

// groupKey is what puts replicas in one group.
type groupKey struct {
	model string
	role  catalogue.Role
}

// fleetGroups groups the replicas by model and role and gives each group
// its own figures: a queue of one model is no reason to add replicas of
// another. A replica that has not said its model joins the only group, or
// one of its own among several. prev is the fleet's figures at the
// previous evaluation (nil for none).
func fleetGroups(ff *FleetFigures, reps []ReplicaReport, cfg Config, now time.Time, prev *FleetFigures) {
	if k, ok := soleGroup(reps); ok {
		// ff is fleetFigures', whose Groups are nil: none nests in the group.
		ff.Groups = []FleetGroup{{FleetFigures: *ff, Model: k.model, Role: k.role, Targets: targetsOf(reps)}}
		return
	}
	var keys []groupKey
	members := map[groupKey][]int{}
	for i := range reps {
		k := keyOf(&reps[i])
		if _, ok := members[k]; !ok {
			keys = append(keys, k)
		}
		members[k] = append(members[k], i)
	}
	ff.Groups = make([]FleetGroup, 0, len(keys))
	for _, k := range keys {
		idx := members[k]
		subset := make([]ReplicaReport, len(idx))
		for j, i := range idx {
			subset[j] = reps[i]
		}
		ff.Groups = append(ff.Groups, FleetGroup{Model: k.model, Role: k.role, Targets: targetsOf(subset),
			FleetFigures: fleetFigures(subset, cfg, now, previousGroup(prev, k))})
	}
	ff.Advice = groupedAdvice(ff.Groups, ff.Advice)
}

// previousGroup is the figures of group k at the previous evaluation.
func previousGroup(prev *FleetFigures, k groupKey) *FleetFigures {
	if prev == nil {
		return nil
	}
	for i := range prev.Groups {
		if g := &prev.Groups[i]; g.Model == k.model && g.Role == k.role {
			return &g.FleetFigures
		}
	}
	return nil
}

// keyOf is the group of a replica; a unified server is one of no role.
func keyOf(r *ReplicaReport) groupKey {
	k := groupKey{r.Model, r.Role}
	if k.role == catalogue.RoleUnified {
		k.role = catalogue.RoleUnknown
	}
	return k
}

// soleGroup returns the one group of reps besides the replicas that have
// not said their model (the zero key when none has), false for several.
func soleGroup(reps []ReplicaReport) (groupKey, bool) {
	var sole groupKey
	for i := range reps {
		switch k := keyOf(&reps[i]); {
		case k == groupKey{} || k == sole:
		case sole == groupKey{}:
			sole = k
		default:
			return groupKey{}, false
		}
	}
	return sole, true
}

// targetsOf lists the targets of reps.
func targetsOf(reps []ReplicaReport) []string {
	out := make([]string, len(reps))
	for i := range reps {
		out[i] = reps[i].Target
	}
	return out
}

// groupedAdvice is the fleet's advice when it serves several groups: the
// replicas each group's advice asks for, added up; the fleet-wide figures
// that would weigh one model's arrivals against another's queue are n/a.
func groupedAdvice(groups []FleetGroup, fleet Advice) Advice {
	a := Advice{
		Replicas: fleet.Replicas, Uncounted: fleet.Uncounted, Full: fleet.Full, CapacityReplicas: fleet.CapacityReplicas,
		TargetQueueSeconds: fleet.TargetQueueSeconds, HPAMetric: fleet.HPAMetric,
		ArrivalsPerSecond: fleet.ArrivalsPerSecond, RejectionsPerSecond: fleet.RejectionsPerSecond,
		QueueGrowthPerSecond: fleet.QueueGrowthPerSecond, SuccessfulPerSecond: fleet.SuccessfulPerSecond, WaitingTargetPerReplica: NA, MeanWaitingPerReplica: NA,
		ReplicasByQueue: NA, HPADesired: NA, CapacityPerReplica: NA, ReplicasByCapacity: NA,
		Add: NA, RecommendedReplicas: NA, BacklogClearSeconds: NA,
		Basis: "groups", Action: "keep",
	}
	var total, added sum
	known, addKnown := true, true
	parts := make([]string, 0, len(groups))
	for i := range groups {
		g := &groups[i]
		known = known && g.Advice.RecommendedReplicas.Known()
		switch g.Advice.Action {
		case "add":
			a.Action = "add"
			addKnown = addKnown && g.Advice.Add.Known()
			added.add(g.Advice.Add)
		case "":
			if a.Action == "keep" {
				a.Action = ""
			}
		}
		total.add(g.Advice.RecommendedReplicas)
		parts = append(parts, g.Name()+": "+g.Advice.Recommendation)
	}
	if a.Action == "add" && addKnown {
		a.Add = added.value()
	}
	if known {
		a.RecommendedReplicas = total.value()
		a.Recommendation = fmt.Sprintf("%s across %d groups, each sized by its own traffic", plural(a.RecommendedReplicas.Float(), "replica"), len(groups))
	} else {
		a.Recommendation = fmt.Sprintf("advice per group (%d models or roles): a queue of one says nothing about another", len(groups))
	}
	a.Summary = append([]string{a.Recommendation}, parts...)
	return a
}

// frontsOthers reports whether a replica's page describes other replicas:
// a router's, or a frontend whose figures are its workers'.
func frontsOthers(r *ReplicaReport) bool {
	return r.Router != catalogue.RouterNone ||
		(r.EngineKind < catalogue.NumEngineKinds && catalogue.Capabilities[r.EngineKind].FrontsWorkers)
}

// hasOwnReplicas reports whether the fleet holds a replica that answers
// with its own figures: then routers and frontends are left out of the
// totals, which would count their backends twice.
func hasOwnReplicas(reps []ReplicaReport) bool {
	for i := range reps {
		if reps[i].State != StateDown && !frontsOthers(&reps[i]) {
			return true
		}
	}
	return false
}
