#!/usr/bin/env bash
# stores.sh N ENGINES — vtop --prometheus reading one simulated fleet's
# history from two stores, Debian's Prometheus and VictoriaMetrics, both
# back-filled with the same samples (no live scraping competes for the
# cores), on 127.0.0.1 only. See BENCHMARKS.md.
#
#   bench/stores.sh 200 2
#   SPAN=10m bench/stores.sh 1000 2
#   BASELINE=main bench/stores.sh 200 2      # also vtop as of main
#   RULES=1 bench/stores.sh 200 2            # the rules path (see below)
#
# The history: `vtop sim --history` plays N replicas of E engines in
# virtual time and writes a scrape of each every STEP (5s) as OpenMetrics
# with timestamps, SPAN (1h) of them ending LEAD (20m) after the start of
# the run: vtop reads the stores as the present, so the history must
# reach past the measurements, which begin once the stores are filled and
# the present is at least a minute into the history. It is written in
# CHUNK (5m) files, each read by `promtool tsdb create-blocks-from
# openmetrics` into Prometheus's blocks and POSTed to VictoriaMetrics'
# /api/v1/import/prometheus, then removed. Prometheus starts on the blocks
# once all are made. Back-filling runs at some fraction of real time (it
# is printed); LEAD must leave the measurements their time after it.
#
# Then, ROUNDS (3) times, for each store (and vtop at BASELINE when set):
# `vtop --prometheus URL --selector '{job="vllm"}' --once` (its wall time:
# start, one whole-window read, the report: the first screen), then
# `vtop … --jsonl --interval 5s` for T (60) seconds: its refreshes' wall
# times and requests (from the report's source.refresh_seconds and
# source.queries, one per refresh), the query requests the store counted
# (a check on vtop's own count), vtop's CPU and peak RSS. Medians over the rounds
# are printed; the refresh time is the median and the maximum over every
# refresh of every round. The runs pass --max-memory MAX_MEMORY (1GiB)
# and VTOP_ARGS; before them, one `--once` with vtop's defaults says
# whether vtop as it comes reads the fleet at all.
#
# Last, the store alone: the queries of vtop's first read and of its last
# refresh, as Prometheus's query log holds them, asked of each store
# side by side by curl, FLOOR (10) times each, the answers thrown away:
# the wall time (median, max) and the store's CPU of a read that no
# client's decoding could shorten. Requirements: Go, bash, awk, curl,
# python3, prometheus and promtool, victoria-metrics (and vmalert with
# RULES).
#
# RULES=1 measures the rules path: the stores evaluate `vtop rules`
# (every RULES_EVERY, STEP unless set) and vtop reads what they recorded.
# At 1,000 x 2 an evaluation through remote read outlasts a 5 s interval
# on two cores (23 s): vtop then finds the rules stale and reads raw, as
# it should; RULES_EVERY=15s lets the evaluator keep up (the window,
# 30 s, must hold two evaluations). VictoriaMetrics' rules
# are evaluated by vmalert, written back into it (the rules in vmalert's
# format, whose queries VictoriaMetrics answers at their time despite
# its default -search.latencyOffset). Prometheus's back-filled
# blocks reach past the present and refuse samples of the present, so a
# second Prometheus evaluates the rules over the first's samples through
# its remote-read API and keeps what they record; vtop reads that one.
# The runs begin once both have evaluated the rules for a window
# (RULES_WARMUP, 60 s); the rows are labelled "rules", and each --once
# says the path its report read.
set -euo pipefail

usage() { echo "usage: $0 N ENGINES   (env: SPAN LEAD STEP CHUNK T ROUNDS FLOOR BASELINE MAX_MEMORY VTOP_ARGS KEEP RULES RULES_EVERY RULES_WARMUP)" >&2; exit 64; }
[[ $# -eq 2 && $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ && $1 -ge 1 && $2 -ge 1 ]] || usage
N=$1 ENGINES=$2
SPAN=${SPAN:-1h} LEAD=${LEAD:-20m} STEP=${STEP:-5s} CHUNK=${CHUNK:-5m}
RULES_EVERY=${RULES_EVERY:-$STEP}
T=${T:-60} ROUNDS=${ROUNDS:-3} FLOOR=${FLOOR:-10} INTERVAL=5s
[[ $T =~ ^[0-9]+$ && $T -ge 10 && $ROUNDS =~ ^[0-9]+$ && $ROUNDS -ge 1 && $FLOOR =~ ^[0-9]+$ ]] || usage

# seconds D: a duration such as 1h, 20m, 90s or 1h30m in seconds.
seconds() {
	local d=$1 total=0 n u
	[[ $d =~ ^([0-9]+[hms])+$ ]] || { echo "bad duration $d (want e.g. 1h, 20m, 90s)" >&2; exit 64; }
	while [[ $d =~ ^([0-9]+)([hms])(.*)$ ]]; do
		n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]}
		case $u in h) total=$((total + n * 3600)) ;; m) total=$((total + n * 60)) ;; s) total=$((total + n)) ;; esac
	done
	echo "$total"
}
span_s=$(seconds "$SPAN") lead_s=$(seconds "$LEAD") step_s=$(seconds "$STEP")

