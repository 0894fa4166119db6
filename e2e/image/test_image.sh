#!/usr/bin/env bash
# End-to-end: the container image the chart deploys, built and run here.
# No container registry is reachable, so the runtime stage's base comes from
# Debian's packages (e2e/image/build-base.sh: debootstrap of the release the
# Containerfile names, then the stage's own RUN instructions, cached per
# machine); the builder stage is this tree's `make` (the binary in
# $HCP_BIN, stripped as the builder's `install -s` does). buildah turns
# that root file system into an OCI image with the runtime stage's COPY
# destination, USER, ENTRYPOINT, CMD, EXPOSE and LABELs, commits it as
# localhost/hcp-controller:<the chart's appVersion> and runs it with runc
# (host network, as a pod reaches its API server):
#   - the image's entrypoint says the chart's appVersion (--version), and
#     every library the binary links resolves inside the image;
#   - started as the image's user with the controller's own flags against
#     the "main" test API server, it answers /readyz and then
#     reconciles (a HostedChangeManagementStatus appears), runs as the
#     Containerfile's non-root user in the image's root file system, and
#     stops cleanly on SIGTERM;
#   - the check is shown to fail: the same image without the files of one
#     runtime package does not start, naming the missing library.
# buildah keeps its storage under a temporary directory, removed at the end.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=e2e/controller/lib.sh
. "$repo/e2e/controller/lib.sh"
# shellcheck source=e2e/image/containerfile.sh
. "$here/containerfile.sh"

CONTAINERFILE=${HCP_CONTAINERFILE:-$repo/Containerfile}
T_SUITE=$(now_us)
begin_suite
[ "$(id -u)" -eq 0 ] || { not_ok "root (buildah's storage, runc)"; summary; exit 1; }
for t in buildah runc; do
  command -v "$t" >/dev/null || { not_ok "$t is installed (scripts/install-deps.sh)"; summary; exit 1; }
done

