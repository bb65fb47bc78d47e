#!/usr/bin/env bash
# Checks the systemd units as an administrator's tools would: `systemd-analyze verify`
# must be clean, and `systemd-analyze security --offline=yes` must rate the service's
# exposure at 2.0 or better. ExecStart= and ExecReload= point at the freshly built binary
# in a copy.
# The man pages the units name are checked after installing the package, by the boot test.
#
# usage: scripts/check-units.sh path/to/signupd [path/to/signupd-web]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(realpath "$1")
work=$(mktemp -d /tmp/signupd-units.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$HERE/systemd/signupd.socket" "$work/"
# ExecStart= and ExecReload= (which runs signupd --check-config first) both name the binary.
sed -E "s#^(ExecStart|ExecReload)=/usr/sbin/signupd( |\$)#\1=\"$BIN\"\2#" "$HERE/systemd/signupd.service" > "$work/signupd.service"
out=$(cd "$work" && systemd-analyze verify --man=no ./signupd.socket ./signupd.service 2>&1) || { echo "$out"; echo "FAIL: systemd-analyze verify"; exit 1; }
[ -z "$out" ] || { echo "$out"; echo "FAIL: systemd-analyze verify printed warnings"; exit 1; }
echo "systemd-analyze verify: clean"
(cd "$work" && systemd-analyze security --offline=yes --threshold=20 ./signupd.service) > "$work/security.txt" 2>&1 || {
  tail -5 "$work/security.txt"; echo "FAIL: exposure above 2.0"; exit 1; }
grep "Overall exposure" "$work/security.txt"
# The web bridge's units, the same way (its binary beside signupd's unless given).
WEB=$(realpath "${2:-$(dirname "$BIN")/signupd-web}")
cp "$HERE/systemd/signupd-web.socket" "$work/"
sed "s|^ExecStart=/usr/sbin/signupd-web|ExecStart=\"$WEB\"|" "$HERE/systemd/signupd-web.service" > "$work/signupd-web.service"
out=$(cd "$work" && systemd-analyze verify --man=no ./signupd-web.socket ./signupd-web.service 2>&1) || { echo "$out"; echo "FAIL: systemd-analyze verify (signupd-web)"; exit 1; }
[ -z "$out" ] || { echo "$out"; echo "FAIL: systemd-analyze verify printed warnings (signupd-web)"; exit 1; }
echo "systemd-analyze verify (signupd-web): clean"
(cd "$work" && systemd-analyze security --offline=yes --threshold=20 ./signupd-web.service) > "$work/security-web.txt" 2>&1 || {
  tail -5 "$work/security-web.txt"; echo "FAIL: signupd-web exposure above 2.0"; exit 1; }
grep "Overall exposure" "$work/security-web.txt"