source "$(dirname "$0")/lib.sh"
need prometheus promtool victoria-metrics curl python3

build_vtop
kinds=(now)
[[ -z ${BASELINE:-} ]] || kinds+=(base)

# VictoriaMetrics first, empty: it takes each chunk as it is made.
vm_port=$(free_port)
victoria-metrics -storageDataPath="$WORK/vm" -httpListenAddr="127.0.0.1:$vm_port" -retentionPeriod=100y \
	-search.disableCache -loggerLevel=ERROR >"$WORK/vm.log" 2>&1 &
vm_pid=$!
PIDS+=($vm_pid)
VM=http://127.0.0.1:$vm_port
for _ in $(seq 100); do curl -sf "$VM/health" >/dev/null && break; sleep 0.1; done

started=$(date +%s)
end=$((started + lead_s))
first=$((end - span_s))
echo "history: $N replicas x $ENGINES engines, $SPAN ending $LEAD from now, a scrape every $STEP, in $CHUNK files…" >&2
# A copy under another name: a stray pkill of vtop elsewhere on a shared
# machine should not end the history half-way.
cp "$WORK/vtop" "$WORK/fleet-history"
"$WORK/fleet-history" sim --replicas "$N" --data-parallel "$ENGINES" --scenario mixed --history "${span_s}s" \
	--step "$STEP" --end "$end" --chunk "$CHUNK" -o "$WORK/chunks" 2>"$WORK/sim.log" &
gen=$!
PIDS+=($gen)
made=0
while :; do
	next=$(printf '%s/chunks/%06d.om' "$WORK" "$made")
	if [[ -f $next ]]; then
		promtool tsdb create-blocks-from openmetrics "$next" "$WORK/prom" >>"$WORK/promtool.log" 2>&1 &
		pt=$!
		curl -sf -X POST -T "$next" "$VM/api/v1/import/prometheus" || { echo "VictoriaMetrics refused $next" >&2; exit 1; }
		wait "$pt" || { echo "promtool failed on $next:" >&2; tail -5 "$WORK/promtool.log" >&2; exit 1; }
		rm -f "$next"
		made=$((made + 1))
		echo "  chunk $made back-filled into both stores ($(($(date +%s) - started)) s)" >&2
		continue
	fi
	if ! kill -0 "$gen" 2>/dev/null; then
		wait "$gen" || { echo "the history failed:" >&2; cat "$WORK/sim.log" >&2; exit 1; }
		[[ -f $next ]] && continue
		break
	fi
	sleep 0.2
done
backfill_s=$(($(date +%s) - started))
echo "back-filled $SPAN of history in ${backfill_s} s ($(awk -v b="$backfill_s" -v s="$span_s" 'BEGIN { printf "%.2f", b / s }') of real time); it ends in $((end - $(date +%s))) s" >&2

prom_port=$(free_port)
# The query log holds vtop's queries for the store-alone measurement.
printf 'global:\n  query_log_file: %s\nscrape_configs: []\n' "$WORK/query.log" >"$WORK/prometheus.yml"
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/prom" --storage.tsdb.retention.time=100y \
	--web.listen-address="127.0.0.1:$prom_port" >"$WORK/prometheus.log" 2>&1 &
prom_pid=$!
PIDS+=($prom_pid)
PROM=http://127.0.0.1:$prom_port
for _ in $(seq 600); do curl -sf "$PROM/-/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$PROM/-/ready" >/dev/null || { echo "Prometheus did not start:" >&2; tail -5 "$WORK/prometheus.log" >&2; exit 1; }

