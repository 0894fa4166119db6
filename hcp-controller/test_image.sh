#!/usr/bin/env bash
# shellcheck disable=SC2016 # the bash -c checks read their arguments as $1, $2
# Checks the Containerfile against the built binary in $HCP_BIN, without a
# container engine:
#   - the runtime stage installs the Debian package of every shared library
#     the binary links directly (readelf -d NEEDED, resolved with ldd and
#     mapped with dpkg -S), except those every Debian image has;
#   - it installs nothing else but tzdata and ca-certificates;
#   - it runs as a non-root user, both stages are Debian bookworm;
#   - the builder installs the -dev packages the build needs and its COPY
#     instructions give make everything `make build` uses.
# The checker is also run on altered copies of the Containerfile, so that a
# missing or surplus package is shown to fail. Prints one line per check and
# a final "N passed, N failed". e2e/image/test_image.sh builds the image and
# runs the controller from it.
set -u

BIN=${HCP_BIN:?set HCP_BIN to the hcp-controller binary}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
CONTAINERFILE=${HCP_CONTAINERFILE:-$REPO/Containerfile}
# shellcheck source=e2e/controller/lib.sh
. "$REPO/e2e/controller/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$CTL_TMP"' EXIT

# Packages the runtime stage may list although the binary does not link
# them: time zones for maintenance schedules, CA certificates for TLS.
DATA_PACKAGES="tzdata ca-certificates"

# ---- reading the Containerfile: logical, stage, stages, apt_packages ---------

# shellcheck source=e2e/image/containerfile.sh
. "$REPO/e2e/image/containerfile.sh"

# ---- the binary and the Debian packages --------------------------------------

# needed BIN: the shared libraries BIN links directly.
needed() {
  readelf -d "$1" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $NF); print $NF }'
}

# resolved BIN LIB: the path ldd resolves LIB to.
resolved() {
  ldd "$1" | awk -v lib="$2" '$1 == lib && $2 == "=>" { print $3; exit }'
}

# owner PATH: the installed package that ships PATH. Tries the path, its
# symlink target and their /usr-merged twins, since dpkg knows each file under
# the name its package used.
owner() {
  local p real c out
  p=$1
  real=$(readlink -f "$p")
  for c in "$p" "$real" "${p#/usr}" "/usr$p" "${real#/usr}" "/usr$real"; do
    out=$(dpkg -S "$c" 2>/dev/null | grep -E '^[a-z0-9][a-z0-9+.-]*(:[a-z0-9]+)?: ' | head -1)
    if [ -n "$out" ]; then
      out=${out%%: *}
      echo "${out%%:*}"
      return 0
    fi
  done
  return 1
}

# base_packages: the packages every Debian image has: the Essential ones and
# everything they depend on (Pre-Depends and Depends, first installed
# alternative), computed from this bookworm machine's dpkg database.
base_packages() {
  dpkg-query -W -f='${db:Status-Abbrev}\t${Package}\t${Essential}\t${Pre-Depends}, ${Depends}\n' |
    awk -F'\t' '
      $1 ~ /^ii/ { inst[$2] = 1; deps[$2] = $4; if ($3 == "yes") { q[++n] = $2; seen[$2] = 1 } }
      END {
        for (i = 1; i <= n; i++) {
          m = split(deps[q[i]], d, ",")
          for (j = 1; j <= m; j++) {
            k = split(d[j], alt, "|")
            for (a = 1; a <= k; a++) {
              x = alt[a]; sub(/\(.*\)/, "", x); gsub(/[ \t]/, "", x); sub(/:.*/, "", x)
              if (x != "" && (x in inst)) {
                if (!(x in seen)) { seen[x] = 1; q[++n] = x }
                break
              }
            }
          }
        }
        for (i = 1; i <= n; i++) print q[i]
      }'
}

BASE=" $(base_packages | tr '\n' ' ') "

# lib_packages BIN: "LIB PACKAGE" for every directly linked library
# (PACKAGE "?" when the library does not resolve or no package ships it).
lib_packages() {
  local lib path pkg
  for lib in $(needed "$1"); do
    path=$(resolved "$1" "$lib")
    pkg="?"
    if [ -n "$path" ] && [ -e "$path" ]; then pkg=$(owner "$path") || pkg="?"; fi
    echo "$lib $pkg"
  done
}

LIBPKGS=$(lib_packages "$BIN")