store=$CTL_TMP/containers
B=(buildah --root "$store/storage" --runroot "$store/run" --storage-driver overlay)
RUN=("${B[@]}" run --runtime "$(command -v runc)" --network host)
image_cleanup() {
  # Processes of this test's containers first (their root is in $store).
  local p
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/root" 2>/dev/null)" == "$store"/* ]] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  [ -n "${RUN_PID:-}" ] && { kill "$RUN_PID" 2>/dev/null; wait "$RUN_PID" 2>/dev/null; }
  "${B[@]}" rm --all >/dev/null 2>&1
  "${B[@]}" rmi --all --force >/dev/null 2>&1
  # Whatever the storage driver left mounted goes before its files.
  grep -o " $store/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$store"
  cleanup_all
}
trap image_cleanup EXIT

app_version=$(chart_app_version "$repo/charts/hcp-controller/Chart.yaml")
runtime=$(stage "$CONTAINERFILE" runtime)
dest=$(instruction COPY <<<"$runtime" | awk '$1 ~ /^--from=/ && $2 ~ /hcp-controller$/ { print $NF }')
user=$(instruction USER <<<"$runtime" | tail -1)
entrypoint=$(instruction ENTRYPOINT <<<"$runtime" | tail -1)
cmd=$(instruction CMD <<<"$runtime" | tail -1)
TAG=localhost/hcp-controller:$app_version

# ---- the image -----------------------------------------------------------------

base=$("$here/build-base.sh" --path)
if [ ! -f "$(dirname "$base")/done" ]; then
  not_ok "the base root file system is built (make e2e-image-base)" "$base"
  summary
  exit 1
fi
t0=$(now_us)
bin=$CTL_TMP/hcp-controller
install -m 0755 -s "$HCP_BIN" "$bin"
ctr=$("${B[@]}" from --quiet scratch) && mnt=$("${B[@]}" mount "$ctr") &&
  cp -a "$base/." "$mnt/" && "${B[@]}" umount "$ctr" >/dev/null &&
  "${B[@]}" copy --quiet "$ctr" "$bin" "$dest" >/dev/null || not_ok "image assembled"
cfg=(--entrypoint "$entrypoint" --cmd "$cmd" --user "$user")
for p in $(instruction EXPOSE <<<"$runtime"); do cfg+=(--port "$p"); done
# LABEL k="v" k2="v2": one --label per pair, as the shell would split them.
while IFS= read -r l; do cfg+=(--label "$l"); done < <(instruction LABEL <<<"$runtime" |
  xargs -n1 printf '%s\n')
"${B[@]}" config "${cfg[@]}" "$ctr" && "${B[@]}" commit --quiet "$ctr" "$TAG" >/dev/null &&
  "${B[@]}" rm "$ctr" >/dev/null || not_ok "image committed"
build_ms=$((($(now_us) - t0) / 1000))
size=$("${B[@]}" images --format '{{.Size}}' "$TAG" 2>/dev/null)
echo "# image $TAG: $size (base $(du -sm "$base" | cut -f1) MB, assembled and committed in ${build_ms} ms)"
check "the image is built as $TAG (the chart's appVersion)" test -n "$size"

inspect=$("${B[@]}" inspect --type image "$TAG" 2>/dev/null)
check_eq "its user is the Containerfile's ($user)" "$user" "$(jq -r '.OCIv1.config.User' <<<"$inspect")"
check_eq "its entrypoint is the Containerfile's" "$(jq -c . <<<"$entrypoint")" \
  "$(jq -c '.OCIv1.config.Entrypoint' <<<"$inspect")"
check_eq "its command is the Containerfile's" "$(jq -c . <<<"$cmd")" "$(jq -c '.OCIv1.config.Cmd' <<<"$inspect")"
check_contains "its labels are the Containerfile's" '"org.opencontainers.image.title":"hcp-controller"' \
  "$(jq -c '.OCIv1.config.Labels' <<<"$inspect")"

# A working container of the image; every run below uses the image's user
# and entrypoint as a container engine would.
ctr=$("${B[@]}" from --quiet "$TAG") || not_ok "container from $TAG"
mapfile -t ep < <(jq -r '.[]' <<<"$entrypoint")
out=$("${RUN[@]}" --user "$user" "$ctr" -- "${ep[@]}" --version 2>&1)
check_eq "--version from inside the image is the chart's appVersion" "hcp-controller $app_version" "$out"
out=$("${RUN[@]}" --user "$user" "$ctr" -- ldd "$dest" 2>&1)
WHY=$(grep 'not found' <<<"$out")
check "every library of the binary resolves inside the image" bash -c '! grep -q "not found" <<<"$1" && grep -q libc.so.6 <<<"$1"' _ "$out"
check_eq "the image's user is uid 65532, not root" "65532" "$("${RUN[@]}" --user "$user" "$ctr" -- id -u 2>&1)"

# ---- the controller from the image against the test API server -----------------

NS=$(new_ns image)
kdir=$CTL_TMP/kube
mkdir -p "$kdir"
cp "$KCFG" "$kdir/kubeconfig"
chmod 0755 "$kdir" && chmod 0644 "$kdir/kubeconfig"
HP=$(free_port)
MP=$(free_port)
"${RUN[@]}" --user "$user" -v "$kdir:/etc/hcp-controller/kube:ro" "$ctr" -- "${ep[@]}" run \
  --kubeconfig /etc/hcp-controller/kube/kubeconfig --namespace "$NS" \
  --health-probe-bind-address "127.0.0.1:$HP" --metrics-bind-address "127.0.0.1:$MP" \
  --metrics-secure=false >"$CTL_TMP/image-ctl.log" 2>&1 &
RUN_PID=$!
ctl_readyz_ok() { curl -sf --max-time 2 "http://127.0.0.1:$HP/readyz" >/dev/null 2>&1; }
gone() { ! kill -0 "$RUN_PID" 2>/dev/null; }
wait_for 30 bash -c "curl -sf --max-time 2 http://127.0.0.1:$HP/readyz >/dev/null || ! kill -0 $RUN_PID"
WHY="$(tail -5 "$CTL_TMP/image-ctl.log" | tr '\n' ' ')"
check "the controller started from the image answers /readyz" ctl_readyz_ok

# The controller's process, as the machine sees it.
pid=$(pgrep -f -- "--namespace $NS " | while read -r p; do
  [ "$(readlink "/proc/$p/exe" 2>/dev/null)" != "" ] && [[ "$(readlink "/proc/$p/exe")" == *hcp-controller ]] && echo "$p"
done | head -1)
check_eq "it runs as uid 65532 (the Containerfile's USER)" "65532 65532" \
  "$(awk '/^Uid:/ { print $2, $3 }' "/proc/${pid:-0}/status" 2>/dev/null)"
check_eq "in the image's root file system" "hcp-controller $app_version" \
  "$(chroot "/proc/${pid:-0}/root" "$dest" --version 2>/dev/null)"
check "not in this machine's" test -n "$pid" -a "$(stat -Lc %i "/proc/${pid:-0}/root" 2>/dev/null)" != "$(stat -c %i /)"

mk_policy "$NS" weekend "$(weekly_policy Saturday 01:00 4h)" || not_ok "setup: policy"
mk_hc "$NS" a policy=weekend || not_ok "setup: HostedCluster"
EVENTUALLY=20 eventually "it reconciles: the HostedCluster's HostedChangeManagementStatus appears" \
  "$NS" get "$(hcms_path "$NS" hostedcluster a)" .metadata.namespace

[ -n "$pid" ] && kill -TERM "$pid"
wait_for 15 gone || kill -KILL "$pid" 2>/dev/null
wait "$RUN_PID"
rc=$?
RUN_PID=
WHY="$(tail -5 "$CTL_TMP/image-ctl.log" | tr '\n' ' ')"
check_eq "it stops cleanly on SIGTERM (exit status)" 0 "$rc"

# ---- the check fails when the image lacks a runtime library --------------------

pkg=$(instruction RUN <<<"$runtime" | apt_packages | grep -m1 '^lib')
bad=$("${B[@]}" from --quiet "$TAG") &&
  gone=$("${RUN[@]}" --user 0:0 "$bad" -- sh -c "dpkg -L $pkg | grep '\\.so' | xargs rm -v" 2>&1)
echo "# removed from a container of the image: $(tr '\n' ' ' <<<"$gone")"
out=$("${RUN[@]}" --user "$user" "$bad" -- "${ep[@]}" --version 2>&1)
echo "# without $pkg's files: $out"
check_contains "an image without $pkg's libraries does not start, naming the library" \
  "error while loading shared libraries: lib" "$out"

echo "# e2e-image: $((($(now_us) - T_SUITE) / 1000)) ms"
summary
