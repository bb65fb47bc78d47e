#!/usr/bin/env bash
# The test command: everything that checks signupd and finishes in minutes.
#   1. swift test: the engine, the codec, the daemon in process and the real daemon over its
#      socket, with a throwaway PostgreSQL server (scripts/with-postgres.sh) so that the
#      store-conformance suites run on SQLite, in memory and on PostgreSQL
#   2. the systemd units: verify clean, security exposure <= 2.0
#   3. the Debian package (scripts/build-deb.sh, lintian clean), installed with apt into a
#      real systemd as PID 1 in namespaces and used as an administrator and users would
#      (skips cleanly where the kernel refuses the namespaces)
#   4. a third-party client in Python (standard library only), and signupctl's
#      scripted commands with every documented exit code; operator forms, --check-config,
#      locales and reload (forms_and_locales_test.py)
#   5. the interactive form driven in tmux
#   6. robustness: hostile peers, faults, load, kill -9, and a 30-second fuzz run
#   7. several hosts: three daemons in network namespaces on one PostgreSQL server
#      (Tests/postgres/several_hosts.py; skips where namespaces or the server cannot run)
#   8. with --long only: the robustness suite at full size and the Swift suite again under
#      ThreadSanitizer and AddressSanitizer (each sanitizer build compiles every package again,
#      PostgresNIO's TLS stack included: some 10 minutes each on 2 cores)
#   scripts/test.sh [--long]
set -euo pipefail
cd "$(dirname "$0")/.."
long=()
[ "${1:-}" = --long ] && long=(--long)
scripts/install-deps.sh
swift build --build-tests
# One run of the whole suite; where no PostgreSQL server can run, pgserver says why and
# its tests skip (the rest still runs).
scripts/with-postgres.sh swift test --skip-build 2>&1 | tee /tmp/signupd-swift-test.log | grep -vE '^(◇|↳)|started\.$' || { tail -50 /tmp/signupd-swift-test.log; exit 1; }
grep -qE "Test run with [0-9]+ tests? .*passed" /tmp/signupd-swift-test.log || { echo "swift test did not pass"; exit 1; }
grep -q "^pgserver: PostgreSQL" /tmp/signupd-swift-test.log || echo "note: the PostgreSQL store was not tested (see the pgserver line above)"
BIN=$(swift build --show-bin-path)
scripts/check-units.sh "$BIN/signupd"
scripts/build-deb.sh
scripts/systemd-boot-test.sh dist/signupd_*.deb
python3 Tests/clients/third_party_client.py "$BIN/signupd"
python3 Tests/clients/forms_and_locales_test.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/clients/signupctl_commands.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/clients/signupctl_unavailable.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/clients/interactive_form_test.py "$BIN/signupd" "$BIN/signupctl"
scripts/robustness.sh "${long[@]}" "$BIN/signupd"
python3 Tests/postgres/several_hosts.py "$BIN/signupd"
if [ ${#long[@]} -gt 0 ]; then scripts/sanitizers.sh thread address; fi
echo "scripts/test.sh: all checks passed"
