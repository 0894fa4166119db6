#!/usr/bin/env bash
# End-to-end: a configuration HyperShift makes by itself (drift: the
# control-plane operator's core ignition ConfigMap changed, as its update
# does; then a restart of HyperShift's reconciler with another one changed,
# as an operator update), held on the pool's MachineDeployment without a
# rollout until the window, beside HyperShift's own NodePool reconciler and
# real Cluster API.
# The scenario is test_hypershift.sh's "drift" (HS_SCENARIO=drift), after
# the same pool comes up.
exec env HS_SCENARIO=drift "$(cd "$(dirname "$0")" && pwd)/test_hypershift.sh" "$@"
