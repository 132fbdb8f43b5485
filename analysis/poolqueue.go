package analysis

import (
	"fmt"
	"time"

	"github.com/vtop-dev/vtop/catalogue"
)

// A queue no metric counts: a server that gives each open connection a
// worker of a fixed HTTP pool (WorkerPerConnection: older llama.cpp) lets
// the requests past its pool wait where no gauge counts them, and vtop's
// own scrapes wait there too. With a thread free such a server answers
// within 0–90 ms, against 0.4–2.3 s with the pool taken (BENCHMARKS.md).
const (
	// poolQueueLate scrapes of the last poolQueueSpan that waited
	// poolQueueWait or more (a timeout counts) prove the queue: one is a
	// slow moment, three while requests stay at the cap a pool taken.
	poolQueueSpan = 10 * time.Second
	poolQueueWait = 250 * time.Millisecond
	poolQueueLate = 3
	// lateScrapesBehindPool is lateScrapes for such a server whose newest
	// page showed requests running: several time out in a row while it
	// serves (four, on a real one).
	lateScrapesBehindPool = 10
)

// poolQueue is the evidence of a queue in the HTTP pool: the scrapes of
// the last poolQueueSpan, how many waited (Late) and how many of those
// got no answer within the timeout.
type poolQueue struct {
	Late, Unanswered, Scrapes int
	Problem                   string // the newest timeout's error
}

// poolQueueOf counts the scrapes of the last poolQueueSpan before now and
// those that waited, for a server of that engine; the zero evidence for
// another. Replayed, only the timeouts count.
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
// pool: requests ran in every reading of the trail, at the cap in one.
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
// be fixed, with requests running.
func busyOnPool(s *catalogue.Sample) bool {
	return s.EngineKind.WorkerPerConnection() && s.Total.Scalars[catalogue.Running] > 0
}

// behindPool reports whether a run of timeouts is likely a queue in the
// HTTP pool of a server busy at its last answer: late, not DOWN, until
// lateScrapesBehindPool in a row.
func behindPool(prev *ReplicaReport, run failures) bool {
	return prev != nil && prev.busyOnPool && run.count < lateScrapesBehindPool
}
