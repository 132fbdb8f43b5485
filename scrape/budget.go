package scrape

import (
	"context"
	"fmt"
	"sync"

	"github.com/vtop-dev/vtop/human"
)

// pageBudget is the memory the pages being read share: half of
// --max-memory, counted as a page's buffer grows and given back when
// the page is done with. Sixteen targets each reading a page at the
// 16 MiB --max-body cap held 779 MiB at once without it.
type pageBudget struct {
	total     int64 // bytes the pages may hold together
	maxMemory int64 // the --max-memory it is derived from, for messages

	mu      sync.Mutex
	used    int64
	holders int           // the holds of more than nothing
	waiting int           // of those, the ones waiting for room
	asleep  int           // the pages waiting for room, holding any or not
	freed   chan struct{} // closed, and replaced, when bytes are given back to a page asleep
}

// newPageBudget is the pages' share of maxMemory (DefaultMaxMemory when
// zero).
func newPageBudget(maxMemory int64) *pageBudget {
	if maxMemory <= 0 {
		maxMemory = DefaultMaxMemory
	}
	return &pageBudget{total: maxMemory / 2, maxMemory: maxMemory, freed: make(chan struct{})}
}

// budgetError is a page refused room in the budget. It is said as it is:
// a page that waited out the scrape's timeout for room had its answer, and
// is not "no answer within" the timeout.
type budgetError string

func (e budgetError) Error() string { return string(e) }

// pageHold is what one page holds of the budget. The zero hold of a nil
// budget holds nothing and never fails.
type pageHold struct {
	budget *pageBudget
	held   int64
	// expect is the size of the target's last page when larger than the
	// pool keeps (0 otherwise): room for it is asked at once, before its
	// buffer is made, so that it is read into one buffer, not into a
	// doubling of them that would count twice its size.
	expect int64
}

// bytes is what the hold holds.
func (h *pageHold) bytes() int64 {
	if h == nil {
		return 0
	}
	return h.held
}

// expected is the room the hold asks for at once (pageHold.expect).
func (h *pageHold) expected() int64 {
	if h == nil {
		return 0
	}
	return h.expect
}

// growTo makes the hold n bytes (the buffers a page is read into, read
// bytes of it so far), waiting, within the scrape's timeout (ctx), for
// other pages to give room back.
// A page fails at once when every other page holding room is waiting
// too: one must give way. The error says the bound the page would pass.
func (h *pageHold) growTo(ctx context.Context, n int64, read int) error {
	if h == nil || h.budget == nil || n <= h.held {
		return nil
	}
	b := h.budget
	if n > b.total {
		return b.refuse(n, read, ": raise --max-memory or lower --max-body")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used+n-h.held > b.total {
		if ctx.Err() != nil {
			return b.refuse(n, read, " with the other pages being read, and no room was given back within the scrape's timeout; raise --max-memory")
		}
		if h.held > 0 && b.waiting+1 >= b.holders {
			return b.refuse(n, read, " with the other pages being read; raise --max-memory")
		}
		b.wait(ctx, h.held > 0)
	}
	if h.held == 0 {
		b.holders++
	}
	b.used += n - h.held
	h.held = n
	return nil
}

// refuse is the error of a page of n bytes of buffers (read of them read)
// that would pass the budget, and why.
func (b *pageBudget) refuse(n int64, read int, why string) error {
	return budgetError(fmt.Sprintf("page %s would pass the pages' share of --max-memory %s (%s)%s",
		pageSize(n, read), human.FlagBytes(b.maxMemory), human.Bytes(b.total), why))
}

// wait gives b.mu up until bytes are given back or ctx ends; holding
// says the waiter holds room.
func (b *pageBudget) wait(ctx context.Context, holding bool) {
	freed := b.freed
	b.asleep++
	defer func() { b.asleep-- }()
	if holding {
		b.waiting++
		defer func() { b.waiting-- }()
	}
	b.mu.Unlock()
	defer b.mu.Lock()
	select {
	case <-freed:
	case <-ctx.Done():
	}
}

// release gives the hold back.
func (h *pageHold) release() {
	b := h.budget
	if b == nil || h.held == 0 {
		return
	}
	b.mu.Lock()
	b.used -= h.held
	b.holders--
	if b.asleep > 0 { // no channel made per page when none waits
		close(b.freed)
		b.freed = make(chan struct{})
	}
	b.mu.Unlock()
	h.held = 0
}

// pageSize says how large a page is known to be: "of more than 8 MiB
// (read into 16 MiB of buffers)", or its buffer's size before any read.
func pageSize(buffers int64, read int) string {
	if read == 0 {
		return "buffer of " + human.Bytes(buffers)
	}
	return fmt.Sprintf("of more than %s (read into %s of buffers)", human.Bytes(int64(read)), human.Bytes(buffers))
}
