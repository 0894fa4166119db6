#!/usr/bin/env bash
# The local cluster the end-to-end tests and the demo run against: a real
# kube-apiserver over etcd, one pair per named instance, everything on
# loopback. Both, and the kubectl the tests use, are of the release pinned in
# e2e/apiserver/go.mod, built once per machine by build-kube-apiserver.sh;
# commands run by `with` find that kubectl first on PATH.
#
#   e2e/cluster.sh up [INSTANCE...]         start (or reuse) instances, install CRDs
#   e2e/cluster.sh down [INSTANCE...|--all] stop instances and delete their state
#                                           (--all skips instances a running
#                                           `with` uses; --all-force does not)
#   e2e/cluster.sh status [INSTANCE...]     print what runs where
#   e2e/cluster.sh running INSTANCE         exit 0 when the instance is serving
#   e2e/cluster.sh env [INSTANCE]           print shell assignments for tests
#   e2e/cluster.sh install-crds [INSTANCE]  (re)apply the instance's CRDs
#   e2e/cluster.sh compact [INSTANCE]       compact etcd at its current revision
#   e2e/cluster.sh apiserver-stop|apiserver-start|apiserver-restart [INSTANCE]
#                                           stop/start only the apiserver; etcd
#                                           and the data stay
#   e2e/cluster.sh etcd-pause|etcd-resume [INSTANCE]
#                                           SIGSTOP/SIGCONT the instance's etcd
#                                           (a stalled etcd: the API server
#                                           stays up, its storage stops)
#   e2e/cluster.sh kubectl INSTANCE ARGS... kubectl as the instance's admin
#   e2e/cluster.sh with INSTANCE... -- CMD  bring instances up, run CMD, then stop
#                                           those that no one pinned (with `up`)
#                                           and no other `with` still uses
#
# INSTANCE defaults to "main", the management cluster: Cluster API's own
# CRDs, with its conversion, defaulting and validation webhooks served by its
# core manager, none of whose controllers act (as on "model" and any
# "model-*": e2e/capi/lib.sh, capi_admission_only), for the controller
# suites and the demo beside the behaviour model (e2e/model), which plays
# Cluster API's controllers. "hosted" plays a hosted
# cluster (it gets the ClusterVersion CRD, as does any "hosted-*" instance, for
# suites that need one of their own). "capi" (and any "capi-*") is a
# management cluster with real Cluster API acting:
# Cluster API's own CRDs and webhooks, and its core manager and in-memory
# infrastructure provider running beside the API server, started and stopped
# with it (e2e/capi/lib.sh; built once per machine by e2e/capi/build.sh).
# "hypershift" (and any "hypershift-*") serves HyperShift's own HostedCluster
# and NodePool CRDs and those of the Cluster API release HyperShift builds
# against (e2e/hypershift/build.sh), for HyperShift's own NodePool
# reconciler to run beside; "capi-hypershift" (and any "capi-hypershift-*")
# is a "capi" instance that serves HyperShift's own CRDs instead of the
# fixtures, for that reconciler beside real Cluster API. Any [a-z0-9-] name
# works. State lives in e2e/.local/<instance>/ (HCP_E2E_STATE_DIR overrides
# e2e/.local); the admin kubeconfig of "main" is also copied to
# e2e/.local/kubeconfig.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib.sh"
. "$here/capi/lib.sh"

STATE_ROOT=${HCP_E2E_STATE_DIR:-$here/.local}
KUBECTL=${KUBECTL:-$KUBECTL_BIN}
export PATH="$KUBE_BIN_DIR:$PATH"
READY_TIMEOUT=${HCP_E2E_READY_TIMEOUT:-180}
PORT_MIN=${HCP_E2E_PORT_MIN:-26443}
PORT_MAX=${HCP_E2E_PORT_MAX:-26999}

