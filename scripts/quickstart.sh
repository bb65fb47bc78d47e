#!/usr/bin/env bash
# Builds signupd and signupctl, starts signupd with its default embedded SQLite store and no
# configuration, and runs signupctl against it: the interactive sign-up form on a terminal,
# a scripted signup, login and token check otherwise. Stops signupd on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --product signupd >/dev/null
swift build --product signupd-phone >/dev/null  # phone numbers: opened by signupd beside itself
swift build --product signupctl >/dev/null
BIN=$(swift build --show-bin-path)

dir=${XDG_RUNTIME_DIR:-/tmp}/signupd-quickstart-$(id -u)
mkdir -p "$dir" && chmod 700 "$dir"
export SIGNUPD_SOCKET="$dir/signupd.sock"
"$BIN/signupd" --socket "$SIGNUPD_SOCKET" 2>"$dir/signupd.log" &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do "$BIN/signupctl" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN/signupctl" ping
echo "signupd is serving $SIGNUPD_SOCKET (log: $dir/signupd.log)"

if [ -t 0 ] && [ -t 1 ]; then
  "$BIN/signupctl" signup || true
  "$BIN/signupctl" login || true
else
  user=quickstart$RANDOM
  printf 'a long secret\n' | "$BIN/signupctl" signup --username "$user" --password-stdin
  token=$(printf 'a long secret\n' | "$BIN/signupctl" login --username "$user" --password-stdin)
  echo "logged in as $user; token $token"
  printf 'token belongs to: '; printf '%s\n' "$token" | "$BIN/signupctl" verify
fi
