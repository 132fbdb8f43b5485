package ui

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// docScreens are the golden frames that the documents show as text: each is
// written to docs/<name>.txt from the same frame its golden test draws, so a
// screen in the documents cannot drift from what the dashboard draws.
var docScreens = map[string]bool{
	"all-states-120x40":            true,
	"all-states-80x24":             true,
	"detail-120x40":                true,
	"table-sorted-filtered-120x40": true,
	"table-sorted-filtered-80x24":  true,
	"advice-view-120x40":           true,
	"gpus-200x60":                  true,
	"gpus-80x24":                   true,
}

// readmeScreen is the golden frame the README shows inline, in the fenced
// block after readmeMarker.
const (
	readmeScreen = "all-states-120x40"
	readmeMarker = "<!-- screen: all-states-120x40, written by go test ./ui -update -->"
)

// docsDir is the repository's docs/ seen from this package's directory.
var docsDir = filepath.Join("..", "docs")

// screenText is a frame as a document shows it: no terminal escapes, no
// spaces padding a line to the frame's width, and a final newline.
func screenText(frame string) string {
	lines := strings.Split(ansi.Strip(frame), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// docScreen compares docs/<name>.txt with the frame of the golden test name,
// or rewrites it under -update; golden calls it for every frame, and it does
// nothing for a frame the documents do not show.
func docScreen(t *testing.T, name, frame string) {
	t.Helper()
	if !docScreens[name] {
		return
	}
	text := screenText(frame)
	path := filepath.Join(docsDir, name+".txt")
	if *update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, err := os.ReadFile(path); err != nil {
		t.Errorf("%v (go test ./ui -update writes it)", err)
	} else if string(want) != text {
		t.Errorf("%s differs from the frame (go test ./ui -update rewrites it)\n--- frame ---\n%s\n--- %s ---\n%s", path, text, path, want)
	}
	if name == readmeScreen {
		readmeScreenBlock(t, text)
	}
}

// readmeScreenBlock compares the README's inline screen with text, or
// rewrites it under -update.
func readmeScreenBlock(t *testing.T, text string) {
	t.Helper()
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start, end, ok := fencedAfter(readme, readmeMarker)
	if !ok {
		t.Fatalf("%s has no fenced block after %q", path, readmeMarker)
	}
	if readme[start:end] == text {
		return
	}
	if !*update {
		t.Errorf("the screen in %s differs from the frame %s (go test ./ui -update rewrites it)\n--- frame ---\n%s--- README ---\n%s", path, readmeScreen, text, readme[start:end])
		return
	}
	if err := os.WriteFile(path, []byte(readme[:start]+text+readme[end:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fencedAfter finds the body of the first ``` block after marker in doc: the
// bytes between the line of the opening fence and the closing fence's line.
func fencedAfter(doc, marker string) (start, end int, ok bool) {
	i := strings.Index(doc, marker)
	if i < 0 {
		return 0, 0, false
	}
	open := strings.Index(doc[i:], "\n```")
	if open < 0 {
		return 0, 0, false
	}
	nl := strings.IndexByte(doc[i+open+1:], '\n')
	if nl < 0 {
		return 0, 0, false
	}
	start = i + open + 1 + nl + 1
	close := strings.Index(doc[start:], "```")
	if close < 0 || (close > 0 && doc[start+close-1] != '\n') {
		return 0, 0, false
	}
	return start, start + close, true
}

// TestDocScreensListed: every text screen under docs/ is a listed golden
// frame, and every listed frame has its golden file and its document, so no
// capture sits in docs/ that the golden tests do not write.
func TestDocScreensListed(t *testing.T) {
	found, err := filepath.Glob(filepath.Join(docsDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	for _, p := range found {
		name := strings.TrimSuffix(filepath.Base(p), ".txt")
		onDisk[name] = true
		if !docScreens[name] {
			t.Errorf("%s is not a golden frame listed in docScreens: nothing keeps it true", p)
		}
	}
	var names []string
	for name := range docScreens {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := os.Stat(filepath.Join("testdata", name+".golden")); err != nil {
			t.Errorf("docScreens lists %s, which has no golden frame: %v", name, err)
		}
		if !onDisk[name] && !*update {
			t.Errorf("docScreens lists %s, but docs/%s.txt is missing (go test ./ui -update writes it)", name, name)
		}
	}
}

func TestScreenText(t *testing.T) {
	tests := []struct {
		name, frame, want string
	}{
		{"padding is trimmed and a newline ends the text", "ab  \n c \n   ", "ab\n c\n\n"},
		{"escapes are stripped", "\x1b[1mvtop\x1b[0m  \n\x1b[31mDOWN\x1b[0m", "vtop\nDOWN\n"},
		{"inner spaces stay", "a  b", "a  b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := screenText(tt.frame); got != tt.want {
				t.Errorf("screenText(%q) = %q, want %q", tt.frame, got, tt.want)
			}
		})
	}
}

func TestFencedAfter(t *testing.T) {
	const m = "<!-- here -->"
	tests := []struct {
		name, doc, want string
		ok              bool
	}{
		{"the block after the marker", "```\nno\n```\n" + m + "\ntext:\n\n```\nline 1\nline 2\n```\nafter\n", "line 1\nline 2\n", true},
		{"an empty block", m + "\n```\n```\n", "", true},
		{"no marker", "```\nx\n```\n", "", false},
		{"no closing fence", m + "\n```\nx\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, end, ok := fencedAfter(tt.doc, m)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && tt.doc[start:end] != tt.want {
				t.Errorf("block = %q, want %q", tt.doc[start:end], tt.want)
			}
		})
	}
}
