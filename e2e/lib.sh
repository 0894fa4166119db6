# Shared helpers for the local-cluster scripts under e2e/. Sourced, not run;
# e2e/controller/lib.sh sources it, so every controller suite has it too.
# shellcheck shell=bash disable=SC2034

# Loaded once: a script that sources it twice keeps its tallies.
[ -n "${E2E_LIB_LOADED:-}" ] && return 0
E2E_LIB_LOADED=1

# Where machine-wide build products live (outside the work tree, so the
# apiserver is built once per machine and survives `make clean`).
HCP_CACHE_DIR=${HCP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hcp-controller}

# The test cluster's programs: kube-apiserver, kubectl and etcd of the release
# that e2e/apiserver/go.mod pins, built once per machine by
# build-kube-apiserver.sh into KUBE_BIN_DIR.
KUBE_MODULE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/apiserver
KUBE_VERSION=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2}' "$KUBE_MODULE_DIR/go.mod")
ETCD_VERSION=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' "$KUBE_MODULE_DIR/go.mod")
KUBE_BIN_DIR=${KUBE_BIN_DIR:-$HCP_CACHE_DIR/k8s-$KUBE_VERSION}
KUBE_APISERVER_BIN=$KUBE_BIN_DIR/kube-apiserver
KUBECTL_BIN=$KUBE_BIN_DIR/kubectl
ETCD_BIN=$KUBE_BIN_DIR/etcd

e2e_log() { echo "$(basename "$0"): $*" >&2; }
e2e_die() { e2e_log "$*"; exit 1; }

