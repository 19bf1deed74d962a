#!/usr/bin/env python3
"""Logic depth of a design too large to synthesise whole, from the input cones of sample registers.

    hdl/cones.py OUT_DIR --ports N [--param NAME=VALUE ...] [--pick last|first|both] [--only REGEX]
    hdl/cones.py OUT_DIR --module M [--param NAME=VALUE ...] [--pick ...] [--only ...]
    hdl/cones.py OUT_DIR --front FRONT.il [--top M] [--pick ...] [--only ...]
    ... [--expect-from target/hdl-synth/cells.txt]   (fail unless the longest path is the top's depth there)

With --ports, `ib_switch` is elaborated at `hdl/synth.sh`'s small synthesis defaults (hdl/ib_switch.synth;
PW from N; each overridden by a --param) and N ports, and taken through
Yosys's front end at word level (`proc; flatten; opt -fast; memory; opt -fast`) into OUT_DIR/front.il
(about 6 CPU-minutes at 8 ports; at 18 Yosys 0.23 was still elaborating after 55 CPU-minutes, in the
processes' generation from the syntax tree). --module takes another module of hdl/ the same way (the test
command checks the method on one that also synthesises whole in seconds); --front reuses such a file.

Registers are grouped by name with every index dropped (`la_st_q[17]` and `la_st_q[3]` are one group,
`g_port[5].g_vl[1].u_crx.free_q` and `g_port[0].g_vl[0].u_crx.free_q` another); from each group
the register with the highest indices (`last`), the lowest (`first`) or both is kept, with the
combinational cone into its D input, and everything else is deleted. The kept cones are synthesised as
`hdl/synth.sh` synthesises a module (`synth -flatten`, `ltp -noff`) and `hdl/endpoints.py` lists the
depth of each kept register.

Why samples are enough: the instances of a group are the same logic at another index (a port, a VL, a
slot), so their cones have the same structure; where an instance's logic depends on its index (a priority
order over the ports, a compare with a constant), a chain is shortest at one end and longest at the other.
What it measures: the longest path, not each register's. ABC maps for the least depth and then recovers
area on every path short of the longest, so in a whole design the shorter paths grow towards the longest
and in the cones alone they grow less: at 2, 4 and 8 ports the cones' longest path equals the whole
design's (40 levels, the same registers), while single registers below it differ by up to 8 levels (most
are shallower in the cones, a few deeper).
Check the method again at a size the whole design synthesises at (hdl/README.md, "Depth at the fabrics'
sizes", gives 2, 4 and 8 ports).

Writes OUT_DIR/front.il and front.log (with --ports or --module), cones.il (the marked design), cones.log,
cones.json, ltp.txt, endpoints.txt and summary.txt.
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

FF_TYPES = ("$dff", "$sdff", "$adff", "$dffe", "$sdffe", "$sdffce", "$adffe", "$aldff", "$aldffe", "$dffsr",
            "$dffsre")
INDEX = re.compile(r"\[(\d+)\]")


def q_name(conn):
    """The first wire named in a `connect \\Q ...` line's signal, without its bit slice."""
    m = re.search(r"(\\\S+|\$\S+)", conn)
    return m.group(1) if m else None


def front_end(a, here):
    """ib_switch at a.ports ports (and the --param values), or the module a.module at its defaults, through
    Yosys's front end: OUT_DIR/front.il."""
    if a.module is not None:
        top, params = a.module, {}
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", top) or not os.path.isfile(os.path.join(here, top + ".sv")):
            sys.exit(f"cones.py: --module {top!r}: no hdl/{top}.sv")
    else:
        if not 1 <= a.ports <= 64:
            sys.exit(f"cones.py: --ports {a.ports}: ib_switch has 1 to 64 ports")
        top = "ib_switch"
        # hdl/synth.sh's small defaults for the rest (its file, read by both).
        with open(os.path.join(here, "ib_switch.synth")) as f:
            params = dict(kv.split("=", 1) for ln in f if not ln.startswith("#") for kv in ln.split())
        params["NPorts"] = str(a.ports)
        params["PW"] = str(max(1, (a.ports - 1).bit_length()))
    for kv in a.param:
        k, eq, v = kv.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z]\w*", k) or not re.fullmatch(r"\d+", v):
            sys.exit(f"cones.py: --param {kv!r}: expected NAME=VALUE, VALUE a non-negative integer")
        params[k] = v
    a.top = top
    # Every module of hdl/ but the harness's test modules, read deferred: only the top and what it
    # instantiates are elaborated, the top once, from a copy of its source with the parameter values as its
    # defaults (hdl/at_params.sh: chparam would elaborate it twice; ib_switch read plainly is elaborated at
    # its defaults, 18 ports and 2,048 slots per input, which does not finish).
    srcs = sorted(os.path.join(here, f) for f in os.listdir(here)
                  if f.endswith(".sv") and not f.startswith("test_"))
    if params:
        copy = os.path.join(a.out, top + ".sv")
        r = subprocess.run([os.path.join(here, "at_params.sh"), os.path.join(here, top + ".sv"), copy]
                           + [f"{k}={v}" for k, v in params.items()])
        if r.returncode != 0:
            sys.exit("cones.py: the parameter values could not be set (above)")
        srcs = [copy if os.path.basename(f) == top + ".sv" else f for f in srcs]
    front = os.path.join(a.out, "front.il")
    script = (f"read_verilog -defer -sv -I{here} {' '.join(srcs)}; "
              f"hierarchy -top {top}; proc; flatten; opt -fast; memory; opt -fast; "
              f"tee -o {a.out}/front.stat stat; write_rtlil {front}")
    yosys(a, script, "front.log", "yosys's front end")
    return front


