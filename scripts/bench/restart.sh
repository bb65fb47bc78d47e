#!/usr/bin/env bash
# The restart rows (issue 29): the packaged signupd in a booted systemd sandbox, N open
# sessions (16 per connection, spread over uids so that each is carried), then
# `systemctl restart` and one keystroke (Tests/robustness/restart_handover.py bench).
#   scripts/bench/restart.sh PACKAGE [N ...]      default N: 1000 10000
# Prints, per N and round, the bench line and both processes' stages; needs root (the
# sandbox is scripts/systemd-boot-test.sh's, SANDBOX_ONLY).
set -euo pipefail
cd "$(dirname "$0")/../.."
DEB=$(realpath "$1"); shift
sizes=(1000 10000)
[ $# -eq 0 ] || sizes=("$@")
log=$(mktemp)
SANDBOX_ONLY=1 SANDBOX_SECONDS=900 scripts/systemd-boot-test.sh "$DEB" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
pid=$(sed -n 's/.*nsenter -t \([0-9]*\) -a bash.*/\1/p' "$log")
state=$(sed -n 's/.*then rm -rf \(\/tmp\/signupd-systemd\.[A-Za-z0-9]*\)).*/\1/p' "$log")
[ -n "$pid" ] || { cat "$log" >&2; exit 1; }
finish() {
  timeout 20 nsenter -t "$pid" -a systemctl poweroff > /dev/null 2>&1 || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  [ -n "$state" ] && rm -rf "$state"
  rm -f "$log"
}
trap finish EXIT
in_sandbox() { timeout 300 nsenter -t "$pid" -a "$@"; }
in_sandbox env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/run/sandbox-pkg/$(basename "$DEB")" > /dev/null
for n in "${sizes[@]}"; do
  for round in 1 2 3; do
    in_sandbox systemctl stop signupd.service 2> /dev/null
    in_sandbox python3 /run/sandbox-tests/restart_handover.py bench "$n" 16 | sed "s/^/restart n=$n round=$round: /"
  done
done
