#!/usr/bin/env bash
# The minimum time left (a policy's spec.minTimeLeft) on the simulated clock,
# beside the HyperShift / Cluster API behaviour model with the admission
# webhooks: a release requested while a window is open but with less than
# the minimum left is held (the control plane is not started: the model
# records no initiation), the conditions, the companion and an Event say
# the window, the minimum and the effective start, and the held release is
# let through at the next window's open. 2026-03-06 is a Friday.
#
# Needs the "main" instance (e2e/cluster.sh up main), build/hcp-controller
# and the model (e2e/model/build.sh, or HCP_MODEL_BIN). CTL_E2E_ONLY="fn ..."
# runs only the named scenarios. Prints "N passed, N failed".
#
# `make e2e-capi` runs it on the "capi" instance too (CTL_E2E_INSTANCE=capi),
# where Cluster API's own controllers act on the machines the model records.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/lib.sh"
# shellcheck source=e2e/model/lib.sh
. "$here/../model/lib.sh"

TOL=2.5 # real seconds a transition may lag its boundary
WH_NAME=hcp-e2e-minleft-$$


# Daily windows [00:00, 23:00) UTC and a control-plane minimum of 2h: the
# controller starts on Friday 22:00 (1h of the window left, the next window
# an hour after it closes) at 300 times real time.
held_in_the_last_minimum() {
  local ns hc
  ns=$(new_ns minleft) || return
  must mk_policy "$ns" daily '{"strategy": "MaintenanceSchedule", "minTimeLeft": {"controlPlane": "2h"},
    "maintenanceSchedule": {"permit": {"rrule": "FREQ=DAILY", "startTime": "00:00", "duration": "23h"}}}' || return
  must mk_hc "$ns" hc1 policy=daily || return
  hc=$(hc_path "$ns" hc1)
  model_scenario "$ns" 2026-03-06T22:00:00Z 300 hc1 || return
  EVENTUALLY=3 eventually "ChangesPaused=True (MinTimeLeft) in the window's last 2h" True/MinTimeLeft \
    hc_cond_sr "$ns" hc1 ChangesPaused
  check_contains "ChangesPaused names the window, the minimum and the effective start" \
    "the window 2026-03-06T00:00:00Z–2026-03-06T23:00:00Z has less than 2h left (the policy's minTimeLeft); the next start is at 2026-03-07T00:00:00Z." \
    "$(cond "$hc" ChangesPaused message)"
  release_held "a release with 1h of the open window left" "$hc" "$REL1" "$REL0"
  eventually "ChangesPending=True (MinTimeLeft) while held" True/MinTimeLeft hc_cond_sr "$ns" hc1 ChangesPending
  eventually "a MinTimeLeft Event" 1 count_events "$ns" hc1 MinTimeLeft
  eventually "the Cluster carries the pause with the marker while the release is held" paused+marker \
    pause_state "$(cluster_path "$ns" hc1)"
  eventually "the companion: current ChangesPaused (MinTimeLeft)" ChangesPaused/MinTimeLeft \
    cm_status "$ns" hostedcluster hc1 '.current | "\(.state)/\(.reason)"'
  now_is "the companion: the minimum and the effective start" 7200/Policy/2026-03-07T00:00:00Z \
    cm_status "$ns" hostedcluster hc1 '.minTimeLeft | "\(.seconds)/\(.source)/\(.effectiveStart)"'
  still_before a 2026-03-06T23:00:00Z "held inside the open window"

  starts_at a "the control plane starts at the next window's open, not before" 2026-03-07T00:00:00Z "$TOL" \
    controlplane-initiation "$ns/hc1"
  now_is "the held release is applied" "$REL1" get "$hc" .spec.release.image
  eventually "ChangesPaused=False (ChangesPermitted) with the minimum ahead" False/ChangesPermitted \
    hc_cond_sr "$ns" hc1 ChangesPaused
}

model_suite_begin
run_scenario held_in_the_last_minimum
summary
