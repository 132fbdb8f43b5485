#!/usr/bin/env bash
# latency.sh [N] [TRIES] — how fast vtop answers a person, measured in a real
# terminal (tmux) while it polls N simulated replicas (default 100):
#   first frame: from starting vtop until its header is on the screen,
#                beside the same measure of a shell that only echoes;
#   key answer:  from sending `t` until the table view is on the screen, and
#                from `esc` until the grid is back.
# The screen is read with tmux capture-pane every few milliseconds, so the
# figures include tmux's own drawing delay: an upper bound on vtop's.
# Everything runs on 127.0.0.1 and everything started is stopped.
set -euo pipefail

N=${1:-100} TRIES=${2:-20}
source "$(dirname "$0")/lib.sh"
build_vtop
start_sim "$WORK/targets" --replicas "$N" --scenario mixed

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# wait_for START TEXT [gone]: milliseconds from START until TEXT is on the
# screen (or, with "gone", no longer on it); gives up at 10 s.
wait_for() {
	local start=$1 text=$2 want=${3:-there}
	while :; do
		local found=gone
		tmux -L "$TMUX_SOCKET" capture-pane -p -t bench 2>/dev/null | grep -qF -- "$text" && found=there
		if [ "$found" = "$want" ]; then
			echo $(( $(now_ms) - start ))
			return
		fi
		if (( $(now_ms) - start > 10000 )); then echo "timeout"; return; fi
		sleep 0.002
	done
}

stats() { sort -n | awk '{a[NR]=$1} END {printf "median %d ms, max %d ms (%d tries)\n", a[int((NR+1)/2)], a[NR], NR}'; }

# A tmux server that is already running, so that its own start (70-90 ms)
# is not counted as vtop's.
tmux -L "$TMUX_SOCKET" new-session -d -s idle -x 200 -y 60 "sleep 600"
# Opening a tmux session costs 50-70 ms before the command even starts:
# measure that with a command that prints the same words at once, and
# report vtop's figure beside it.
first=() baseline=()
for i in $(seq 5); do
	start=$(now_ms)
	tmux -L "$TMUX_SOCKET" new-session -d -s bench -x 200 -y 60 "echo every 1s; sleep 60"
	baseline+=("$(wait_for "$start" "every 1s")")
	tmux -L "$TMUX_SOCKET" kill-session -t bench
	start=$(now_ms)
	tmux -L "$TMUX_SOCKET" new-session -d -s bench -x 200 -y 60 "$WORK/vtop -f $WORK/targets"
	first+=("$(wait_for "$start" "every 1s")")
	tmux -L "$TMUX_SOCKET" kill-session -t bench
done

tmux -L "$TMUX_SOCKET" new-session -d -s bench -x 200 -y 60 "$WORK/vtop -f $WORK/targets"
wait_for "$(now_ms)" "up $N/$N" > /dev/null
sleep 3
table=() grid=()
for i in $(seq "$TRIES"); do
	start=$(now_ms); tmux -L "$TMUX_SOCKET" send-keys -t bench t
	table+=("$(wait_for "$start" "of $N replicas")")
	sleep 0.3
	start=$(now_ms); tmux -L "$TMUX_SOCKET" send-keys -t bench Escape
	grid+=("$(wait_for "$start" "of $N replicas" gone)")
	sleep 0.3
done

# The same measure for a key echoed by cat: what tmux itself adds.
tmux -L "$TMUX_SOCKET" kill-session -t bench
tmux -L "$TMUX_SOCKET" new-session -d -s bench -x 200 -y 60 "cat"
sleep 0.3
echoed=()
for i in $(seq "$TRIES"); do
	start=$(now_ms); tmux -L "$TMUX_SOCKET" send-keys -t bench -l "k$i."
	echoed+=("$(wait_for "$start" "k$i.")")
done

echo "vtop latency, $N targets polled every 1s, $(nproc) cores, $(date -u +%F)"
echo -n "tmux + echo baseline: "; printf '%s\n' "${baseline[@]}" | stats
echo -n "first frame:          "; printf '%s\n' "${first[@]}" | stats
echo -n "key t -> table:       "; printf '%s\n' "${table[@]}" | stats
echo -n "key esc -> grid:      "; printf '%s\n' "${grid[@]}" | stats
echo -n "key echoed by cat:    "; printf '%s\n' "${echoed[@]}" | stats
