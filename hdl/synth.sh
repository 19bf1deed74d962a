#!/usr/bin/env bash
# Synthesises every RTL module in hdl/ with Yosys (generic `synth -flatten`, no target library) and prints
# its cell count, the memories Yosys infers (before mapping them to flops: no target library has RAMs), and
# its logic depth (`ltp -noff`: generic gate levels between flops, the proxy for a cycle at ~1 GHz); `check
# -assert` fails the run on any design problem Yosys finds (multiple drivers, combinational loops, undriven
# nets). Lints each first with `verilator --lint-only -Wall`, also with every `ifdef IBCYCLE_FAULT_<NAME>` variant
# (with IBCYCLE_FAULTS_ENABLE), or, for a module with IBCYCLE_FAULTS_SELECT, in the build with every fault in.
# ib_switch is synthesised at NPorts 2, NVl 2, SlotMax 8, LftMax 4, TableMax 2 (read deferred and elaborated
# once, at those values: about two CPU-minutes and 0.5 GB), or at those with the values given
# (ib_switch:NPorts=4,...; PW, the port index width, follows NPorts unless given); it is linted at its
# defaults with the values given.
# Memories: Yosys's `memory -nomap` turns each inferred memory into one `$mem_v2` cell (the "Number of
# memories" line of `stat` counts only memories not yet collected, 0 at that point): the column counts those
# cells, and target/hdl-synth/<module>.memports lists each one's size, width and read/write ports.
#
# A module may be given at other parameter values, MODULE:NAME=VALUE[,NAME=VALUE...]: the default run adds
# fecn_rewrite at 8- and 32-byte beats, the widths the co-simulation also builds.
# A module that synthesises to 10 cells or fewer fails (synthesis removed its logic).
#
# usage: hdl/synth.sh [MODULE[:NAME=VALUE,...]...]      (default: every hdl/*.sv, and the two above)
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
  mods+=(fecn_rewrite:BeatBytes=8 fecn_rewrite:BeatBytes=32)
fi

# pw_of N: ib_switch's port index width for N ports (the least w with 2^w >= N, at least 1).
pw_of() { local w=1; while [ $((1 << w)) -lt "$1" ]; do w=$((w + 1)); done; echo "$w"; }

