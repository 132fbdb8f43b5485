#!/usr/bin/env bash
# ingest.sh REV [ROUNDS] — the page parser of the work tree against the one
# of REV (a commit, such as the one before a change to the catalogue), on
# the very same vLLM pages: REV's testutil.VLLMPage with 1 and 8 engines,
# written once, so that a page the newer catalogue would build differently
# does not change the comparison; and the same pages without vLLM's newest
# families (waiting by reason, sleep state, prompt tokens by source and
# cached, the external prefix cache), the cost of a page of a server older
# than them. Each round runs REV's benchmark, then the work tree's (600
# iterations, one CPU), alternating, so that both see the same load;
# benchstat compares them. Nothing is left behind.
set -euo pipefail

REV=${1:?usage: bench/ingest.sh REV [ROUNDS]} ROUNDS=${2:-10}
source "$(dirname "$0")/lib.sh"

# The benchmark, dropped into both trees' page package: it reads the pages
# from $INGEST_PAGES, and writes them there when asked to.
bench_file() {
	cat > "$1/page/zz_ingest_bench_test.go" <<'GO'
package page

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/vtop-dev/vtop/testutil"
)

func TestWriteIngestPages(t *testing.T) {
	dir := os.Getenv("INGEST_WRITE")
	if dir == "" {
		t.Skip("INGEST_WRITE not set")
	}
	for _, e := range []int{1, 8} {
		if err := os.WriteFile(filepath.Join(dir, "page"+strconv.Itoa(e)), testutil.VLLMPage(t, e), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkIngestSamePage(b *testing.B) {
	for _, e := range []string{"1", "8", "1-without-newest", "8-without-newest"} {
		page, err := os.ReadFile(filepath.Join(os.Getenv("INGEST_PAGES"), "page"+e))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(e, func(b *testing.B) {
			in := NewIngester()
			b.ReportAllocs()
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, err := in.Ingest(page, "text/plain; version=0.0.4"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
GO
}

mkdir -p "$WORK/old" "$WORK/new" "$WORK/pages"
git -C "$ROOT" archive "$REV" | tar -x -C "$WORK/old"
cp -r "$ROOT/." "$WORK/new"
rm -rf "$WORK/new/.git"
bench_file "$WORK/old"
bench_file "$WORK/new"
(cd "$WORK/old" && INGEST_WRITE="$WORK/pages" go test -count=1 -run '^TestWriteIngestPages$' ./page >/dev/null)
NEWEST='vllm:(num_requests_waiting_by_reason|engine_sleep_state|prompt_tokens_by_source|prompt_tokens_cached|external_prefix_cache_)'
for e in 1 8; do
	grep -v -E "^(# (HELP|TYPE) )?$NEWEST" "$WORK/pages/page$e" > "$WORK/pages/page$e-without-newest"
done
(cd "$WORK/old" && go test -c -o "$WORK/old.test" ./page)
(cd "$WORK/new" && go test -c -o "$WORK/new.test" ./page)

for _ in $(seq "$ROUNDS"); do
	for side in old new; do
		INGEST_PAGES="$WORK/pages" "$WORK/$side.test" -test.run '^$' -test.bench '^BenchmarkIngestSamePage$' \
			-test.benchtime 600x -test.cpu 1 -test.benchmem | grep '^Benchmark' >> "$WORK/$side.txt"
	done
done
echo "$REV against the work tree, $ROUNDS alternated rounds; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v benchstat >/dev/null 2>&1; then
	benchstat "$WORK/old.txt" "$WORK/new.txt"
else
	go run golang.org/x/perf/cmd/benchstat@latest "$WORK/old.txt" "$WORK/new.txt"
fi
