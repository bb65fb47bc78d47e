#!/usr/bin/env bash
# The robustness checks against the real daemon (Tests/robustness), each printing
# "N passed, 0 failed". The default sizes are the test command's; --long runs the
# recorded long versions (100,000 connection cycles, 10 million fuzz inputs).
#   scripts/robustness.sh [--long] [path/to/signupd]
set -euo pipefail
cd "$(dirname "$0")/.."
long=0
[ "${1:-}" = --long ] && { long=1; shift; }
BIN=${1:-$(swift build --show-bin-path)/signupd}
run() { echo "== $*"; python3 "$@"; }
run Tests/robustness/http_availability.py "$BIN"
run Tests/robustness/https_availability.py "$BIN"
run Tests/robustness/race_two_daemons.py "$BIN"
run Tests/robustness/sigterm_under_load.py "$BIN"
run Tests/robustness/store_faults.py "$BIN"
run Tests/robustness/slow_consumer.py "$BIN"
run Tests/robustness/half_close_and_detach.py "$BIN"
run Tests/robustness/other_uid.py "$BIN"
run Tests/robustness/accounts_and_limits.py "$BIN"
if [ $long = 1 ]; then run Tests/robustness/hostile_neighbour.py "$BIN" --long; else run Tests/robustness/hostile_neighbour.py "$BIN"; fi
if [ $long = 1 ]; then run Tests/robustness/memory_return.py "$BIN" --long; else run Tests/robustness/memory_return.py "$BIN"; fi
if [ $long = 1 ]; then run Tests/robustness/store_fairness.py "$BIN" --long; else run Tests/robustness/store_fairness.py "$BIN"; fi
# The same against PostgreSQL (the trial's worst case: 1.4 -> 108 ms), in a server of its own.
echo "== Tests/robustness/store_fairness.py --postgres"
if [ $long = 1 ]; then scripts/with-postgres.sh python3 Tests/robustness/store_fairness.py "$BIN" --long --postgres; else scripts/with-postgres.sh python3 Tests/robustness/store_fairness.py "$BIN" --postgres; fi
if [ $long = 1 ]; then run Tests/robustness/session_memory.py "$BIN" --long; else run Tests/robustness/session_memory.py "$BIN"; fi
run Tests/robustness/kill9.py "$BIN" 200
if [ $long = 1 ]; then
  run Tests/robustness/connections.py "$BIN" 10000 100000
  scripts/fuzz.sh -runs=10000000
else
  run Tests/robustness/connections.py "$BIN" 10000 20000
  scripts/fuzz.sh -max_total_time=30
fi
