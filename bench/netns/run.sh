#!/usr/bin/env bash
# bench/netns/run.sh — three "hosts" on one machine: Q1 --nodes 3 across
# network namespaces, one host's link cut mid-run (issue 14, item 6).
#
# Three network namespaces (sb-ns1..3), each joined by a veth pair to a
# bridge (sb-br0, 10.203.0.1/24) in the root namespace, each running a
# NATS server with JetStream (clustered over routes: replicas 3) and a
# `sagebench worker`. The reference stack (`sagebench serve`) and the
# coordinator (`sagebench run -e Q1 --quick --nodes 3 --nats-url ...`)
# run in the root namespace on the bridge address. Once the three workers
# have joined and traffic runs, one host's link is set down; the script
# then reports whether the run completed, the transactions lost and the
# duplicates. Everything it creates is removed on exit.
#
# Opt-in: runs only with SAGEBENCH_NETNS=1, as root, with iproute2.
# Knobs (environment): CUT_HOST (1-3, default 1: the server the
# coordinator connected to), CUT_AFTER (seconds of traffic before the
# cut, default 4), REQUESTS (transactions, default 300 at Q1's quick 20/s),
# RUN_TIMEOUT (seconds, default 300), KEEP=1 keeps the work directory.
set -euo pipefail

if [[ "${SAGEBENCH_NETNS:-}" != 1 ]]; then
	cat <<'EOF'
bench/netns/run.sh: skipped (opt-in). It creates three network namespaces
joined by veth links to a bridge on 10.203.0.0/24, runs a NATS server and a
sagebench worker in each, runs `sagebench run -e Q1 --quick --nodes 3` across
them, cuts one host's link mid-run and reports completed / lost / duplicates.
Run it as root, from the repository:
  sudo SAGEBENCH_NETNS=1 bench/netns/run.sh
See docs/distributed.md ("Several hosts on one machine").
EOF
	exit 0
fi
if [[ $(id -u) != 0 ]]; then
	echo "bench/netns/run.sh: needs root (ip netns); run: sudo SAGEBENCH_NETNS=1 $0" >&2
	exit 2
