# Real Cluster API on a test instance: Cluster API's own CRDs and webhook
# configurations from the module sources of the release e2e/capi/go.mod pins,
# and its core manager and Docker provider (in-memory backend) running against
# the instance (on "main" and "model" instances, the core manager alone,
# serving only the webhooks: capi_admission_only). Sourced by e2e/cluster.sh;
# its functions use cluster.sh's $inst, $dir, kc, pid_alive and stop_proc.
# Not run on its own.
# shellcheck shell=bash

CAPI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# capi_instance NAME: does the instance serve Cluster API's own CRDs (and
# run its core manager for their webhooks)?
capi_instance() {
  case "$1" in capi | capi-* | main | model | model-*) return 0 ;; esac
  return 1
}

# capi_admission_only NAME: the instance serves Cluster API's own CRDs with
# its conversion and admission webhooks, but no Cluster API controller acts:
# the core manager runs with --watch-filter set to a value no object carries
# (every one of its controllers filters on that label,
# util/predicates.ResourceHasFilterLabel), and no infrastructure provider
# runs. What is written (by e2e/model's own Cluster API half) is defaulted,
# validated and converted as on a management cluster.
capi_admission_only() {
  case "$1" in main | model | model-*) return 0 ;; esac
  return 1
}
CAPI_NO_WATCH=hcp-e2e-admission-only

# The manager ports an instance needs beside the API server and etcd's (kept
# in ports.env with them, so other instances never take them).
CAPI_PORT_NAMES="CAPI_CORE_WEBHOOK_PORT CAPI_CORE_HEALTH_PORT CAPI_CORE_DIAG_PORT CAPI_DEV_WEBHOOK_PORT CAPI_DEV_HEALTH_PORT CAPI_DEV_DIAG_PORT"

