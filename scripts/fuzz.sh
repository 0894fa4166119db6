#!/usr/bin/env bash
# Builds and runs the libFuzzer targets for a bounded time.
#
#   scripts/fuzz.sh BUILD_DIR SECONDS FUZZ_SOURCE...
#
# BUILD_DIR holds libhcp.a compiled with -fsanitize=fuzzer-no-link,address,
# undefined (`make fuzz` builds it). Each pkg/<dir>/fuzz_<name>.c is linked
# with it into BUILD_DIR/fuzz-bin/fuzz_<name> and run for SECONDS seconds
# with AddressSanitizer, UndefinedBehaviorSanitizer and leak detection.
# Seeds: examples/ and pkg/<dir>/fuzz_seeds/; a dictionary fuzz_<name>.dict
# next to the source is used when present. The growing corpus is kept in
# BUILD_DIR/fuzz-corpus/fuzz_<name> between runs; reproducers of failures
# are written to BUILD_DIR/fuzz-artifacts/. Any crash, leak, timeout (an
# input running longer than 10 s), out-of-memory (2 GB) or sanitizer report
# fails the script.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS FUZZ_SOURCE..." >&2
  exit 2
fi
build=$1
seconds=$2
shift 2
case "$seconds" in
  '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;;
esac
if [ $# -eq 0 ]; then
  echo "fuzz: no fuzz targets"
  exit 0
fi
if [ ! -f "$build/libhcp.a" ]; then
  echo "fuzz: $build/libhcp.a is missing (run 'make fuzz')" >&2
  exit 2
fi

# The libraries libhcp.a needs: the Makefile's PKGS (passed as HCP_PKGS),
# so that a library added there is linked here too.
read -r -a pkgs <<<"${HCP_PKGS:-libical libcurl jansson libfyaml libmicrohttpd gnutls zlib}"
read -r -a cflags <<<"$(pkg-config --cflags "${pkgs[@]}")"
read -r -a libs <<<"$(pkg-config --libs "${pkgs[@]}") -lev -lm"
san=("-fsanitize=fuzzer,address,undefined" -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
mkdir -p "$build/fuzz-bin" "$build/fuzz-corpus" "$build/fuzz-artifacts"

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"

failed=()
for src in "$@"; do
  name=$(basename "$src" .c)
  dir=$(dirname "$src")
  bin="$build/fuzz-bin/$name"
  echo "== fuzz: building $name"
  clang -std=c11 -O1 -g "${san[@]}" -D_GNU_SOURCE -Ipkg "${cflags[@]}" "$src" "$build/libhcp.a" \
    "${libs[@]}" -o "$bin"

  corpus="$build/fuzz-corpus/$name"
  seeds="$build/fuzz-seeds/$name"
  rm -rf "$seeds"
  mkdir -p "$corpus" "$seeds"
  for f in examples/* "$dir"/fuzz_seeds/*; do
    [ -f "$f" ] && cp "$f" "$seeds/"
  done
  dict=()
  [ -f "$dir/$name.dict" ] && dict=("-dict=$dir/$name.dict")

  echo "== fuzz: running $name for ${seconds}s"
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -detect_leaks=1 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-artifacts/$name-" "${dict[@]}" "$corpus" "$seeds"; then
    echo "== fuzz: $name passed"
  else
    echo "!! fuzz: $name failed; reproducers in $build/fuzz-artifacts/" >&2
    failed+=("$name")
  fi
done

echo "$(( $# - ${#failed[@]} )) passed, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all ${#} targets passed"
