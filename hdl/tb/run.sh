#!/usr/bin/env bash
# Checks each RTL module in hdl/ against its Rust block under Icarus, on the co-simulation's own stimulus:
# cosim's tbtrace (cosim/src/tb_trace.rs, built without Verilator) writes the seeded stimulus of the
# co-simulation's schedule of configurations and the Rust outputs, the Icarus testbench hdl/tb/<block>_tb.sv
# replays it into the RTL (assertions on) and compares every output every cycle.
#
# usage: hdl/tb/run.sh [--bugs] [--cycles N] [--seed S] [--stretch T] [BLOCK...]
#   --bugs      also build every `ifdef IBCYCLE_FAULT_<NAME> variant (with IBCYCLE_FAULTS_ENABLE) of each module and require the same trace to catch it
#   --cycles N  cycles per block (default 100000); fecn_rewrite_b8 runs N/5 and fecn_rewrite_b32 N/20, as Icarus
#               is slowest on their wide beats and CRC trees (the Verilator co-simulation runs millions)
#   --seed S    schedule seed (default 1)
#   --stretch T most cycles per configuration before the schedule moves on (default N/10, at least 500), so a
#               short run still passes through the corner configurations
#   BLOCK       vl_arb cong_detect fecn_marker cct_shaper timebase fecn_rewrite_b8 fecn_rewrite_b32 credit_tx
#               credit_rx (default: all); fecn_rewrite_bN is fecn_rewrite built with BeatBytes = N
# Exit status 0 when every block matches (and, with --bugs, every bug variant is caught); 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cycles=100000
seed=1
bugs=0
stretch=""
blocks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bugs) bugs=1 ;;
    --cycles) cycles=$2; shift ;;
    --seed) seed=$2; shift ;;
    --stretch) stretch=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) blocks+=("$1") ;;
  esac
  shift
done
[ ${#blocks[@]} -gt 0 ] || blocks=(vl_arb cong_detect fecn_marker cct_shaper timebase fecn_rewrite_b8
  fecn_rewrite_b32 credit_tx credit_rx)

for tool in iverilog vvp cargo; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (apt-get install iverilog; rustup)" >&2; exit 2; }
done

out="$root/target/hdl-tb"
mkdir -p "$out"
# The trace writer: $IBCYCLE_TBTRACE when given (scripts/test builds it with the tests' own cargo flags, so
# the build is shared with theirs), else built here in the dev profile (the traces are the same in any
# profile; a release build, fat LTO, cost minutes of CPU for a few seconds of tracing).
if [ -n "${IBCYCLE_TBTRACE:-}" ]; then
  tbtrace=$IBCYCLE_TBTRACE
else
  echo "building cosim's tbtrace"
  cargo build -q --manifest-path "$root/Cargo.toml" -p cosim --bin tbtrace
  tbtrace="$root/target/debug/tbtrace"
fi

# The module of block $1: a name ending in _b<N> is that module with its parameter BeatBytes = N.
module_of() {
  case "$1" in
    *_b[0-9]*) echo "${1%_b[0-9]*}" ;;
    *) echo "$1" ;;
  esac
}

# Compiles block $1 with extra iverilog flags $3.. into $2; Icarus' note that it widens always_* sensitivity
# lists over constant part-selects is harmless and filtered.
compile() {
  local block=$1 vvp=$2 m
  m=$(module_of "$1")
  shift 2
  case "$block" in
    *_b[0-9]*) set -- "$@" -P "${m}_tb.BeatBytes=${block##*_b}" ;;
  esac
  iverilog -g2012 -I "$root/hdl/tb" -I "$root/hdl" "$@" -o "$vvp" "$root/hdl/$m.sv" "$root/hdl/tb/${m}_tb.sv" 2>&1 \
    | { grep -v -e 'sorry: constant selects in always_\* processes' -e 'Case unique/unique0' || true; }
  [ -f "$vvp" ]
}

fail=0
for block in "${blocks[@]}"; do
  module=$(module_of "$block")
  [ -f "$root/hdl/$module.sv" ] || { echo "run.sh: no hdl/$module.sv" >&2; exit 2; }
  trace="$out/$block.trace"
  case "$block" in
    fecn_rewrite_b8) n=$((cycles / 5)) ;;
    fecn_rewrite_b32) n=$((cycles / 20)) ;;
    *) n=$cycles ;;
  esac
  t=${stretch:-$((n / 10))}
  [ "$t" -ge 500 ] || t=500
  "$tbtrace" "$block" "$n" "$seed" "$trace" "$t"
  rm -f "$out/$block.vvp"
  compile "$block" "$out/$block.vvp"
  log=$(vvp -n "$out/$block.vvp" +trace="$trace" 2>&1 || true)
  if [ "$log" = "Checked $n cycles" ]; then
    printf '%-16s ok: %s\n' "$block" "$log"
  else
    printf '%-16s FAIL: %s\n' "$block" "$log"
    fail=1
    continue
  fi
  [ $bugs -eq 1 ] || continue
  for bug in $(grep -o '^`ifdef IBCYCLE_FAULT_[A-Z0-9_]*' "$root/hdl/$module.sv" | sed 's/^`ifdef //' | sort -u); do
    rm -f "$out/$block.$bug.vvp"
    compile "$block" "$out/$block.$bug.vvp" -DIBCYCLE_FAULTS_ENABLE "-D$bug"
    log=$(vvp -n "$out/$block.$bug.vvp" +trace="$trace" 2>&1 || true)
    # The RTL's assertions print "ERROR: file:line" under Icarus and the run goes on to the comparison: a
    # variant is caught by either, and the line says which.
    asserted=""
    ! grep -q '^ERROR:' <<<"$log" || asserted=" [also by assertion $(grep -m1 -o '^ERROR: [^ ]*' <<<"$log" | cut -c8-)]"
    if grep -q '^MISMATCH' <<<"$log"; then
      printf '%-16s %-26s caught: %s%s\n' "$block" "$bug" "$(grep -m1 '^MISMATCH' <<<"$log")" "$asserted"
    elif [ -n "$asserted" ]; then
      printf '%-16s %-26s caught by assertion only:%s\n' "$block" "$bug" "$asserted"
    else
      printf '%-16s %-26s NOT CAUGHT: %s\n' "$block" "$bug" "$log"
      fail=1
    fi
  done
done
# A flagged configuration stays safe: fecn_marker with LFSR seed 0 (assertions off: they stop the run on it).
rm -f "$out/fecn_marker_seed0.vvp"
iverilog -g2012 -DSYNTHESIS -I "$root/hdl" -o "$out/fecn_marker_seed0.vvp" "$root/hdl/fecn_marker.sv" \
  "$root/hdl/tb/fecn_marker_seed0_tb.sv" 2>&1 | { grep -v 'sorry: constant selects in always_\* processes' || true; }
log=$(vvp -n "$out/fecn_marker_seed0.vvp" 2>&1 || true)
if [ "$log" = "Checked 1000 cycles" ]; then
  printf '%-16s ok: seed 0 flagged, marks at the configured rate (%s)\n' fecn_marker_seed0 "$log"
else
  printf '%-16s FAIL: %s\n' fecn_marker_seed0 "$log"
  fail=1
fi
exit $fail
