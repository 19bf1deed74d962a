#!/usr/bin/env bash
# Builds and runs hdl/tb/ib_switch_lossless_tb.sv with Verilator (--binary, assertions on): ib_switch against
# the IBA's credit rule, not against its Rust twin. Exit 0 when it prints "no loss".
# usage: hdl/tb/lossless.sh [ARG...]   extra Verilator arguments, e.g. a fault variant:
#        -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_CREDIT_BYPASS
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/target/hdl-lossless"
command -v verilator >/dev/null || { echo "lossless.sh: verilator not found (apt-get install verilator)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$(dirname "$out")"
verilator --binary --assert -Wno-fatal -Wno-lint -Wno-style -O2 -y "$root/hdl" -Mdir "$out" \
  --top-module ib_switch_lossless_tb "$@" "$root/hdl/tb/ib_switch_lossless_tb.sv" >"$out.build.log" 2>&1 \
  || { cat "$out.build.log" >&2; exit 1; }
log=$("$out/Vib_switch_lossless_tb" 2>&1 || true)
echo "$log" | grep -v "^- " || true
grep -q 'no loss$' <<<"$log"
