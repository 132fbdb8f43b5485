package command

import (
	"fmt"
	"io"
	"time"
)

// countdown shows on stderr, when it is a terminal, how long --once still
// has to wait: without it the command sits silent and looks hung.
type countdown struct {
	stop chan struct{}
	done chan struct{}
}

// startCountdown rewrites one line of w every second with what is waited
// for and the time left of d; nil when w is not a terminal or d is none.
func startCountdown(w io.Writer, what string, d time.Duration) *countdown {
	if d <= 0 || !isTerminal(w) {
		return nil
	}
	c := &countdown{stop: make(chan struct{}), done: make(chan struct{})}
	end := time.Now().Add(d)
	go func() {
		defer close(c.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			left := max(time.Until(end), 0).Round(time.Second)
			// \r and erase-line: the line is rewritten in place.
			fmt.Fprintf(w, "\r\x1b[K%s: %s left", what, left)
			select {
			case <-c.stop:
				fmt.Fprint(w, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return c
}

// end clears the line (a nil countdown has none).
func (c *countdown) end() {
	if c == nil {
		return
	}
	close(c.stop)
	<-c.done
}
