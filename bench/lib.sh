# lib.sh — what the bench scripts share; they source it after checking
# their arguments. Everything a script starts goes in PIDS (or runs in the
# tmux server TMUX_SOCKET) and is stopped when it ends; WORK is removed
# unless KEEP is set.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vtop-bench.XXXXXX")
HZ=$(getconf CLK_TCK)
TMUX_SOCKET="vtop-bench-$$"
PIDS=()

cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null || true
	[[ -n ${KEEP:-} ]] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# need BIN…: exit unless every BIN is in PATH.
need() {
	for bin; do
		command -v "$bin" >/dev/null || { echo "$bin not found in PATH" >&2; exit 1; }
	done
}

# build_vtop: $WORK/vtop, built as the README builds it (static, with no C
# library mapped); with BASELINE, that revision's as $WORK/vtop-base.
build_vtop() {
	echo "building vtop…" >&2
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/vtop" .)
	if [[ -n ${BASELINE:-} ]]; then
		echo "building vtop at $BASELINE…" >&2
		mkdir "$WORK/base"
		git -C "$ROOT" archive "$BASELINE" | tar -x -C "$WORK/base"
		(cd "$WORK/base" && CGO_ENABLED=0 go build -o "$WORK/vtop-base" .)
	fi
}

# start_sim FILE ARG…: runs `vtop sim ARG…` in the background and waits
# until it has written the N URLs of its replicas to FILE.
start_sim() {
	local out=$1
	shift
	"$WORK/vtop" sim "$@" >"$out" 2>"$WORK/sim.log" &
	PIDS+=($!)
	for _ in $(seq 400); do
		[[ $(wc -l <"$out") -ge $N ]] && break
		sleep 0.05
	done
	[[ $(wc -l <"$out") -ge $N ]] || { echo "the simulator did not start:" >&2; cat "$WORK/sim.log" >&2; exit 1; }
}

# cpu_ticks PID: the process's user and system CPU (utime+stime from
# /proc/PID/stat), in clock ticks.
cpu_ticks() {
	local stat utime stime
	stat=$(cat "/proc/$1/stat")
	stat=${stat##*) } # the fields after "(comm) "; comm may hold spaces
	read -r _ _ _ _ _ _ _ _ _ _ _ utime stime _ <<<"$stat"
	echo $((utime + stime))
}

# usage_of PID: "cpu_seconds peak_rss_kib" of a running process, the peak
# VmHWM from /proc/PID/status.
usage_of() {
	local hwm
	hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$1/status")
	awk -v t="$(cpu_ticks "$1")" -v hz="$HZ" -v k="$hwm" 'BEGIN { printf "%.2f %d\n", t / hz, k }'
}

# measure PID: wait T seconds, print usage_of PID, stop it. CPU is read
# before the stop so that shutdown work (Prometheus' final head
# compaction) is not counted.
measure() {
	local pid=$1 usage
	sleep "$T"
	[[ -r /proc/$pid/stat ]] || { echo "process $pid died early" >&2; return 1; }
	usage=$(usage_of "$pid")
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	echo "$usage"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
