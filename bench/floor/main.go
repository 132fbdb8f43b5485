// Command floor is the least a scraper of a fleet can cost: every interval
// it fetches each target's page over HTTP, reads the body and counts its
// lines, and does nothing else. bench/fleet.sh runs it beside vtop and
// Prometheus on the same simulated fleet, so that vtop's cost is read
// against the cost of merely fetching the pages.
//
//	floor -f targets.txt [-interval 1s]
//
// It asks for the page uncompressed (the cheapest way to move it over
// loopback) with the Accept header vtop sends, one goroutine per target, one
// shared HTTP transport, and runs until interrupted; a failed fetch is
// counted and printed to stderr at the end, never retried early.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	targets := flag.String("f", "", "file of target URLs, one a line")
	interval := flag.Duration("interval", time.Second, "time between two fetches of a target")
	flag.Parse()
	if *targets == "" || *interval <= 0 {
		fmt.Fprintln(os.Stderr, "usage: floor -f TARGETS [-interval 1s]")
		os.Exit(64)
	}
	urls, err := readTargets(*targets)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	client := &http.Client{Timeout: *interval, Transport: &http.Transport{MaxIdleConnsPerHost: 2}}
	var pages, lines, failures atomic.Int64
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			tick := time.NewTicker(*interval)
			defer tick.Stop()
			for {
				n, err := fetch(ctx, client, u, &buf)
				if err != nil && ctx.Err() == nil {
					failures.Add(1)
				} else if err == nil {
					pages.Add(1)
					lines.Add(int64(n))
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "floor: %d pages, %d lines, %d failed fetches\n", pages.Load(), lines.Load(), failures.Load())
}

// fetch reads one page into buf (reused) and returns its line count.
func fetch(ctx context.Context, client *http.Client, url string, buf *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return bytes.Count(buf.Bytes(), []byte{'\n'}), nil
}

// readTargets reads the URLs of a targets file, skipping blank lines and
// # comments.
func readTargets(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var urls []string
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if line := strings.TrimSpace(lines.Text()); line != "" && !strings.HasPrefix(line, "#") {
			urls = append(urls, line)
		}
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("%s: no targets", path)
	}
	return urls, nil
}
