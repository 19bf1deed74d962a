#!/usr/bin/env bash
# Synthesises every RTL module in hdl/ with Yosys (generic `synth -flatten`, no target library) and prints
# its cell count, the memories Yosys infers (before mapping them to flops: no target library has RAMs), and
# its logic depth (`ltp -noff`: generic gate levels between flops, the proxy for a cycle at ~1 GHz); `check
# -assert` fails the run on any design problem Yosys finds (multiple drivers, combinational loops, undriven
# nets). Lints each first with `verilator --lint-only -Wall`, also with every `ifdef IBCYCLE_FAULT_<NAME>` variant
# (with IBCYCLE_FAULTS_ENABLE).
# ib_switch is linted (at its defaults, with every fault variant) but synthesised only when named
# (`hdl/synth.sh ib_switch`), at NPorts 2, NVl 2, SlotMax 8, LftMax 4, TableMax 2 (read deferred and
# elaborated at those values: about a CPU-minute and 0.5 GB). It does not pass yet: its state updates are
# procedural over arrays written at computed indices, which Yosys turns into registers one by one (mem2reg,
# no memory inferred), and the combinational processes that write arrays at computed indices (ingress's
# credit_rx hand-ins, egress's per-port scratch) come out as logic loops, so `check -assert` fails.
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
  lint_only=" ib_switch "
fi

fail=0
printf '%-14s %8s %5s %6s  %s\n' module cells mems depth lint | tee "$out/cells.txt"
for m in "${mods[@]}"; do
  src="$root/hdl/$m.sv"
  lint=clean
  for def in "" $(grep -o '^`ifdef IBCYCLE_FAULT_[A-Z0-9_]*' "$src" | sed 's/^`ifdef /-D/' | sort -u); do
    # -y: a composed module (ib_switch) finds its submodules in hdl/.
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
  params=""
  [ "$m" != ib_switch ] || params="chparam -set NPorts 2 -set NVl 2 -set SlotMax 8 -set LftMax 4 -set TableMax 2 -set PW 1 ib_switch;"
  if [[ ${lint_only:-} == *" $m "* ]]; then
    printf '%-14s %8s %5s %6s  %s\n' "$m" "-" "-" "-" "$lint (not synthesised: name it, see the header)" | tee -a "$out/cells.txt"
    continue
  fi
  # ib_switch is read with -defer and elaborated once, at the chparam values: read plainly, Yosys elaborates
  # it at its defaults (18 ports, 2,048 slots per input) before chparam, which did not finish.
  read="read_verilog -sv $deps $src;"
  [ "$m" != ib_switch ] || read="read_verilog -sv $deps; read_verilog -defer -sv -I$root/hdl $src;"
  if yosys -p "$read $params hierarchy -top $m; proc; flatten; opt -fast;
      memory -nomap; tee -o $out/$m.mem stat; synth -flatten -top $m; check -assert;
      tee -o $out/$m.stat stat; tee -o $out/$m.ltp ltp -noff" >"$out/$m.log" 2>&1; then
    cells=$(grep 'Number of cells:' "$out/$m.stat" | tail -1 | awk '{print $4}')
    mems=$(grep 'Number of memories:' "$out/$m.mem" | tail -1 | awk '{print $4}' || true)
    depth=$(grep -o 'length=[0-9]*' "$out/$m.ltp" | tail -1 | cut -d= -f2 || true)
  else
    cells=FAIL mems=- depth=-
    fail=1
  fi
  printf '%-14s %8s %5s %6s  %s\n' "$m" "$cells" "${mems:-0}" "${depth:-?}" "$lint" | tee -a "$out/cells.txt"
done
exit $fail
