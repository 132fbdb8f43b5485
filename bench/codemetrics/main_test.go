package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash-separated path to content) under a new
// temporary directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// longFunc is a function of n lines, func keyword to closing brace.
func longFunc(name string, n int) string {
	return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", n-2) + "}\n"
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		over  limits
		code  side
		test  side
		top   []function
	}{
		{
			name: "test and non-test lines are told apart by the file name",
			files: map[string]string{
				"go.mod":     "module m\n",
				"a.go":       "package a\n\n// F is.\nfunc F() {}\n",
				"a_test.go":  "package a\n\nfunc TestF() {}\n",
				"b/b.go":     "package b\nfunc G() {}", // no final newline: still a line
				"README.md":  "not go\n",
				"b/notes.gx": "package b\n",
			},
			over: limits{lines: 60, complexity: 15},
			code: side{files: 2, lines: 6, funcs: 2},
			test: side{files: 1, lines: 3, funcs: 1},
			top: []function{
				{name: "a.F", file: "a.go", line: 4, lines: 1, complexity: 1},
				{name: "b.G", file: "b/b.go", line: 2, lines: 1, complexity: 1},
			},
		},
		{
			name: "testdata, vendor, hidden, underscored and nested-module directories are skipped",
			files: map[string]string{
				"a.go":                 "package a\n",
				"testdata/x.go":        "package x\n",
				"vendor/v/v.go":        "package v\n",
				".git/h.go":            "package h\n",
				"_old/o.go":            "package o\n",
				"tools/go.mod":         "module tools\n",
				"tools/t.go":           "package t\n",
				"tools/sub/s.go":       "package s\n",
				"inner/ok.go":          "package inner\n",
				"inner/testdata/in.go": "package in\n",
			},
			over: limits{lines: 60, complexity: 15},
			code: side{files: 2, lines: 2},
		},
		{
			name: "a function is long when it has more lines than the limit",
			files: map[string]string{
				"a.go":      "package a\n" + longFunc("AtLimit", 60) + longFunc("Over", 61),
				"a_test.go": "package a\n" + longFunc("TestOver", 70),
			},
			over: limits{lines: 60, complexity: 15},
			code: side{files: 1, lines: 122, funcs: 2, long: 1},
			test: side{files: 1, lines: 71, funcs: 1, long: 1},
			top: []function{
				{name: "a.AtLimit", file: "a.go", line: 2, lines: 60, complexity: 1},
				{name: "a.Over", file: "a.go", line: 62, lines: 61, complexity: 1},
			},
		},
		{
			name: "complexity counts branches and boolean operators, most complex first, methods named by receiver",
			files: map[string]string{
				"a.go": `package a

type T struct{}

func (t *T) M(a, b bool, xs []int) int {
	if a && b || !a {
		return 0
	}
	for _, x := range xs {
		switch x {
		case 1:
		case 2, 3:
		default:
		}
	}
	return 1
}

func Plain() {}

func OneIf(a bool) {
	if a {
		return
	}
}
`,
				"a_test.go": "package a\n\nfunc TestHard(a, b, c bool) { if a && b && c { return } }\n",
			},
			// M (7) is past a limit of 2, OneIf (2) is not; TestHard (4) is.
			over: limits{lines: 60, complexity: 2},
			code: side{files: 1, lines: 25, funcs: 3, complex: 1},
			test: side{files: 1, lines: 3, funcs: 1, complex: 1},
			top: []function{
				// 1 + if + && + || + range + two non-default cases.
				{name: "a.(*T).M", file: "a.go", line: 5, lines: 13, complexity: 7},
				{name: "a.OneIf", file: "a.go", line: 21, lines: 5, complexity: 2},
				{name: "a.Plain", file: "a.go", line: 19, lines: 1, complexity: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := measure(writeTree(t, tt.files), tt.over)
			if err != nil {
				t.Fatal(err)
			}
			if m.code != tt.code {
				t.Errorf("non-test = %+v, want %+v", m.code, tt.code)
			}
			if m.test != tt.test {
				t.Errorf("test = %+v, want %+v", m.test, tt.test)
			}
			if len(m.funcs) != len(tt.top) {
				t.Fatalf("functions = %+v, want %+v", m.funcs, tt.top)
			}
			for i := range tt.top {
				if m.funcs[i] != tt.top[i] {
					t.Errorf("function %d = %+v, want %+v", i, m.funcs[i], tt.top[i])
				}
			}
		})
	}
}

func TestWrite(t *testing.T) {
	m := metrics{
		code: side{files: 3, lines: 300, funcs: 20, long: 2, complex: 1},
		test: side{files: 1, lines: 90, funcs: 4},
		funcs: []function{
			{name: "p.(*T).Hard", file: "p/t.go", line: 10, lines: 80, complexity: 30},
			{name: "p.Easy", file: "p/e.go", line: 3, lines: 5, complexity: 2},
		},
	}
	var b strings.Builder
	write(&b, m, limits{lines: 60, complexity: 15}, 1)
	want := `| Go code | non-test | test |
|---|---:|---:|
| files | 3 | 1 |
| lines | 300 | 90 |
| functions | 20 | 4 |
| functions over 60 lines | 2 | 0 |
| functions of complexity over 15 | 1 | 0 |

| cyclomatic complexity | function (non-test) | lines | where |
|---:|---|---:|---|
| 30 | ` + "`p.(*T).Hard`" + ` | 80 | p/t.go:10 |
`
	if b.String() != want {
		t.Errorf("write printed\n%s\nwant\n%s", b.String(), want)
	}
}
