#!/usr/bin/env bash
# Builds and runs hdl/tb/ib_switch_lossless_tb.sv with Verilator (--binary, assertions on): ib_switch against
# the IBA's credit rule, its LFT and SL2VL tables, not against its Rust twin. Exit 0 when it prints "no loss".
# usage: hdl/tb/lossless.sh [ARG...]   extra Verilator arguments, e.g. a fault variant:
#        -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_CREDIT_BYPASS
#        hdl/tb/lossless.sh --faults  every fault variant of ib_switch.sv on a shorter run (60,000 cycles of
#        traffic): exit 0 when each loss-type variant fails the bench and each other one passes it (a build
#        per variant, about two minutes; not in scripts/test, which runs the clean bench only).
# The fault variants (`ifdef IBCYCLE_FAULT_<NAME> in ib_switch.sv), against this bench:
#   CREDIT_LEAK    fails: the credit after the drain falls short of the buffer (a block lost per release)
#   DUP_PACKET     fails: a packet leaves twice
#   VL_MIX         fails: a packet leaves on its input VL, not on the VL SL2VL names
#   SL2VL_INDEX    fails: the wrong SL2VL table (the bench's (input, output) and (output, input) tables differ)
#   CREDIT_BYPASS  fails: a packet sent beyond the credit its receiver advertised (and the RTL's assertion)
#   FECN_INVERT    passes: a marking fault (FECN set on other packets), no loss, order or credit property
#   RR_STUCK       passes: the input round robin of an output VL stuck (a fairness fault: IBA leaves the
#                  arbitration among inputs to the designer; every packet is still delivered, in order)
# A variant not named as passing above must fail.
# +fast_links (a run-time argument: an ARG starting with + goes to the simulation, not to Verilator; the build
# of the same Verilator arguments is reused) runs links of 32 bytes per cycle: see the bench (the Switch's
# short-packet limit). -DIB_SWITCH_TB_FAST_LINKS does the same in its own build.
#        hdl/tb/lossless.sh --icarus [CYCLES] [ARG...]  the same bench under Icarus 11 (iverilog -g2012, the
#        RTL's assertions on: an assertion's "ERROR:" line fails the run as the bench's FAIL does), CYCLES of
#        traffic (default 10,000, then the drain; Icarus runs about 210 cycles a second here), extra iverilog
#        arguments after it (e.g. -DIB_SWITCH_TB_FAST_LINKS), or run-time ones (+fast_links); then the
#        Verilator build of the same arguments runs the same cycles, and the two must print the same line
#        (every count: packets, marks, flow-control packets, withheld credit), so the RTL means the same to
#        both simulators, not only loses nothing in each.
# +cycles=N runs N cycles of traffic instead of 400,000 (a run-time argument, the same build).
# -DIB_SWITCH_TB_PORTS=N builds the bench at N ports instead of 4 (the fabrics' switches have 18 and 36; the
# ports past the fourth repeat the first four's rates): see hdl/README.md for its build and run times.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/target/hdl-lossless"
command -v verilator >/dev/null || { echo "lossless.sh: verilator not found (apt-get install verilator)" >&2; exit 2; }

if [ "${1:-}" = --faults ]; then
  not_loss=" FECN_INVERT RR_STUCK "
  bad=0
  for v in $(grep -o '^`ifdef IBCYCLE_FAULT_[A-Z0-9_]*' "$root/hdl/ib_switch.sv" | sed 's/^`ifdef IBCYCLE_FAULT_//' | sort -u); do
    if "$0" -DIB_SWITCH_TB_CYCLES=60000 -DIBCYCLE_FAULTS_ENABLE "-DIBCYCLE_FAULT_$v" >"$out.$v.log" 2>&1; then
      got=passes
    else
      got=fails
    fi
    want=fails
    [[ $not_loss != *" $v "* ]] || want=passes
    verdict=ok
    [ "$got" = "$want" ] || { verdict="WRONG (expected: $want)"; bad=1; }
    printf '%-14s %-7s %s  %s\n' "$v" "$got" "$verdict" "$(head -1 "$out.$v.log")"
  done
  exit $bad
