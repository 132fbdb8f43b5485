package analysis

import (
	"fmt"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// A queue no metric counts. A server that gives each open connection a
// worker of a fixed HTTP pool (catalogue.Capability.WorkerPerConnection:
// llama.cpp before its pool grew threads on demand) lets the requests
// past its pool wait for a worker in its HTTP layer, where no gauge
// counts them. vtop's own scrape waits in that queue too: scrapes that
// wait for an answer while requests run at the batch cap are the queue,
// seen from outside. With a thread free, such a server answers its page
// within a step of its loop: 0–90 ms on a real llama.cpp server's 2
// loaded cores, against 0.4–2.3 s with the pool taken (BENCHMARKS.md).
const (
	// poolQueueSpan is how far back the scrapes are counted.
	poolQueueSpan = 10 * time.Second
	// poolQueueWait is how long a scrape must wait for its page to be
	// counted as waiting for a worker (a timeout counts too).
	poolQueueWait = 250 * time.Millisecond
	// poolQueueLate is how many of the span's scrapes must have waited to
	// prove the queue: one is a slow moment, three in ten seconds while
	// requests stay at the cap are a pool that stays taken.
	poolQueueLate = 3
	// lateScrapesBehindPool is lateScrapes for such a server whose newest
	// page showed requests running: its scrapes wait with the requests,
	// and several time out in a row while it serves (four, on a real one);
	// it is DOWN when none is answered for this many.
	lateScrapesBehindPool = 10
)

// poolQueue is the evidence of a queue in the HTTP pool: the scrapes of
// the last poolQueueSpan, how many of them waited poolQueueWait or more
// (Late) and how many of those got no answer within the timeout.
type poolQueue struct {
	Late, Unanswered, Scrapes int
	Problem                   string // the newest timeout's error
}

// poolQueueOf counts the scrapes of the last poolQueueSpan before now and
// those that waited, for a server of that engine; the zero evidence for
// another. A recording keeps no answer times: replayed, only the
// timeouts count.
func poolQueueOf(samples []catalogue.Sample, now time.Time, kind catalogue.EngineKind) poolQueue {
	var q poolQueue
	if !kind.WorkerPerConnection() {
		return q
	}
	from := now.Add(-poolQueueSpan)
	for i := range samples {
		if !samples[i].Time.After(from) {
			continue
		}
		q.Scrapes++
		switch {
		case samples[i].TimedOut:
			q.Late, q.Unanswered, q.Problem = q.Late+1, q.Unanswered+1, samples[i].Err
		case samples[i].Waited >= poolQueueWait:
			q.Late++
		}
	}
	return q
}

// proves reports whether the scrapes that waited prove a queue in the
// pool: poolQueueLate of them while requests ran in every reading of the
// trail, at the batch cap in one (every slot busy).
func (q poolQueue) proves(ev *evidence) bool {
	r := &ev.Trail.Running
	return q.Late >= poolQueueLate && r.N > 0 && r.Min > 0 && (!(ev.BatchCap > 0) || r.Max >= ev.BatchCap)
}

// queueOnlyInPool reports whether the queue that proves the replica FULL
// is only the one in its HTTP pool: the page's waiting is not it.
func (ev *evidence) queueOnlyInPool() bool {
	return ev.PoolQueue.proves(ev) && !(ev.Trail.Queue.Max > 0)
}

// poolQueueAction is FULL's action where the queue is only in the HTTP
// pool: scaling on the waiting gauge would not see it.
const poolQueueAction = "add replicas; and start llama-server with --threads-http above its slots plus its clients, so that llamacpp:requests_deferred counts this queue before anything scales on it"

// poolQueueReasons are FULL's reasons where the queue is in the HTTP pool
// rather than on the page.
func poolQueueReasons(ev *evidence) []string {
	q := &ev.PoolQueue
	unanswered := ""
	if q.Unanswered > 0 {
		unanswered = fmt.Sprintf(", %d of them none within the timeout (%s)", q.Unanswered, q.Problem)
	}
	capWord := " (the batch cap)"
	if !(ev.BatchCap > 0) {
		capWord = " (batch cap unknown)"
	}
	return []string{
		fmt.Sprintf("requests wait for the server's HTTP threads, where no metric counts them: %d of vtop's %d scrapes over the last %s waited %s or more for the page%s, while requests ran in every reading, up to %s%s",
			q.Late, q.Scrapes, seconds(poolQueueSpan.Seconds()), seconds(poolQueueWait.Seconds()), unanswered, count(ev.Trail.Running.Max), capWord),
		poolQueueNote,
	}
}

// poolQueueNote says why the page shows no queue and how to make it show.
const poolQueueNote = "llama.cpp gives each open connection one HTTP thread, and its older versions (b4747 among them; b8901 grows the pool on demand) fix the pool at start (--threads-http, by default max(parallel+2, cores−1)): requests past it wait where requests_deferred does not count them; --threads-http above the slots plus the clients makes them counted"

// busyOnPool reports whether the page is of a server whose HTTP pool may
// be fixed, with requests running: a run of timeouts that follows is
// likely its pool taken by requests.
func busyOnPool(s *catalogue.Sample) bool {
	return s.EngineKind.WorkerPerConnection() && s.Total.Scalars[catalogue.Running] > 0
}

// behindPool reports whether a run of timeouts is likely a queue in the
// HTTP pool of a server busy at its last answer (busyOnPool): late, not
// DOWN, until lateScrapesBehindPool scrapes in a row went unanswered.
func behindPool(prev *ReplicaReport, run failures) bool {
	return prev != nil && prev.busyOnPool && run.count < lateScrapesBehindPool
}
