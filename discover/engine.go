package discover

import (
	"path"
	"strconv"
	"strings"

	"github.com/vtop-dev/vtop/catalogue"
)

// commands recognises each engine's server process by its argv: program
// names (the base name of one of the first arguments, as python runs a
// console script: "python3 /usr/bin/vllm serve …") and module names
// ("python -m sglang.launch_server …").
var commands = []struct {
	engine   string
	programs []string // base names, with the subcommand that serves, if any
	modules  []string // substrings of an argument
}{
	{"vLLM", []string{"vllm serve"}, []string{"vllm.entrypoints"}},
	{"SGLang", []string{"sglang serve"}, []string{"sglang.launch_server"}},
	{"TensorRT-LLM", []string{"trtllm-serve"}, []string{"tensorrt_llm.commands.serve"}},
	{"TGI", []string{"text-generation-router", "text-generation-launcher"}, nil},
	{"llama.cpp", []string{"llama-server"}, nil},
}

// classify names the engine a command line serves, or "".
func classify(argv []string) string {
	for _, c := range commands {
		for _, p := range c.programs {
			if runsProgram(argv, p) {
				return c.engine
			}
		}
		for _, m := range c.modules {
			for _, a := range argv {
				if strings.Contains(a, m) {
					return c.engine
				}
			}
		}
	}
	return ""
}

// runsProgram reports whether argv runs prog ("vllm serve": the program
// vllm with the subcommand serve) as one of its first three arguments.
func runsProgram(argv []string, prog string) bool {
	name, sub, _ := strings.Cut(prog, " ")
	for i := 0; i < len(argv) && i < 3; i++ {
		if path.Base(argv[i]) != name {
			continue
		}
		if sub == "" || i+1 < len(argv) && argv[i+1] == sub {
			return true
		}
	}
	return false
}

// portFlag returns the port of "--port N" or "--port=N", or 0.
func portFlag(argv []string) int {
	for i, a := range argv {
		v, ok := strings.CutPrefix(a, "--port=")
		if !ok && a == "--port" && i+1 < len(argv) {
			v, ok = argv[i+1], true
		}
		if ok {
			if p, err := strconv.Atoi(v); err == nil && p > 0 && p < 65536 {
				return p
			}
		}
	}
	return 0
}

// signature returns the catalogue's signature of an engine.
func signature(engine string) (catalogue.EngineSignature, bool) {
	for _, s := range catalogue.EngineSignatures {
		if s.Engine == engine {
			return s, true
		}
	}
	return catalogue.EngineSignature{}, false
}

// pageEngine names the engine whose families the page carries, or "".
func pageEngine(page []byte, sigs []catalogue.EngineSignature) string {
	for _, s := range sigs {
		if carries(page, s) {
			return s.Engine
		}
	}
	return ""
}

// carries reports whether a page has a series of one of the signature's
// marks (a sample line, not only HELP or TYPE).
func carries(page []byte, s catalogue.EngineSignature) bool {
	for line := range strings.Lines(string(page)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, m := range s.Marks {
			rest, ok := strings.CutPrefix(line, m.Family)
			if !ok || rest == "" || !strings.ContainsAny(rest[:1], "{ _") {
				continue
			}
			if m.Label == "" || strings.Contains(rest, m.Label+"=") {
				return true
			}
		}
	}
	return false
}