fi
command -v ip >/dev/null || { echo "bench/netns/run.sh: ip (iproute2) not found: apt-get install iproute2" >&2; exit 2; }
command -v go >/dev/null || PATH=/usr/local/go/bin:$PATH
command -v go >/dev/null || { echo "bench/netns/run.sh: go not found (it builds sagebench and nats-server)" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench/netns/run.sh: jq not found: apt-get install jq" >&2; exit 2; }

CUT_HOST=${CUT_HOST:-1}
CUT_AFTER=${CUT_AFTER:-4}
REQUESTS=${REQUESTS:-300}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
NET=10.203.0
BR=sb-br0
STACK_PORT=18080
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

if ip link show "$BR" >/dev/null 2>&1 || ip netns list | grep -q '^sb-ns'; then
	echo "bench/netns/run.sh: $BR or an sb-ns* namespace exists (another run, or one that was killed);" \
		"remove them: ip link del $BR; ip netns del sb-ns1; ip netns del sb-ns2; ip netns del sb-ns3" >&2
	exit 2
fi

WORK=$(mktemp -d /tmp/sagebench-netns.XXXXXX)
PIDS=()
cleanup() {
	local rc=$?
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	for i in 1 2 3; do ip netns del "sb-ns$i" 2>/dev/null || true; done
	ip link del "$BR" 2>/dev/null || true
	if [[ "${KEEP:-}" == 1 ]]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT INT TERM

log() { printf '%s  %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# wait_for FILE PATTERN SECONDS: until PATTERN appears in FILE.
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench/netns/run.sh: '$2' not in $1 after $3 s:" >&2
	tail -20 "$1" >&2 || true
	return 1
}

log "$(date -u '+%Y-%m-%d') load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
log "building sagebench and nats-server (the module's github.com/nats-io/nats-server/v2)"
(cd "$ROOT" && go build -o "$WORK/sagebench" ./cmd/sagebench && go build -o "$WORK/nats-server" github.com/nats-io/nats-server/v2)

log "network: bridge $BR $NET.1/24, namespaces sb-ns1..3 at $NET.11-13"
ip link add "$BR" type bridge
ip addr add "$NET.1/24" dev "$BR"
ip link set "$BR" up
for i in 1 2 3; do
	ip netns add "sb-ns$i"
	ip link add "sb-h$i" type veth peer name "sb-n$i"
	ip link set "sb-h$i" master "$BR" up
	ip link set "sb-n$i" netns "sb-ns$i"
	ip -n "sb-ns$i" addr add "$NET.1$i/24" dev "sb-n$i"
	ip -n "sb-ns$i" link set "sb-n$i" up
	ip -n "sb-ns$i" link set lo up
done

log "reference stack: sagebench serve on $NET.1:$STACK_PORT (Q1's index: 2000 documents, seed 42)"
printf 'index:\n  size: 2000\n  seed: 42\n' >"$WORK/stack.yaml"
# serve refuses a non-loopback address without an admin token
SAGEBENCH_ADMIN_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
export SAGEBENCH_ADMIN_TOKEN
"$WORK/sagebench" serve --listen "$NET.1:$STACK_PORT" --config "$WORK/stack.yaml" >"$WORK/serve.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/serve.log" "listening on" 30

ROUTES="nats://$NET.11:6222,nats://$NET.12:6222,nats://$NET.13:6222"
for i in 1 2 3; do
	ip netns exec "sb-ns$i" "$WORK/nats-server" -js -n "h$i" -a "$NET.1$i" -p 4222 \
		--cluster_name sagebench-netns --cluster "nats://$NET.1$i:6222" --routes "$ROUTES" \
		-sd "$WORK/store-h$i" -l "$WORK/nats-h$i.log" &
	PIDS+=($!)
done
log "NATS: three servers clustered over $ROUTES; waiting for the JetStream metadata leader"
for i in 1 2 3; do wait_for "$WORK/nats-h$i.log" "metadata leader" 60; done

for i in 1 2 3; do
	ip netns exec "sb-ns$i" "$WORK/sagebench" worker --nats-url "nats://$NET.1$i:4222" \
		--target "http://$NET.1:$STACK_PORT" --name "h$i" --once --progress 2s --drain 5s \
		>"$WORK/worker-h$i.log" 2>&1 &
	PIDS+=($!)
done
for i in 1 2 3; do wait_for "$WORK/worker-h$i.log" "waiting for a run" 30; done

log "coordinator: sagebench run -e Q1 --quick --total-requests $REQUESTS --nodes 3 --nats-url nats://$NET.11:4222"
set +e
timeout -s INT -k 30 "$RUN_TIMEOUT" "$WORK/sagebench" run -e Q1 --quick --total-requests "$REQUESTS" --nodes 3 \
	--nats-url "nats://$NET.11:4222" --target "http://$NET.1:$STACK_PORT" --output-dir "$WORK/out" -v \
	>"$WORK/run.out" 2>"$WORK/run.err" &
RUN=$!
set -e
for i in 1 2 3; do wait_for "$WORK/worker-h$i.log" "joined run" 60; done
log "three workers joined; cutting host $CUT_HOST's link (sb-h$CUT_HOST down) after ${CUT_AFTER}s of traffic"
sleep "$CUT_AFTER"
ip link set "sb-h$CUT_HOST" down
CUT_AT=$(date +%s)
log "link of host $CUT_HOST is down"

set +e
wait "$RUN"
CODE=$?
set -e
log "coordinator exited $CODE, $(($(date +%s) - CUT_AT)) s after the cut; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "--- result"
DIR=$(ls -d "$WORK"/out/q1/q1-* 2>/dev/null | head -1 || true)
if [[ -z "$DIR" ]]; then
	echo "no run directory; the coordinator's stderr:"
	tail -20 "$WORK/run.err"
	exit 1
fi
jq -r '"complete: \(.complete)  valid: \(.valid)  invalid_reasons: \(.invalid_reasons | join("; "))"' "$DIR/run.json"
read -r IDS LOST < <(jq -rs --argjson n "$REQUESTS" '[.[] | select(.kind == "txn")] as $t
	| ($t | map(.id) | unique | length) as $ids
	| "\($ids) \(($n - $ids) + ($t | map(select(.error_class == "canceled")) | length))"' "$DIR/requests.jsonl")
jq -rs --argjson n "$REQUESTS" '
	[.[] | select(.kind == "txn")] as $t
	| ($t | map(.id) | unique | length) as $ids
	| "transactions: scheduled \($n), recorded \($t | length) (distinct \($ids)), ok \($t | map(select(.ok)) | length), "
	+ "failed \($t | map(select(.ok | not)) | length), duplicates in the records \(($t | length) - $ids)",
	  "failures by class: \($t | map(select(.ok | not)) | group_by(.error_class) | map("\(.[0].error_class) \(length)") | join(", ") | if . == "" then "none" else . end)"
' "$DIR/requests.jsonl"
echo "lost (never recorded, or cancelled inside the pipeline): $LOST"
grep -h "dataflow on NATS JetStream" "$WORK/run.out" "$WORK/run.err" || true
grep -hE "^ *[0-9.]+s +sent" "$WORK/run.out" "$WORK/run.err" | tail -4 || true
echo "coordinator: $(grep -E 'nats: (disconnected|reconnected)' "$WORK/run.err" | tr '\n' '|')"
echo "--- workers"
for i in 1 2 3; do
	echo "h$i: $(grep -E 'joined run|left run|coordinator .* gone|disconnected|reconnected' "$WORK/worker-h$i.log" | sed 's/^sagebench worker: //' | tr '\n' '|')"
done
# the verdict: the run completed and lost nothing (its validity — schedule
# lag on a loaded machine — is reported above, not judged here)
if [[ $(jq -r .complete "$DIR/run.json") == true && "$LOST" == 0 ]]; then
	echo "PASS: host $CUT_HOST cut mid-run; the run completed with lost = 0 (coordinator exit $CODE)"
	exit 0
fi
echo "FAIL: host $CUT_HOST cut mid-run; complete $(jq -r .complete "$DIR/run.json"), lost $LOST (coordinator exit $CODE)"
exit 1
