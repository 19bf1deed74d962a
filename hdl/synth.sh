#!/usr/bin/env bash
# Synthesises every RTL module in hdl/ with Yosys (generic `synth`, no target library) and prints its cell
# count; lints each first with `verilator --lint-only -Wall`, also with every `ifdef IBCYCLE_FAULT_<NAME>` variant (with IBCYCLE_FAULTS_ENABLE).
#
# usage: hdl/synth.sh [MODULE...]      (default: every hdl/*.sv)
# Logs: target/hdl-synth/<module>.log; the table also goes to target/hdl-synth/cells.txt.
# Exit status 1 when a module fails lint or synthesis.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/hdl-synth"
mkdir -p "$out"
for tool in yosys verilator; do
  command -v "$tool" >/dev/null || { echo "synth.sh: $tool not found (apt-get install $tool)" >&2; exit 2; }
done

mods=("$@")
if [ ${#mods[@]} -eq 0 ]; then
  # test_* modules exist only to test the co-simulation harness (they call $finish on purpose): not synthesised.
  for f in "$root"/hdl/*.sv; do
    m=$(basename "$f" .sv)
    [[ $m == test_* ]] || mods+=("$m")
  done
fi

fail=0
printf '%-14s %8s  %s\n' module cells lint | tee "$out/cells.txt"
for m in "${mods[@]}"; do
  src="$root/hdl/$m.sv"
  lint=clean
  for def in "" $(grep -o '^`ifdef IBCYCLE_FAULT_[A-Z0-9_]*' "$src" | sed 's/^`ifdef /-D/' | sort -u); do
    # -y: a composed module (switch_core) finds its submodules in hdl/.
    if ! verilator --lint-only -Wall -y "$root/hdl" ${def:+-DIBCYCLE_FAULTS_ENABLE} $def "$src" >"$out/$m.lint$def.log" 2>&1; then
      lint="FAIL${def:+ ($def)}, see $out/$m.lint$def.log"
      fail=1
    fi
  done
  # Submodules a composed module instantiates: every other non-test module (synth drops the unused ones).
  deps=""
  for f in "$root"/hdl/*.sv; do
    d=$(basename "$f" .sv)
    [[ $d == test_* || $d == "$m" ]] || ! grep -q "^\s*$d\b" "$src" || deps+=" $f"
  done
  if yosys -p "read_verilog -sv $deps $src; synth -top $m; tee -o $out/$m.stat stat" >"$out/$m.log" 2>&1; then
    cells=$(grep 'Number of cells:' "$out/$m.stat" | tail -1 | awk '{print $4}')
  else
    cells=FAIL
    fail=1
  fi
  printf '%-14s %8s  %s\n' "$m" "$cells" "$lint" | tee -a "$out/cells.txt"
done
exit $fail
