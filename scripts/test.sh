#!/usr/bin/env bash
# The test command: everything that checks signupd and finishes in minutes.
#   1. swift test: the engine, the codec, the daemon in process and the real daemon over its
#      socket, with a throwaway PostgreSQL server (scripts/with-postgres.sh) so that the
#      store-conformance suites run on SQLite, in memory and on PostgreSQL
#   2. the systemd units: verify clean, security exposure <= 2.0
#   3. the Debian package (scripts/build-deb.sh, lintian clean), installed with apt into a
#      real systemd as PID 1 in namespaces and used as an administrator and users would
#      (skips cleanly where the kernel refuses the namespaces)
#   4. a third-party client in Python (standard library only), the Swift client example
#      (examples/SwiftClient: SignupClient used as a package dependency), and signupctl's
#      scripted commands with every documented exit code; operator forms, --check-config,
#      locales and reload (forms_and_locales_test.py)
#   5. the interactive form driven in tmux; the web bridge (signupd-web) in a real headless
#      Chromium (Tests/web/browser_test.py), against hostile visitors (hostile_visitor.py), and
#      behind the nginx site the package ships (behind_nginx.py)
#   6. robustness: hostile peers, faults, load, kill -9, and a 30-second fuzz run
#   7. several hosts: three daemons in network namespaces on one PostgreSQL server
#      (Tests/postgres/several_hosts.py; skips where namespaces or the server cannot run)
#   8. with --long only: the robustness suite at full size, the boot test's restart attacks at
#      issue 27's trial sizes (restart_handover.py fair-long), and the Swift suite again under
#      ThreadSanitizer and AddressSanitizer (each sanitizer build compiles every package again,
#      PostgresNIO's TLS stack included: some 10 minutes each on 2 cores)
#
# Wherever the project is cloned, the checks after the build run in a private mount
# namespace with a /tmp of their own (a fresh tmpfs: whatever they leave there goes when the
# run ends, passed, failed or interrupted), from a view of the checkout that other uids cannot
# enter and that the systemd sandbox hides (a bind mount in a 0700 directory in that /tmp):
# a test that hands another uid or the sandbox a path inside the checkout, instead of a copy
# it can reach, fails here, not only for the person who cloned into /root or /tmp. The build
# itself writes its temporary files in a directory of the run's (TMPDIR), removed at the end;
# a passing run fails if anything of signupd's is left in the real /tmp.
#   scripts/test.sh [--long]
set -euo pipefail
cd "$(dirname "$0")/.."
long=()
[ "${1:-}" = --long ] && long=(--long)

if [ -z "${SIGNUPD_TEST_VIEW:-}" ]; then
  before=$(ls -A /tmp)
  # Everything that honours TMPDIR (SwiftPM, mktemp, Python's tempfile) writes in one
  # directory of this run's, removed however the run ends; other uids may enter it (a
  # PostgreSQL server runs as nobody from a directory in it), not write to it.
  scratch=$(mktemp -d /tmp/signupd-test-tmp-XXXXXX)
  chmod 0755 "$scratch"
  trap 'rm -rf "$scratch"' EXIT
  export TMPDIR=$scratch
  scripts/install-deps.sh
  swift build --build-tests
  # The Swift client example, a package of its own that depends on this one by path.
  swift build --package-path examples/SwiftClient
  # The release build for the package, here in the checkout's own path (where later runs
  # find it built), before the checks move to the view.
  scripts/build-deb.sh
  if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    status=0
    # One path for the view, so that SwiftPM's paths stay the same from run to run.
    # The checkout is bound from the working directory, which still reaches it when it is
    # itself under the /tmp the new tmpfs covers.
    unshare -m --propagation private bash -c '
      set -e
      cd "$1"
      mount -t tmpfs -o mode=1777 signupd-test-tmp /tmp
      mkdir -m 0700 /tmp/signupd-view && mkdir /tmp/signupd-view/src
      mount --no-canonicalize --rbind . /tmp/signupd-view/src
      cd /tmp/signupd-view/src
      TMPDIR=$(mktemp -d /tmp/signupd-tmp-XXXXXX); chmod 0755 "$TMPDIR"; export TMPDIR
      SIGNUPD_TEST_VIEW=1 exec scripts/test.sh "${@:2}"' _ "$PWD" "${long[@]}" || status=$?
  else
    echo "note: not root (or no mount namespaces): the checks run from the checkout's own path"
    status=0
    SIGNUPD_TEST_VIEW=0 scripts/test.sh "${long[@]}" || status=$?
  fi
  rm -rf "$scratch"
  # Only signupd's own names: other processes of the machine may use /tmp meanwhile, and
  # another run of this command (a second clone) has its own TMPDIR there while it runs.
  left=$(ls -A /tmp | grep -vxF -f <(printf '%s\n' "$before") | grep -E '^signupd' | grep -v '^signupd-test-tmp-' || true)
  if [ $status = 0 ] && [ -n "$left" ]; then
    echo "FAIL: the test command left these in /tmp:"; echo "$left"; exit 1
  fi
  [ $status = 0 ] && echo "scripts/test.sh: all checks passed"
  exit $status
fi

# The checks, from the view (or the checkout itself where no view can be made).
[ "$SIGNUPD_TEST_VIEW" = 1 ] && echo "checks run from $PWD, a view of the checkout that only root can enter, with a private /tmp"
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
# One run of the whole suite; where no PostgreSQL server can run, pgserver says why and
# its tests skip (the rest still runs).
scripts/with-postgres.sh swift test --skip-build 2>&1 | tee "$run/swift-test.log" | grep -vE '^(◇|↳)|started\.$' || { tail -50 "$run/swift-test.log"; exit 1; }
grep -qE "Test run with [0-9]+ tests? .*passed" "$run/swift-test.log" || { echo "swift test did not pass"; exit 1; }
grep -q "^pgserver: PostgreSQL" "$run/swift-test.log" || echo "note: the PostgreSQL store was not tested (see the pgserver line above)"
BIN=$(swift build --show-bin-path)
scripts/check-units.sh "$BIN/signupd"
boot_long=""
if [ ${#long[@]} -gt 0 ]; then boot_long=1; fi
BOOT_TEST_LONG=$boot_long scripts/systemd-boot-test.sh dist/signupd_*.deb
python3 Tests/clients/third_party_client.py "$BIN/signupd"
python3 Tests/clients/schema_property_test.py "$BIN/signupd" 2000
python3 Tests/clients/swift_example_test.py "$BIN/signupd" "$(swift build --package-path examples/SwiftClient --show-bin-path)/signup-example"
python3 Tests/clients/forms_and_locales_test.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/clients/signupctl_commands.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/clients/signupctl_unavailable.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/clients/interactive_form_test.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/operators/operators_test.py "$BIN/signupd" "$BIN/signupctl"
python3 Tests/web/browser_test.py "$BIN/signupd" "$BIN/signupd-web"
python3 Tests/web/hostile_visitor.py "$BIN/signupd" "$BIN/signupd-web"
python3 Tests/web/behind_nginx.py "$BIN/signupd" "$BIN/signupd-web"
scripts/robustness.sh "${long[@]}" "$BIN/signupd"
python3 Tests/postgres/several_hosts.py "$BIN/signupd"
if [ ${#long[@]} -gt 0 ]; then scripts/sanitizers.sh thread address; fi
