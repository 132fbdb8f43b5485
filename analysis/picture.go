package analysis

// Picture is the fleet at a glance: its worst state, how many replicas
// ask for action, and how many are DOWN (apart: a FULL replica that dies
// leaves the others as they were). A replay steps from one change of it to
// the next: in a large fleet some replica changes in almost every report.
type Picture struct {
	Worst  State
	Urgent int
	Down   int
}

// PictureOf is the picture of a report's fleet.
func PictureOf(r *Report) Picture {
	var p Picture
	for i := range r.Replicas {
		s := r.Replicas[i].State
		p.Worst = max(p.Worst, s)
		if NeedsAction(s) {
			p.Urgent++
		}
		if s == StateDown {
			p.Down++
		}
	}
	return p
}

// NeedsAction reports whether a replica in state s asks the engineer to
// act: the urgent states (severityRank's), and DOWN.
func NeedsAction(s State) bool { return severityRank(s) >= severityRank(StateSlow) }

// Changed reports whether the fleet's picture differs between p and q:
// another worst state, or a count on another step (urgentStep).
func (p Picture) Changed(q Picture) bool {
	return p.Worst != q.Worst || urgentStep(p.Urgent) != urgentStep(q.Urgent) || urgentStep(p.Down) != urgentStep(q.Down)
}

// urgentStep is the step of the ladder 0, 1, 2, 5, 10, 20, 50, … that n
// reaches: 0 for 0, 1 for 1, 2 for 2–4, 3 for 5–9, 4 for 10–19, and so on.
func urgentStep(n int) int {
	step := 0
	for rung, k := 1, 0; n >= rung; k++ {
		step++
		if k%3 == 1 {
			rung = rung * 5 / 2 // 2 → 5, 20 → 50
		} else {
			rung *= 2 // 1 → 2, 5 → 10
		}
	}
	return step
}