# check_runtime FILE: prints one line per problem of the runtime stage's
# package list; returns 1 when there is any.
check_runtime() {
  local listed lib pkg p bad=0 wanted=" "
  listed=" $(stage "$1" runtime | apt_packages | tr '\n' ' ') "
  while read -r lib pkg; do
    if [ "$pkg" = "?" ]; then
      echo "$lib: no installed Debian package ships it (ldd: $(resolved "$BIN" "$lib"))"
      bad=1
      continue
    fi
    wanted="$wanted$pkg "
    if [[ "$listed" != *" $pkg "* ]] && [[ "$BASE" != *" $pkg "* ]]; then
      echo "$lib is missing at run time: add package $pkg to the runtime stage's apt-get install"
      bad=1
    fi
  done <<<"$LIBPKGS"
  for p in $listed; do
    if [[ "$wanted" != *" $p "* ]] && [[ " $DATA_PACKAGES " != *" $p "* ]]; then
      echo "package $p is listed but the binary links no library of it: remove it"
      bad=1
    fi
  done
  for p in $DATA_PACKAGES; do
    if [[ "$listed" != *" $p "* ]]; then
      echo "package $p is required at run time but not listed"
      bad=1
    fi
  done
  return $bad
}

# ---- checks --------------------------------------------------------------------

if [ ! -f "$CONTAINERFILE" ]; then
  not_ok "Containerfile exists" "$CONTAINERFILE"
  summary
  exit 1
fi

lddout=$(ldd "$BIN" 2>&1)
check_eq "ldd resolves every library of the binary" "" "$(grep 'not found' <<<"$lddout")"

n_needed=$(needed "$BIN" | wc -l)
WHY="readelf -d lists $n_needed NEEDED entries"
check "the binary links shared libraries, libc among them" \
  bash -c '[ "$1" -gt 1 ] && grep -qx "libc.so.6" <<<"$2"' _ "$n_needed" "$(needed "$BIN")"

while read -r lib pkg; do
  where="listed in the runtime stage"
  [[ "$BASE" == *" $pkg "* ]] && where="in every Debian image (dependency of the Essential packages)"
  echo "# $lib -> $pkg ($where)"
done <<<"$LIBPKGS"

runtime_pkgs=$(stage "$CONTAINERFILE" runtime | apt_packages | tr '\n' ' ')
echo "# runtime packages: $runtime_pkgs"
check_eq "the runtime stage installs packages" "yes" "$([ -n "$runtime_pkgs" ] && echo yes)"
problems=$(check_runtime "$CONTAINERFILE")
check_eq "runtime packages: every linked library's package, nothing more, plus $DATA_PACKAGES" \
  "" "$problems"

