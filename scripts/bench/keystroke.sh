#!/usr/bin/env bash
# The keystroke's own work without I/O, in release (scripts/bench/keystroke/main.swift): a
# package of its own, made under .build/keystroke-bench from the protocol, form engine and
# built-in forms sources of this tree (linked, not copied) and that file.
#   scripts/bench/keystroke.sh [parse|engine|all]       ns a request, 3 rounds
#   CALLGRIND=1 scripts/bench/keystroke.sh [mode]         instructions a request (valgrind), by function
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/.build/keystroke-bench
mkdir -p "$work/Sources/KeystrokeBench"
for module in Protocol:SignupProtocol BuiltinForms:BuiltinForms FormEngine:FormEngine; do
  ln -sfn "$root/Sources/${module%%:*}" "$work/Sources/${module##*:}"
done
cp "$root/scripts/bench/keystroke/main.swift" "$work/Sources/KeystrokeBench/main.swift"
cat > "$work/Package.swift" <<'PACKAGE'
// swift-tools-version:6.1
import PackageDescription
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]
let package = Package(
    name: "keystroke-bench",
    targets: [
        .target(name: "SignupProtocol", swiftSettings: strict),
        .target(name: "BuiltinForms", swiftSettings: strict),
        .target(name: "FormEngine", dependencies: ["SignupProtocol", "BuiltinForms"], swiftSettings: strict),
        .executableTarget(name: "KeystrokeBench", dependencies: ["FormEngine", "SignupProtocol"], swiftSettings: strict),
    ]
)
PACKAGE
cd "$work"
swift build -c release --product KeystrokeBench >&2
bin=$(swift build -c release --show-bin-path)/KeystrokeBench
mode=${1:-all}
if [ -n "${CALLGRIND:-}" ]; then
  N=20000 valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.out" "$bin" "$mode" > /dev/null 2>&1
  # Inclusive instructions a request of the whole loop and of the three steps.
  callgrind_annotate --inclusive=yes "$work/callgrind.out" | python3 -c '
import re, sys
seen = set()
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) .*:(\S+)", line)
    if not m: continue
    name = m.group(2)
    for label, key in (("the loop", "KeystrokeBench_main"), ("read the line", "RequestV6decode4lineACSays5UInt8V"), ("handle the set", "A7SessionV6handle_3now"), ("write the events", "ServerEventO6encode4into")):
        if key in name and label not in seen:
            seen.add(label)
            print("%-18s %8.0f instructions a request" % (label, int(m.group(1).replace(",", "")) / 20000))
'
else
  "$bin" "$mode"
fi