def yosys(a, script, log_name, what):
    """Runs a Yosys script, its output to OUT_DIR/log_name; exits with a message naming the log on failure."""
    log_path = os.path.join(a.out, log_name)
    with open(log_path, "w") as log:
        r = subprocess.run([a.yosys, "-p", script], stdout=log, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit(f"cones.py: {what} failed, see {log_path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--front", help="a design after the front end (write_rtlil)")
    src.add_argument("--ports", type=int, help="ib_switch at this many ports")
    src.add_argument("--module", help="another module of hdl/ at its defaults (a check of the method)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--top", default="ib_switch")
    ap.add_argument("--pick", choices=("last", "first", "both"), default="both")
    ap.add_argument("--only", help="keep only the groups whose name matches this regular expression")
    ap.add_argument("--yosys", default="yosys")
    ap.add_argument("--expect-from", metavar="CELLS.txt",
                    help="hdl/synth.sh's table: fail unless the cones' longest path is the top's depth there")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    if a.front is None:
        a.front = front_end(a, here)

    try:
        with open(a.front) as f:
            lines = f.readlines()
    except OSError as e:
        sys.exit(f"cones.py: {a.front}: {e.strerror}")
    # Every flip-flop cell: its line, and the name of the register its Q drives.
    cells = []  # (line index of `cell`, q name)
    cur = None
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("cell "):
            typ = s.split()[1]
            cur = i if typ in FF_TYPES else None
        elif cur is not None and s.startswith("connect \\Q "):
            name = q_name(s[len("connect \\Q "):])
            if name:
                cells.append((cur, name))
            cur = None
        elif s == "end":
            cur = None
    if not cells:
        sys.exit(f"cones.py: {a.front}: no flip-flop cells (is it the design after proc?)")
    groups = defaultdict(list)
    for i, name in cells:
        groups[INDEX.sub("[#]", name)].append((tuple(int(x) for x in INDEX.findall(name)), i, name))
    only = re.compile(a.only) if a.only else None
    keep, kept = set(), []
    for g, members in sorted(groups.items()):
        if only and not only.search(g):
            continue
        members.sort()
        picks = {"last": [members[-1]], "first": [members[0]], "both": [members[0], members[-1]]}[a.pick]
        for _, i, name in picks:
            keep.add(i)
        kept.append((g, len(members), sorted({p[2] for p in picks})))
    marked = os.path.join(a.out, "cones.il")
    with open(marked, "w") as f:
        for i, line in enumerate(lines):
            if i in keep:
                f.write(line[: len(line) - len(line.lstrip())] + "attribute \\cone_ep 1\n")
            f.write(line)
    net = os.path.join(a.out, "cones.json")
    # The marked flip-flops, their input wires, then every combinational cell driving into those (stopping
    # at other flip-flops and ports); the rest deleted. `keep` stops opt_clean from removing the marked
    # flip-flops, whose outputs now drive nothing.
    script = (f"read_rtlil {marked}; hierarchy -top {a.top}; select -set cone a:cone_ep %ci1 %cie*; "
              f"cd {a.top}; delete t:* @cone %d; cd ..; setattr -set keep 1 a:cone_ep; opt_clean; "
              f"tee -o {a.out}/cone.stat stat; synth -flatten -top {a.top}; tee -o {a.out}/synth.stat stat; "
              f"tee -o {a.out}/ltp.txt ltp -noff; write_json {net}")
    yosys(a, script, "cones.log", "yosys on the cones")
    with open(os.path.join(a.out, "endpoints.txt"), "w") as f:
        r = subprocess.run([sys.executable, os.path.join(here, "endpoints.py"), net, "--top", a.top],
                           stdout=f)
    if r.returncode != 0:
        sys.exit("cones.py: endpoints.py failed")

    def cells_of(path):
        with open(path) as f:
            return [ln.split()[-1] for ln in f if "Number of cells:" in ln][-1]

    with open(os.path.join(a.out, "summary.txt"), "w") as f:
        f.write(f"{len(cells)} flip-flop cells in {len(groups)} groups; kept {len(keep)} "
                f"({a.pick}) from {len(kept)} groups\n")
        f.write(f"cone cells before synth: {cells_of(a.out + '/cone.stat')}; "
                f"after: {cells_of(a.out + '/synth.stat')}\n")
        for g, n, names in kept:
            f.write(f"{g}  ({n} flip-flops)  kept: {' '.join(names)}\n")
    with open(os.path.join(a.out, "endpoints.txt")) as f:
        sys.stdout.write("".join(f.readlines()[:30]))
    if a.expect_from:
        with open(os.path.join(a.out, "ltp.txt")) as f:
            m = re.findall(r"length=(\d+)", f.read())
        with open(a.expect_from) as f:
            rows = [ln.split() for ln in f if ln.split()[:1] == [a.top]]
        if not m or not rows or not rows[0][3].isdigit():
            sys.exit(f"cones.py: no longest path in {a.out}/ltp.txt or no depth of {a.top} in {a.expect_from}")
        whole, cones = int(rows[0][3]), int(m[-1])
        print(f"{a.top}: longest path {whole} levels synthesised whole, {cones} in its cones")
        if whole != cones:
            sys.exit(f"cones.py: {a.top}: the cones' longest path ({cones}) is not the whole module's ({whole})")


if __name__ == "__main__":
    main()
