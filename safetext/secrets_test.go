package safetext

import (
	"bytes"
	"strings"
	"testing"
)

// longToken is the size of a Kubernetes service-account token (1,009
// bytes), the kind of secret a read limit cuts.
var longToken = "LONGTOKEN" + strings.Repeat("q", 1000)

// A text from a server loses every secret vtop sent it, whole or hidden
// behind control characters, before it is cut to length; a secret's
// start that ends the text (a body read up to a limit, a text cut to
// length) is hidden too, from minPrefixLen bytes on; a text without one
// comes out as Sanitize makes it.
func TestSecretsClean(t *testing.T) {
	const tok = "tok-3f9a-c0ffee"
	sec := newSecrets(tok, "pw-77c1", "ab", "", longToken, "in-pw-77c1-around")
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
		{"a secret that holds another: hidden whole", "in-pw-77c1-around", Redacted},
		{"a long token cut by a read limit (512 bytes of a 403)",
			("Authorization=Bearer " + longToken)[:512], "Authorization=Bearer " + Redacted},
		{"a cut leaving exactly minPrefixLen bytes of a secret", "token " + tok[:minPrefixLen], "token " + Redacted},
		{"a cut leaving fewer than minPrefixLen bytes: words, left alone", "token " + tok[:minPrefixLen-1], "token " + tok[:minPrefixLen-1]},
		{"a secret's start in the middle of a text: not a cut, left alone", tok[:10] + " and more", tok[:10] + " and more"},
		{"a cut inside a secret split by control characters", "token tok-3f\x00\x009a-c", "token " + Redacted},
		{"cut by the input cap inside a secret", strings.Repeat("\x00", maxCleanInput-10) + tok, Redacted},
		{"a partial secret cut to MaxTextLen", strings.Repeat("x", MaxTextLen-16) + longToken[:100] + " tail",
			strings.Repeat("x", MaxTextLen-16) + Redacted + "…"},
	}
	for _, tt := range tests {
		if got := sec.clean(tt.in); got != tt.want {
			t.Errorf("%s: clean(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	if got := (*secrets)(nil).clean("plain \x1b[2Jtext"); got != "plain text" {
		t.Errorf("no secrets: clean = %q, want Sanitize's %q", got, "plain text")
	}
}

// vtop's own secrets (AddSecrets) are hidden by Sanitize, wherever a
// server's text enters (a label's value, a target's name); Redact and
// RedactPage hide them and change nothing else, in the text format's
// escaping too, and hand back a page that holds none as it is.
func TestOwnSecrets(t *testing.T) {
	const tok, pass = "own-7d1e-SECRET", `pa"ss\word-SECRET`
	AddSecrets(tok, pass, longToken)
	sanitized := []struct{ in, want string }{
		{tok + ":1", Redacted + ":1"},
		{"model " + tok, "model " + Redacted},
		{"plain text", "plain text"},
		{("forbidden: Bearer " + longToken)[:512], "forbidden: Bearer " + Redacted},
		{`pa\"ss\\word-SECRET`, Redacted},
		{"a\x1b[2Jb", "ab"},
	}
	for _, tt := range sanitized {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	url := "http://prom:9090#vllm/" + tok + ":1" + strings.Repeat("/x", MaxTextLen)
	if got, want := Redact(url), strings.ReplaceAll(url, tok, Redacted); got != want {
		t.Errorf("Redact(%q) = %q, want %q", url, got, want)
	}
	page := []byte(`vllm:num_requests_running{model_name="` + tok + `",tenant="pa\"ss\\word-SECRET"} 1` + "\n")
	want := []byte(`vllm:num_requests_running{model_name="` + Redacted + `",tenant="` + Redacted + `"} 1` + "\n")
	if got := RedactPage(page); !bytes.Equal(got, want) {
		t.Errorf("RedactPage(%q) = %q, want %q", page, got, want)
	}
	clean := []byte("vllm:num_requests_running 1\n")
	if got := RedactPage(clean); &got[0] != &clean[0] {
		t.Errorf("RedactPage copied a page that holds no secret")
	}
}

// Whatever a server sends, the cleaned text is safe to draw, within the
// cap, holds no secret, and does not end in minPrefixLen bytes or more of
// one's start: the fuzzer puts a secret anywhere in the text and cuts it
// anywhere, as a read limit would.
func FuzzSecretsClean(f *testing.F) {
	all := []string{"tok-3f9a-c0ffee", "pw-77c1", longToken}
	sec := newSecrets(all...)
	f.Add("403 forbidden: token Bearer tok-3f9a-c0ffee", uint16(0), uint8(0), uint16(0))
	f.Add("tok-3f9a\x1b[31m-c0ffee\x00 pw-\x0777c1", uint16(3), uint8(2), uint16(20))
	f.Add(strings.Repeat("é", 200)+"pw-77c1", uint16(5), uint8(1), uint16(0))
	f.Add("Authorization=Bearer ", uint16(21), uint8(2), uint16(512))
	f.Add(strings.Repeat("x", 240)+" tail", uint16(240), uint8(2), uint16(300))
	f.Fuzz(func(t *testing.T, in string, at uint16, which uint8, cut uint16) {
		// A secret put at a byte of in, then the whole cut at a byte.
		pos := min(int(at), len(in))
		text := in[:pos] + all[int(which)%len(all)] + in[pos:]
		if cut > 0 {
			text = text[:min(int(cut), len(text))]
		}
		out := sec.clean(text)
		if !IsSafe(out) || len(out) > MaxTextLen+len("…") {
			t.Fatalf("clean(%q) = %q: not safe, or past the cap", text, out)
		}
		end := strings.TrimSuffix(out, "…")
		for _, s := range all {
			if strings.Contains(out, s) {
				t.Fatalf("clean(%q) = %q holds %q", text, out, s)
			}
			for n := minPrefixLen; n < len(s); n++ {
				if strings.HasSuffix(end, s[:n]) {
					t.Fatalf("clean(%q) = %q ends in %d bytes of %.20q…", text, out, n, s)
				}
			}
		}
	})
}
