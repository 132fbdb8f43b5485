#!/usr/bin/env bash
# prometheus.sh N T — vtop reading a simulated fleet of N replicas from a
# Prometheus that scrapes it, against vtop scraping the same replicas
# directly, both refreshing every 5 s for T seconds, on 127.0.0.1 only.
# See BENCHMARKS.md.
#
#   bench/prometheus.sh 50 60
#   bench/prometheus.sh 200 60
#
# Prints, for the Prometheus source: the queries one refresh asks (from
# Prometheus's own request counters), the wall time of `vtop --once`
# (start, one refresh, report), and vtop's CPU and peak RSS over T; for
# direct scrapes the same CPU and RSS. Prometheus runs throughout, so its
# own cost is not in either figure.
set -euo pipefail

usage() { echo "usage: $0 N T   (N replicas, T seconds per run)" >&2; exit 64; }
[[ $# -eq 2 && $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ && $1 -ge 1 && $2 -ge 10 ]] || usage
N=$1 T=$2 INTERVAL=5s

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
HZ=$(getconf CLK_TCK)
PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
command -v prometheus >/dev/null || { echo "prometheus not found in PATH" >&2; exit 1; }

echo "building vtop…" >&2
(cd "$ROOT" && go build -o "$WORK/vtop" .)

scenario=mixed
"$WORK/vtop" sim --replicas "$N" --scenario "$scenario" >"$WORK/urls" 2>"$WORK/sim.log" &
PIDS+=($!)
for _ in $(seq 400); do
	[[ $(wc -l <"$WORK/urls") -ge $N ]] && break
	sleep 0.05
done
[[ $(wc -l <"$WORK/urls") -ge $N ]] || { echo "the simulator did not start" >&2; exit 1; }

targets=$(sed -E 's#http://([^/]+)/metrics#"\1"#' "$WORK/urls" | paste -sd, -)
printf 'global: {scrape_interval: 1s, scrape_timeout: 900ms}\nscrape_configs:\n  - job_name: vllm\n    static_configs: [{targets: [%s]}]\n' "$targets" >"$WORK/prometheus.yml"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
	--web.listen-address=127.0.0.1:$port >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
URL=http://127.0.0.1:$port
echo "Prometheus gathers a window (40 s)…" >&2
sleep 40

# queries counts the query API requests Prometheus has answered.
queries() {
	curl -s "$URL/metrics" | awk '/^prometheus_http_requests_total\{.*handler="\/api\/v1\/query(_range)?"/ { n += $NF } END { print n + 0 }'
}

# measure PID: wait T seconds, print "cpu_seconds peak_rss_kib", stop it.
measure() {
	local pid=$1 hwm stat utime stime
	sleep "$T"
	hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")
	stat=$(cat "/proc/$pid/stat")
	stat=${stat##*) }
	read -r _ _ _ _ _ _ _ _ _ _ _ utime stime _ <<<"$stat"
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	awk -v u="$utime" -v s="$stime" -v hz="$HZ" -v k="$hwm" 'BEGIN { printf "%.2f %d\n", (u + s) / hz, k }'
}

start=$(date +%s.%N)
"$WORK/vtop" --prometheus "$URL" --selector '{job="vllm"}' --once >/dev/null || true
once=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')

q0=$(queries)
"$WORK/vtop" --prometheus "$URL" --selector '{job="vllm"}' --interval $INTERVAL --jsonl >/dev/null 2>"$WORK/vtop-prom.log" &
pid=$!
PIDS+=("$pid")
read -r pcpu prss < <(measure "$pid")
q1=$(queries)

"$WORK/vtop" -f "$WORK/urls" --interval $INTERVAL --jsonl >/dev/null 2>"$WORK/vtop-direct.log" &
pid=$!
PIDS+=("$pid")
read -r dcpu drss < <(measure "$pid")

refreshes=$(awk -v t="$T" 'BEGIN { print int(t / 5) + 1 }')
printf 'N=%d T=%ds interval %s\n' "$N" "$T" "$INTERVAL"
printf '%-22s %8s %8s %12s\n' source "CPU s" "CPU %" "peak RSS MB"
awk -v c="$pcpu" -v k="$prss" -v t="$T" 'BEGIN { printf "%-22s %8.2f %8.2f %12.1f\n", "vtop --prometheus", c, 100 * c / t, k / 1024 }'
awk -v c="$dcpu" -v k="$drss" -v t="$T" 'BEGIN { printf "%-22s %8.2f %8.2f %12.1f\n", "vtop, direct scrapes", c, 100 * c / t, k / 1024 }'
awk -v q="$((q1 - q0))" -v r="$refreshes" 'BEGIN { printf "queries per refresh: %.1f (%d queries, ~%d refreshes)\n", q / r, q, r }'
echo "vtop --prometheus --once wall time (start, one refresh, report): ${once}s"
