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
// time out while every slot is busy are the queue, seen from outside.
const (
	// poolQueueSpan is how far back the scrapes are counted.
	poolQueueSpan = 10 * time.Second
	// poolQueueLate is how many of them must have timed out to prove the
	// queue: one late scrape is a slow moment, two in ten seconds while
	// every slot stays busy are a pool that stays taken.
	poolQueueLate = 2
	// lateScrapesBehindPool is lateScrapes for a replica shown FULL of
	// such a queue: its scrapes wait with the requests, and several time
	// out in a row while it serves; it is DOWN when none is answered for
	// this many.
	lateScrapesBehindPool = 10
)

// poolQueue is the evidence of a queue in the HTTP pool: the scrapes of
// the last poolQueueSpan and how many of them timed out.
type poolQueue struct {
	Late, Scrapes int
	Problem       string // the newest timeout's error
}

// poolQueueOf counts the scrapes of the last poolQueueSpan before now and
// their timeouts, for a server of that engine; the zero evidence for
// another.
func poolQueueOf(samples []catalogue.Sample, now time.Time, kind catalogue.EngineKind) poolQueue {
	var q poolQueue
	if kind >= catalogue.NumEngineKinds || !catalogue.Capabilities[kind].WorkerPerConnection {
		return q
	}
	from := now.Add(-poolQueueSpan)
	for i := range samples {
		if !samples[i].Time.After(from) {
			continue
		}
		q.Scrapes++
		if samples[i].TimedOut {
			q.Late, q.Problem = q.Late+1, samples[i].Err
		}
	}
	return q
}

// proves reports whether the late scrapes prove a queue in the pool:
// poolQueueLate of them while requests ran in every reading of the trail,
// at the batch cap in one (every slot busy).
func (q poolQueue) proves(ev *evidence) bool {
	r := &ev.Trail.Running
	return q.Late >= poolQueueLate && r.N > 0 && r.Min > 0 && (!(ev.BatchCap > 0) || r.Max >= ev.BatchCap)
}

// poolQueueReasons are FULL's reasons where the queue is in the HTTP pool
// rather than on the page.
func poolQueueReasons(ev *evidence) []string {
	q := &ev.PoolQueue
	return []string{
		fmt.Sprintf("requests wait for the server's HTTP threads, where no metric counts them: %d of vtop's %d scrapes over the last %s waited past the timeout (%s) while every slot was busy (running %s, %s)",
			q.Late, q.Scrapes, seconds(poolQueueSpan.Seconds()), q.Problem, count(ev.Trail.Running.Last), batchBound(ev)),
		poolQueueNote,
	}
}

// poolQueueNote says why the page shows no queue and how to make it show.
const poolQueueNote = "llama.cpp gives each open connection one HTTP thread, and its older versions (b4747 among them; b8901 grows the pool on demand) fix the pool at start (--threads-http, by default max(parallel+2, cores−1)): requests past it wait where requests_deferred does not count them; --threads-http above the slots plus the clients makes them counted"

// behindPool reports whether a run of timeouts is the queue in the HTTP
// pool the previous verdict showed: late, not DOWN, until
// lateScrapesBehindPool scrapes in a row went unanswered.
func behindPool(prev *ReplicaReport, run failures) bool {
	return prev != nil && prev.queueInPool && run.count < lateScrapesBehindPool
}
