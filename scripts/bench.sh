#!/bin/sh
# Runs the performance benches RUNS times each (default 5) and prints the median of every figure
# (docs/performance.md). Builds the release binary first. Needs python3 for the medians.
set -eu
RUNS=${1:-5}
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=target/release/ibcycle
OUT=$(mktemp)
i=0
while [ "$i" -lt "$RUNS" ]; do
  "$BIN" bench clos648-shift --json >>"$OUT"
  "$BIN" bench clos648-shift-cc --json >>"$OUT"
  "$BIN" bench clos648-shift-cc --threads 2 --json >>"$OUT"
  "$BIN" bench ft18x2-uniform --json >>"$OUT"
  "$BIN" bench ft18x2-uniform --threads 2 --json >>"$OUT"
  "$BIN" bench idle --json >>"$OUT"
  "$BIN" bench idle --threads 2 --json >>"$OUT"
  i=$((i + 1))
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs.setdefault((r["bench"], r["threads"]), []).append(r)
print("bench threads sim_s_per_wall_s port_cycles_per_s cpu_seconds peak_rss_mib runs")
for (b, t), rs in runs.items():
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"{b} {t} {med('sim_s_per_wall_s'):.3g} {med('port_cycles_per_s'):.3g} {med('cpu_seconds'):.3g} {med('peak_rss_mib'):.1f} {len(rs)}")
PY
rm -f "$OUT"
