// Package safetext makes text that came from a server safe to draw on a
// terminal or to log. vtop cleans every such string once, where it enters
// (page labels, error texts, target names), so everything downstream can
// draw it as it is.
package safetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTextLen caps any string that came from a server (labels, error bodies):
// a hostile page must not be able to fill the screen or the memory.
const MaxTextLen = 256

// Sanitize makes a string that came from a server safe to draw on a
// terminal, to log or to pass on: escape sequences (CSI, OSC, DCS and the
// like) are removed whole, other control characters are dropped, invalid
// UTF-8 is replaced, every secret of vtop's (AddSecrets) is replaced by
// Redacted, and the result is capped at MaxTextLen bytes with "…".
func Sanitize(s string) string {
	if sec := own.Load(); sec != nil {
		return sec.clean(s)
	}
	return sanitizeText(s)
}

// sanitizeText is Sanitize without secrets.
func sanitizeText(s string) string {
	if isPlain(s) {
		return s
	}
	return sanitize(s, MaxTextLen)
}

// sanitize is Sanitize without the fast path, capped at limit bytes.
func sanitize(s string, limit int) string {
	var b strings.Builder
	b.Grow(min(len(s), limit+3))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b || r == 0x9b || r == 0x9d || r == 0x90:
			i = skipEscape(s, i, r)
			continue
		case r == utf8.RuneError && size == 1:
			b.WriteRune('\uFFFD')
		case unicode.IsControl(r):
			// drop: tabs and newlines too, a label must stay on one line
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
		if b.Len() >= limit && i < len(s) {
			return truncate(b.String())
		}
	}
	return b.String()
}

// isPlain is the fast path: printable ASCII within the cap needs no work.
func isPlain(s string) bool {
	if len(s) > MaxTextLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// skipEscape returns the index just past the escape sequence starting at i.
func skipEscape(s string, i int, r rune) int {
	_, size := utf8.DecodeRuneInString(s[i:])
	j := i + size
	kind := r
	if r == 0x1b {
		if j >= len(s) {
			return j
		}
		var ok bool
		if kind, ok = escapeKind(s[j]); !ok {
			return j + 1 // two-byte escape such as ESC c
		}
		j++
	}
	if kind == 0x9b {
		return skipCSI(s, j)
	}
	return skipControlString(s, j)
}

// escapeKind is the C1 control an ESC followed by c stands for (CSI, OSC,
// or DCS for the strings DCS, SOS, PM and APC); ok is false for a
// two-byte escape.
func escapeKind(c byte) (kind rune, ok bool) {
	switch c {
	case '[':
		return 0x9b, true
	case ']':
		return 0x9d, true
	case 'P', 'X', '^', '_':
		return 0x90, true
	}
	return 0, false
}

// skipCSI returns the index just past a CSI's parameters, from j, and
// its one final byte in 0x40–0x7e.
func skipCSI(s string, j int) int {
	for j < len(s) {
		c := s[j]
		j++
		if c >= 0x40 && c <= 0x7e {
			break
		}
	}
	return j
}

// skipControlString returns the index just past an OSC, DCS, SOS, PM or
// APC string from j: up to BEL or ST (ESC \ or 0x9c), or the end.
func skipControlString(s string, j int) int {
	for j < len(s) {
		if s[j] == 0x07 {
			return j + 1
		}
		if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
			return j + 2
		}
		if r2, n := utf8.DecodeRuneInString(s[j:]); r2 == 0x9c {
			return j + n
		}
		j++
	}
	return j
}

// truncate cuts s at MaxTextLen on a rune boundary and marks the cut.
func truncate(s string) string {
	return cut(s) + "…"
}

// cut is s cut at MaxTextLen on a rune boundary.
func cut(s string) string {
	n := min(len(s), MaxTextLen)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// IsSafe reports whether s can be drawn as it is: valid UTF-8 and no
// control characters, so no escape sequence can start and no line can
// break. It is the invariant of every string in a Report. (Length is the
// screen's business: it cuts every string to the space it has.)
func IsSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