# The CRDs each instance serves. Files under crds/ are the shipped ones.
crd_files() {
  case "$1" in
    hosted | hosted-*)
      echo "$here/fixtures/crds/config.openshift.io_clusterversions.yaml" ;;
    capi-hypershift | capi-hypershift-*)
      # HyperShift's own CRDs (its HostedControlPlane and the AWS provider's
      # kinds with their contract labels, as its install applies them) beside
      # Cluster API's own, which come with the managers (capi_up).
      local hs
      hs=$("$here/hypershift/build.sh" --path)
      ls "$hs"/crds/hostedclusters-Default.crd.yaml "$hs"/crds/nodepools-Default.crd.yaml \
        "$hs"/crds-capi/*.yaml "$repo"/crds/*.yaml ;;
    main | model | model-*)
      # Cluster API's own CRDs come with its core manager, which only serves
      # their webhooks here (capi_admission_only, capi_up). Its conversion
      # looks up the CRD of every kind a reference names (the Cluster's
      # HostedControlPlane, a template's AWSMachineTemplate), so HyperShift's
      # own of those serve too, as its install applies them (staged by
      # install_crds, without building HyperShift).
      ls "$here"/fixtures/crds/hypershift.openshift.io_*.yaml \
        "$("$here/hypershift/build.sh" --path)"/crds-capi/*.yaml "$repo"/crds/*.yaml ;;
    capi | capi-*)
      # Cluster API's own CRDs come with its managers (capi_up).
      ls "$here"/fixtures/crds/hypershift.openshift.io_*.yaml "$repo"/crds/*.yaml ;;
    hypershift | hypershift-*)
      # HyperShift's own HostedCluster and NodePool CRDs and the Cluster API
      # and AWS provider CRDs of the release it builds against, as
      # e2e/hypershift/build.sh stages them beside HyperShift's reconciler.
      ls "$("$here/hypershift/build.sh" --path)"/crds/*.yaml "$repo"/crds/*.yaml ;;
    *)
      # Any other name ("bench", the fleet benchmark's): Cluster API's kinds
      # as fixtures that serve both versions unconverted (e2e/fixtures/crds),
      # so the benchmark times the controller, not Cluster API's webhooks.
      ls "$here"/fixtures/crds/hypershift.openshift.io_*.yaml \
        "$here"/fixtures/crds/cluster.x-k8s.io_*.yaml "$repo"/crds/*.yaml ;;
  esac
}

check_name() {
  [[ "$1" =~ ^[a-z0-9][a-z0-9-]*$ ]] || e2e_die "bad instance name '$1'"
}

# ---- ports ------------------------------------------------------------------

# A port is free for an instance when no socket at all uses it, listening or
# connected (port_free PORT any, of e2e/lib.sh).

# Ports already promised to other instances of this tree (running or not).
ports_taken() {
  local f
  for f in "$STATE_ROOT"/*/ports.env; do
    [ -f "$f" ] && sed -n 's/^[A-Z_]*PORT=\([0-9]*\)$/\1/p' "$f"
  done
  return 0
}

# pick_ports DIR writes DIR/ports.env once; later starts reuse the same ports
# so kubeconfigs and tests stay valid across apiserver restarts.
pick_ports() {
  local d=$1 taken p n=0 want=() count names="" name i=0
  [ -f "$d/ports.env" ] || names="APISERVER_PORT ETCD_CLIENT_PORT ETCD_PEER_PORT"
  # The managers' ports, also for an instance whose state was made before it
  # served Cluster API (its other ports stay).
  if capi_instance "$inst" && ! grep -q '^CAPI_CORE_WEBHOOK_PORT=' "$d/ports.env" 2>/dev/null; then
    names="$names $CAPI_PORT_NAMES"
  fi
  [ -n "$names" ] || return 0
  count=$(wc -w <<<"$names")
  taken=" $(ports_taken | tr '\n' ' ') "
  # Below the kernel's ephemeral range (32768+ by default), so that outgoing
  # connections cannot be holding the port when the server binds it.
  for p in $(seq "$PORT_MIN" "$PORT_MAX"); do
    [[ "$taken" == *" $p "* ]] && continue
    port_free "$p" any || continue
    want+=("$p")
    n=$((n + 1))
    [ $n -eq "$count" ] && break
  done
  [ $n -eq "$count" ] || e2e_die "no free loopback ports in $PORT_MIN-$PORT_MAX"
  for name in $names; do
    echo "$name=${want[$i]}" >>"$d/ports.env"
    i=$((i + 1))
  done
}

# ---- processes --------------------------------------------------------------

# pid_alive NAME prints the pid recorded in NAME.pid when that process still
# runs the expected program with this instance's state directory on its
# command line (a recycled pid never matches).
pid_alive() {
  local f="$dir/$1.pid" pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$dir/" || return 1
  echo "$pid"
}

