#!/usr/bin/env python3
"""Mutation check of the congestion-control validation.

Builds one model mutant at a time (a single, exact source edit: a plausible bug in detection, marking or the
reaction point) in a scratch worktree of HEAD, runs the validation tests against it and reports which tests
kill it (fail). A mutant no test kills is a bug the validation cannot see.

    scripts/cc-mutants.py [--only NAME ...] [--out FILE]

Needs a clean commit (the worktree is made from HEAD), cargo and cargo-nextest. It takes about two minutes a
mutant on two cores. The table it prints (Markdown) is in docs/cc-fidelity.md.
"""

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / "target" / "mutants"
TREE = SCRATCH / "tree"

# (name, what the bug is, file, exact text, replacement, [more (file, text, replacement)]). Each text must
# occur exactly once.
MUTANTS = [
    (
        "marking-counter-off-by-one",
        "Marking_Rate counter marks one in marking_rate + 2",
        "rtl-model/src/blocks/fecn_marker.rs",
        "let next = if self.cnt_q >= self.cfg.marking_rate {",
        "let next = if self.cnt_q > self.cfg.marking_rate {",
    ),
    (
        "ccti-timer-never-decrements",
        "CCTI_Timer expiries leave CCTI as it is",
        "rtl-model/src/blocks/cct_shaper.rs",
        "                if ccti > min {\n                    ccti -= 1;\n                }",
        "                if ccti > min {\n                    ccti = ccti.max(min);\n                }",
    ),
    (
        "becn-ignored",
        "the reaction point ignores CNPs (BECN)",
        "hca-model/src/rate/cct.rs",
        "        self.at(now).becn_i = true;",
        "        let _ = self.at(now);",
    ),
    (
        "victim-mask-inverted",
        "victims mark when Victim_Mask is clear, not when set",
        "rtl-model/src/blocks/cong_detect.rs",
        "mark_state_o: root || (victim && self.cfg.victim_mask),",
        "mark_state_o: root || (victim && !self.cfg.victim_mask),",
    ),
    (
        "threshold-off-by-one",
        "Threshold t reads the table entry of t - 1",
        "rtl-model/src/blocks/cong_detect.rs",
        "u32::from(self.cfg.thr_table[usize::from(self.cfg.threshold)])",
        "u32::from(self.cfg.thr_table[usize::from(self.cfg.threshold.saturating_sub(1))])",
    ),
    (
        "cct-shift-wrong",
        "IRD shifts T_pkt by CCT_Shift + 1 (mod 4)",
        "rtl-model/src/blocks/cct_shaper.rs",
        "((u32::from(t_pkt) >> (self.shift & 3))",
        "((u32::from(t_pkt) >> ((self.shift + 1) & 3))",
    ),
    (
        "root-victim-swapped",
        "a congested port-VL with credit is a victim, without credit a root",
        "rtl-model/src/blocks/cong_detect.rs",
        "self.credit_ok_q = credit >= self.cfg.root_min_credits;",
        "self.credit_ok_q = credit < self.cfg.root_min_credits;",
    ),
    (
        "packet-size-ignored",
        "packets shorter than Packet_Size are marked too",
        "rtl-model/src/blocks/fecn_marker.rs",
        "let size_ok = bytes >= u32::from(self.cfg.packet_size) * 64;",
        "let size_ok = bytes == bytes;",
    ),
    (
        "mark-at-dequeue",
        "FECN decided as the packet starts at the output (the old default)",
        "switch-asic/src/switch/build.rs",
        ".fold(0, |m, (i, _)| m | bit(i)),",
        ".fold(0, |m, (_i, _)| m),",
    ),
    (
        "one-packet-is-congestion",
        "Threshold as sixteenths of the whole buffer (the old default mapping)",
        "rtl-model/src/blocks/cong_detect.rs",
        "ThresholdMap::BeyondOnePacket => beyond_one_packet_thr_table(buf_blocks, pkt_blocks),",
        "ThresholdMap::BeyondOnePacket => linear_thr_table(buf_blocks.max(pkt_blocks & 0)),",
    ),
    (
        "old-detection",
        "both of the last two: the detection before the hardware's settings were reproduced",
        "switch-asic/src/switch/build.rs",
        ".fold(0, |m, (i, _)| m | bit(i)),",
        ".fold(0, |m, (_i, _)| m),",
        [(
            "rtl-model/src/blocks/cong_detect.rs",
            "ThresholdMap::BeyondOnePacket => beyond_one_packet_thr_table(buf_blocks, pkt_blocks),",
            "ThresholdMap::BeyondOnePacket => linear_thr_table(buf_blocks.max(pkt_blocks & 0)),",
        )],
    ),
]