# rules_evaluated URL: whether the store holds an evaluation of vtop's
# rules of the last minute.
rules_evaluated() {
	curl -sf "$1/api/v1/query" --data-urlencode 'query=count_over_time(vtop:rules_info[1m])' --data-urlencode nocache=1 |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(1 if r else 0)'
}
if [[ -n ${RULES:-} ]]; then
	need vmalert
	"$WORK/vtop" rules --evaluation-interval "$RULES_EVERY" -o "$WORK/vtop-rules.yml"
	# Debian's vmalert does not read keep_firing_for.
	"$WORK/vtop" rules --evaluation-interval "$RULES_EVERY" --no-keep-firing-for --format vmalert -o "$WORK/vtop-rules-vm.yml"
	eval_port=$(free_port)
	printf 'global:\n  query_log_file: %s\nrule_files: [%s]\nscrape_configs: []\nremote_read:\n  - url: %s/api/v1/read\n    read_recent: true\n' \
		"$WORK/query.log" "$WORK/vtop-rules.yml" "$PROM" >"$WORK/prometheus-rules.yml"
	# The evaluator logs to the same query log (the store under it
	# answers remote reads, which it does not log); its own evaluations
	# are left out of the store-alone measurement.
	prometheus --config.file="$WORK/prometheus-rules.yml" --storage.tsdb.path="$WORK/prom-rules" \
		--web.listen-address="127.0.0.1:$eval_port" >"$WORK/prometheus-rules.log" 2>&1 &
	PIDS+=($!)
	PROM=http://127.0.0.1:$eval_port
	for _ in $(seq 600); do curl -sf "$PROM/-/ready" >/dev/null && break; sleep 0.1; done
	sink_port=$(free_port)
	python3 -c 'import http.server as h
class S(h.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0))); self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
h.HTTPServer(("127.0.0.1", '"$sink_port"'), S).serve_forever()' &
	PIDS+=($!)
	vmalert -datasource.url="$VM" -remoteWrite.url="$VM" -notifier.url="http://127.0.0.1:$sink_port" -evaluationInterval="$RULES_EVERY" \
		-httpListenAddr="127.0.0.1:$(free_port)" -loggerLevel=WARN -rule="$WORK/vtop-rules-vm.yml" >"$WORK/vmalert.log" 2>&1 &
	PIDS+=($!)
	warmup=${RULES_WARMUP:-60}
	echo "the stores evaluate vtop's rules; waiting ${warmup} s for a window of evaluations…" >&2
	sleep "$warmup"
	for url in "$PROM" "$VM"; do
		[[ $(rules_evaluated "$url") == 1 ]] || { echo "$url holds no evaluation of vtop's rules" >&2; tail -5 "$WORK/prometheus-rules.log" "$WORK/vmalert.log" >&2; exit 1; }
	done
fi

# The present must be a minute into the history: a window and a margin.
if (($(date +%s) < first + 60)); then
	echo "waiting $((first + 60 - $(date +%s))) s for the present to reach a minute into the history…" >&2
	sleep $((first + 60 - $(date +%s)))
fi

# up KIND URL: how many targets the store holds now (count of up).
targets() {
	curl -sf "$2/api/v1/query" --data-urlencode 'query=count(up{job="vllm"})' |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'
}
for store in prom vm; do
	url=$PROM
	[[ $store == vm ]] && url=$VM
	for _ in $(seq 100); do [[ $(targets "$store" "$url") == "$N" ]] && break; sleep 0.5; done
	[[ $(targets "$store" "$url") == "$N" ]] || { echo "$store holds $(targets "$store" "$url") targets, not $N" >&2; exit 1; }
done

# queries URL STORE: the query API requests the store has answered.
queries() {
	if [[ $2 == prom ]]; then
		curl -s "$1/metrics" | awk '/^prometheus_http_requests_total\{.*handler="\/api\/v1\/query(_range)?"/ { n += $NF } END { print n + 0 }'
	else
		curl -s "$1/metrics" | awk '/^vm_http_requests_total\{path="\/api\/v1\/query(_range)?"\}/ { n += $NF } END { print n + 0 }'
	fi
}

