#!/usr/bin/env bash
# screen.sh N T [E] — peak RSS of vtop drawing its dashboard for T seconds
# over N simulated replicas (E engines each, default 1), in a detached tmux
# at 160x50 (SIZE=WxH), with --history 15m (HISTORY), refreshing every
# second. It prints VmRSS and VmHWM every minute, so the growth of the
# history shows, then the CPU seconds and the peak. See BENCHMARKS.md.
#
#   bench/screen.sh 50 900      # 15 minutes: the history full
#   VTOP_ENV='GOGC=50' bench/screen.sh 50 300   # under that environment
set -euo pipefail

usage() { echo "usage: $0 N T [E]" >&2; exit 64; }
[[ $# -ge 2 && $# -le 3 ]] || usage
N=$1 T=$2 E=${3:-1}
[[ $N =~ ^[0-9]+$ && $T =~ ^[0-9]+$ && $E =~ ^[0-9]+$ && $N -ge 1 && $T -ge 2 && $E -ge 1 ]] || usage
SIZE=${SIZE:-160x50}
HISTORY=${HISTORY:-15m}

source "$(dirname "$0")/lib.sh"
need tmux
build_vtop
start_sim "$WORK/targets" --replicas "$N" --scenario mixed --data-parallel "$E"

tmux -L "$TMUX_SOCKET" new-session -d -x "${SIZE%x*}" -y "${SIZE#*x}" \
	"exec env ${VTOP_ENV:-} '$WORK/vtop' -f '$WORK/targets' --interval 1s --history '$HISTORY' 2>'$WORK/vtop.log'"
pid=$(tmux -L "$TMUX_SOCKET" display-message -p '#{pane_pid}')
start=$SECONDS
while ((SECONDS - start < T)); do
	sleep $((T - (SECONDS - start) < 60 ? T - (SECONDS - start) : 60))
	[[ -r /proc/$pid/status ]] || { echo "vtop ended early:" >&2; cat "$WORK/vtop.log" >&2; exit 1; }
	awk -v t=$((SECONDS - start)) '/^VmRSS:/ {r = $2} /^VmHWM:/ {h = $2} END { printf "%4ds  RSS %6.1f MB  peak %6.1f MB\n", t, r / 1024, h / 1024 }' "/proc/$pid/status"
done
read -r cpu hwm < <(usage_of "$pid")
awk -v n="$N" -v e="$E" -v T="$T" -v s="$SIZE" -v c="$cpu" -v k="$hwm" \
	'BEGIN { printf "vtop dashboard, N=%d E=%d, %s, %d s: CPU %.2f s (%.2f %%), peak RSS %.1f MB\n", n, e, s, T, c, 100 * c / T, k / 1024 }'
