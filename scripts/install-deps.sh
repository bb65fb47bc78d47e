#!/usr/bin/env bash
# Installs what building and testing signupd needs from Debian's archive: the C libraries
# it links (libsystemd, libsodium, SQLite, ICU, libpwquality with cracklib's dictionary, libphonenumber)
# and the tools the tests drive (python3, tmux, systemd-analyze, man; PostgreSQL 15, iproute2
# and openssl for the several-hosts tests; Chromium and its WebDriver, and nginx, for the
# web bridge's tests), and from PyPI the Python packages the tests use (hypothesis-jsonschema and
# jsonschema for the schema-driven test, selenium to drive Chromium). Swift itself must
# already be on PATH. Safe to run again.
#   scripts/install-deps.sh [EXTRA-PACKAGE...]   (scripts/build-deb.sh adds its build tools)
set -euo pipefail
packages=(libsystemd-dev libsodium-dev libsqlite3-dev libicu-dev libpwquality-dev libphonenumber-dev cracklib-runtime pkg-config python3 python3-pip tmux systemd util-linux procps man-db postgresql iproute2 openssl chromium chromium-driver fonts-noto-cjk nginx "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# For the interpreter the tests run with (`python3` on PATH): into it when it is a private
# one (pyenv, a venv), as Debian allows for its own Python otherwise (PEP 668).
python_packages=(hypothesis-jsonschema jsonschema selenium prometheus-client)
if ! python3 -c 'import hypothesis_jsonschema, jsonschema, selenium, prometheus_client' 2>/dev/null; then
  echo "installing from PyPI: ${python_packages[*]}"
  python3 -m pip install --quiet --disable-pip-version-check "${python_packages[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${python_packages[@]}"
fi
command -v swift >/dev/null || { echo "swift is not on PATH: install Swift 6.1 or later first" >&2; exit 1; }