# run STORE KIND: one measured run; appends "cpu% rss_mb
# store_queries/refresh once_s once_rss_mb" to $WORK/res-STORE-KIND and
# each refresh's "seconds requests" (as vtop reports them) to
# $WORK/ref-STORE-KIND.
run() {
	local store=$1 kind=$2 bin=$WORK/vtop url=$PROM once q0 q1 pid cpu rss start refreshes args
	[[ $kind == base ]] && bin=$WORK/vtop-base
	[[ $store == vm ]] && url=$VM
	(($(date +%s) + T + 30 < end)) || { echo "the history ends before this run would: raise LEAD" >&2; exit 1; }
	args=(--prometheus "$url" --selector '{job="vllm"}' --max-memory "${MAX_MEMORY:-1GiB}")
	# shellcheck disable=SC2206 # VTOP_ARGS is words to add, by design
	args+=(${VTOP_ARGS:-})
	# The query log's lines of vtop as it is, through Prometheus: the
	# store-alone measurement asks its queries again.
	[[ $store == prom && $kind == now && -z ${log_from:-} ]] && log_from=$(wc -l <"$WORK/query.log")
	start=$(date +%s.%N)
	/usr/bin/env time -f '%M' -o "$WORK/once-rss" "$bin" "${args[@]}" --once --json >"$WORK/once.json" 2>>"$WORK/vtop-$store-$kind.log" || true
	once=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
	python3 - "$WORK/once.json" "$N" >&2 <<-'EOF' || true
		import json, sys
		try:
		    r = json.load(open(sys.argv[1]))
		except Exception as e:
		    print(f"    --once gave no report ({e})"); sys.exit()
		src = r.get("source") or {}
		states = {}
		for x in r.get("replicas", []):
		    states[x["state"]] = states.get(x["state"], 0) + 1
		print(f"    --once: {len(r.get('replicas', []))} of {sys.argv[2]} replicas {states}; store {src.get('store', '?')}; path {src.get('path', '?')}; problem {src.get('problem', 'none')}")
	EOF
	q0=$(queries "$url" "$store")
	"$bin" "${args[@]}" --interval $INTERVAL --jsonl >"$WORK/jsonl" 2>>"$WORK/vtop-$store-$kind.log" &
	pid=$!
	PIDS+=("$pid")
	read -r cpu rss < <(measure "$pid")
	[[ $store == prom && $kind == now ]] && log_to=$(wc -l <"$WORK/query.log")
	q1=$(queries "$url" "$store")
	# One line per refresh: a report repeats the newest refresh's figures
	# until another is in (source.checked tells them apart).
	python3 - "$WORK/jsonl" >>"$WORK/ref-$store-$kind" <<-'EOF'
		import json, sys
		seen = set()
		for line in open(sys.argv[1]):
		    try:
		        src = json.loads(line).get("source") or {}
		    except ValueError:
		        continue
		    key = src.get("checked")
		    if key and key not in seen and "refresh_seconds" in src:
		        seen.add(key)
		        print(src["refresh_seconds"], src.get("queries", 0))
	EOF
	refreshes=$(python3 -c 'import json,sys; print(len({(json.loads(l).get("source") or {}).get("checked") for l in open(sys.argv[1]) if l.strip()}))' "$WORK/jsonl" 2>/dev/null || echo 0)
	awk -v c="$cpu" -v k="$rss" -v t="$T" -v q="$((q1 - q0))" -v r="$refreshes" -v o="$once" -v ok="$(tail -1 "$WORK/once-rss")" \
		'BEGIN { printf "%.2f %.1f %s %s %.1f\n", 100 * c / t, k / 1024, (r > 0 ? sprintf("%.1f", q / r) : "-"), o, ok / 1024 }' >>"$WORK/res-$store-$kind"
	echo "round $round $store $kind: $(tail -1 "$WORK/res-$store-$kind") (cpu% rss_mb store-counted-queries/refresh once_s once_rss_mb)" >&2
}

# First, vtop as it comes (its default --max-memory and --max-series): does
# it read the fleet at all?
for store in prom vm; do
	url=$PROM
	[[ $store == vm ]] && url=$VM
	"$WORK/vtop" --prometheus "$url" --selector '{job="vllm"}' --once --json >"$WORK/defaults.json" 2>/dev/null || true
	python3 - "$WORK/defaults.json" "$store" >&2 <<-'EOF'
		import json, sys
		try:
		    r = json.load(open(sys.argv[1]))
		except Exception as e:
		    print(f"  {sys.argv[2]}, vtop's defaults: no report ({e})"); sys.exit()
		src = r.get("source") or {}
		print(f"  {sys.argv[2]}, vtop's defaults: {len(r.get('replicas', []))} replicas; problem: {src.get('problem', 'none')}")
	EOF
done

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
	for store in prom vm; do
		for kind in "${kinds[@]}"; do run "$store" "$kind"; done
	done
done