# The checker itself: a missing library and a surplus package must fail.
first=$(awk '$2 != "?" && b !~ " "$2" " { print; exit }' b="$BASE" <<<"$LIBPKGS")
drop_lib=${first%% *} drop_pkg=${first##* }
sed "/^[ \t]*${drop_pkg}[ \t]*\\\\\$/d" "$CONTAINERFILE" >"$tmp/missing"
out=$(check_runtime "$tmp/missing")
check_contains "a Containerfile without $drop_pkg fails, naming $drop_lib" \
  "$drop_lib is missing at run time: add package $drop_pkg" "$out"
sed "s/^\([ \t]*\)tzdata[ \t]*\\\\\$/&\n\1curl \\\\/" "$CONTAINERFILE" >"$tmp/surplus"
out=$(check_runtime "$tmp/surplus")
check_contains "a Containerfile with a surplus package fails, naming it" \
  "package curl is listed but the binary links no library" "$out"
sed "/^[ \t]*tzdata[ \t]*\\\\\$/d" "$CONTAINERFILE" >"$tmp/notz"
out=$(check_runtime "$tmp/notz")
check_contains "a Containerfile without tzdata fails" \
  "package tzdata is required at run time but not listed" "$out"

# Base images.
stage_list=$(stages "$CONTAINERFILE")
echo "# stages: $(tr '\n' ';' <<<"$stage_list")"
check_eq "two stages, build and runtime" "build runtime" "$(awk '{ print $2 }' <<<"$stage_list" | xargs)"
check_eq "builder is debian:bookworm" "debian:bookworm" \
  "$(awk '$2 == "build" { sub(/@sha256:.*/, "", $1); print $1 }' <<<"$stage_list")"
check_eq "runtime is debian:bookworm-slim" "debian:bookworm-slim" \
  "$(awk '$2 == "runtime" { sub(/@sha256:.*/, "", $1); print $1 }' <<<"$stage_list")"

# The runtime user.
user=$(stage "$CONTAINERFILE" runtime | awk 'toupper($1) == "USER" { u = $2 } END { print u }')
check_eq "runtime USER is 65532:65532" "65532:65532" "$user"
WHY="USER $user"
check "runtime USER is not root" bash -c '[ -n "$1" ] && [[ "${1%%:*}" != "0" && "${1%%:*}" != "root" ]]' _ "$user"
check_eq "ENTRYPOINT runs the binary" '["/usr/local/bin/hcp-controller"]' \
  "$(stage "$CONTAINERFILE" runtime | awk 'toupper($1) == "ENTRYPOINT" { $1 = ""; sub(/^ /, ""); gsub(/ /, ""); print }')"
check_eq "CMD is run" '["run"]' \
  "$(stage "$CONTAINERFILE" runtime | awk 'toupper($1) == "CMD" { $1 = ""; sub(/^ /, ""); gsub(/ /, ""); print }')"
check_contains "the binary is copied from the builder" \
  "COPY --from=build /install/usr/local/bin/hcp-controller /usr/local/bin/hcp-controller" \
  "$(stage "$CONTAINERFILE" runtime | tr -s ' ')"

# The builder: the -dev packages of scripts/install-deps.sh, and the package
# of every pkg-config module the Makefile links, of ev.h and of cmocka (whose
# flags the Makefile queries together with the others).
build_pkgs=" $(stage "$CONTAINERFILE" build | apt_packages | tr '\n' ' ') "
dev_pkgs=$(awk '/^packages=\(/,/^\)/' "$REPO/scripts/install-deps.sh" | grep -oE '\blib[a-z0-9+.-]*-dev\b' |
  grep -v '^libclang' | sort -u)
missing=""
for p in $dev_pkgs build-essential pkg-config; do
  [[ "$build_pkgs" == *" $p "* ]] || missing="$missing $p"
done
check_eq "the builder installs the build packages of install-deps.sh" "" "$missing"
modules=$(sed -n 's/^PKGS[ \t]*:*=[ \t]*//p' "$REPO/Makefile")
missing=""
for m in $modules cmocka; do
  pc=$(pkg-config --path "$m" 2>/dev/null)
  pkg=""
  [ -n "$pc" ] && pkg=$(owner "$pc")
  [ -n "$pkg" ] && [[ "$build_pkgs" == *" $pkg "* ]] || missing="$missing $m(${pkg:-?})"
done
pkg=$(owner /usr/include/ev.h)
[ -n "$pkg" ] && [[ "$build_pkgs" == *" $pkg "* ]] || missing="$missing ev.h(${pkg:-?})"
check_eq "the builder installs the package of every pkg-config module and ev.h" "" "$missing"

# The builder's COPY instructions give make everything it needs: copy exactly
# those sources into an empty directory and ask make what it would do.
ctx=$tmp/ctx
mkdir -p "$ctx"
copy_ok=1
while read -r -a words; do
  [ "${words[0]^^}" = "COPY" ] || continue
  args=("${words[@]:1}")
  [[ "${args[0]}" == --* ]] && continue
  dest=${args[-1]}
  for src in "${args[@]:0:${#args[@]}-1}"; do
    if [ -d "$REPO/$src" ]; then
      mkdir -p "$ctx/$dest" && cp -r "$REPO/$src/." "$ctx/$dest/"
    elif [ -f "$REPO/$src" ]; then
      mkdir -p "$ctx/$(dirname "$dest/x")" && cp "$REPO/$src" "$ctx/$dest"
    else
      copy_ok=0
      echo "# COPY source $src does not exist"
    fi
  done
done < <(stage "$CONTAINERFILE" build)
check_eq "every COPY source of the builder exists" 1 "$copy_ok"
# compiled DIR: the sources `make build` in DIR compiles, and the binary it
# links, as make -n says.
compiled() {
  make -n -C "$1" BUILD="$tmp/out" build 2>&1 |
    grep -oE -- " -c [^ ]+\.c | -o $tmp/out/hcp-controller " | sort
}
want=$(compiled "$REPO")
got=$(compiled "$ctx")
WHY="$(diff <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
# The binary says which version it is, the chart's appVersion: the tag of
# the image the chart deploys when image.tag is empty.
app_version=$(chart_app_version "$REPO/charts/hcp-controller/Chart.yaml")
check "--version prints the chart's appVersion ($app_version)" \
  bash -c '[ -n "$2" ] && [ "$("$1" --version)" = "hcp-controller $2" ] && [ "$("$1" version)" = "hcp-controller $2" ]' _ "$BIN" "$app_version"
check "make build compiles the same sources from the copied ones as from the tree" \
  bash -c '[ "$1" = "$2" ] && grep -q -- "-o " <<<"$1" && grep -q -- "-c pkg/" <<<"$1"' _ "$want" "$got"
check_contains "the builder runs make build" "make -j\"\$(nproc)\" BUILD=/out build" \
  "$(stage "$CONTAINERFILE" build | tr -s ' ')"

summary