fi

if [ "${1:-}" = --icarus ]; then
  shift
  cycles=10000
  if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then cycles=$1; shift; fi
  command -v iverilog >/dev/null || { echo "lossless.sh: iverilog not found (apt-get install iverilog)" >&2; exit 2; }
  ivl="$root/target/hdl-lossless-icarus"
  mkdir -p "$ivl"
  rm -f "$ivl/tb.vvp"
  # Icarus' note that it widens always_* sensitivity over constant part-selects is harmless and filtered.
  ivargs=() plusargs=()
  for a in "$@"; do if [[ $a == +* ]]; then plusargs+=("$a"); else ivargs+=("$a"); fi; done
  iverilog -g2012 -I "$root/hdl" ${ivargs[@]+"${ivargs[@]}"} -o "$ivl/tb.vvp" \
    "$root/hdl/tb/ib_switch_lossless_tb.sv" "$root/hdl/ib_switch.sv" "$root/hdl/credit_rx.sv" \
    "$root/hdl/credit_tx.sv" "$root/hdl/cong_detect.sv" "$root/hdl/vl_arb.sv" "$root/hdl/mark_enq.sv" "$root/hdl/pfx_cnt.sv" 2>&1 \
    | { grep -v 'sorry: constant selects in always_\* processes' || true; }
  [ -f "$ivl/tb.vvp" ] || exit 1
  log=$(vvp -n "$ivl/tb.vvp" "+cycles=$cycles" ${plusargs[@]+"${plusargs[@]}"} 2>&1 || true)
  echo "$log" | grep -v '^- ' | sed 's/^ib_switch lossless:/ib_switch lossless (Icarus):/' | head -20 || true
  ! grep -q '^ERROR:' <<<"$log" || { echo "FAIL: an RTL assertion failed (above)"; exit 1; }
  grep -q 'no loss$' <<<"$log" || exit 1
  # The same run under Verilator (its build of the same arguments, made or reused): the same line.
  vlog=$("$0" "$@" "+cycles=$cycles" 2>&1 || true)
  echo "$vlog" | grep -v '^- ' | sed 's/^ib_switch lossless:/ib_switch lossless (Verilator):/' | head -20 || true
  if [ "$(grep '^ib_switch lossless:' <<<"$log")" != "$(grep '^ib_switch lossless:' <<<"$vlog")" ]; then
    echo "FAIL: Icarus and Verilator differ on the same bench and cycles (above)"
    exit 1
  fi
  echo "Icarus and Verilator agree"
  exit
fi

vargs=() plusargs=()
for a in "$@"; do if [[ $a == +* ]]; then plusargs+=("$a"); else vargs+=("$a"); fi; done
# The build is kept with the Verilator arguments it was made with (and the sources' digest), and reused by a
# run with the same ones.
key="$(printf '%s\n' ${vargs[@]+"${vargs[@]}"}; cat "$root"/hdl/*.sv "$root/hdl/tb/ib_switch_lossless_tb.sv" | sha256sum)"
if [ ! -x "$out/Vib_switch_lossless_tb" ] || [ "$(cat "$out/build.key" 2>/dev/null)" != "$key" ]; then
  rm -rf "$out"
  mkdir -p "$(dirname "$out")"
  verilator --binary --assert -Wno-fatal -Wno-lint -Wno-style -O2 -y "$root/hdl" -Mdir "$out" \
    --top-module ib_switch_lossless_tb ${vargs[@]+"${vargs[@]}"} "$root/hdl/tb/ib_switch_lossless_tb.sv" >"$out.build.log" 2>&1 \
    || { cat "$out.build.log" >&2; exit 1; }
  printf '%s' "$key" >"$out/build.key"
fi
log=$("$out/Vib_switch_lossless_tb" ${plusargs[@]+"${plusargs[@]}"} 2>&1 || true)
echo "$log" | grep -v '^- ' || true
grep -q 'no loss$' <<<"$log"