fail=0
printf '%-26s %8s %5s %6s  %s\n' module cells mems depth lint | tee "$out/cells.txt"
for spec in "${mods[@]}"; do
  # spec: the module, or the module at parameter values (m:P=V,...); its logs are named by the whole spec.
  m=${spec%%:*}
  label=$spec
  gparams="" chparams=""
  if [[ $spec == *:* ]]; then
    IFS=, read -ra kvs <<<"${spec#*:}"
    for kv in "${kvs[@]}"; do
      gparams+=" -G$kv"
      chparams+=" -set ${kv%%=*} ${kv#*=}"
    done
  fi
  src="$root/hdl/$m.sv"
  # ib_switch's port index width follows NPorts unless given, in the lint as in the synthesis below (at
  # NPorts=8 with PW at its default 5 the lint warned of every port index's width).
  if [ "$m" = ib_switch ] && [[ $gparams == *-GNPorts=* && $gparams != *-GPW=* ]]; then
    n=${gparams##*-GNPorts=}
    gparams+=" -GPW=$(pw_of "${n%% *}")"
  fi
  lint=clean
  variants=$(grep -o '^`ifdef IBCYCLE_FAULT_[A-Z0-9_]*' "$src" | sed 's/^`ifdef /-D/' | sort -u || true)
  # A module that can build every fault in at once, each behind a run-time flag (ib_switch), is linted in
  # that build: the same lines as its variants' (whose flags are constants instead), one run instead of one
  # per variant (about 20 CPU-s each for the switch).
  ! grep -q '^`ifdef IBCYCLE_FAULTS_SELECT' "$src" || variants=-DIBCYCLE_FAULTS_SELECT
  for def in "" $variants; do
    # -y: a composed module (ib_switch) finds its submodules in hdl/.
    if ! verilator --lint-only -Wall -y "$root/hdl" $gparams ${def:+-DIBCYCLE_FAULTS_ENABLE} $def "$src" >"$out/$label.lint$def.log" 2>&1; then
      lint="FAIL${def:+ ($def)}, see $out/$label.lint$def.log"
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
  [ -z "$chparams" ] || params="chparam$chparams $m;"
  if [ "$m" = ib_switch ]; then
    # Its small defaults (hdl/ib_switch.synth, which hdl/cones.py reads too), each overridden by a value given
    # (ib_switch:NPorts=4,...); PW (the port index's width) follows NPorts unless given.
    declare -A ibp=()
    for kv in $(grep -v '^#' "$root/hdl/ib_switch.synth"); do ibp[${kv%%=*}]=${kv#*=}; done
    if [[ $spec == *:* ]]; then
      for kv in "${kvs[@]}"; do ibp[${kv%%=*}]=${kv#*=}; done
    fi
    [ -n "${ibp[PW]:-}" ] || ibp[PW]=$(pw_of "${ibp[NPorts]}")
    set_params=()
    for k in "${!ibp[@]}"; do set_params+=("$k=${ibp[$k]}"); done
    unset ibp
  fi
  read="read_verilog -sv $deps $src;"
  if [ "$m" = ib_switch ]; then
    # ib_switch is elaborated once, at those values: a copy of its source with them as its defaults, read
    # deferred (hdl/at_params.sh says why). Read plainly, Yosys would elaborate it at its own defaults (18
    # ports, 2,048 slots per input), which does not finish.
    "$root/hdl/at_params.sh" "$src" "$out/$label.sv" "${set_params[@]}"
    read="read_verilog -sv $deps; read_verilog -defer -sv -I$root/hdl $out/$label.sv;"
    params=""
  fi
  if yosys -p "$read $params hierarchy -top $m; proc; flatten; opt -fast;
      memory -nomap; tee -o $out/$label.mem stat; tee -q -o $out/$label.memdump dump t:\$mem_v2; synth -flatten -top $m; check -assert;
      tee -o $out/$label.stat stat; tee -o $out/$label.ltp ltp -noff" >"$out/$label.log" 2>&1; then
    cells=$(grep 'Number of cells:' "$out/$label.stat" | tail -1 | awk '{print $4}')
    mems=$(awk '$1 == "$mem_v2" || $1 == "$mem" {n += $2} END {print n + 0}' "$out/$label.mem")
    # One line per memory: name, words x bits, read ports (of them clocked), write ports.
    awk '/^  cell /{id=$3; sub(/^\\/, "", id); sz=""; w=""; rp=""; wp=""; ck=""}
         /parameter .SIZE /{sz=$3} /parameter .WIDTH /{w=$3}
         /parameter .RD_PORTS /{rp=$3} /parameter .WR_PORTS /{wp=$3}
         /parameter .RD_CLK_ENABLE /{v=$3; sub(/.*\x27/, "", v); ck=gsub(/1/, "", v)}
         /^  end/{printf "%-16s %6s x %-3s read ports %3s (%s clocked)  write ports %s\n", id, sz, w, rp, ck, wp}' \
      "$out/$label.memdump" >"$out/$label.memports"
    depth=$(grep -o 'length=[0-9]*' "$out/$label.ltp" | tail -1 | cut -d= -f2 || true)
    if [ "${cells:-0}" -le 10 ]; then
      cells="FAIL (${cells:-no} cells: synthesis removed the logic)"
      fail=1
    fi
  else
    cells=FAIL mems=- depth=-
    fail=1
  fi
  printf '%-26s %8s %5s %6s  %s\n' "$label" "$cells" "${mems:-0}" "${depth:-?}" "$lint" | tee -a "$out/cells.txt"
done
exit $fail
