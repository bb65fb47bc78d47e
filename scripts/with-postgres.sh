#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL 15 server (initdb + pg_ctl in a temporary
# directory, as nobody when run as root, TCP on 127.0.0.1 with a password and TLS) and
# SIGNUPD_TEST_POSTGRES_URL, _PASSWORD_FILE and _CA set for it; the server is removed after.
# Where no server can run, says why and runs the command without them (PostgreSQL tests skip).
#   scripts/with-postgres.sh swift test --skip-build
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 Tests/postgres/pgserver.py run -- "$@"
