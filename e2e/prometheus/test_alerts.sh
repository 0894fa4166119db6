#!/usr/bin/env bash
# The Prometheus alert rules (charts/hcp-controller/files/alerts.yaml), with
# Debian's promtool and no cluster:
#   - `promtool check rules` accepts the file, lint included;
#   - `promtool test rules` passes alerts_test.yaml and alerts_long_test.yaml;
#   - every alert has a severity, a summary, a description and a runbook_url
#     pointing to its own section of docs/metrics.md (GitHub heading anchors);
#   - every alert has unit tests that expect it to fire and not to fire;
#   - the unit tests catch a broken rule: each of a few mutations of the
#     rules (a threshold, a duration, a join) makes them fail.
#
# Prints "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$here/../controller/lib.sh"
trap 'rm -rf "$CTL_TMP"' EXIT

PROMTOOL=${PROMTOOL:-promtool}
RULES=$CTL_REPO/charts/hcp-controller/files/alerts.yaml
DOC=$CTL_REPO/docs/metrics.md
TESTS=("$here/alerts_test.yaml" "$here/alerts_long_test.yaml")
RUNBOOK_BASE=https://github.com/hcp-controller/hcp-controller/blob/main/docs/metrics.md

if ! command -v "$PROMTOOL" >/dev/null; then
  echo "no promtool (Debian package prometheus; scripts/install-deps.sh installs it)"
  echo "0 passed, 1 failed"
  exit 1
fi

# ---- promtool ------------------------------------------------------------------

out=$("$PROMTOOL" check rules --lint=all --lint-fatal "$RULES" 2>&1)
rc=$?
nalerts=$(grep -c '^ *- alert: ' "$RULES")
if [ "$rc" -eq 0 ] && [[ "$out" == *"SUCCESS: $nalerts rules found"* ]]; then
  ok "promtool check rules: $nalerts rules, no lint"
else
  not_ok "promtool check rules" "exit $rc: $(tr '\n' ' ' <<<"$out")"
fi

for t in "${TESTS[@]}"; do
  out=$(cd "$here" && "$PROMTOOL" test rules "$(basename "$t")" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ] && [[ "$out" == *SUCCESS* ]]; then
    ok "promtool test rules $(basename "$t")"
  else
    not_ok "promtool test rules $(basename "$t")" "exit $rc"
    printf '%s\n' "$out" | head -60 | sed 's/^/#   /'
  fi
done

# ---- each alert: labels, annotations, runbook, tests ---------------------------

# The rules file is read line by line: one "- alert:" per rule, its labels
# and annotations as single "key: value" lines (the layout of alerts.yaml).
# Prints "ALERT SEVERITY RUNBOOK HAS-SUMMARY HAS-DESCRIPTION" per alert.
rule_fields() {
  awk '
    function flush() { if (a != "") print a, (sev ? sev : "-"), (rb ? rb : "-"), sum + 0, desc + 0 }
    /^ *- alert: / { flush(); a = $3; sev = rb = ""; sum = desc = 0; next }
    /^ *severity: / { sev = $2 }
    /^ *runbook_url: / { rb = $2 }
    /^ *summary: / { sum = 1 }
    /^ *description: / { desc = 1 }
    END { flush() }' "$RULES"
}

# slug TEXT: GitHub's anchor for a heading: lower case, punctuation other
# than "-" and "_" dropped, spaces turned into "-".
slug() { tr '[:upper:]' '[:lower:]' <<<"$1" | sed 's/[^a-z0-9 _-]//g; s/ /-/g'; }

# The anchors of docs/metrics.md's headings, one per line.
anchors=$(sed -n 's/^#\{1,6\} \(.*\)$/\1/p' "$DOC" 2>/dev/null | while IFS= read -r h; do slug "$h"; done)
check_eq "docs/metrics.md has no two headings with the same anchor" "" \
  "$(sort <<<"$anchors" | uniq -d | tr '\n' ' ')"

# test_evals ALERT: "fire" and/or "quiet" for each evaluation of ALERT in the
# unit tests (expected alerts, or exp_alerts: []).
test_evals() {
  awk -v a="$1" '
    /^ *alertname: / { cur = $2; next }
    /^ *exp_alerts: *\[\] *$/ { if (cur == a) print "quiet"; cur = ""; next }
    /^ *exp_alerts: *$/ { if (cur == a) print "fire"; cur = ""; next }' "${TESTS[@]}" | sort -u | tr '\n' ' '
}

while read -r alert sev rb has_sum has_desc; do
  case "$sev" in
    info | warning | critical) ok "$alert: severity $sev" ;;
    *) not_ok "$alert: severity info, warning or critical" "got '$sev'" ;;
  esac
  check_eq "$alert: has a summary and a description" "1 1" "$has_sum $has_desc"
  check_eq "$alert: runbook_url is its section of docs/metrics.md" "$RUNBOOK_BASE#$(slug "$alert")" "$rb"
  if grep -qxF "${rb#*#}" <<<"$anchors"; then
    ok "$alert: docs/metrics.md has the heading of #${rb#*#}"
  else
    not_ok "$alert: docs/metrics.md has the heading of #${rb#*#}" "no heading with that anchor"
  fi
  check_eq "$alert: unit tests expect it to fire and not to fire" "fire quiet " "$(test_evals "$alert")"
