#!/bin/sh
# Compares two ibcycle binaries side by side: ROUNDS alternating rounds (A then B, then B then A, so neither
# always runs first on a warming or cooling machine) of each bench named, and per bench the medians of both
# and the median of the per-round ratios B/A of the port-cycle rate and of the CPU time. A ratio above 1 in
# port-cycles/s (below 1 in CPU seconds) means B is faster. Results are judged only against each other: the
# machine's speed and its other tenants cancel out of the ratio, not out of the absolute figures.
#
#   scripts/bench-ab.sh OLD_BIN NEW_BIN [ROUNDS] [BENCH[:THREADS]...]
#   scripts/bench-ab.sh /tmp/ibcycle-main target/release/ibcycle 5 clos648-shift-cc clos648-shift-cc:2 ft18x2-uniform
#
# Needs python3 for the medians.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_BIN NEW_BIN [ROUNDS] [BENCH[:THREADS]...]" >&2
  exit 2
fi
A=$1
B=$2
ROUNDS=${3:-5}
shift 2
[ $# -gt 0 ] && shift
BENCHES=${*:-"clos648-shift-cc clos648-shift-cc:2 ft18x2-uniform"}
for bin in "$A" "$B"; do
  [ -x "$bin" ] || { echo "$0: $bin: not an executable" >&2; exit 2; }
done
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
i=0
while [ "$i" -lt "$ROUNDS" ]; do
  if [ $((i % 2)) -eq 0 ]; then order="A B"; else order="B A"; fi
  for b in $BENCHES; do
    name=${b%%:*}
    threads=1
    [ "$name" != "$b" ] && threads=${b#*:}
    for side in $order; do
      if [ "$side" = A ]; then bin=$A; else bin=$B; fi
      printf '%s %s %s ' "$i" "$side" "$b" >>"$OUT"
      "$bin" bench "$name" --threads "$threads" --json >>"$OUT"
    done
  done
  i=$((i + 1))
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    rnd, side, bench, js = line.split(" ", 3)
    rows.setdefault(bench, {}).setdefault(int(rnd), {})[side] = json.loads(js)
print("bench  A port-cycles/s  B port-cycles/s  B/A (median, min..max)  A cpu s  B cpu s  B/A cpu  rounds")
for bench, rounds in rows.items():
    both = [r for r in rounds.values() if "A" in r and "B" in r]
    med = lambda side, k: statistics.median(r[side][k] for r in both)
    pc = [r["B"]["port_cycles_per_s"] / r["A"]["port_cycles_per_s"] for r in both]
    cpu = [r["B"]["cpu_seconds"] / r["A"]["cpu_seconds"] for r in both]
    same = all(r["A"]["packets_delivered"] == r["B"]["packets_delivered"] for r in both)
    print(f"{bench}  {med('A', 'port_cycles_per_s'):.3g}  {med('B', 'port_cycles_per_s'):.3g}  "
          f"{statistics.median(pc):.3f} ({min(pc):.3f}..{max(pc):.3f})  {med('A', 'cpu_seconds'):.3g}  "
          f"{med('B', 'cpu_seconds'):.3g}  {statistics.median(cpu):.3f}  {len(both)}"
          + ("" if same else "  (packets delivered differ between A and B)"))
PY
