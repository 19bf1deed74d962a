#!/usr/bin/env bash
# Formal checks of the RTL against the spec, independent of the Rust twins: each harness in hdl/formal/ is
# proved by k-induction with Yosys's own SAT solver (`sat -tempinduct`, no external solver), and every fault
# variant of the blocks it covers must make its proof fail.
#   credit_link  credit_tx + credit_rx over a zero-latency link, any buffer size and cap: no overrun, no
#                send without credit, ABR tracks FCTBS, the sender's credit within the receiver's free
#                buffer and the cap (and every assertion inside both blocks)
#   marker_rate  fecn_marker with every input free: marks only eligible packets, exactly one of every
#                Marking_Rate + 1 eligible packets in counter mode (and every assertion inside it)
# usage: hdl/formal/run.sh        exit 0 when every proof holds and every variant breaks its proof
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v yosys >/dev/null || { echo "formal/run.sh: yosys not found (apt-get install yosys)" >&2; exit 2; }
out="$root/target/formal"
mkdir -p "$out"

# The induction length tried at most. The clean harnesses close at length 3; every fault variant but one
# fails its base case (a counterexample from reset) within length 5. CREDIT_WRAP's violation needs the 12-bit
# block counters to wrap, at least 4096 / 66 = 63 packets from reset, beyond any bound a SAT unrolling
# affords: it is caught because its induction never closes, which length 5 shows as lengths 8 and 16 did.
# The later lengths cost the most, and more as credit_rx's arithmetic grew (its next counts by carry select):
# on a loaded 2-core machine CREDIT_WRAP took 66 s at length 5, 399 s at 6 and about 490 s at 8 (before the
# carry select: 99 s at 8, about 14 minutes at 16). Length 5 keeps two lengths of margin over the
# clean proofs' 3: a change that needs a longer induction fails the clean proof loudly.
MAXSTEPS=5

# prove HARNESS "FILES" [BUG_NAME]: 0 when the proof holds (with the fault variant built in, if named).
prove() {
  local h=$1 files=$2 def=${3:-}
  local srcs=""
  for f in $files; do srcs+=" $root/hdl/$f"; done
  yosys -q -l "$out/$h${def:+.$def}.log" -p "read_verilog -formal -sv -DFORMAL ${def:+-DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_${def#BUG_}} $srcs;
    prep -top $h; flatten; opt -fast; async2sync; dffunmap;
    sat -tempinduct -prove-asserts -set-assumes -set-init-zero -maxsteps $MAXSTEPS -verify" >/dev/null 2>&1
}

fail=0
check() {
  local h=$1 files=$2 bugs=$3 t0
  t0=$(date +%s%N)
  if prove "$h" "$files"; then
    printf '%-12s proved (%d ms)\n' "$h" $((($(date +%s%N) - t0) / 1000000))
  else
    printf '%-12s FAILED, see %s\n' "$h" "$out/$h.log"
    fail=1
  fi
  for b in $bugs; do
    if prove "$h" "$files" "$b"; then
      printf '%-12s %-22s NOT CAUGHT (its proof holds)\n' "$h" "$b"
      fail=1
    elif grep -q 'proof did fail' "$out/$h.$b.log"; then
      printf '%-12s %-22s caught (the proof fails)\n' "$h" "$b"
    else
      # Anything else (a build error, say) is not a catch.
      printf '%-12s %-22s ERROR, see %s\n' "$h" "$b" "$out/$h.$b.log"
      fail=1
    fi
  done
}

check credit_link "credit_tx.sv credit_rx.sv formal/credit_link.sv" \
  "BUG_CREDIT_WRAP BUG_FC_ORDER BUG_FCCL_CAP BUG_ABR_LOAD BUG_OVERFLOW_AT_FULL BUG_CAP_CHECK"
check marker_rate "fecn_marker.sv formal/marker_rate.sv" "BUG_COUNTER_RELOAD BUG_PACKET_SIZE"
exit $fail
