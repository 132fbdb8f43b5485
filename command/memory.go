package command

// memoryFlags hold vtop's one bound on its memory: each input takes a
// share of it (the Prometheus source's answers: a quarter).
type memoryFlags struct {
	MaxMemory string `default:"256MiB" placeholder:"SIZE" help:"The bound on what the Prometheus source holds (default 256MiB): a refresh's answers may take a quarter of it, counted as they are decoded; an answer that would pass it is refused with a message naming the query and the series read."`
}

// minMemory is the least --max-memory: below it vtop cannot hold its own
// program and one small fleet.
const minMemory = 32 << 20

// maxMemory is the bound in bytes.
func (f memoryFlags) maxMemory() (int64, error) {
	n, err := parseSize(f.MaxMemory)
	if err != nil {
		return 0, usagef("--max-memory: %v", err)
	}
	if n < minMemory {
		return 0, usagef("--max-memory %s: want at least 32MiB", f.MaxMemory)
	}
	return n, nil
}