# starting NAME: true while the process recorded in NAME.pid runs, also
# before it became NAME: a background job is a forked shell until it execs,
# and its cmdline is then still its parent's, which pid_alive does not
# accept (on a busy machine the first readiness check can come that
# early); false once it exited (gone, or a zombie, whose cmdline is empty).
starting() {
  local pid c
  pid=$(cat "$dir/$1.pid" 2>/dev/null) || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  { c=$(tr '\0' ' ' <"/proc/$pid/cmdline"); } 2>/dev/null || return 1
  [ -n "$c" ]
}

stop_proc() {
  local name=$1 pid i
  if pid=$(pid_alive "$name"); then
    kill -TERM "$pid" 2>/dev/null || true
    # The apiserver drains in-flight requests on SIGTERM; tests only need it
    # gone, so it gets a few seconds before SIGKILL.
    for i in $(seq 1 $((${HCP_E2E_STOP_GRACE:-5} * 10))); do
      [ -d "/proc/$pid" ] || break
      # A zombie whose parent is gone has exited as far as we care.
      grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && break
      sleep 0.1
    done
    if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
      e2e_log "$inst: $name (pid $pid) still draining after SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
    fi
  fi
  rm -f "$dir/$name.pid"
}

# ---- per-instance state -----------------------------------------------------

load_instance() {
  inst=$1
  check_name "$inst"
  dir="$STATE_ROOT/$inst"
  if [ -f "$dir/ports.env" ]; then
    . "$dir/ports.env"
  fi
}

apiserver_url() { echo "https://127.0.0.1:$APISERVER_PORT"; }
etcd_url() { echo "http://127.0.0.1:$ETCD_CLIENT_PORT"; }

readyz_ok() {
  [ -f "$dir/tokens/admin" ] || return 1
  curl -sf --max-time 5 --cacert "$dir/pki/ca.crt" \
    -H "Authorization: Bearer $(cat "$dir/tokens/admin")" \
    "$(apiserver_url)/readyz" >/dev/null 2>&1
}

is_running() {
  pid_alive etcd >/dev/null && pid_alive apiserver >/dev/null && readyz_ok
}