# The store alone. read_of WHICH DIR: the queries of vtop's first read
# (first) or of its last whole refresh (last) through Prometheus, one file
# each in DIR; a read is the queries of one evaluation time, the first
# read is the --once's, and the last refresh is the newest time with as
# many queries as the most any later time had (a refresh cut short by the
# end of the run had fewer).
read_of() {
	mkdir -p "$2"
	python3 - "$WORK/query.log" "$1" "$2" "$log_from" "$log_to" <<-'EOF'
		import collections, json, os, sys
		log, which, out, begin, end = sys.argv[1:]
		reads = collections.OrderedDict()
		for line in open(log).readlines()[int(begin):int(end)]:
		    entry = json.loads(line)
		    if "ruleGroup" in entry:
		        continue  # the rules' own evaluations (RULES)
		    p = entry.get("params", {})
		    if p.get("step", 0) == 0 and "query" in p:
		        reads.setdefault(p["start"], []).append(p["query"])
		reads = list(reads.values())
		if which == "first":
		    read = reads[0]
		else:
		    most = max(len(q) for q in reads[1:])
		    read = [q for q in reads[1:] if len(q) == most][-1]
		for i, q in enumerate(read):
		    open(os.path.join(out, f"{i}.q"), "w").write(q)
	EOF
}
# alone URL PID DIR: FLOOR times, DIR's queries side by side at the
# present; prints each time's wall seconds, then "cpu SECONDS" a time.
alone() {
	local url=$1 pid=$2 dir=$3 c0 start f asks
	c0=$(cpu_ticks "$pid")
	for _ in $(seq "$FLOOR"); do
		start=$(date +%s.%N) asks=()
		for f in "$dir"/*.q; do
			curl -sf -o /dev/null "$url/api/v1/query" --data-urlencode "query@$f" --data-urlencode "time=${start%.*}" &
			asks+=($!)
		done
		wait "${asks[@]}"
		awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f\n", e - s }'
	done
	awk -v t="$(($(cpu_ticks "$pid") - c0))" -v hz="$HZ" -v n="$FLOOR" 'BEGIN { printf "cpu %.2f\n", t / hz / n }'
}
if ((FLOOR > 0)); then
	(($(date +%s) + 60 < end)) || { echo "the history ends before the store-alone runs would: raise LEAD" >&2; exit 1; }
	read_of first "$WORK/read-first"
	read_of last "$WORK/read-last"
	for store in prom vm; do
		url=$PROM pid=$prom_pid
		[[ $store == vm ]] && url=$VM pid=$vm_pid
		for which in first last; do alone "$url" "$pid" "$WORK/read-$which" >"$WORK/alone-$store-$which"; done
	done
fi

# median FILE COLUMN
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0 || v[1] == "-") print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# worst FILE COLUMN
worst() { awk -v c="$2" '{ print $c }' "$1" | sort -g | tail -1; }

printf '\nN=%d replicas x %d engines, %s of history at %s (back-filled in %d s), T=%ds per run, refresh every %s, %d rounds; load before the runs: %s, after: %s\n' \
	"$N" "$ENGINES" "$SPAN" "$STEP" "$backfill_s" "$T" "$INTERVAL" "$ROUNDS" "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %-10s %16s %15s %12s %13s %12s %11s %7s\n' store vtop "queries/refresh" "refresh median" "refresh max" "first screen" "peak RSS MB" "--once RSS" "CPU %"
for store in prom vm; do
	for kind in "${kinds[@]}"; do
		name=Prometheus
		[[ $store == vm ]] && name=VictoriaMetrics
		label=present
		[[ -n ${RULES:-} ]] && label=rules
		[[ $kind == base ]] && label="@$BASELINE"
		ref=$WORK/ref-$store-$kind
		res=$WORK/res-$store-$kind
		if [[ -s $ref ]]; then
			rmed=$(median "$ref" 1 | xargs printf '%.2f s') rmax=$(worst "$ref" 1 | xargs printf '%.2f s') qpr=$(median "$ref" 2)
		else
			rmed=- rmax=- qpr=-
		fi
		printf '%-16s %-10s %16s %15s %12s %13s %12s %11s %7s\n' "$name" "$label" "$qpr" "$rmed" "$rmax" \
			"$(median "$res" 4) s" "$(median "$res" 2)" "$(median "$res" 5)" "$(median "$res" 1)"
	done
done
if ((FLOOR > 0)); then
	printf '\nThe store alone (curl, answers thrown away), %d times: queries, wall median / max, the store'"'"'s CPU a time\n' "$FLOOR"
	for store in prom vm; do
		name=Prometheus
		[[ $store == vm ]] && name=VictoriaMetrics
		for which in first last; do
			f=$WORK/alone-$store-$which
			label="first read"
			[[ $which == last ]] && label="a refresh"
			grep -v '^cpu' "$f" >"$f.wall"
			printf '%-16s %-11s %2d queries  %6.2f s / %5.2f s  CPU %5.2f s\n' "$name" "$label" "$(ls "$WORK/read-$which" | wc -l)" \
				"$(median "$f.wall" 1)" "$(worst "$f.wall" 1)" "$(awk '/^cpu/ {print $2}' "$f")"
		done
	done
fi
