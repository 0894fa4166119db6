#!/usr/bin/env bash
# Every shell script of the repository parses (`bash -n`): a syntax error
# deep in an end-to-end suite otherwise shows only when the suite reaches it,
# minutes into `make test`. Prints one line per script and a final
# "N passed, N failed" (scripts/run-tests.sh).
set -u
cd "$(dirname "$0")/.." || exit 1
passed=0 failed=0
mapfile -t scripts < <(git ls-files '*.sh' 2>/dev/null || find . -name '*.sh' -not -path './build/*' -not -path './node_modules/*')
[ "${#scripts[@]}" -gt 0 ] || { echo "not ok - no shell script found"; echo "0 passed, 1 failed"; exit 1; }
for f in "${scripts[@]}"; do
  if err=$(bash -n "$f" 2>&1); then
    passed=$((passed + 1)); echo "ok   - $f parses"
  else
    failed=$((failed + 1)); echo "not ok - $f does not parse: ${err//$'\n'/ }"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
