// Package human holds how vtop writes a time of day and a byte size for
// people, once for every message, screen and report.
package human

import (
	"fmt"
	"strings"
	"time"
)

// Clock is the layout of a time of day, to the second, wherever vtop
// writes one for people: the screen, reasons, errors, the text reports.
const Clock = time.TimeOnly

// Bytes writes a byte size: in the largest unit that holds it whole, as a
// limit is given (16 MiB, 65532 KiB), else to a tenth of a MiB or a KiB,
// as a measured size reads (3.2 MiB); below a KiB in bytes.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// FlagBytes writes a size as --max-memory is written, Bytes without the
// space ("256MiB"), so that a message names the flag's value as typed.
func FlagBytes(n int64) string {
	s := Bytes(n)
	if strings.HasSuffix(s, " bytes") {
		return s
	}
	return strings.Replace(s, " ", "", 1)
}

// DateClock is the layout of a date and a time of day, as the text
// reports head a stretch of time.
const DateClock = time.DateOnly + " " + Clock
