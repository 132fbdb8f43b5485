package analysis

import (
	"testing"
	"time"
)

// TestVerdictSentences: the sentences of the verdicts, whole, for the
// figures that change their form: singular and plural, what holds the
// batch, a restart, a queue that shrinks.
func TestVerdictSentences(t *testing.T) {
	cfg := DefaultConfig()
	restart := time.Date(2026, 5, 4, 14, 3, 7, 0, time.UTC)
	full := &evidence{Trail: trail{Queue: gaugeStats{First: 12, Last: 41, N: 5}, Running: gaugeStats{Last: 256}, Seconds: 4},
		BatchCap: 256, KVCacheUsage: gaugeStats{Last: 0.6}}
	kvBound := &evidence{Trail: trail{Queue: gaugeStats{First: 3, Last: 3, N: 2}, Running: gaugeStats{Last: 40}, Seconds: 1},
		KVCacheUsage: gaugeStats{Last: 0.97}, WaitingCapacity: gaugeStats{N: 2}, Rejections: 1, SpanSeconds: 30}
	fullFigures := &Figures{Queue: Quantiles{Mean: 0.6}, TTFT: Quantiles{Mean: 0.8}, Efficiency: 0.875,
		ArrivalsPerSecond: 13.8, RequestsPerSecond: 12.075, WaitingGrowth: NA}
	fullFigures.AdmissionRejectionsPerSecond = 1.0 / 30
	shrinking := &Figures{Queue: Quantiles{Mean: NA}, TTFT: Quantiles{Mean: NA}, Efficiency: NA, WaitingGrowth: -0.5}
	kvBoundShrinking := &evidence{Trail: trail{Queue: gaugeStats{First: 5, Last: 3, N: 2}, Running: gaugeStats{Last: 40}, Seconds: 1},
		KVCacheUsage: gaugeStats{Last: 0.97}, WaitingCapacity: gaugeStats{N: 2}, Rejections: 1, SpanSeconds: 30}
	underCap := &evidence{Trail: trail{Running: gaugeStats{Last: 100}}, BatchCap: 256, BatchCapSince: restart, KVCacheUsage: gaugeStats{Last: 0.5}}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"plural of one", plural(1, "replica"), "1 replica"},
		{"plural of what rounds to one", plural(0.6, "replica"), "1 replica"},
		{"plural with thousands", plural(1234, "admission"), "1,234 admissions"},
		{"plural of none", plural(0, "preemption"), "0 preemptions"},
		{"a short duration", roughDuration(0.2), "1 s"},
		{"minutes", roughDuration(300), "5 min"},
		{"hours", roughDuration(9000), "2.5 h"},

		{"warming", warmingReason(&evidence{EvidenceSeconds: 4}, cfg),
			"judging: 4s of readings of the 10s a verdict of health needs; no problem shown so far"},
		{"warming after a restart", warmingReason(&evidence{EvidenceSeconds: 2.5, RestartedAt: restart}, cfg),
			"judging: 2.5s of readings since the restart at 14:03:07 of the 10s a verdict of health needs; no problem shown so far"},
		{"FULL at the batch cap", fullReasons(fullFigures, full)[0], "waiting 12 → 41 over 4s, running 256 (the most seen)"},
		{"FULL, the batch cap", fullReasons(fullFigures, full)[1], "batch cap 256: the most running seen (the page does not give max_num_seqs)"},
		{"FULL, queue time", fullReasons(fullFigures, full)[2], "queue time is 75% of TTFT (mean 600ms of 800ms)"},
		{"FULL, efficiency", fullReasons(fullFigures, full)[3], "arrivals 13.8 req/s against 12.1 finished/s (efficiency 88%)"},
		{"FULL, KV-bound, waiting for capacity", fullReasons(shrinking, kvBound)[0],
			"waiting for capacity 3 → 3 over 1s, running 40 (KV-bound, KV cache at 97%)"},
		{"FULL refusing", fullReasons(fullFigures, kvBound)[1],
			"refused 1 admission over 30s (0.03/s, HTTP 503: the queue is at --max-num-queued-reqs)"},
		{"FULL, a shrinking queue", fullReasons(shrinking, kvBoundShrinking)[2], "the queue shrinks by 0.5/s: empty in about 6s at that rate"},
		{"FULL, a queue the newest readings show flat has no trend", fullReasons(shrinking, kvBound)[2],
			"judged on 2 readings: a queue of 3 and 3 at the cap is full without waiting for a third"},
		{"FULL on two readings", fullReasons(shrinking, kvBoundShrinking)[3],
			"judged on 2 readings: a queue of 5 and 3 at the cap is full without waiting for a third"},
		{"FULL on two readings, flat", fullReasons(shrinking, kvBound)[2],
			"judged on 2 readings: a queue of 3 and 3 at the cap is full without waiting for a third"},
		{"under the batch cap", batchBound(underCap), "under the 256 seen at most"},
		{"batch cap unknown", batchBound(&evidence{}), "batch cap unknown"},
		{"the batch cap under it", batchCapText(underCap),
			"batch cap 256: the most running seen since 14:03:07 (the page does not give max_num_seqs); under it, the token budget of a step or the KV blocks hold the batch"},
		{"FULL's action", scaleOnWords("add replicas; ", "vllm:num_requests_waiting", 6, 3, 2),
			"add replicas; scale on vllm:num_requests_waiting with target 6 per replica (a 2s queue at the 3 successful req/s a full replica finishes)"},
		{"FULL's action, no capacity", scaleOnWords("add replicas; ", "vllm:num_requests_waiting", NA, NA, 2),
			"add replicas; scale on vllm:num_requests_waiting with target a full replica's successful req/s × 2s, once one is measured"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestAdviceSentences: the sentences of the fleet's advice, whole: known
// and unknown figures, replicas down, a backlog that clears soon or late.
func TestAdviceSentences(t *testing.T) {
	grown := Advice{Replicas: 4, ArrivalsPerSecond: 13.8, SuccessfulPerSecond: 12, QueueGrowthPerSecond: 1.8,
		CapacityPerReplica: 3, AtCapacity: 4, Full: 4, CapacityReplicas: 4, ReplicasByCapacity: 5, BacklogClearSeconds: NA}
	down := grown
	down.Uncounted, down.SuccessfulPerSecond, down.RejectionsPerSecond = 2, NA, 0.5
	slowDrain := grown
	slowDrain.BacklogClearSeconds, slowDrain.RecommendedReplicas = 600, 6
	soonDrain := grown
	soonDrain.BacklogClearSeconds, soonDrain.RecommendedReplicas = 40, 6
	oneAtCap := Advice{Replicas: 3, AtCapacity: 1, Full: 0, QueueGrowthPerSecond: -0.25, ArrivalsPerSecond: 4, CapacityPerReplica: NA}
	noCapacity := Advice{Replicas: 1, AtCapacity: 1, Full: 1, CapacityReplicas: 1, QueueGrowthPerSecond: 2}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"add by capacity", grown.addWords(5, 13.8, 3, 0),
			"add 1: 13.8 req/s arrive, 12 succeed, a full replica does 3: 4 up → 5"},
		{"add by capacity, replicas down", down.addWords(5, 13.8, 3, 0),
			"add 1: 13.8 req/s arrive, a full replica does 3: 4 up (2 down uncounted) → 5"},
		{"add, a backlog that clears late", slowDrain.addWords(6, 13.8, 3, 300),
			"add 2: 13.8 req/s arrive, 12 succeed, a full replica does 3: 4 up → 6; backlog 300: 5 would clear it in about 5 min"},
		{"add, a backlog that clears soon", soonDrain.addWords(6, 13.8, 3, 20),
			"add 2: 13.8 req/s arrive, 12 succeed, a full replica does 3: 4 up → 6; backlog 20 clears in about 40 s"},
		{"spread the load", (&Advice{Replicas: 4, AtCapacity: 1, Full: 1, QueueGrowthPerSecond: 0.4, Action: "rebalance", BacklogClearSeconds: NA}).roomWords(9, 3, 0),
			"spread the load: 4 up carry the 9 req/s arriving at 3 a full replica does, but 1 is FULL with the queue growing by 0.4/s while others have room"},
		{"drain", (&Advice{Replicas: 4, Uncounted: 1, AtCapacity: 2, Full: 1, Action: "drain", BacklogClearSeconds: NA}).roomWords(9, 3, 0),
			"no replica to add: 4 up (1 down uncounted) carry the 9 req/s arriving at 3 a full replica does; 2 at capacity are clearing a backlog"},
		{"add while the queue grows", (&Advice{Replicas: 2, QueueGrowthPerSecond: 0.75}).queueGrowsWords(18),
			"add replicas: the queue grows by 0.75/s (18 waiting) with no replica FULL yet; a count once a replica has been at capacity for 10 s and shows what it carries"},
		{"add while settling", (&Advice{Replicas: 3, AtCapacity: 2, Full: 2, QueueGrowthPerSecond: 5, SettlingSeconds: 3.6}).addWithoutCount("add replicas: 2 replicas FULL"),
			"add replicas: 2 replicas FULL, the queue grows by 5/s; settling: 3 of 10 s at capacity: a count once a replica has shown what it carries there"},
		{"add without a count", noCapacity.addWithoutCount("add replicas: 1 replica FULL"),
			"add replicas: 1 replica FULL, the queue grows by 2/s; no count: the FULL replicas finish nothing successfully"},
		{"add without a count, replicas down", down.addWithoutCount("add replicas"),
			"add replicas, the queue grows by 1.8/s; no count: the FULL replicas finish nothing successfully; 2 down, not counted"},
		{"keep", oneAtCap.keepWords(0), "keep 3 replicas: none is FULL and the queue is not growing"},
		{"keep, a queue that drains", oneAtCap.keepWords(7), "keep 3 replicas: none is FULL and the queue of 7 drains by 0.25/s"},
		{"keep, replicas down", (&Advice{Replicas: 3, Uncounted: 1}).keepWords(0),
			"keep the 3 up and bring back the 1 down: none is FULL and the queue is not growing"},

		{"demand", grown.demandSummary(nil)[0],
			"demand 13.8 req/s: what arrives at the 4 replicas counted (finished, aborts included, plus the growth of batch and queue); they finish 12 req/s successfully, 1.8 req/s short"},
		{"demand with refusals", down.demandSummary(nil)[0],
			"demand 13.8 req/s: what arrives at the 4 replicas counted (finished, aborts included, plus the growth of batch and queue, plus 0.5 req/s refused)"},
		{"capacity", grown.capacitySummary(nil, 0.2)[0],
			"capacity 3 successful req/s per replica (stop and length, read over their seconds at capacity: the mean of 4 FULL replicas; 0.2 req/s aborted over the window, not counted); the demand needs 5 replicas if spread evenly (ceil(13.8 ÷ 3))"},
		{"capacity not measured yet", oneAtCap.capacitySummary(nil, 0)[0], "capacity not measured yet: 1 replica at capacity, settling: 0 of 10 s at capacity; what a batch that has just filled finishes is not what it carries"},
		{"capacity not measured", (&Advice{CapacityPerReplica: NA}).capacitySummary(nil, 0)[0],
			"capacity not measured: no replica is FULL, so none shows what one carries; fewer replicas are not advised without it"},
		{"backlog", slowDrain.backlogSummary(nil, 300)[0],
			"backlog 300 waiting: clears in about 10 min at 6 replicas; 5 would clear it in about 5 min"},
		{"replicas down", down.uncountedSummary(nil)[0], "2 of 6 replicas down: not counted, neither their demand nor their capacity"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestHPASentence: the fleet's HPA line, whole: the setting, what the HPA
// asks for now and why, within its tolerance, and before a capacity is
// measured.
func TestHPASentence(t *testing.T) {
	hpa := Advice{Replicas: 4, HPAMetric: "vllm:num_requests_waiting", WaitingTargetPerReplica: 6, CapacityPerReplica: 3,
		TargetQueueSeconds: 2, HPADesired: 7, MeanWaitingPerReplica: 10, ReplicasByQueue: 8, RecommendedReplicas: NA}
	hpaWithin := hpa
	hpaWithin.HPADesired, hpaWithin.HPAWithinTolerance, hpaWithin.ReplicasByQueue = 4, true, 4
	hpaBacklog := hpa
	hpaBacklog.HPADesired, hpaBacklog.ReplicasByQueue, hpaBacklog.MeanWaitingPerReplica, hpaBacklog.RecommendedReplicas = 2001, 2001, 3000, 6
	hpaUnmeasured := Advice{HPAMetric: "sglang:num_queue_reqs", WaitingTargetPerReplica: NA, TargetQueueSeconds: 2, HPADesired: NA}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"the HPA", hpa.autoscalerWords(),
			"autoscaler setting, not a count to act on: an HPA would scale on vllm:num_requests_waiting with target 6 per replica (a 2s queue at the 3 successful req/s a full replica finishes); at a mean of 10 waiting it asks for 7 (ceil(4 × 10 ÷ 6)); its 5 min scale-down window holds 8"},
		{"the HPA within its tolerance", hpaWithin.autoscalerWords(),
			"autoscaler setting, not a count to act on: an HPA would scale on vllm:num_requests_waiting with target 6 per replica (a 2s queue at the 3 successful req/s a full replica finishes); at a mean of 10 waiting it asks for no change (within its 10% tolerance)"},
		{"the HPA reading a backlog as load", hpaBacklog.autoscalerWords(),
			"autoscaler setting, not a count to act on: an HPA would scale on vllm:num_requests_waiting with target 6 per replica (a 2s queue at the 3 successful req/s a full replica finishes); at a mean of 3,000 waiting its arithmetic, ceil(4 × 3,000 ÷ 6) = 2,001, reads the backlog as load, beyond the 6 the advice counts: its default policy would step to 8 in its first 15 s and on"},
		{"the HPA without a capacity", hpaUnmeasured.autoscalerWords(),
			"autoscaler setting, not a count to act on: an HPA would scale on sglang:num_queue_reqs with target a full replica's successful req/s × 2s, once one is measured"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestSettlingWords: how much of capacitySettle the replicas at capacity
// have shown, or that their rate still rises after it.
func TestSettlingWords(t *testing.T) {
	for _, tt := range []struct {
		secs Num
		want string
	}{
		{3.6, "settling: 3 of 10 s at capacity"},
		{NA, "settling: 0 of 10 s at capacity"},
		{12, "settling: 12 s at capacity, the finish rate still rising"},
	} {
		if got := (&Advice{SettlingSeconds: tt.secs}).settlingWords(); got != tt.want {
			t.Errorf("%v s: %q, want %q", tt.secs, got, tt.want)
		}
	}
}