gen_pki() {
  local p="$dir/pki"
  mkdir -p "$p"
  [ -f "$p/ca.crt" ] && return 0
  (
    cd "$p"
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 \
      -keyout ca.key -out ca.crt -subj "/CN=hcp-e2e-ca-$inst" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    cat >serving.ext <<EOF
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc
EOF
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 3650 -sha256 -extfile serving.ext -out apiserver.crt 2>/dev/null
    # A client certificate for the admin, for tests of certificate auth.
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >client.ext
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=hcp-e2e-admin-cert" 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 3650 -sha256 -extfile client.ext -out admin.crt 2>/dev/null
    # Service-account token signing pair (required flags).
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    rm -f ./*.csr ./*.ext ./*.srl
    chmod 644 ca.crt apiserver.crt admin.crt sa.pub
  )
}

gen_tokens() {
  local t="$dir/tokens"
  mkdir -p "$t"
  [ -f "$dir/tokens.csv" ] && return 0
  local name
  for name in admin noperm controller; do
    (umask 077; od -An -N16 -tx1 /dev/urandom | tr -d ' \n' >"$t/$name")
  done
  # token,user,uid,"groups": the admin is in system:masters; the others start
  # with no permissions (tests bind roles to them as needed).
  (
    umask 077
    cat >"$dir/tokens.csv" <<EOF
$(cat "$t/admin"),hcp-e2e-admin,1,"system:masters"
$(cat "$t/noperm"),hcp-e2e-noperm,2
$(cat "$t/controller"),hcp-e2e-controller,3
EOF
  )
}

# write_kubeconfig FILE then writes a self-contained kubeconfig for one user.
write_kubeconfig() {
  local file=$1 user=$2 auth=$3
  local ca
  ca=$(base64 -w0 <"$dir/pki/ca.crt")
  (
    umask 077
    cat >"$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: hcp-e2e-$inst
  cluster:
    server: $(apiserver_url)
    certificate-authority-data: $ca
users:
- name: $user
  user:
$auth
contexts:
- name: hcp-e2e-$inst
  context:
    cluster: hcp-e2e-$inst
    user: $user
current-context: hcp-e2e-$inst
EOF
    mv -f "$file.tmp" "$file"
  )
}

write_client_files() {
  write_kubeconfig "$dir/kubeconfig" hcp-e2e-admin "    token: $(cat "$dir/tokens/admin")"
  write_kubeconfig "$dir/kubeconfig-noperm" hcp-e2e-noperm "    token: $(cat "$dir/tokens/noperm")"
  write_kubeconfig "$dir/kubeconfig-controller" hcp-e2e-controller "    token: $(cat "$dir/tokens/controller")"
  write_kubeconfig "$dir/kubeconfig-cert" hcp-e2e-admin-cert \
"    client-certificate-data: $(base64 -w0 <"$dir/pki/admin.crt")
    client-key-data: $(base64 -w0 <"$dir/pki/admin.key")"
  if [ "$inst" = main ]; then
    cp -f "$dir/kubeconfig" "$STATE_ROOT/kubeconfig"
  fi
  cat >"$dir/env" <<EOF
HCP_E2E_INSTANCE=$inst
HCP_E2E_STATE=$dir
HCP_E2E_SERVER=$(apiserver_url)
HCP_E2E_ETCD=$(etcd_url)
HCP_E2E_CA=$dir/pki/ca.crt
HCP_E2E_KUBECONFIG=$dir/kubeconfig
HCP_E2E_KUBECONFIG_NOPERM=$dir/kubeconfig-noperm
HCP_E2E_KUBECONFIG_CONTROLLER=$dir/kubeconfig-controller
HCP_E2E_KUBECONFIG_CERT=$dir/kubeconfig-cert
HCP_E2E_ADMIN_TOKEN_FILE=$dir/tokens/admin
HCP_E2E_NOPERM_TOKEN_FILE=$dir/tokens/noperm
HCP_E2E_CONTROLLER_TOKEN_FILE=$dir/tokens/controller
HCP_E2E_APISERVER_LOG=$dir/apiserver.log
HCP_E2E_AUDIT_LOG=$dir/audit.log
HCP_E2E_ETCD_LOG=$dir/etcd.log
EOF
  if capi_admission_only "$inst"; then
    cat >>"$dir/env" <<EOF
HCP_E2E_CAPI_ADMISSION=1
HCP_E2E_CAPI_CORE_LOG=$dir/capi-core.log
HCP_E2E_CAPI_CORE_PID_FILE=$dir/capi-core.pid
EOF
  elif capi_instance "$inst"; then
    cat >>"$dir/env" <<EOF
HCP_E2E_CAPI=1
HCP_E2E_CAPI_CORE_LOG=$dir/capi-core.log
HCP_E2E_CAPI_DEV_LOG=$dir/capi-dev.log
HCP_E2E_CAPI_CORE_PID_FILE=$dir/capi-core.pid
HCP_E2E_CAPI_DEV_PID_FILE=$dir/capi-dev.pid
HCP_E2E_CAPI_CORE_DIAG=127.0.0.1:$CAPI_CORE_DIAG_PORT
HCP_E2E_CAPI_DEV_DIAG=127.0.0.1:$CAPI_DEV_DIAG_PORT
EOF
  fi
}

start_etcd() {
  mkdir -p "$dir/etcd"
  local name="hcp-e2e-$inst" peer="http://127.0.0.1:$ETCD_PEER_PORT"
  # Extra flags for experiments: HCP_ETCD_ARGS="--unsafe-no-fsync".
  # shellcheck disable=SC2086
  setsid "$ETCD_BIN" \
    --name "$name" --data-dir "$dir/etcd/data" \
    --listen-client-urls "$(etcd_url)" --advertise-client-urls "$(etcd_url)" \
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "$name=$peer" --initial-cluster-state new \
    --initial-cluster-token "$name" \
    --quota-backend-bytes $((4 * 1024 * 1024 * 1024)) \
    --log-level warn --logger zap \
    ${HCP_ETCD_ARGS:-} \
    </dev/null >>"$dir/etcd.log" 2>&1 8>&- 9>&- &
  echo $! >"$dir/etcd.pid"
  local i
  for i in $(seq 1 100); do
    if curl -sf --max-time 2 "$(etcd_url)/health" 2>/dev/null | grep -q '"health":"true"'; then
      return 0
    fi
    starting etcd || break
    sleep 0.2
  done
  tail -20 "$dir/etcd.log" >&2 || true
  e2e_die "$inst: etcd did not become healthy on $(etcd_url)"
}

# A hosted cluster's API server keeps an audit log (metadata of every
# request: who, what, with which user agent), so that the tests see as whom
# the controller's requests are made there.
audit_args() {
  case "$inst" in
    hosted | hosted-*)
      printf 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n' \
        >"$dir/audit-policy.yaml"
      echo "--audit-policy-file $dir/audit-policy.yaml --audit-log-path $dir/audit.log" \
        "--audit-log-maxsize 100 --audit-log-maxbackup 1" ;;
  esac
}

start_apiserver() {
  local p="$dir/pki"
  mkdir -p "$dir/apiserver-certs"
  # Extra flags for experiments: HCP_APISERVER_ARGS="--watch-cache=false".
  # shellcheck disable=SC2086,SC2046
  setsid "$KUBE_APISERVER_BIN" \
    --etcd-servers "$(etcd_url)" \
    --etcd-prefix "/registry" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
    --secure-port "$APISERVER_PORT" \
    --cert-dir "$dir/apiserver-certs" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" \
    --token-auth-file "$dir/tokens.csv" \
    --anonymous-auth=false \
    --authorization-mode RBAC \
    --service-account-issuer "https://kubernetes.default.svc" \
    --service-account-key-file "$p/sa.pub" \
    --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 \
    --enable-admission-plugins NamespaceLifecycle,LimitRanger,DefaultStorageClass,ResourceQuota,MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
    --disable-admission-plugins ServiceAccount \
    --endpoint-reconciler-type none \
    --profiling=false \
    --v "${HCP_APISERVER_VERBOSITY:-1}" \
    $(audit_args) \
    ${HCP_APISERVER_ARGS:-} \
    </dev/null >>"$dir/apiserver.log" 2>&1 8>&- 9>&- &
  echo $! >"$dir/apiserver.pid"
}

wait_ready() {
  local deadline=$((SECONDS + READY_TIMEOUT))
  while [ $SECONDS -lt $deadline ]; do
    readyz_ok && return 0
    if ! starting apiserver; then
      tail -30 "$dir/apiserver.log" >&2 || true
      e2e_die "$inst: kube-apiserver exited (log: $dir/apiserver.log)"
    fi
    sleep 0.5
  done
  tail -30 "$dir/apiserver.log" >&2 || true
  e2e_die "$inst: kube-apiserver not ready after ${READY_TIMEOUT}s (log: $dir/apiserver.log)"
}

ensure_tools() {
  ensure_packages openssl curl ca-certificates iproute2 util-linux jq
  "$here/build-kube-apiserver.sh"
}

kc() { "$KUBECTL" --kubeconfig "$dir/kubeconfig" "$@"; }

# crds_sum: a digest of the CRDs the instance serves (their files' content).
crds_sum() {
  local f
  for f in $(crd_files "$inst"); do sha256sum "$f"; done | sha256sum | cut -d' ' -f1
}

# install_crds [--if-changed]: apply the instance's CRDs and wait until they
# are served; with --if-changed, only when they differ from those applied
# last (every suite of `make e2e` calls `up` for its instances).
install_crds() {
  local f names=() sum
  if capi_admission_only "$inst"; then
    "$here/hypershift/build.sh" --crds || e2e_die "$inst: staging HyperShift's CRDs failed"
  fi
  sum=$(crds_sum)
  if [ "${1:-}" = --if-changed ] && [ "$(cat "$dir/crds.sum" 2>/dev/null)" = "$sum" ]; then
    return 0
  fi
  rm -f "$dir/crds.sum"
  for f in $(crd_files "$inst"); do
    kc apply --server-side --force-conflicts --field-manager hcp-e2e -f "$f" >/dev/null ||
      e2e_die "$inst: applying $f failed"
    names+=("crd/$(awk '/^metadata:/{m=1} m && /^  name:/{print $2; exit}' "$f")")
  done
  kc wait --for condition=established --timeout=60s "${names[@]}" >/dev/null ||
    e2e_die "$inst: CRDs not Established: ${names[*]}"
  # Discovery of freshly established CRDs can lag by a moment.
  local i
  for i in $(seq 1 50); do
    kc api-resources --cached=false >/dev/null 2>&1 && { echo "$sum" >"$dir/crds.sum"; return 0; }
    sleep 0.2
  done
}

# ---- commands ---------------------------------------------------------------

# cmd_up_one INSTANCE [USER]: without USER the instance is pinned (stays up
# until `down`); with USER (the pid of a `with` call) it is marked in use by
# that caller, and the last such user to leave stops it.
cmd_up_one() {
  local user=${2:-}
  load_instance "$1"
  mkdir -p "$dir"
  exec 8>"$STATE_ROOT/.$inst.lock"
  flock 8
  if is_running; then
    write_client_files
    local pid
    pid=$(pid_alive apiserver)
    if [[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" == *" (deleted)" ]]; then
      e2e_log "$inst: kube-apiserver was rebuilt; restarting it (data kept)"
      stop_proc apiserver
      start_apiserver
      wait_ready
    fi
    e2e_log "$inst: already running at $(apiserver_url) (reused)"
    install_crds --if-changed
    if capi_instance "$inst"; then capi_up --if-changed; fi
    mark_user "$user"
    exec 8>&-
    return 0
  fi
  if ! pid_alive etcd >/dev/null; then
    # No etcd: nothing to keep. Start from a clean slate.
    stop_proc apiserver
    rm -rf "$dir"
    mkdir -p "$dir"
  fi
  pick_ports "$dir"
  . "$dir/ports.env"
  gen_pki
  gen_tokens
  write_client_files
  if ! pid_alive etcd >/dev/null; then
    port_free "$ETCD_CLIENT_PORT" any && port_free "$ETCD_PEER_PORT" any ||
      e2e_die "$inst: etcd ports $ETCD_CLIENT_PORT/$ETCD_PEER_PORT are in use"
    start_etcd
  fi
  if ! pid_alive apiserver >/dev/null; then
    port_free "$APISERVER_PORT" any || e2e_die "$inst: port $APISERVER_PORT is in use"
    start_apiserver
  fi
  wait_ready
  install_crds
  if capi_instance "$inst"; then capi_up; fi
  e2e_log "$inst: ready at $(apiserver_url), kubeconfig $dir/kubeconfig"
  mark_user "$user"
  exec 8>&-
}

mark_user() {
  if [ -z "$1" ]; then
    touch "$dir/pinned"
  else
    mkdir -p "$dir/users"
    : >"$dir/users/$1"
  fi
}

cmd_down_one() {
  load_instance "$1"
  [ -d "$dir" ] || return 0
  exec 8>"$STATE_ROOT/.$inst.lock"
  flock 8
  down_locked
  exec 8>&-
}

# cmd_release INSTANCE USER: USER no longer needs the instance; stop it when
# nobody pinned it and no live user is left.
cmd_release() {
  load_instance "$1"
  [ -d "$dir" ] || return 0
  exec 8>"$STATE_ROOT/.$inst.lock"
  flock 8
  rm -f "$dir/users/$2"
  local f
  for f in "$dir"/users/*; do
    [ -e "$f" ] || continue
    [ -d "/proc/$(basename "$f")" ] || rm -f "$f"
  done
  if [ ! -f "$dir/pinned" ] && [ -z "$(ls -A "$dir/users" 2>/dev/null)" ]; then
    down_locked
  fi
  exec 8>&-
}

# live_users INSTANCE prints the pids of `with` calls still using it.
live_users() {
  local f found=1
  for f in "$STATE_ROOT/$1"/users/*; do
    [ -e "$f" ] || continue
    if [ -d "/proc/${f##*/}" ]; then echo "${f##*/}"; found=0; fi
  done
  return $found
}

down_locked() {
  capi_down
  stop_proc apiserver
  stop_proc etcd
  rm -rf "$dir"
  if [ "$inst" = main ]; then rm -f "$STATE_ROOT/kubeconfig"; fi
  e2e_log "$inst: stopped"
}

instances_or_default() {
  if [ $# -eq 0 ]; then echo main; else printf '%s\n' "$@"; fi
}

all_instances() {
  local d
  for d in "$STATE_ROOT"/*/; do
    [ -d "$d" ] && basename "$d"
  done
}

cmd=${1:-}
shift || true
case "$cmd" in
  up)
    user=""
    if [ "${1:-}" = --user ]; then user=$2; shift 2; fi
    mkdir -p "$STATE_ROOT"
    ensure_tools
    for i in $(instances_or_default "$@"); do cmd_up_one "$i" "$user"; done
    ;;
  release)
    cmd_release "${1:?instance}" "${2:?user}"
    ;;
  down)
    if [ "${1:-}" = --all ] || [ "${1:-}" = --all-force ]; then
      mapfile -t all < <(all_instances)
      for i in "${all[@]}"; do
        # Instances a running `with` still uses belong to that run.
        if [ "$1" = --all ] && live_users "$i" >/dev/null; then
          e2e_log "$i: in use by a running test (pid $(live_users "$i" | head -1)); left running"
          continue
        fi
        cmd_down_one "$i"
      done
      # Lock files of instances that are gone (kept while in use: a waiter
      # may hold one open).
      for f in "$STATE_ROOT"/.*.lock; do
        [ -e "$f" ] || continue
        i=${f##*/.}
        [ -d "$STATE_ROOT/${i%.lock}" ] || rm -f "$f"
      done
      exit 0
    fi
    for i in $(instances_or_default "$@"); do cmd_down_one "$i"; done
    ;;
  running)
    load_instance "${1:-main}"
    [ -f "$dir/ports.env" ] && is_running
    ;;
  status)
    if [ $# -eq 0 ]; then mapfile -t all < <(all_instances); set -- "${all[@]}"; fi
    for i in "$@"; do
      load_instance "$i"
      if [ ! -f "$dir/ports.env" ]; then echo "$inst: not created"; continue; fi
      e=$(pid_alive etcd || echo -) a=$(pid_alive apiserver || echo -)
      r=no; readyz_ok && r=yes
      echo "$inst: apiserver $(apiserver_url) pid $a ready=$r; etcd $(etcd_url) pid $e; kubeconfig $dir/kubeconfig"
    done
    ;;
  env)
    load_instance "${1:-main}"
    [ -f "$dir/env" ] || e2e_die "$inst: not created (run: e2e/cluster.sh up $inst)"
    cat "$dir/env"
    ;;
  install-crds)
    load_instance "${1:-main}"
    is_running || e2e_die "$inst: not running"
    install_crds
    ;;
  compact)
    load_instance "${1:-main}"
    pid_alive etcd >/dev/null || e2e_die "$inst: etcd not running"
    # etcd's gRPC gateway: the current revision, then a physical compaction.
    rev=$(curl -sf --max-time 10 -X POST -d '{}' "$(etcd_url)/v3/maintenance/status" |
      jq -r '.header.revision // empty')
    [ -n "$rev" ] || e2e_die "$inst: could not read the etcd revision"
    curl -sf --max-time 60 -X POST -d "{\"revision\": \"$rev\", \"physical\": true}" \
      "$(etcd_url)/v3/kv/compaction" >/dev/null || e2e_die "$inst: compaction at $rev failed"
    echo "$rev"
    ;;
  apiserver-stop)
    load_instance "${1:-main}"
    stop_proc apiserver
    ;;
  apiserver-start)
    load_instance "${1:-main}"
    pid_alive etcd >/dev/null || e2e_die "$inst: etcd not running (use: up $inst)"
    pid_alive apiserver >/dev/null || start_apiserver
    wait_ready
    ;;
  apiserver-restart)
    load_instance "${1:-main}"
    pid_alive etcd >/dev/null || e2e_die "$inst: etcd not running (use: up $inst)"
    stop_proc apiserver
    start_apiserver
    wait_ready
    ;;
  etcd-pause | etcd-resume)
    load_instance "${1:-main}"
    pid=$(pid_alive etcd) || e2e_die "$inst: etcd not running (use: up $inst)"
    if [ "$cmd" = etcd-pause ]; then kill -STOP "$pid"; else kill -CONT "$pid"; fi
    ;;
  kubectl)
    load_instance "${1:-main}"
    shift || true
    kc "$@"
    ;;
  with)
    insts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
      check_name "$1"
      insts+=("$1")
      shift
    done
    [ "${1:-}" = -- ] && [ ${#insts[@]} -gt 0 ] || e2e_die "usage: with INSTANCE... -- COMMAND"
    shift
    cleanup() {
      for i in "${insts[@]}"; do "$0" release "$i" $$ || true; done
    }
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    "$0" up --user $$ "${insts[@]}"
    rc=0
    "$@" || rc=$?
    exit $rc
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
