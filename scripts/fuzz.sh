#!/usr/bin/env bash
# Builds the libFuzzer target (line framer + request decoder + form engine, with
# AddressSanitizer) and runs it.
#   scripts/fuzz.sh                       # 30-second run (the test command's)
#   scripts/fuzz.sh -runs=10000000        # the long run recorded in ROBUSTNESS.md
# Extra arguments go to libFuzzer. Crashing inputs land in fuzz-artifacts/; add each one
# to Tests/Fuzz/regressions/ so it is replayed by every later run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/fuzz
mkdir -p "$out" fuzz-artifacts "$out/corpus"
# FUZZ_SANITIZE=fuzzer drops AddressSanitizer for a faster long run.
flags=(-sanitize="${FUZZ_SANITIZE:-fuzzer,address}" -parse-as-library -swift-version 6 -O -g)
swiftc "${flags[@]}" -emit-library -static -emit-module -module-name SignupProtocol \
  -emit-module-path "$out/SignupProtocol.swiftmodule" -o "$out/libSignupProtocol.a" $(find Sources/Protocol -name '*.swift')
swiftc "${flags[@]}" -emit-library -static -emit-module -module-name BuiltinForms \
  -emit-module-path "$out/BuiltinForms.swiftmodule" -o "$out/libBuiltinForms.a" $(find Sources/BuiltinForms -name '*.swift')
swiftc "${flags[@]}" -emit-library -static -emit-module -module-name FormEngine -I "$out" \
  -emit-module-path "$out/FormEngine.swiftmodule" -o "$out/libFormEngine.a" $(find Sources/FormEngine -name '*.swift')
# gold warns about every ASan helper symbol; keep the link log for when it fails.
swiftc "${flags[@]}" -I "$out" Tests/Fuzz/FuzzTarget.swift "$out/libFormEngine.a" "$out/libBuiltinForms.a" "$out/libSignupProtocol.a" -o "$out/fuzz-signupd" \
  > "$out/link.log" 2>&1 || { grep -v "Cannot export local symbol" "$out/link.log"; exit 1; }
# Known crashers first: each must now pass.
if compgen -G "Tests/Fuzz/regressions/*" >/dev/null; then
  "$out/fuzz-signupd" Tests/Fuzz/regressions/* 2>&1 | tail -1
fi
[ $# -gt 0 ] || set -- -max_total_time=30
status=0
"$out/fuzz-signupd" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -artifact_prefix=fuzz-artifacts/ -print_final_stats=1 "$@" \
  "$out/corpus" Tests/Fuzz/seeds > "$out/last-run.log" 2>&1 || status=$?
grep -E "^(#[0-9]+\s+DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|.*Test unit written)" "$out/last-run.log" || true
[ "$status" -eq 0 ] || { tail -40 "$out/last-run.log"; echo "fuzz: FAILED (exit $status)"; exit 1; }
echo "fuzz: 1 passed, 0 failed"
