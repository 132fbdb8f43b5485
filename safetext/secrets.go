package safetext

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted stands in, in a text from a server, for a secret of vtop's.
const Redacted = "[redacted]"

// minSecretLen is the shortest secret hidden: a shorter value (a tenant
// "a1") cannot be told from the words around it, and replacing it would
// garble every message while hiding nothing worth hiding.
const minSecretLen = 4

// minPrefixLen is the shortest start of a secret hidden where a text ends
// inside it (a body read up to a limit, a text cut to MaxTextLen, a
// proxy's echo cut short). Eight bytes do not end a text by accident (a
// word ending a text is rarely the first eight bytes of a token or a
// password), and fewer tell little of a secret: a 1,009-byte
// service-account token cut at 40 bytes is hidden whole; one cut after 7
// bytes shows those 7.
const minPrefixLen = 8

// maxCleanInput caps what clean reads of a text: error texts are short,
// and a secret is looked for before the text is cut to MaxTextLen.
const maxCleanInput = 64 << 10

// secrets are the values vtop sends a server and must never show, log,
// record or pass on: a bearer token, a basic auth password (and the
// header it makes), --header values. A server may echo them back (a
// proxy's "403 forbidden: token Bearer …", a store's label holding the
// token it was sent). Longest first, so that a secret holding another is
// replaced whole rather than around the shorter one.
type secrets struct {
	values []string
}

// newSecrets returns the secrets among values: the empty, the too short
// and the repeated left out.
func newSecrets(values ...string) *secrets {
	s := &secrets{}
	for _, v := range values {
		if len(v) >= minSecretLen && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
	slices.SortStableFunc(s.values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return s
}

// own are vtop's secrets: every value it has sent a server as a
// credential in this run (AddSecrets). Nil until there is one.
var (
	own   atomic.Pointer[secrets]
	ownMu sync.Mutex // serialises AddSecrets
)

// textEscaper writes a value as the text format quotes a label value: a
// secret with a quote or a backslash is echoed in a page escaped.
var textEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// AddSecrets makes values secrets of vtop's for the rest of the run:
// every text from a server is cleaned of them where it enters (Sanitize),
// so that no output, recording, alert or hook can carry one. A client
// adds each credential it sends (a token, a password, a header value)
// before sending it; the secrets of a run are few and stay secret once
// sent (a rotated token may still be valid), so they are never dropped.
func AddSecrets(values ...string) {
	ownMu.Lock()
	defer ownMu.Unlock()
	var all []string
	if old := own.Load(); old != nil {
		all = old.values
	}
	for _, v := range values {
		all = append(all, v, textEscaper.Replace(v))
	}
	if s := newSecrets(all...); len(s.values) > 0 {
		own.Store(s)
	}
}

// Redact replaces every secret of vtop's in s by Redacted and changes
// nothing else (no cap, no cleaning): for a value that must keep its
// form, such as a recording's target address.
func Redact(s string) string {
	return own.Load().replace(s)
}

// RedactPage is Redact for a page as fetched, to be recorded: a label
// value holding a secret holds Redacted instead, and the page stays a
// page. A page that holds none is returned as it is, not copied.
func RedactPage(page []byte) []byte {
	sec := own.Load()
	if sec == nil {
		return page
	}
	out := page
	for _, v := range sec.values {
		if bytes.Contains(out, []byte(v)) {
			out = bytes.ReplaceAll(out, []byte(v), []byte(Redacted))
		}
	}
	return out
}

// clean is Sanitize, with every secret replaced by Redacted: looked for
// in the text as it came and again once control characters are gone (a
// secret split by them), before the text is cut to MaxTextLen (so no part
// of one survives the cut); a secret's start that ends the text, at each
// of its cuts, is hidden too (hideCutSecret).
func (s *secrets) clean(text string) string {
	if s == nil {
		return sanitizeText(text)
	}
	if isPlain(text) {
		text = s.scrub(text)
	} else {
		text = s.scrub(text[:min(len(text), maxCleanInput)])
		text = s.scrub(sanitize(text, maxCleanInput))
	}
	if len(text) > MaxTextLen {
		return s.hideCutSecret(cut(text)) + "…"
	}
	return text
}

// scrub replaces every secret in text and hides a secret's start that
// ends it.
func (s *secrets) scrub(text string) string {
	return s.hideCutSecret(s.replace(text))
}

// replace replaces every secret in text; nil holds none.
func (s *secrets) replace(text string) string {
	if s == nil {
		return text
	}
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Redacted)
		}
	}
	return text
}

// hideCutSecret replaces the end of text by Redacted where it is the
// start of a secret, minPrefixLen bytes or longer: a text cut inside a
// secret shows none of it.
func (s *secrets) hideCutSecret(text string) string {
	for _, v := range s.values {
		if i := cutSecretAt(text, v); i >= 0 {
			text = text[:i] + Redacted
		}
	}
	return text
}

// cutSecretAt returns where text ends in a proper start of v that is at
// least minPrefixLen bytes long (the longest such start), or -1.
func cutSecretAt(text, v string) int {
	from := max(0, len(text)-len(v)+1)
	last := len(text) - minPrefixLen
	for i := from; i <= last; i++ {
		j := strings.IndexByte(text[i:last+1], v[0])
		if j < 0 {
			return -1
		}
		i += j
		if strings.HasPrefix(v, text[i:]) {
			return i
		}
	}
	return -1
}
