#!/usr/bin/env bash
# Builds the Debian package from this tree with Debian's own tools (debhelper,
# dpkg-buildpackage) and checks it with lintian. The package lands in dist/:
#   dist/signupd_VERSION_ARCH.deb
# Install it with: apt install ./dist/signupd_*.deb
# Needs swift on PATH; installs the Debian build tools it uses with apt.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's own packaging tools, beside what the build itself needs.
scripts/install-deps.sh debhelper dpkg-dev fakeroot lintian

version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
parent=$(cd .. && pwd)
rm -f "$parent"/signupd_"$version"_*
# dpkg-buildpackage writes the package beside the tree (..) before it is moved to dist/:
# two checkouts in one directory must not build at the same time.
# -b: binary package only; -us -uc: unsigned. The Swift build is incremental in .build/release.
# noautodbgsym: no separate -dbgsym package for the statically linked binaries.
mkdir -p dist
log=dist/build-deb.log
DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} noautodbgsym" dpkg-buildpackage -b -us -uc >"$log" 2>&1 || { tail -40 "$log"; echo "FAIL: dpkg-buildpackage (whole log: $log)"; exit 1; }
rm -f dist/signupd_*
mv "$parent"/signupd_"$version"_"$arch".deb "$parent"/signupd_"$version"_"$arch".buildinfo "$parent"/signupd_"$version"_"$arch".changes dist/
deb=dist/signupd_"$version"_"$arch".deb
# Nothing installed looks for libraries in its own directory ($ORIGIN): a file dropped
# beside signupd or its phone library would be loaded as one of theirs.
for file in debian/signupd/usr/sbin/signupd debian/signupd/usr/lib/signupd/libsignupd-phone.so; do
  if readelf -d "$file" | grep -Eq 'RUNPATH|RPATH'; then echo "FAIL: $file has a RUNPATH: $(readelf -d "$file" | grep -E 'RUNPATH|RPATH')"; exit 1; fi
done
# lintian: errors fail the build; warnings are shown.
lintian_out=$(lintian --fail-on error "$deb" 2>&1) || { echo "$lintian_out"; echo "FAIL: lintian reports errors"; exit 1; }
[ -z "$lintian_out" ] || echo "$lintian_out"
echo "built $deb (lintian: no errors)"
