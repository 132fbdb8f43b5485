package command

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/vtop-dev/vtop/export"
	"github.com/vtop-dev/vtop/sim"
)

// The history a store back-fills (vtop sim --history): the fleet played in
// virtual time, each replica's page rendered every step and written as
// OpenMetrics text with timestamps, labelled as Prometheus's own scrape of
// job "vllm" would (instance, job, an up series per target), for promtool
// tsdb create-blocks-from openmetrics and VictoriaMetrics'
// /api/v1/import/prometheus alike.

// historyJob is the job label of the history's series, the job the
// Prometheus helpers of the tests and benchmarks scrape as.
const historyJob = "vllm"

// maxPendingChunks is how many finished chunk files may wait for a
// consumer before the history writes another.
const maxPendingChunks = 2

// history is one run of --history.
type history struct {
	fleet  *sim.Fleet
	step   time.Duration
	first  time.Time // the time of the first scrape (of replica 0)
	steps  int
	chunk  int      // steps per file, 0: one output
	names  []string // each replica's instance label, escaped
	offset []time.Duration
}

// writeHistory plays the fleet for --history and writes its scrapes.
func (s *Sim) writeHistory(ctx context.Context, env *Env, fleet *sim.Fleet) error {
	end, err := parseHistoryEnd(s.End, time.Now())
	if err != nil {
		return usagef("--end %q: %v", s.End, err)
	}
	if s.Step < time.Millisecond || s.Step > time.Hour || s.Step%time.Millisecond != 0 {
		return usagef("--step %s: want 1ms to 1h, in whole milliseconds", s.Step)
	}
	if s.History < s.Step || s.History > 31*24*time.Hour {
		return usagef("--history %s: want at least one --step (%s) and at most 31 days", s.History, s.Step)
	}
	if s.Chunk < 0 || (s.Chunk > 0 && (s.Chunk < s.Step || s.Output == "")) {
		return usagef("--chunk %s: want at least one --step, with --output naming a directory", s.Chunk)
	}
	h := &history{fleet: fleet, step: s.Step, steps: int(s.History / s.Step)}
	h.first = end.Add(-time.Duration(h.steps-1) * s.Step).Truncate(time.Millisecond)
	if s.Chunk > 0 {
		h.chunk = max(1, int(s.Chunk/s.Step))
	}
	n := len(fleet.Replicas())
	for i := range n {
		h.names = append(h.names, sim.PodName(i)+":8000") // a host per replica, as scrape targets
		// Prometheus spreads its targets' scrapes over the interval; so
		// does the history, replica i at i/n of a step.
		h.offset = append(h.offset, (s.Step * time.Duration(i) / time.Duration(n)).Truncate(time.Millisecond))
	}
	fleet.Advance(s.WarmUp)
	if h.chunk == 0 {
		return h.toFile(ctx, s.Output, env.Stdout, 0, h.steps)
	}
	return h.toChunks(ctx, s.Output, env.Stderr)
}

// parseHistoryEnd reads --end: RFC 3339, Unix seconds, or now+D / now-D
// (now when empty).
func parseHistoryEnd(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || v == "now":
		return now, nil
	case strings.HasPrefix(v, "now+") || strings.HasPrefix(v, "now-"):
		d, err := time.ParseDuration(v[4:])
		if err != nil {
			return time.Time{}, errors.New("want now+DURATION or now-DURATION, such as now+20m")
		}
		if v[3] == '-' {
			d = -d
		}
		return now.Add(d), nil
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return time.UnixMilli(int64(secs * 1000)), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, errors.New("want RFC 3339 (2026-12-05T18:00:00Z), Unix seconds, or now±DURATION")
	}
	return t, nil
}

// toFile writes steps [from, to) to path, which must not exist, or stdout.
func (h *history) toFile(ctx context.Context, path string, stdout io.Writer, from, to int) error {
	if path == "" {
		return h.write(ctx, stdout, from, to)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	return errors.Join(h.write(ctx, f, from, to), f.Close())
}

// toChunks writes the steps into dir, --chunk of them per file NNNNNN.om,
// each renamed from .part once complete, waiting for a consumer
// (waitPending) between them.
func (h *history) toChunks(ctx context.Context, dir string, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	for k, from := 0, 0; from < h.steps; k, from = k+1, from+h.chunk {
		if err := waitPending(ctx, dir); err != nil {
			return err
		}
		name := filepath.Join(dir, fmt.Sprintf("%06d.om", k))
		if err := h.toFile(ctx, name+".part", nil, from, min(from+h.chunk, h.steps)); err != nil {
			return err
		}
		if err := os.Rename(name+".part", name); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "history: %s written (steps %d–%d of %d)\n", filepath.Base(name), from+1, min(from+h.chunk, h.steps), h.steps)
	}
	return nil
}

