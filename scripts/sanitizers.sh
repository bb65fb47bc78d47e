#!/usr/bin/env bash
# The Swift test suite under ThreadSanitizer and AddressSanitizer. The daemon binaries the
# tests start are built with the same sanitizer; a report makes a daemon exit non-zero
# (which the tests check) and is also searched for in every daemon log afterwards.
#   scripts/sanitizers.sh [thread|address]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- thread address
for sanitizer in "$@"; do
  scratch=.build-$sanitizer
  swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
  marker=$(mktemp)
  SIGNUPD_TEST_SANITIZER=$sanitizer swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 | tee "$scratch/test.log" | grep -E "Test run with|✘" || true
  grep -qE "Test run with [0-9]+ tests? .*passed" "$scratch/test.log" || { echo "FAIL: swift test under $sanitizer sanitizer"; exit 1; }
  reports=$(find /tmp -maxdepth 2 -path '/tmp/signupd-test-*' -name signupd.log -newer "$marker" -exec grep -l -E "ThreadSanitizer|AddressSanitizer|LeakSanitizer" {} + 2>/dev/null || true)
  rm -f "$marker"
  [ -z "$reports" ] || { echo "FAIL: sanitizer reports in daemon logs:"; echo "$reports"; exit 1; }
  echo "sanitizer $sanitizer: 1 passed, 0 failed"
done