done < <(rule_fields)
check "the rules file has alerts" test "$nalerts" -gt 0

# ---- the unit tests catch broken rules -------------------------------------------

# mutant DESC TEST-FILE SED-EXPR: the unit tests of TEST-FILE fail once
# SED-EXPR (which must change exactly one line) is applied to the rules.
mutant() {
  local desc=$1 test=$2 expr=$3 t=$CTL_TMP/mutant
  rm -rf "$t"
  mkdir -p "$t/charts/hcp-controller/files" "$t/e2e/prometheus"
  sed "$expr" "$RULES" >"$t/charts/hcp-controller/files/alerts.yaml"
  cp "$here/$test" "$t/e2e/prometheus/"
  local changed
  changed=$(diff "$RULES" "$t/charts/hcp-controller/files/alerts.yaml" | grep -c '^>')
  if [ "$changed" -ne 1 ]; then
    not_ok "mutant '$desc' is caught" "the edit changed $changed lines, not 1 (rules edited?)"
    return
  fi
  if (cd "$t/e2e/prometheus" && "$PROMTOOL" test rules "$test" >/dev/null 2>&1); then
    not_ok "mutant '$desc' is caught" "$test still passes"
  else
    ok "mutant '$desc' is caught by $test"
  fi
}
mutant "window soon: 2 days inclusive" alerts_test.yaml 's/) > 0 < 172800$/) > 0 <= 172800/'
mutant "window soon: any pending state" alerts_test.yaml \
  '0,/(change_management_change_pending) == 2$/s//(change_management_change_pending) > 0/'
mutant "no window: 35 days exclusive" alerts_test.yaml 's/) >= 3024000$/) > 3024000/'
mutant "forced permissive: 47 hours" alerts_long_test.yaml 's/for: 48h$/for: 47h/'
mutant "forced permissive: no gap bridging" alerts_long_test.yaml \
  's/last_over_time(change_management_stanza_strategy{strategy=~"Permissive|PermissiveUntil"}\[10m\])/change_management_stanza_strategy{strategy=~"Permissive|PermissiveUntil"}/'
mutant "forced permissive: any stanza, or none" alerts_long_test.yaml \
  's/change_management_stanza_strategy{strategy=~"Permissive|PermissiveUntil"}\[10m\]/change_management_stanza_strategy[10m]/'
mutant "forced permissive: an expired override still counts" alerts_long_test.yaml \
  's/last_over_time(change_management_strategy_enabled{strategy="Permissive"}\[10m\])/last_over_time(change_management_strategy_enabled[10m])/'
mutant "policy not ready: one alert per replica" alerts_test.yaml \
  's/max by (namespace, policy) (change_management_policy_ready) == 0/change_management_policy_ready == 0/'
mutant "no window: RestrictiveUntil excused" alerts_test.yaml \
  's/change_management_stanza_strategy{strategy="RestrictiveUntil"}/change_management_stanza_strategy{strategy="None"}/'
mutant "no window: a Restrictive policy alerts" alerts_test.yaml \
  's/change_management_strategy_enabled{strategy="Restrictive"}$/change_management_strategy_enabled{strategy="Restrictive",kind="none"}/'
mutant "re-assertions: 5 in 30 minutes" alerts_test.yaml 's/\[30m\])) > 5$/[30m])) >= 5/'
mutant "re-assertions: counter resets" alerts_test.yaml 's/(increase(hcp_controller_pause_reassertions_total/(delta(hcp_controller_pause_reassertions_total/'
mutant "not held: counter resets" alerts_test.yaml \
  's/(increase(change_management_unheld_changes_total/(delta(change_management_unheld_changes_total/'
mutant "not held: a window of 5 minutes" alerts_test.yaml \
  's/change_management_unheld_changes_total\[30m\]/change_management_unheld_changes_total[5m]/'
mutant "held change aging: at the warning" alerts_test.yaml \
  's/^          > on () group_left ()$/          >= on () group_left ()/'
mutant "held change aging: one alert per replica" alerts_test.yaml \
  's/^          max by (kind, namespace, object, system) (change_management_held_change_age_seconds)$/          change_management_held_change_age_seconds/'
mutant "wave halted: at once" alerts_test.yaml '/alert: HCPWaveHalted$/,/for:/ s/for: 10m$/for: 0m/'
mutant "wave halted: one alert per replica" alerts_test.yaml \
  's/^          max by (wave, release, system) (change_management_wave_clusters{state="WaveHalted"}) > 0$/          change_management_wave_clusters{state="WaveHalted"} > 0/'
mutant "wave halted: waiting for soak too" alerts_test.yaml \
  's/(change_management_wave_clusters{state="WaveHalted"})/(change_management_wave_clusters{state=~"WaveHalted|WaitingForSoak"})/'
mutant "down: a target that is down counts as present" alerts_test.yaml \
  's/absent(up{job=~".\*hcp-controller.\*"} == 1)/absent(up{job=~".*hcp-controller.*"})/'
mutant "no leader: every replica must lead" alerts_test.yaml 's/sum by (job) (hcp_controller_leader) < 1/min by (job) (hcp_controller_leader) < 1/'

summary
