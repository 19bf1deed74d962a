#!/usr/bin/env python3
"""Logic depth per endpoint of a Yosys netlist mapped to generic gates (after `synth`), where `ltp -noff`
gives only the one longest path: for every register (its bits together) and every output port, the longest
path into it in cells, counted as `ltp -noff` counts them (from a flip-flop's output or an input port),
longest first.

    yosys -p "...; synth -flatten -top M; ltp -noff; write_json M.json"
    hdl/endpoints.py M.json [--top M] [--over LEVELS] [--bits] [--path REGISTER]

--over L lists only the endpoints deeper than L; --bits lists each bit apart (register[3]) instead of one
line per register or array of registers (every index dropped), with the number of its bits deeper than
--over. The same numbers as `ltp`: its length is
the first line's depth. Pure Python; a netlist of 500,000 cells takes about a minute and 3 GB.
"""
import argparse
import json
import re
import sys
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("netlist")
    ap.add_argument("--top")
    ap.add_argument("--over", type=int, default=0)
    ap.add_argument("--bits", action="store_true")
    ap.add_argument("--path")
    a = ap.parse_args()
    with open(a.netlist) as f:
        mods = json.load(f)["modules"]
    top = a.top or next((m for m, v in mods.items() if v.get("attributes", {}).get("top")), None)
    if top not in mods:
        sys.exit(f"endpoints.py: {a.netlist}: no module {top!r} (give --top)")
    m = mods[top]
    # Each bit's most readable name: a public one (no leading $) first, then the shortest.
    names = {}
    for name, nn in m["netnames"].items():
        key = (name.startswith("$"), len(name))
        for i, b in enumerate(nn["bits"]):
            if isinstance(b, int) and (b not in names or key < names[b][0]):
                names[b] = (key, f"{name}[{i}]" if len(nn["bits"]) > 1 else name)
    driver = {}   # a combinational cell's output bit -> its input bits
    ffs = []      # (input bits, output bits) of each storage cell
    for c in m["cells"].values():
        dirs = c["port_directions"]
        ins = [b for p, bs in c["connections"].items() if dirs[p] == "input" for b in bs if isinstance(b, int)]
        outs = [b for p, bs in c["connections"].items() if dirs[p] == "output" for b in bs if isinstance(b, int)]
        if re.search(r"DFF|DLATCH|_SR_|ALDFF|\$mem", c["type"]):
            ffs.append((ins, outs))
        else:
            for b in outs:
                driver[b] = ins
    level = {}

    def depth(bit):
        # Iterative: the netlist's paths are deeper than Python's recursion limit.
        stack = [bit]
        while stack:
            x = stack[-1]
            if x in level:
                stack.pop()
                continue
            ins = driver.get(x)
            if ins is None:
                level[x] = 0
                stack.pop()
                continue
            todo = [i for i in ins if i not in level]
            if todo:
                stack.extend(todo)
                continue
            level[x] = 1 + max((level[i] for i in ins), default=0)
            stack.pop()
        return level[bit]

    ends = []
    deepest_in = {}   # register name -> (depth, its deepest input bit)
    for ins, outs in ffs:
        d = max((depth(b) for b in ins), default=0)
        name = names[outs[0]][1] if outs and outs[0] in names else "(unnamed storage)"
        ends.append((d, name))
        if ins:
            b = max(ins, key=lambda i: level[i])
            k = re.sub(r"\[\d+\]", "[]", name)
            if k not in deepest_in or d > deepest_in[k][0]:
                deepest_in[k] = (d, b, name)
    if a.path:
        if a.path not in deepest_in:
            sys.exit(f"endpoints.py: no register {a.path!r} (names as the listing prints them)")
        d, b, name = deepest_in[a.path]
        steps = []
        while True:
            steps.append(b)
            ins = driver.get(b)
            if not ins:
                break
            b = max(ins, key=lambda i: level[i])
        unnamed = 0
        for b in reversed(steps):
            nm = names.get(b, (None, ""))[1]
            if nm and not nm.startswith("$"):
                if unnamed:
                    print(f"        ({unnamed} unnamed)")
                    unnamed = 0
                print(f"{level[b]:5d}  {nm}")
            else:
                unnamed += 1
        if unnamed:
            print(f"        ({unnamed} unnamed)")
        print(f"{d:5d}  {name}")
        return
    for pname, p in m["ports"].items():
        if p["direction"] == "output":
            for i, b in enumerate(p["bits"]):
                if isinstance(b, int):
                    ends.append((depth(b), f"output {pname}[{i}]"))
    if a.bits:
        for d, name in sorted(ends, key=lambda e: (-e[0], e[1])):
            if d > a.over:
                print(f"{d:5d}  {name}")
        return
    # One line per register or array of them: the names with every index dropped (vn_q[5][2] -> vn_q[][]).
    reg = defaultdict(lambda: [0, 0, 0])
    for d, name in ends:
        r = reg[re.sub(r"\[\d+\]", "[]", name)]
        r[0] = max(r[0], d)
        r[1] += 1
        r[2] += d > a.over
    for name, (d, n, deep) in sorted(reg.items(), key=lambda e: (-e[1][0], e[0])):
        if d > a.over:
            print(f"{d:5d}  {name}  ({deep} of {n} bits deeper than {a.over})")


if __name__ == "__main__":
    main()