# capi_pki: a CA of the instance's own and the managers' webhook serving
# certificate (127.0.0.1), which the CRDs' conversion webhooks and the
# webhook configurations trust through caBundle. No cert-manager.
capi_pki() {
  local p="$dir/capi/pki"
  mkdir -p "$p"
  [ -f "$p/tls.crt" ] && return 0
  (
    cd "$p"
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 \
      -keyout ca.key -out ca.crt -subj "/CN=hcp-e2e-capi-webhook-ca-$inst" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' >serving.ext
    openssl req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr \
      -subj "/CN=capi-webhook" 2>/dev/null
    openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 3650 -sha256 -extfile serving.ext -out tls.crt 2>/dev/null
    rm -f ./*.csr ./*.ext ./*.srl
    chmod 644 ca.crt tls.crt
    chmod 600 tls.key
  ) || e2e_die "$inst: could not make the Cluster API webhook certificates"
}

# capi_render_crd FILE PORT LABELS writes FILE's CRD with spec.conversion
# pointing at the manager on 127.0.0.1:PORT (Cluster API's own
# config/crd/patches/webhook_in_*.yaml do the same with a Service) and, when
# LABELS is 1, the contract labels the provider's config/crd/kustomization.yaml
# adds.
capi_render_crd() {
  awk -v port="$2" -v labels="$3" -v ca="$(base64 -w0 <"$dir/capi/pki/ca.crt")" '
    /^metadata:$/ && !m { print; m = 1
      if (labels == 1) {
        print "  labels:"
        print "    cluster.x-k8s.io/v1beta1: v1beta1"
        print "    cluster.x-k8s.io/v1beta2: v1beta2"
      }
      next }
    /^spec:$/ && !s { print; s = 1
      print "  conversion:"
      print "    strategy: Webhook"
      print "    webhook:"
      print "      conversionReviewVersions:"
      print "      - v1"
      print "      clientConfig:"
      print "        url: https://127.0.0.1:" port "/convert"
      print "        caBundle: " ca
      next }
    { print }' "$1"
}

# capi_render_webhooks FILE PORT PREFIX writes a provider's
# config/webhook/manifests.yaml with every `service:` client configuration
# turned into `url: https://127.0.0.1:PORT/<path>` and the configurations
# renamed PREFIX-<name> (both providers call theirs the same).
capi_render_webhooks() {
  awk -v port="$2" -v prefix="$3" -v ca="$(base64 -w0 <"$dir/capi/pki/ca.crt")" '
    /^  name: (mutating|validating)-webhook-configuration$/ {
      print "  name: " prefix "-" $2; next }
    /^    service:$/ { svc = 1; next }
    svc && /^      path: / {
      print "    url: https://127.0.0.1:" port $2
      print "    caBundle: " ca
      svc = 0; next }
    svc && /^      / { next }
    { svc = 0; print }' "$1"
}

# capi_apply: render and apply the CRDs and webhook configurations of both
# providers; wait until the CRDs are Established.
# capi_apply [--if-changed]: render Cluster API's CRDs and webhooks for this
# instance and apply them; with --if-changed only when the rendering differs
# from the one applied last (a reused instance: every suite of `make e2e`
# brings its instances up again).
capi_apply() {
  local core dev out="$dir/capi/manifests" f names=() sum
  core=$("$CAPI_DIR/build.sh" --src cluster-api) || e2e_die "$inst: no Cluster API sources"
  dev=$("$CAPI_DIR/build.sh" --src cluster-api/test) || e2e_die "$inst: no Cluster API test sources"
  rm -rf "$out"
  mkdir -p "$out"
  for f in "$core"/core/config/crd/bases/*.yaml; do
    capi_render_crd "$f" "$CAPI_CORE_WEBHOOK_PORT" 0 >"$out/crd-core-${f##*/}"
  done
  capi_render_webhooks "$core/core/config/webhook/manifests.yaml" "$CAPI_CORE_WEBHOOK_PORT" capi-core \
    >"$out/webhooks-core.yaml"
  if ! capi_admission_only "$inst"; then
    for f in "$dev"/infrastructure/docker/config/crd/bases/*.yaml; do
      capi_render_crd "$f" "$CAPI_DEV_WEBHOOK_PORT" 1 >"$out/crd-dev-${f##*/}"
    done
    capi_render_webhooks "$dev/infrastructure/docker/config/webhook/manifests.yaml" "$CAPI_DEV_WEBHOOK_PORT" capi-dev \
      >"$out/webhooks-dev.yaml"
  fi
  sum=$(cat "$out"/* | sha256sum | cut -d' ' -f1)
  if [ "${1:-}" = --if-changed ] && [ "$(cat "$dir/capi/applied.sum" 2>/dev/null)" = "$sum" ]; then
    return 0
  fi
  rm -f "$dir/capi/applied.sum"
  for f in "$out"/crd-*.yaml; do
    names+=("crd/$(awk '/^metadata:/{m=1} m && /^  name:/{print $2; exit}' "$f")")
  done
  kc apply --server-side --force-conflicts --field-manager hcp-e2e-capi -f "$out" >/dev/null ||
    e2e_die "$inst: applying Cluster API's CRDs and webhooks failed ($out)"
  kc wait --for condition=established --timeout=60s "${names[@]}" >/dev/null ||
    e2e_die "$inst: Cluster API CRDs not Established"
  echo "$sum" >"$dir/capi/applied.sum"
}

# capi_start_one NAME BIN WEBHOOK HEALTH DIAG [ENV...]
capi_start_one() {
  local name=$1 bin=$2 wh=$3 health=$4 diag=$5
  shift 5
  pid_alive "$name" >/dev/null && return 0
  # The certificate directory on the command line also lets pid_alive
  # recognise the process as this instance's.
  env "$@" setsid "$bin" \
    --kubeconfig "$dir/kubeconfig" \
    --webhook-port "$wh" --webhook-cert-dir "$dir/capi/pki" \
    --health-addr "127.0.0.1:$health" \
    --diagnostics-address "127.0.0.1:$diag" --insecure-diagnostics \
    --leader-elect=false \
    ${HCP_CAPI_ARGS:-} \
    </dev/null >>"$dir/$name.log" 2>&1 8>&- 9>&- &
  echo $! >"$dir/$name.pid"
}

# capi_ready NAME HEALTH: the manager's readyz (which includes its webhook
# server) answers.
capi_ready() {
  curl -sf --max-time 2 "http://127.0.0.1:$2/readyz" >/dev/null 2>&1
}

# capi_exited NAME: the manager just started is gone (or a zombie). Not
# pid_alive: until the forked child has exec'd the manager, its command line
# is still cluster.sh's, which names no file of the instance, and a first
# check in that moment would take a starting manager for an exited one.
capi_exited() {
  local pid
  pid=$(cat "$dir/$1.pid" 2>/dev/null) || return 0
  [ -d "/proc/$pid" ] || return 0
  grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null
}

# capi_up [--if-changed]: build the managers (once per machine), install the CRDs and
# webhooks, start both managers (the core one alone, acting on nothing, on
# an admission-only instance) and wait until they serve; --if-changed
# (an instance reused) applies the CRDs and webhooks only when they changed.
capi_up() {
  local bin start=$SECONDS names=capi-core core_args="" admission_only=0
  "$CAPI_DIR/build.sh" || e2e_die "building Cluster API failed"
  bin=$("$CAPI_DIR/build.sh" --path)
  capi_pki
  capi_apply "${1:-}"
  capi_admission_only "$inst" && admission_only=1
  # Before HCP_CAPI_ARGS, so that HCP_CAPI_ARGS=--watch-filter= (every
  # object) can undo it.
  [ $admission_only = 1 ] && core_args="--watch-filter=$CAPI_NO_WATCH"
  HCP_CAPI_ARGS="$core_args ${HCP_CAPI_ARGS:-}" capi_start_one capi-core "$bin/capi-manager" \
    "$CAPI_CORE_WEBHOOK_PORT" "$CAPI_CORE_HEALTH_PORT" "$CAPI_CORE_DIAG_PORT"
  if [ $admission_only = 0 ]; then
    # The in-memory backend serves each workload cluster's API on POD_IP.
    capi_start_one capi-dev "$bin/capd-manager" \
      "$CAPI_DEV_WEBHOOK_PORT" "$CAPI_DEV_HEALTH_PORT" "$CAPI_DEV_DIAG_PORT" POD_IP=127.0.0.1
    names="capi-core capi-dev"
  fi
  local deadline=$((SECONDS + READY_TIMEOUT)) name health
  for name in $names; do
    health=$CAPI_CORE_HEALTH_PORT
    [ "$name" = capi-dev ] && health=$CAPI_DEV_HEALTH_PORT
    until capi_ready "$name" "$health"; do
      if capi_exited "$name"; then
        tail -30 "$dir/$name.log" >&2 || true
        e2e_die "$inst: $name exited (log: $dir/$name.log)"
      fi
      [ $SECONDS -lt $deadline ] || e2e_die "$inst: $name not ready after ${READY_TIMEOUT}s (log: $dir/$name.log)"
      sleep 0.2
    done
  done
  if [ $admission_only = 1 ]; then
    e2e_log "$inst: Cluster API $(basename "$bin") webhooks ready in $((SECONDS - start))s, no controller acting (log: $dir/capi-core.log)"
  else
    e2e_log "$inst: Cluster API $(basename "$bin") managers ready in $((SECONDS - start))s (logs: $dir/capi-core.log, $dir/capi-dev.log)"
  fi
}

# capi_down: stop both managers (before the API server goes).
capi_down() {
  stop_proc capi-dev
  stop_proc capi-core
}
