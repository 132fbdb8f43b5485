#!/usr/bin/env bash
# fleet.sh [--engines E] N T [RUNS] — CPU and peak RSS of vtop against
# Prometheus scraping the same simulated vLLM fleet of N replicas for T
# seconds each, at a 1 s interval, on 127.0.0.1 only, beside the floor: a
# bare program that only fetches the same pages (bench/floor). See
# BENCHMARKS.md.
#
#   bench/fleet.sh 10 30        # one run of each tool
#   bench/fleet.sh 100 30 3     # three runs each, medians reported (and each run)
#   bench/fleet.sh --engines 8 25 30 3   # pages of 8 data-parallel engines
#   TUI=1 bench/fleet.sh 50 30  # also vtop drawing its dashboard in a
#                               # detached tmux at 160x50 (TUI_SIZE=WxH),
#                               # with --history 15m (TUI_HISTORY)
#   VTOP_ENV='GOGC=200' bench/fleet.sh 10 30   # vtop alone under that
#                               # environment (runtime settings)
#
# vtop runs headless (`--jsonl -f targets --interval 1s > /dev/null`), so
# the full analysis runs every second exactly as under the dashboard.
# CPU is utime+stime of the process from /proc/PID/stat when it is stopped;
# peak RSS is VmHWM from /proc/PID/status just before. The tools run one
# after the other against the same simulator, so they never compete for the
# cores.
set -euo pipefail

usage() { echo "usage: $0 [--engines E] N T [RUNS]   (N replicas of E engines, T seconds per run)" >&2; exit 64; }
ENGINES=1
if [[ ${1:-} == --engines ]]; then
	[[ $# -ge 2 ]] || usage
	ENGINES=$2
	shift 2
fi
[[ $# -ge 2 && $# -le 3 ]] || usage
N=$1 T=$2 RUNS=${3:-1}
[[ $N =~ ^[0-9]+$ && $T =~ ^[0-9]+$ && $RUNS =~ ^[0-9]+$ && $ENGINES =~ ^[0-9]+$ ]] || usage
[[ $N -ge 1 && $T -ge 2 && $RUNS -ge 1 && $ENGINES -ge 1 ]] || usage
TUI_SIZE=${TUI_SIZE:-160x50}
TUI_HISTORY=${TUI_HISTORY:-15m}

source "$(dirname "$0")/lib.sh"
need prometheus

build_vtop
echo "building the floor…" >&2
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/floor" ./bench/floor)

# The simulated fleet: one URL per line on stdout once it is serving.
start_sim "$WORK/urls" --replicas "$N" --scenario mixed --data-parallel "$ENGINES"
cp "$WORK/urls" "$WORK/targets"

# Prometheus wants host:port per static target and one metrics_path per
# job: group the URLs by path (the simulator serves /metrics on every one).
{
	echo "global:"
	echo "  scrape_interval: 1s"
	echo "  scrape_timeout: 800ms"
	echo "scrape_configs:"
	sed -E 's#^https?://([^/]+)(/.*)?$#\2 \1#' "$WORK/urls" | sort | awk '
		{ path = ($1 == "" ? "/metrics" : $1); hosts[path] = hosts[path] "\"" $2 "\", " }
		END {
			i = 0
			for (p in hosts) {
				printf "  - job_name: vllm%d\n    metrics_path: %s\n    static_configs:\n      - targets: [%s]\n", i++, p, substr(hosts[p], 1, length(hosts[p]) - 2)
			}
		}'
} >"$WORK/prometheus.yml"

run_vtop() {
	env ${VTOP_ENV:-} "$WORK/vtop" --jsonl -f "$WORK/targets" --interval 1s >/dev/null 2>"$WORK/vtop.log" &
	local pid=$!
	PIDS+=("$pid")
	measure "$pid"
}

run_floor() {
	"$WORK/floor" -f "$WORK/targets" -interval 1s 2>"$WORK/floor.log" &
	local pid=$!
	PIDS+=("$pid")
	measure "$pid"
}

run_vtop_tui() {
	tmux -L "$TMUX_SOCKET" new-session -d -x "${TUI_SIZE%x*}" -y "${TUI_SIZE#*x}" \
		"exec '$WORK/vtop' -f '$WORK/targets' --interval 1s --history '$TUI_HISTORY' 2>'$WORK/vtop-tui.log'"
	local pid
	pid=$(tmux -L "$TMUX_SOCKET" display-message -p '#{pane_pid}')
	measure "$pid"
	tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
}

run_prometheus() {
	local data
	data=$(mktemp -d -p "$WORK")
	prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$data" \
		--web.listen-address=127.0.0.1:0 >"$WORK/prometheus.log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	measure "$pid"
}

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

TOOLS=(floor vtop prometheus)
[[ ${TUI:-0} == 1 ]] && TOOLS=(floor vtop vtop-tui prometheus)
for run in $(seq "$RUNS"); do
	for tool in "${TOOLS[@]}"; do
		echo "run $run/$RUNS: $tool, N=$N, E=$ENGINES, T=${T}s…" >&2
		case $tool in
		floor) run_floor ;;
		vtop) run_vtop ;;
		vtop-tui) run_vtop_tui ;;
		prometheus) run_prometheus ;;
		esac >>"$WORK/$tool.results"
	done
done

printf '%-12s %5s %3s %5s %5s %8s %8s %11s\n' tool N E T runs "CPU s" "CPU %" "peak RSS MB"
declare -A CPU RSS
for tool in "${TOOLS[@]}"; do
	CPU[$tool]=$(awk '{print $1}' "$WORK/$tool.results" | median)
	RSS[$tool]=$(awk '{print $2}' "$WORK/$tool.results" | median)
	awk -v t="$tool" -v n="$N" -v e="$ENGINES" -v T="$T" -v r="$RUNS" -v c="${CPU[$tool]}" -v k="${RSS[$tool]}" \
		'BEGIN { printf "%-12s %5d %3d %5d %5d %8.2f %8.2f %11.1f\n", t, n, e, T, r, c, 100 * c / T, k / 1024 }'
done
for tool in "${TOOLS[@]}"; do
	[[ $tool == prometheus || $tool == floor ]] && continue
	awk -v t="$tool" -v c="${CPU[$tool]}" -v pc="${CPU[prometheus]}" -v fc="${CPU[floor]}" -v k="${RSS[$tool]}" -v pk="${RSS[prometheus]}" \
		'BEGIN { printf "%s/prometheus: CPU %.2fx, peak RSS %.2fx; %s/floor: CPU %.2fx\n", t, (pc > 0 ? c / pc : 0), k / pk, t, (fc > 0 ? c / fc : 0) }'
done
awk -v c="${CPU[floor]}" -v pc="${CPU[prometheus]}" 'BEGIN { printf "floor/prometheus: CPU %.2fx\n", (pc > 0 ? c / pc : 0) }'
# Every run, so the spread behind each median shows: at small N a run is a
# few dozen clock ticks, and one tick moves a ratio.
for tool in "${TOOLS[@]}"; do
	awk -v t="$tool" '{ printf "%s%.2f s/%.1f MB", (NR > 1 ? ", " : t " runs: "), $1, $2 / 1024 } END { print "" }' "$WORK/$tool.results"
done
