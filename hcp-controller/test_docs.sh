#!/usr/bin/env bash
# Checks the documentation (README.md, docs/*.md) and examples/ against the
# built binary in $HCP_BIN:
#   - every fenced ```yaml / ```json block holding a HostedChangeManagementPolicy
#     is accepted by `hcp-controller preview` and yields at least one window;
#     a block preceded by <!-- invalid-example: FIELD --> must instead exit 2
#     with a message naming FIELD; no policy hides outside such blocks;
#   - every ```text block starting with "$ hcp-controller preview ..." shows
#     exactly what that command prints today (policy.yaml is the policy block
#     above it in the same file; examples/ is the repository's);
#   - HostedCluster/NodePool blocks use only the stanza's fields, strategies
#     and RFC 3339 times, and name policies that the page defines;
#   - every stanza annotation key written anywhere in the docs exists;
#   - every flag of `hcp-controller run --help` is in README's reference table
#     and the table lists no other flag;
#   - every metric family the binary's /metrics serves is in a table of
#     docs/metrics.md with its type, and the tables name no other metric;
#   - relative links resolve and the `make` targets named in README exist.
# Prints one line per check and a final "N passed, N failed".
set -u

BIN=${HCP_BIN:?set HCP_BIN to the hcp-controller binary}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$REPO/e2e/controller/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$CTL_TMP"' EXIT

FROM=2026-01-01T00:00:00Z
CM=changemanagement.hypershift.openshift.io
STANZA_ANNOTATIONS=" strategy policy permissive-until restrictive-until "
# (opted-in is a label the controller keeps for the webhooks' objectSelector.)
OTHER_ANNOTATIONS=" paused-by spec-paused-by opted-in exclusion-calendar requested-release-image requested-nodepool-spec requested-hostedcluster-spec requested-control-plane-release-image held-template held-drift template-inputs skip-health-gate skip-recommendation-check reason override-by override-at override-reason override-skipped requested-by requested-at requested-reason withdrawn-by withdrawn-at withdrawn notified wave-evidence "
STANZA_FIELDS=" strategy byPolicy permissiveUntil restrictiveUntil "
STRATEGIES=" ByPolicy Permissive Restrictive PermissiveUntil RestrictiveUntil "

cd "$REPO" || exit 1
DOCS=(README.md docs/*.md)
echo "# documents: ${DOCS[*]}"

# ---- splitting Markdown into fenced blocks ------------------------------------

# blocks FILE: writes each fenced block of FILE to $tmp/blocks/<n> and prints
# "<n> <lang> <line> <marker>" per block, where marker is the HTML comment on
# the line just above the fence (without <!-- -->), or "-". Lines outside a
# yaml/json block that name the policy kind are reported as "stray <line>".
mkdir -p "$tmp/blocks"
nblocks=0
blocks() {
  awk -v dir="$tmp/blocks" -v base="$nblocks" '
    function kindline(s) {
      return s ~ /kind:[ \t]*HostedChangeManagementPolicy/ ||
             s ~ /"kind"[ \t]*:[ \t]*"HostedChangeManagementPolicy"/
    }
    /^```/ {
      if (!infence) {
        infence = 1; n++; lang = substr($0, 4); gsub(/[ \t]/, "", lang)
        if (lang == "") lang = "-"
        out = dir "/" (base + n); printf "" > out
        m = prev ~ /^<!--.*-->[ \t]*$/ ? prev : "-"
        sub(/^<!--[ \t]*/, "", m); sub(/[ \t]*-->[ \t]*$/, "", m); gsub(/ /, "_", m)
        print (base + n), lang, NR, m
      } else {
        infence = 0; close(out)
      }
      prev = $0; next
    }
    infence { print > out; if (kindline($0) && lang != "yaml" && lang != "json") print "stray", NR; next }
    kindline($0) { print "stray", NR }
    $0 ~ /[^ \t]/ { prev = $0 }' "$1"
}

index_file=$tmp/index
for doc in "${DOCS[@]}"; do
  while read -r a b c d; do
    if [ "$a" = stray ]; then
      echo "stray $doc $b" >>"$index_file"
    else
      echo "$a $doc $c $b $d" >>"$index_file"
      nblocks=$a
    fi
  done < <(blocks "$doc")
done
: >>"$index_file"

is_policy() { grep -qE 'kind:[[:space:]]*HostedChangeManagementPolicy|"kind"[[:space:]]*:[[:space:]]*"HostedChangeManagementPolicy"' "$1"; }

strays=$(awk '$1 == "stray" { printf "%s:%s ", $2, $3 }' "$index_file")
check_eq "every policy in the docs is in a fenced yaml or json block" "" "$strays"

