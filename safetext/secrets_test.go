package safetext

import (
	"strings"
	"testing"
)

// A text from a server loses every secret vtop sent it, whole or hidden
// behind control characters, before it is cut to length; a text without
// one comes out as Sanitize makes it.
func TestSecretsClean(t *testing.T) {
	const tok = "tok-3f9a-c0ffee"
	sec := NewSecrets(tok, "pw-77c1", "ab", "")
	long := strings.Repeat("x", MaxTextLen-10) + tok
	tests := []struct {
		name, in, want string
	}{
		{"echoed bearer token", "403 forbidden: token Bearer " + tok, "403 forbidden: token Bearer " + Redacted},
		{"two secrets", "user:pw-77c1 " + tok + tok, "user:" + Redacted + " " + Redacted + Redacted},
		{"hidden behind control characters", "tok-3f9a\x1b[31m-c0ffee\x00", Redacted},
		{"cut where the secret would have been", long, strings.Repeat("x", MaxTextLen-10) + Redacted},
		{"too short to be told from text: left alone", "ab cd", "ab cd"},
		{"no secret: as Sanitize", "plain \x1b[2Jtext", "plain text"},
	}
	for _, tt := range tests {
		if got := sec.Clean(tt.in); got != tt.want {
			t.Errorf("%s: Clean(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	if got := (Secrets{}).Clean("plain \x1b[2Jtext"); got != "plain text" {
		t.Errorf("no secrets: Clean = %q, want Sanitize's %q", got, "plain text")
	}
}

// Whatever a server sends, the cleaned text is safe to draw, within the
// cap, and holds no secret.
func FuzzSecretsClean(f *testing.F) {
	secrets := []string{"tok-3f9a-c0ffee", "pw-77c1"}
	sec := NewSecrets(secrets...)
	f.Add("403 forbidden: token Bearer tok-3f9a-c0ffee")
	f.Add("tok-3f9a\x1b[31m-c0ffee\x00 pw-\x0777c1")
	f.Add(strings.Repeat("é", 200) + "pw-77c1")
	f.Fuzz(func(t *testing.T, in string) {
		out := sec.Clean(in)
		if !IsSafe(out) || len(out) > MaxTextLen+len("…") {
			t.Fatalf("Clean(%q) = %q: not safe, or past the cap", in, out)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Fatalf("Clean(%q) = %q holds %q", in, out, s)
			}
		}
	})
}
