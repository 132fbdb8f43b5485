package safetext

import "strings"

// Redacted stands in, in a text from a server, for a secret of vtop's.
const Redacted = "[redacted]"

// minSecretLen is the shortest secret hidden: a shorter value (a tenant
// "a1") cannot be told from the words around it, and replacing it would
// garble every message while hiding nothing worth hiding.
const minSecretLen = 4

// maxCleanInput caps what Clean reads of a text: error texts are short,
// and a secret is looked for before the text is cut to MaxTextLen.
const maxCleanInput = 64 << 10

// Secrets are the values vtop sends a server and must never show, log or
// record: a bearer token, a basic auth password (and the header it makes),
// --header values. A server may echo them back (a proxy's "403 forbidden:
// token Bearer …"); every text from a server that carries credentials
// passes through Clean where it enters vtop. The zero value holds none.
type Secrets struct {
	values []string
}

// NewSecrets returns the secrets among values: the empty and the too
// short are left out.
func NewSecrets(values ...string) Secrets {
	var s Secrets
	for _, v := range values {
		if len(v) >= minSecretLen {
			s.values = append(s.values, v)
		}
	}
	return s
}

// Clean is Sanitize, with every secret replaced by Redacted: looked for
// in the text as it came and again once control characters are gone (a
// secret split by them), before the text is cut to MaxTextLen (so no
// prefix of one survives the cut).
func (s Secrets) Clean(text string) string {
	if len(s.values) == 0 {
		return Sanitize(text)
	}
	text = s.scrub(text[:min(len(text), maxCleanInput)])
	text = s.scrub(sanitize(text, maxCleanInput))
	if len(text) > MaxTextLen {
		return truncate(text)
	}
	return text
}

// scrub replaces every secret in text.
func (s Secrets) scrub(text string) string {
	for _, v := range s.values {
		if strings.Contains(text, v) {
			text = strings.ReplaceAll(text, v, Redacted)
		}
	}
	return text
}