# ---- policy blocks ------------------------------------------------------------

# run ARGS...: the binary's stdout, stderr and status in $out, $err, $rc.
run() {
  "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}

# check_policy NAME FILE MARKER
check_policy() {
  local name=$1 file=$2 marker=$3 field n
  if [[ "$marker" == invalid-example:* ]]; then
    field=${marker#invalid-example:}
    field=${field#_}
    run preview -f "$file" --from $FROM --count 3 -o json
    if [ "$rc" -eq 2 ] && [ -n "$field" ] && [[ "$err" == *"$field"* ]] && [ -z "$out" ]; then
      ok "$name is rejected naming $field"
    else
      not_ok "$name is rejected naming ${field:-(no field in the marker)}" "status $rc, stderr: $err"
    fi
    return
  fi
  run preview -f "$file" --from $FROM --count 3 -o json
  n=$(grep -o '"start"' <<<"$out" | wc -l)
  if [ "$rc" -eq 0 ] && [ "$n" -ge 1 ] && [ -z "$err" ]; then
    ok "$name: valid, $n window(s) from $FROM"
  else
    not_ok "$name is a valid policy with a window" "status $rc, $n windows, stderr: $err"
  fi
}

npolicies=0
while read -r n doc line lang marker; do
  [ "$n" = stray ] && continue
  [ "$lang" = yaml ] || [ "$lang" = json ] || continue
  is_policy "$tmp/blocks/$n" || continue
  npolicies=$((npolicies + 1))
  cp "$tmp/blocks/$n" "$tmp/policy-$n.$lang"
  check_policy "$doc:$line policy" "$tmp/policy-$n.$lang" "$marker"
done <"$index_file"
check "the docs hold policy examples" test "$npolicies" -ge 1

for f in examples/*.yaml examples/*.json; do
  [ -e "$f" ] || continue
  check_policy "$f" "$f" -
done

# ---- command output blocks ------------------------------------------------------

# A ```text block whose first line is "$ hcp-controller preview ...": the
# command runs in a directory holding policy.yaml (the last policy block above
# it in the same file), guard-rails.yaml (the last ConfigMap block above it)
# and examples/; its output (stdout and stderr) must be the rest of the block.
outputs=0
last_policy=""
last_guard=""
last_doc=""
while read -r n doc line lang marker; do
  [ "$n" = stray ] && continue
  [ "$doc" = "$last_doc" ] || { last_policy=""; last_guard=""; }
  last_doc=$doc
  if [ "$lang" = yaml ] && grep -q '^kind: ConfigMap' "$tmp/blocks/$n"; then
    last_guard=$tmp/blocks/$n
    continue
  fi
  if { [ "$lang" = yaml ] || [ "$lang" = json ]; } && is_policy "$tmp/blocks/$n"; then
    last_policy=$tmp/blocks/$n
    continue
  fi
  [ "$lang" = text ] || continue
  first=$(head -1 "$tmp/blocks/$n")
  [[ "$first" == '$ hcp-controller preview'* ]] || continue
  outputs=$((outputs + 1))
  work=$tmp/run-$n
  mkdir -p "$work"
  ln -s "$REPO/examples" "$work/examples"
  [ -n "$last_policy" ] && cp "$last_policy" "$work/policy.yaml"
  [ -n "$last_guard" ] && cp "$last_guard" "$work/guard-rails.yaml"
  read -r -a args <<<"${first#\$ hcp-controller }"
  want=$(tail -n +2 "$tmp/blocks/$n")
  got=$(cd "$work" && "$BIN" "${args[@]}" 2>&1)
  if [ "$got" = "$want" ]; then
    ok "$doc:$line output of: ${first#\$ }"
  else
    not_ok "$doc:$line output of: ${first#\$ }" "differs:"
    diff <(echo "$want") <(echo "$got") | sed 's/^/#   /' | head -20
  fi
done <"$index_file"
check "the docs show preview output" test "$outputs" -ge 1

# ---- HostedCluster and NodePool blocks -------------------------------------------

# policy_names: the metadata.name of every policy block and example.
policy_names=" $(for f in "$tmp"/policy-* examples/*.yaml examples/*.json; do
  [ -e "$f" ] && awk '/^metadata:/ { m = 1; next } m && /^  name:/ { print $2; exit }
    /"name"[ \t]*:/ { if (match($0, /"name"[ \t]*:[ \t]*"[^"]*"/)) { s = substr($0, RSTART, RLENGTH); sub(/.*:[ \t]*"/, "", s); sub(/"$/, "", s); print s; exit } }' "$f"
done | tr '\n' ' ') "

# stanza_problems FILE: what is wrong with the stanza in a HostedCluster or
# NodePool YAML block, one problem per line.
stanza_problems() {
  local key val
  # Annotation form.
  while read -r key val; do
    key=${key%:}
    val=${val#\"}
    val=${val%\"}
    case " $STANZA_ANNOTATIONS " in *" ${key#"$CM"/} "*) ;; *) echo "unknown annotation $key" ;; esac
    case ${key#"$CM"/} in
      strategy) [[ "$STRATEGIES" == *" $val "* ]] || echo "strategy $val is not one of$STRATEGIES" ;;
      policy) [[ "$policy_names" == *" $val "* ]] || echo "policy $val is not defined on the page" ;;
      *-until) valid_time "$val" || echo "$key: $val is not an RFC 3339 time" ;;
    esac
  done < <(grep -E "^[[:space:]]+$CM/" "$1" | sed 's/^[[:space:]]*//')
  # Spec form: the keys one level below changeManagement, and byPolicy.name.
  awk '
    /^[ \t]*changeManagement:/ { ind = match($0, /[^ ]/); on = 1; next }
    on {
      i = match($0, /[^ ]/)
      if (i <= ind) { on = 0; next }
      if (!child) child = i
      line = $0; sub(/^[ \t]*/, "", line); split(line, kv, ":")
      val = line; sub(/^[^:]*:[ \t]*/, "", val); gsub(/"/, "", val)
      if (i == child) { print "field", kv[1], val; parent = kv[1] }
      else print "sub", parent "." kv[1], val
    }' "$1" | while read -r what key val; do
    if [ "$what" = field ]; then
      [[ "$STANZA_FIELDS" == *" $key "* ]] || echo "unknown field changeManagement.$key"
      case $key in
        strategy) [[ "$STRATEGIES" == *" $val "* ]] || echo "strategy $val is not one of$STRATEGIES" ;;
        *Until) valid_time "$val" || echo "$key: $val is not an RFC 3339 time" ;;
      esac
    else
      [ "$key" = byPolicy.name ] || echo "unknown field changeManagement.$key"
      [[ "$policy_names" == *" $val "* ]] || echo "policy $val is not defined on the page"
    fi
  done
}

valid_time() {
  [[ "$1" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$ ]] &&
    date -u -d "$1" >/dev/null 2>&1
}

nstanzas=0
while read -r n doc line lang marker; do
  [ "$n" = stray ] && continue
  [ "$lang" = yaml ] || continue
  grep -qE '^kind:[[:space:]]*(HostedCluster|NodePool)[[:space:]]*$' "$tmp/blocks/$n" || continue
  grep -qE "changeManagement:|$CM/" "$tmp/blocks/$n" || continue
  nstanzas=$((nstanzas + 1))
  check_eq "$doc:$line changeManagement stanza" "" "$(stanza_problems "$tmp/blocks/$n" | tr '\n' ';')"
done <"$index_file"
check "the docs show stanza examples" test "$nstanzas" -ge 2

# The checker itself: a misspelt stanza fails.
printf 'kind: NodePool\nspec:\n  changeManagement:\n    strategy: PermisiveUntil\n    permissiveUntill: "2026-01-01T00:00:00Z"\n' >"$tmp/bad-stanza.yaml"
problems=$(stanza_problems "$tmp/bad-stanza.yaml" | tr '\n' ';')
check_contains "a misspelt stanza field is caught" "unknown field changeManagement.permissiveUntill" "$problems"
check_contains "a misspelt strategy is caught" "strategy PermisiveUntil is not one of" "$problems"

# Every annotation key of the stanza's prefix, anywhere in the docs (kubectl
# commands included, also when they spell the prefix "$CM/"), is one the
# controller reads or writes. (A trailing "-" is kubectl's syntax for
# removing one; $CM/v1alpha1 is the API version.)
bad_keys=$(grep -ohE "($CM|\\\$CM|\\\$\{CM\})/[a-zA-Z0-9-]+" "${DOCS[@]}" | grep -vE '/v[0-9]' | sort -u |
  while read -r k; do
  s=${k#*/}
  s=${s%-}
  [[ "$STANZA_ANNOTATIONS$OTHER_ANNOTATIONS" == *" $s "* ]] || echo "$k"
done | tr '\n' ' ')
check_eq "every $CM/ annotation in the docs exists" "" "$bad_keys"

# ---- README: the flags of `hcp-controller run` -----------------------------------

# The flag column of the help: lines starting with "  -", up to the first gap
# of two spaces.
help_flags=$("$BIN" run --help | awk '/^  -/ { s = substr($0, 3); i = index(s, "  "); print (i ? substr(s, 1, i - 1) : s) }' |
  grep -oE -- '(^|[ ,])--?[a-z][a-z-]*' | grep -oE -- '--?[a-z][a-z-]*' | sort -u)
table_flags=$(grep -E '^\| `-' README.md | cut -d'|' -f2 | grep -oE -- '`--?[a-z][a-z-]*' | tr -d '`' | sort -u)
check "run --help prints flags" test "$(wc -l <<<"$help_flags")" -ge 10
missing=$(comm -23 <(echo "$help_flags") <(echo "$table_flags") | tr '\n' ' ')
extra=$(comm -13 <(echo "$help_flags") <(echo "$table_flags") | tr '\n' ' ')
check_eq "every flag of run --help is in README's reference table" "" "$missing"
check_eq "README's reference table has no flag run --help lacks" "" "$extra"

# ---- metrics ---------------------------------------------------------------------

# The families /metrics serves, as "name type" lines: the binary's own
# scrape (every family writes its # TYPE line with or without samples),
# with a kubeconfig that points at a closed port (no cluster is needed).
cat >"$tmp/dead.kubeconfig" <<'KCFG'
apiVersion: v1
kind: Config
clusters: [{name: x, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: x, user: u}}]
current-context: x
KCFG
# The default (--metrics-secure): HTTPS, a self-signed certificate, and no
# answer without the API server's review: no token 401; a token the dead API
# server cannot review 503 (never 200).
mport=$(free_port)
"$BIN" run --kubeconfig "$tmp/dead.kubeconfig" --metrics-bind-address "127.0.0.1:$mport" \
  --health-probe-bind-address 0 >"$tmp/secure-run.log" 2>&1 &
spid=$!
code=""
for _ in $(seq 50); do
  code=$(curl -sk -o /dev/null -w '%{http_code}' --max-time 2 "https://127.0.0.1:$mport/metrics")
  [ "$code" != 000 ] && break
  sleep 0.1
done
check_eq "--metrics-secure (default): /metrics without a token over HTTPS: 401" 401 "$code"
check_eq "--metrics-secure: a token the API server cannot review: 503" 503 \
  "$(curl -sk -o "$tmp/secure.body" -w '%{http_code}' --max-time 10 -H 'Authorization: Bearer x' "https://127.0.0.1:$mport/metrics")"
check "the 503 says the TokenReview failed" grep -q 'TokenReview failed' "$tmp/secure.body"
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

mport=$(free_port)
"$BIN" run --kubeconfig "$tmp/dead.kubeconfig" --metrics-bind-address "127.0.0.1:$mport" \
  --metrics-secure=false --health-probe-bind-address 0 >"$tmp/metrics-run.log" 2>&1 &
mpid=$!
served=""
for _ in $(seq 50); do
  served=$(curl -s --max-time 2 "http://127.0.0.1:$mport/metrics" | awk '/^# TYPE / { print $3, $4 }' | sort -u)
  [ -n "$served" ] && break
  sleep 0.1
done
kill "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null
documented=$(grep -E '^\| `(hcp_controller|change_management)_[a-z_]+` \| [a-z]+ \|' docs/metrics.md |
  awk -F'|' '{ gsub(/[` ]/, "", $2); gsub(/ /, "", $3); print $2, $3 }' | sort -u)
check "/metrics serves metric families ($(wc -l <<<"$served"))" test "$(wc -l <<<"$served")" -ge 10
check_eq "every metric /metrics serves is in docs/metrics.md with its type" "" \
  "$(comm -23 <(echo "$served") <(echo "$documented") | tr '\n' ';')"
check_eq "docs/metrics.md documents no metric /metrics lacks" "" \
  "$(comm -13 <(echo "$served") <(echo "$documented") | tr '\n' ';')"

# ---- links and make targets ---------------------------------------------------------

broken=""
for doc in "${DOCS[@]}"; do
  while read -r target; do
    t=${target%%#*}
    [ -z "$t" ] && continue
    [ -e "$(dirname "$doc")/$t" ] || broken="$broken $doc->$target"
  done < <(grep -oE '\]\([^)]+\)' "$doc" | sed 's/^](//; s/)$//' | grep -vE '^[a-z]+:')
done
check_eq "relative links resolve" "" "$broken"

targets=$(grep -ohE '^[[:space:]]*make [a-z][a-z0-9-]*' README.md | awk '{ print $2 }' | sort -u)
missing=""
for t in $targets; do
  grep -qE "^$t:" Makefile e2e/e2e.mk || missing="$missing $t"
done
check "README names make targets" test -n "$targets"
check_eq "every make target in README exists" "" "$missing"

summary