# find_go prints the path of a Go of 1.21 or later (PATH first, then
# /usr/local/go), which can fetch the toolchain a module's go line asks for
# from the module proxy; fails when there is none.
find_go() {
  local g v
  for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go; do
    [ -n "$g" ] && [ -x "$g" ] || continue
    v=$("$g" env GOVERSION 2>/dev/null) || continue
    if [[ "$v" =~ ^go1\.([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 21 ]; then
      echo "$g"
      return 0
    fi
  done
  return 1
}

# go_build_cached SRC BIN JOBS builds the Go module in directory SRC into
# BIN unless BIN is current: a digest of SRC's build.sh, go.mod, go.sum (when
# there is one) and .go files is kept beside BIN as BIN.stamp. One build at a
# time (flock on BIN.lock); JOBS bounds GOMAXPROCS and -p.
go_build_cached() {
  local src=$1 bin=$2 jobs=$3 go stamp
  _go_stamp() {
    (cd "$src" && cat build.sh go.mod $(ls go.sum 2>/dev/null) $(ls ./*.go | sort)) |
      sha256sum | cut -d' ' -f1
  }
  _go_current() { [ -x "$bin" ] && [ "$(cat "$bin.stamp" 2>/dev/null)" = "$(_go_stamp)" ]; }
  _go_current && return 0
  go=$(find_go) || e2e_die "no Go 1.21 or later found (PATH, /usr/local/go); it builds $src"
  mkdir -p "$(dirname "$bin")"
  exec 9>"$bin.lock"
  flock 9
  _go_current && return 0
  # The digest of the sources as they are when the build starts: a source
  # changed during the build makes the binary out of date, not current.
  stamp=$(_go_stamp)
  progress_start "$(basename "$bin") (go $("$go" env GOVERSION), -p $jobs)" \
    "test infrastructure from $src, once per machine, cached in $(dirname "$bin")" \
    "a few minutes (downloading and compiling its modules)" go_build_status
  GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0 GOTOOLCHAIN=auto GOWORK=off \
    GO111MODULE=on GOMAXPROCS=$jobs go_build_logged "$go" "$src" "$bin.tmp" . -p "$jobs" -ldflags "-s -w" ||
    e2e_die "building $src failed"
  mv -f "$bin.tmp" "$bin"
  echo "$stamp" >"$bin.stamp"
  progress_stop
}

# ensure_packages PKG... installs the Debian packages that are missing, and
# nothing else. apt-get runs only when something is missing; it waits for the
# dpkg lock rather than failing when another install is under way.
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  e2e_log "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 \
    install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# progress_start WHAT WHY FIRST_TIME [STATUS_FN]: for the long builds. Says
# what is being built, why, and how long it takes the first time on a
# machine; then, every HCP_PROGRESS_SECONDS (30) until progress_stop, the
# time elapsed and what STATUS_FN prints (e.g. packages compiled). Sets an
# EXIT trap that stops the ticker, so a failing build does not leave it.
progress_start() {
  PROGRESS_WHAT=$1
  PROGRESS_T0=$(date +%s)
  e2e_log "building $1: $2; the first time on a machine this takes $3"
  (
    trap 'exit 0' TERM
    while :; do
      # sleep holds none of the script's output open, so a reader of it
      # sees its end as soon as the script ends.
      sleep "${HCP_PROGRESS_SECONDS:-30}" </dev/null >/dev/null 2>&1 &
      wait $! || exit 0
      kill -0 $$ 2>/dev/null || exit 0
      e2e_log "... $PROGRESS_WHAT: $(($(date +%s) - PROGRESS_T0))s${4:+, $("$4" 2>/dev/null)}"
    done
  ) &
  PROGRESS_PID=$!
  trap 'progress_stop quiet' EXIT
}
# progress_stop [quiet]: stops the ticker; says how long the build took
# unless quiet.
progress_stop() {
  [ -n "${PROGRESS_PID:-}" ] || return 0
  kill "$PROGRESS_PID" 2>/dev/null
  wait "$PROGRESS_PID" 2>/dev/null
  PROGRESS_PID=
  rm -f "$PROGRESS_FILE" "$PROGRESS_FILE.log"
  trap - EXIT
  [ "${1:-}" = quiet ] || e2e_log "built $PROGRESS_WHAT in $(($(date +%s) - PROGRESS_T0))s"
}

# The state go_build_logged leaves for go_build_status, a file named after
# the script's process (the same in the ticker's subshell).
PROGRESS_FILE=${TMPDIR:-/tmp}/hcp-progress-$$

# go_build_logged GO DIR OUTPUT PACKAGE [FLAGS...]: `GO build -v FLAGS -o
# OUTPUT PACKAGE` in DIR, the packages it compiles logged for
# go_build_status, after counting the packages it depends on (go list
# -deps, which downloads the modules the first time). Prints the end of the
# log and fails when the build fails.
go_build_logged() {
  local go=$1 dir=$2 out=$3 pkg=$4 name total
  shift 4
  name=$(basename "${out%.tmp}")
  printf '%s\n\n' "$name" >"$PROGRESS_FILE"
  : >"$PROGRESS_FILE.log"
  total=$(cd "$dir" && "$go" list -deps "$pkg" 2>/dev/null | wc -l)
  printf '%s\n%s\n' "$name" "$total" >"$PROGRESS_FILE"
  if ! (cd "$dir" && "$go" build -v "$@" -o "$out" "$pkg") 2>"$PROGRESS_FILE.log"; then
    grep ' ' "$PROGRESS_FILE.log" | tail -30 >&2
    return 1
  fi
}
# module_stamp DIR RECIPE: what a cached build of the Go module in DIR was
# made from (its go.mod, go.sum and Go files: tools.go, or the program's
# main.go, then the recipe number), to be written beside the binaries and
# compared before they are reused.
module_stamp() {
  cat "$1/go.mod" "$1/go.sum" "$1"/*.go | sha256sum | cut -d' ' -f1
  echo "$2"
}
# go_build_status: what go_build_logged is at, for progress_start's ticker:
# "NAME: N of M packages compiled" (M counts the standard library's too).
go_build_status() {
  local name="" total=""
  { read -r name; read -r total; } <"$PROGRESS_FILE" 2>/dev/null || true
  [ -n "$name" ] || return 0
  if [ -z "$total" ] || [ "$total" = 0 ]; then
    echo "$name: downloading modules, listing packages"
  else
    echo "$name: $(grep -cv ' ' "$PROGRESS_FILE.log" 2>/dev/null) of $total packages compiled"
  fi
}

# ---- results ------------------------------------------------------------------

# The tallies that summary prints; too_late counts the failures that say the
# check ran "too late (machine too slow?)" (e2e/controller/lib.sh runs those
# scenarios again with slower clocks).
passed=0 failed=0 too_late=0
# ok DESC: one passed check, as "ok   - [SCENARIO: ]DESC".
ok() { passed=$((passed + 1)); echo "ok   - ${SCENARIO:+$SCENARIO: }$1"; }
# not_ok DESC [WHY]: one failed check, as "FAIL - [SCENARIO: ]DESC[: WHY]".
not_ok() {
  failed=$((failed + 1))
  case ${2:-} in *"too late (machine too slow?)"*) too_late=$((too_late + 1)) ;; esac
  echo "FAIL - ${SCENARIO:+$SCENARIO: }$1${2:+: $2}"
}
# check NAME COMMAND...: passes when COMMAND succeeds (WHY, when set, says why not).
check() {
  local name=$1
  shift
  if "$@"; then ok "$name"; else not_ok "$name" "${WHY:-}"; fi
  WHY=""
}
# check_eq NAME EXPECTED ACTUAL
check_eq() {
  if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected '$2', got '$3'"; fi
}
# in_range DESC VALUE LO HI: LO <= VALUE <= HI (numbers).
in_range() {
  if [ -n "$2" ] && awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v + 0 >= lo && v + 0 <= hi) }'; then
    ok "$1"
  else
    not_ok "$1" "got '$2', expected between $3 and $4"
  fi
}
# check_contains NAME NEEDLE HAYSTACK
check_contains() {
  if [[ "$3" == *"$2"* ]]; then ok "$1"; else not_ok "$1" "'$3' does not contain '$2'"; fi
}
# summary: prints "N passed, N failed"; fails when a check failed.
summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# ---- the cluster --------------------------------------------------------------

# k ARGS...: kubectl against the instance whose kubeconfig is $KCFG.
k() { kubectl --kubeconfig "$KCFG" "$@"; }

# ---- time and ports -----------------------------------------------------------

# now_us: the real time in microseconds since the epoch.
now_us() { echo "${EPOCHREALTIME/./}"; }
# secs TIME: TIME (any form date -d reads) in epoch seconds, with nanoseconds.
secs() { date -u -d "$1" +%s.%N; }
# real_s SECONDS: a bound on how soon, in real seconds, something follows
# its cause, for the machine as loaded as it is now: SECONDS while the
# 1-minute load average is at most the cores, else SECONDS times the load
# per core (make test runs suites side by side, e2e/README.md; a process
# ready to run waits its turn that much longer). Such a bound tells a change
# started by its boundary from one left to a resync or a poll; the targets
# themselves are checked on a quiet machine, by test_figures.sh (alone) and
# make bench. HCP_E2E_STRICT_TIMING=1 keeps SECONDS as it is.
real_s() {
  if [ "${HCP_E2E_STRICT_TIMING:-0}" = 1 ]; then
    echo "$1"
    return
  fi
  awk -v s="$1" -v l="$(cut -d' ' -f1 /proc/loadavg)" -v n="$(nproc)" \
    'BEGIN { f = l / n; if (f < 1) f = 1; v = s * f; printf (v == int(v) ? "%d\n" : "%.1f\n"), v }'
}

# port_free PORT [any]: no socket listens on PORT; with "any", no socket of
# any state uses it (listening or connected).
port_free() {
  # Not `ss | grep -q`: under pipefail, grep quitting early kills ss with
  # SIGPIPE and a busy port would look free.
  if [ "${2:-}" = any ]; then
    [ -z "$(ss -Htan "sport = :$1" 2>/dev/null)" ]
  else
    [ -z "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
  fi
}
# free_port [AVOID]: prints a port nothing listens on, other than AVOID and
# the one printed last in this shell. The ports lie between the test
# clusters' (26443-26999) and the kernel's ephemeral range (32768 and up),
# so outgoing connections cannot be holding them; suites that run side by
# side draw from ranges of their own (HCP_E2E_FREE_PORT_MIN/MAX, one per
# lane of scripts/e2e-lanes.sh), so they never race for one.
# shellcheck disable=SC2120 # AVOID is optional
free_port() {
  local p lo=${HCP_E2E_FREE_PORT_MIN:-27000} hi=${HCP_E2E_FREE_PORT_MAX:-32699}
  while :; do
    p=$((lo + RANDOM % (hi - lo + 1)))
    [ "$p" != "${1:-}" ] && port_free "$p" && [ "$p" != "${FREE_PORT_LAST:-}" ] &&
      { FREE_PORT_LAST=$p; echo "$p"; return; }
  done
}
