#!/usr/bin/env bash
# prometheus.sh N T [ENGINES] — vtop reading a simulated fleet of N
# replicas (ENGINES data-parallel engines each, default 1) from a
# Prometheus that scrapes it every SCRAPE (default 1s), against vtop
# scraping the same replicas directly, both refreshing every 5 s for T
# seconds, on 127.0.0.1 only. See BENCHMARKS.md.
#
#   bench/prometheus.sh 50 60
#   bench/prometheus.sh 200 60 2
#   SCRAPE=5s bench/prometheus.sh 200 60 2       # a production rhythm
#   BASELINE=main bench/prometheus.sh 200 60 2   # also vtop as of main
#
# The runs alternate (Prometheus source, direct scrapes, and the baseline's
# Prometheus source when BASELINE names a git revision) ROUNDS times
# (default 3), so that load from elsewhere on the machine falls on all of
# them alike; medians are printed. For each Prometheus run: the queries one
# refresh asks (from Prometheus's own request counters) and the wall time
# of `vtop --once` (start, one whole-window read, report). For every run:
# vtop's CPU and peak RSS over T. Prometheus runs throughout, so its own
# cost is in none of the figures.
set -euo pipefail

usage() { echo "usage: $0 N T [ENGINES]   (N replicas, T seconds per run)" >&2; exit 64; }
[[ $# -ge 2 && $# -le 3 && $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ && $1 -ge 1 && $2 -ge 10 ]] || usage
N=$1 T=$2 ENGINES=${3:-1} INTERVAL=5s ROUNDS=${ROUNDS:-3} SCRAPE=${SCRAPE:-1s}
[[ $ENGINES =~ ^[0-9]+$ && $ENGINES -ge 1 && $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $SCRAPE =~ ^[1-9][0-9]*s$ ]] || usage

source "$(dirname "$0")/lib.sh"
need prometheus
build_vtop
kinds=(prom direct)
[[ -z ${BASELINE:-} ]] || kinds+=(base)
start_sim "$WORK/urls" --replicas "$N" --data-parallel "$ENGINES" --scenario mixed

targets=$(sed -E 's#http://([^/]+)/metrics#"\1"#' "$WORK/urls" | paste -sd, -)
printf 'global: {scrape_interval: %s, scrape_timeout: 900ms}\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%s]}]\n' "$SCRAPE" "$targets" >"$WORK/prometheus.yml"
port=$(free_port)
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
	--web.listen-address=127.0.0.1:$port >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
URL=http://127.0.0.1:$port
echo "Prometheus gathers a window (40 s and a scrape)…" >&2
sleep $((40 + ${SCRAPE%s}))

# queries counts the query API requests Prometheus has answered.
queries() {
	curl -s "$URL/metrics" | awk '/^prometheus_http_requests_total\{.*handler="\/api\/v1\/query(_range)?"/ { n += $NF } END { print n + 0 }'
}

# run KIND: one measured run; appends "cpu% rss_mb queries/refresh once_s" to $WORK/KIND.
refreshes=$(awk -v t="$T" 'BEGIN { print int(t / 5) + 1 }')
run() {
	local kind=$1 bin=$WORK/vtop args once=- qpr=- q0 q1 pid cpu rss start
	[[ $kind == base ]] && bin=$WORK/vtop-base
	if [[ $kind == direct ]]; then
		args=(-f "$WORK/urls")
	else
		args=(--prometheus "$URL" --selector '{job="vllm"}')
		# The largest fleets measured pass the default --max-memory
		# (256MiB): 200 two-engine replicas are 82,000 series of 30 points.
		[[ $kind == prom ]] && args+=(--max-memory "${MAX_MEMORY:-1GiB}")
		start=$(date +%s.%N)
		"$bin" "${args[@]}" --once >/dev/null || true
		once=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
	fi
	q0=$(queries)
	"$bin" "${args[@]}" --interval $INTERVAL --jsonl >/dev/null 2>>"$WORK/vtop-$kind.log" &
	pid=$!
	PIDS+=("$pid")
	read -r cpu rss < <(measure "$pid")
	q1=$(queries)
	[[ $kind == direct ]] || qpr=$(awk -v q="$((q1 - q0))" -v r="$refreshes" 'BEGIN { printf "%.1f", q / r }')
	awk -v c="$cpu" -v k="$rss" -v t="$T" -v q="$qpr" -v o="$once" \
		'BEGIN { printf "%.2f %.1f %s %s\n", 100 * c / t, k / 1024, q, o }' >>"$WORK/res-$kind"
	echo "round $round $kind: $(tail -1 "$WORK/res-$kind")" >&2
}

for round in $(seq "$ROUNDS"); do
	for kind in "${kinds[@]}"; do run "$kind"; done
done

# median FILE COLUMN
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { if (v[1] == "-") print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf 'N=%d replicas x %d engines, Prometheus scraping every %s, T=%ds per run, refresh every %s, %d rounds (medians)\n' "$N" "$ENGINES" "$SCRAPE" "$T" "$INTERVAL" "$ROUNDS"
printf '%-28s %8s %12s %18s %14s\n' source "CPU %" "peak RSS MB" "queries/refresh" "--once s"
for kind in "${kinds[@]}"; do
	case $kind in
	prom) name="vtop --prometheus" ;;
	direct) name="vtop, direct scrapes" ;;
	base) name="vtop --prometheus @$BASELINE" ;;
	esac
	printf '%-28s %8s %12s %18s %14s\n' "$name" "$(median "$WORK/res-$kind" 1)" "$(median "$WORK/res-$kind" 2)" "$(median "$WORK/res-$kind" 3)" "$(median "$WORK/res-$kind" 4)"
done
