#!/usr/bin/env bash
# End-to-end: a controller's start beside a large fleet. Every cache lists
# its collection page by page (100 objects a page; MachineSets cluster-wide)
# while other writers go on, and every page must arrive whole the first
# time. A page that stopped on the way would be cut only by the read's stall
# guard (15 s) and its list made again: the start would take tens of seconds
# and the log would say "watch failed; retrying". Over HTTP/2 multiplexing
# (libcurl 7.88) most starts did; see docs/architecture.md, "Transport".
# 2,800 MachineSets, ten of them annotated without pause, eight starts.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"

SIM0=2026-03-06T18:00:00Z
FLEET_SIZE=2800
STARTS=8

begin_suite

NS=$(new_ns start)
FLEET=$(new_ns start-fleet)

# The fleet: MachineSets of 1 KiB or so each, as HyperShift's are.
jq -n --arg ns "$FLEET" --argjson n "$FLEET_SIZE" '{apiVersion: "v1", kind: "List", items: [range($n) | {
    apiVersion: "cluster.x-k8s.io/v1beta2", kind: "MachineSet",
    metadata: {name: "ms-\(.)", namespace: $ns, labels: {"cluster.x-k8s.io/cluster-name": "fleet"},
      annotations: {note: ("x" * 600)}},
    spec: {clusterName: "fleet", replicas: 1,
      selector: {matchLabels: {"cluster.x-k8s.io/cluster-name": "fleet"}},
      template: {metadata: {labels: {"cluster.x-k8s.io/cluster-name": "fleet"}},
        spec: {clusterName: "fleet", bootstrap: {dataSecretName: "fleet"},
          infrastructureRef: {apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachineTemplate", name: "fleet"}}}}}]}' \
  >"$CTL_TMP/fleet.json"
k create -f "$CTL_TMP/fleet.json" >/dev/null 2>"$CTL_TMP/fleet.err" ||
  { cat "$CTL_TMP/fleet.err" >&2; not_ok "the fleet's MachineSets created"; }
check_eq "the fleet: $FLEET_SIZE MachineSets" "$FLEET_SIZE" \
  "$(k get machinesets.cluster.x-k8s.io -n "$FLEET" -o name | wc -l)"

# Writes go on throughout, as HyperShift's and Cluster API's do.
touch "$CTL_TMP/writing"
(
  i=0
  while [ -f "$CTL_TMP/writing" ]; do
    i=$((i + 1))
    k annotate machinesets.cluster.x-k8s.io -n "$FLEET" ms-0 ms-1 ms-2 ms-3 ms-4 ms-5 ms-6 ms-7 ms-8 ms-9 \
      "writer=$i" --overwrite >/dev/null 2>&1
  done
) &
writer=$!

retried=0 slowest=0
for i in $(seq 1 "$STARTS"); do
  if ! start_ctl "s$i" "$NS" "$SIM0" 1; then
    not_ok "start $i: ready"
    continue
  fi
  ms=$(((CTL_TREADY[s$i] - CTL_T0[s$i]) / 1000))
  [ "$ms" -gt "$slowest" ] && slowest=$ms
  # A request that failed (not an answer such as 410 Gone, which is the API
  # server's to give): its error names the request.
  if grep -q 'watch failed; retrying.* error="GET ' "${CTL_LOG[s$i]}"; then
    retried=$((retried + 1))
    echo "# start $i: ready after $ms ms; a read failed and was made again:" >&2
    grep 'watch failed; retrying.* error="GET ' "${CTL_LOG[s$i]}" | head -3 | cut -c1-300 | sed 's/^/#   /' >&2
  fi
  stop_ctl "s$i" KILL
done
echo "# $STARTS starts beside $FLEET_SIZE MachineSets: the slowest ready after $slowest ms"
check_eq "no start had a read cut and made again ($STARTS starts)" 0 "$retried"

rm -f "$CTL_TMP/writing"
wait "$writer" 2>/dev/null
# Gone before the next suite, whose controllers list every MachineSet.
# One delete of the collection, given time to finish: with Cluster API's
# webhooks it takes about 12 s, and a client that gave up before the answer
# would cut it short.
k delete --raw "/apis/cluster.x-k8s.io/v1beta2/namespaces/$FLEET/machinesets" --request-timeout=120s >/dev/null
fleet_gone() { [ "$(get "/apis/cluster.x-k8s.io/v1beta2/namespaces/$FLEET/machinesets" '.items | length')" = 0 ]; }
check "the fleet deleted" wait_for 120 fleet_gone

summary