# The validation tests: the paper targets and the lone-flow invariant (ibcycle), and the CC blocks' and the
# switch's CC tests.
RUNS = [
    [
        "-p", "ibcycle",
        "--test", "gran_s1", "--test", "gran_s2", "--test", "cao", "--test", "lone_flow",
    ],
    [
        "-p", "switch-asic", "-p", "rtl-model", "-p", "hca-model", "--lib",
        "-E", "test(cc_tests) | test(cong_detect) | test(fecn_marker) | test(cct_shaper) | test(rate::cct)",
    ],
]

RESULT = re.compile(r"^\s+(PASS|FAIL|SIGABRT|SIGSEGV|TIMEOUT) \[.*?\] \(\s*\d+/\d+\) (\S+) (\S+)\s*$")


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def run_tests(env):
    """Runs every validation test; returns {test: passed}."""
    out = {}
    for extra in RUNS:
        p = subprocess.run(
            ["cargo", "nextest", "run", "--no-fail-fast", *extra],
            cwd=TREE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        found = False
        for line in p.stdout.splitlines():
            m = RESULT.match(line)
            if m:
                found = True
                out[f"{m.group(2)} {m.group(3)}"] = m.group(1) == "PASS"
        if not found:
            # A build failure: every test of this run counts as failed, and the log says why.
            sys.stderr.write(p.stdout[-4000:])
            out[f"build ({' '.join(extra[:2])})"] = False
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="mutant names to run (default: all)")
    ap.add_argument("--out", help="also write the Markdown table here")
    a = ap.parse_args()
    if subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode != 0:
        sys.exit("cc-mutants: commit first (the mutants are made from HEAD)")
    SCRATCH.mkdir(parents=True, exist_ok=True)
    if TREE.exists():
        sh("git", "worktree", "remove", "--force", str(TREE), cwd=ROOT)
    sh("git", "worktree", "add", "--detach", str(TREE), "HEAD", cwd=ROOT, stdout=subprocess.DEVNULL)
    env = dict(os.environ, CARGO_TARGET_DIR=str(SCRATCH / "target"))
    try:
        print("baseline ...", flush=True)
        base = run_tests(env)
        bad = [t for t, ok in base.items() if not ok]
        if bad:
            sys.exit(f"cc-mutants: the unmutated model fails {bad}")
        rows = []
        for name, what, path, old, new, *more in MUTANTS:
            if a.only and name not in a.only:
                continue
            edits = [(path, old, new), *(more[0] if more else [])]
            for p, o, nw in edits:
                f = TREE / p
                text = f.read_text()
                n = text.count(o)
                if n != 1:
                    sys.exit(f"cc-mutants: {name}: the text occurs {n} times in {p}")
                f.write_text(text.replace(o, nw))
            print(f"{name} ...", flush=True)
            res = run_tests(env)
            sh("git", "checkout", "--", *sorted({p for p, _, _ in edits}), cwd=TREE)
            killers = sorted(t for t, ok in res.items() if not ok)
            rows.append((name, what, killers))
            print(f"  killed by {len(killers)}: {', '.join(killers) or 'NONE'}", flush=True)
    finally:
        sh("git", "worktree", "remove", "--force", str(TREE), cwd=ROOT)
    lines = ["| mutant | bug | killed by |", "|---|---|---|"]
    for name, what, killers in rows:
        paper = [k for k in killers if k.startswith("ibcycle::")]
        block = [k for k in killers if not k.startswith("ibcycle::")]
        cell = "; ".join(
            s for s in [
                ", ".join(f"`{k.split('::', 1)[1]}`" for k in paper),
                f"{len(block)} block/switch tests" if block else "",
            ] if s
        )
        lines.append(f"| `{name}` | {what} | {cell or '**not killed**'} |")
    table = "\n".join(lines)
    print(table)
    if a.out:
        Path(a.out).write_text(table + "\n")
    survivors = [r[0] for r in rows if not r[2]]
    if survivors:
        sys.exit(f"cc-mutants: not killed: {survivors}")


if __name__ == "__main__":
    main()