// waitPending waits until fewer than maxPendingChunks finished chunk
// files are in dir.
func waitPending(ctx context.Context, dir string) error {
	for {
		done, err := filepath.Glob(filepath.Join(dir, "*.om"))
		if err != nil {
			return err
		}
		if len(done) < maxPendingChunks {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// write plays steps [from, to) and writes them to w, then "# EOF".
func (h *history) write(ctx context.Context, w io.Writer, from, to int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	replicas := h.fleet.Replicas()
	workers := min(runtime.GOMAXPROCS(0), len(replicas))
	bufs := make([]bytes.Buffer, workers)
	errs := make([]error, workers)
	for k := from; k < to; k++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var wg sync.WaitGroup
		for wi := range workers {
			wg.Go(func() {
				bufs[wi].Reset()
				for i := wi; i < len(replicas); i += workers {
					if errs[wi] == nil {
						errs[wi] = h.replicaStep(&bufs[wi], replicas[i], i, k)
					}
				}
			})
		}
		wg.Wait()
		for wi := range workers {
			if errs[wi] != nil {
				return errs[wi]
			}
			if _, err := bw.Write(bufs[wi].Bytes()); err != nil {
				return fmt.Errorf("writing the history: %w", err)
			}
		}
	}
	_, _ = bw.WriteString("# EOF\n") // an error is Flush's too
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the history: %w", err)
	}
	return nil
}

// replicaStep advances replica i by one step and appends its scrape k.
func (h *history) replicaStep(b *bytes.Buffer, r *sim.Replica, i, k int) error {
	r.Advance(h.step)
	page, err := r.Render(expfmt.NewFormat(expfmt.TypeTextPlain))
	if err != nil {
		return fmt.Errorf("replica %d: %w", i, err)
	}
	ts := export.FormatMillis(h.first.Add(time.Duration(k)*h.step + h.offset[i]).UnixMilli())
	labels := `instance="` + h.names[i] + `",job="` + historyJob + `"`
	fmt.Fprintf(b, "# TYPE up gauge\nup{%s} 1 %s\n", labels, ts)
	appendOpenMetrics(b, page, labels, ts)
	return nil
}

// appendOpenMetrics appends a text-format page as OpenMetrics lines with
// the scrape's labels and timestamp: HELP lines dropped, TYPE lines as
// export.OMFamily names them, labels the page calls instance or job
// renamed exported_*, as Prometheus renames them.
func appendOpenMetrics(b *bytes.Buffer, page []byte, labels, ts string) {
	for line := range bytes.Lines(page) {
		line = bytes.TrimRight(line, "\n")
		if len(line) == 0 || bytes.HasPrefix(line, []byte("# HELP")) {
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("# TYPE ")); ok {
			name, typ, _ := bytes.Cut(rest, []byte(" "))
			omName, omType, _ := export.OMFamily(string(name), string(typ))
			b.WriteString("# TYPE " + omName + " " + omType + "\n")
			continue
		}
		if line[0] == '#' {
			continue
		}
		if i := bytes.IndexByte(line, '{'); i >= 0 && i < bytes.IndexByte(line, ' ') {
			b.Write(line[:i+1])
			b.WriteString(labels)
			rest := line[i+1:]
			if len(rest) > 0 && rest[0] != '}' {
				b.WriteByte(',')
			}
			b.Write(renameScrapeLabels(rest))
		} else {
			name, value, _ := bytes.Cut(line, []byte(" "))
			b.Write(name)
			b.WriteByte('{')
			b.WriteString(labels)
			b.WriteString("} ")
			b.Write(value)
		}
		b.WriteByte(' ')
		b.WriteString(ts)
		b.WriteByte('\n')
	}
}

// renameScrapeLabels renames a page's own instance and job labels (the
// text after the opening brace) to exported_instance and exported_job.
func renameScrapeLabels(rest []byte) []byte {
	if !bytes.Contains(rest, []byte(`instance="`)) && !bytes.Contains(rest, []byte(`job="`)) {
		return rest
	}
	var out []byte
	for i := 0; i < len(rest); {
		if i == 0 || rest[i-1] == ',' {
			for _, l := range []string{`instance="`, `job="`} {
				if bytes.HasPrefix(rest[i:], []byte(l)) {
					out = append(out, "exported_"...)
				}
			}
		}
		if rest[i] == '"' { // copy the quoted value whole
			j := i + 1
			for j < len(rest) && rest[j] != '"' {
				if rest[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, rest[i:min(j+1, len(rest))]...)
			i = j + 1
			continue
		}
		out = append(out, rest[i])
		i++
	}
	return out
}
