#!/usr/bin/env python3
"""The figures and tables of docs/cc-fidelity.md, from runs of the release binary.

    cargo build --release && scripts/cc-fidelity-figures.py [--out docs/cc-fidelity]

Runs scenarios/gran-s1-cc-on.toml (the hardware's CC settings, 100 ms phases) and cao-cc-on.toml under the
detection choices compared in the document (FECN decided at enqueue or at dequeue; Threshold sixteenths of
the whole buffer or of the buffer beyond one packet; summed or per-VoQ fill), and a 20 ms variant of Gran's
scenario 1 with all five flows from the start whose S2 -> H5 port is traced per clock (`--trace`) and whose H5
link is captured (`--pcap`), to see which flow's packets each decision marks. Needs matplotlib.
"""

import argparse
import collections
import csv
import re
import struct
import subprocess
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "ibcycle"
TMP = Path(tempfile.mkdtemp(prefix="cc-fidelity-"))

VARIANTS = {
    "enqueue, beyond one packet, sum (default)": {},
    "enqueue, beyond one packet, per VoQ": {"fill_comparison": '"per_voq"'},
    "dequeue, beyond one packet, sum": {"mark_point": '"dequeue"'},
    "enqueue, whole buffer, sum": {"threshold_map": '"linear_sixteenths"'},
    "dequeue, whole buffer, per VoQ (the old defaults)": {
        "mark_point": '"dequeue"',
        "threshold_map": '"linear_sixteenths"',
        "fill_comparison": '"per_voq"',
    },
}


def variant(src, keys, name, edit=None):
    text = (ROOT / "scenarios" / src).read_text()
    extra = "".join(f"{k} = {v}\n" for k, v in keys.items())
    text = text.replace("packet_size = 8\n", "packet_size = 8\n" + extra, 1)
    if edit:
        text = edit(text)
    f = TMP / f"{name}.toml"
    f.write_text(text)
    return f


def phase_of(src):
    """A shipped file's phase: its second flow's start (the flows join one phase apart)."""
    starts = [int(s) for s in re.findall(r"^start_us = (\d+)", (ROOT / "scenarios" / src).read_text(), re.M)]
    return starts[1]


def run(f, out, *args):
    subprocess.run([str(BIN), "run", str(f), "--out", str(out), *args], check=True, stdout=subprocess.DEVNULL)
    return out


def windows(out, phase_us, phases):
    """Per phase: {flow: (mean Gbit/s, CNPs)} over the phase's last third."""
    thr = list(csv.DictReader(open(out / "throughput.csv")))
    cnp = list(csv.DictReader(open(out / "cnp.csv")))
    res = []
    for i in range(phases):
        a, b = (i + 1) * phase_us - phase_us / 3, (i + 1) * phase_us
        g, c = collections.defaultdict(list), collections.defaultdict(int)
        for r in thr:
            if a < float(r["time_us"]) <= b:
                g[r["flow"]].append(float(r["gbps"]))
        for r in cnp:
            if a < float(r["time_us"]) <= b:
                c[r["flow"]] += int(r["cnp_rx"])
        res.append({f: (sum(v) / len(v), c[f]) for f, v in g.items()})
    return res


def jain(v):
    return sum(v) ** 2 / (len(v) * sum(x * x for x in v))


def mark_prob(gbps, cnps, window_us):
    """Marked fraction of a flow's 2048-byte packets: one CNP answers one mark."""
    pkts = gbps * 1e9 * window_us * 1e-6 / 8 / 2048
    return cnps / pkts if pkts else 0.0


def pcap_marks(path):
    """(time s, source LID, FECN) of every data packet on the captured link (ERF IB records)."""
    out = []
    with open(path, "rb") as f:
        f.read(24)
        while True:
            h = f.read(16)
            if len(h) < 16:
                break
            ts, tu, incl, _ = struct.unpack("<IIII", h)
            d = f.read(incl)
            if d[8] & 0x7F != 21 or len(d) < 16 + 20:
                continue
            p = d[16:]
            if p[1] & 3 != 2 or p[8] > 5:  # local IB, RC Send (first, middle, last, only)
                continue
            out.append((ts + tu * 1e-9, struct.unpack(">H", p[6:8])[0], bool(p[12] & 0x80)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "cc-fidelity"))
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    names = {"F2": "F2 (H2, via S1)", "F3": "F3 (H3, via S1)", "F4": "F4 (H6, at S2)", "F5": "F5 (H7, at S2)"}

    # 1. Gran scenario 1 and Cao under each variant: the steady-state table.
    gp, cp = phase_of("gran-s1-cc-on.toml"), phase_of("cao-cc-on.toml")
    table = ["| detection | Gran F1 (Gbit/s, phases 1-5) | Gran F2-F5, last phase (Gbit/s) | Jain | min/max | "
             "Cao H1 H3 H2 H5, last phase | Jain | min/max |", "|---|---|---|---|---|---|---|---|"]
    series = {}
    for label, keys in VARIANTS.items():
        tag = re.sub(r"[^a-z]+", "-", label.lower()).strip("-")
        g = run(variant("gran-s1-cc-on.toml", keys, "g-" + tag), TMP / ("g-" + tag))
        c = run(variant("cao-cc-on.toml", keys, "c-" + tag), TMP / ("c-" + tag))
        gw, cw = windows(g, gp, 5), windows(c, cp, 4)
        f1 = " ".join(f"{w['F1'][0]:.1f}" for w in gw)
        gl = [gw[4][f][0] for f in ["F2", "F3", "F4", "F5"]]
        cl = [cw[3][f][0] for f in ["H1", "H3", "H2", "H5"]]
        table.append(
            f"| {label} | {f1} | {' '.join(f'{x:.2f}' for x in gl)} | {jain(gl):.3f} | {min(gl) / max(gl):.2f} | "
            f"{' '.join(f'{x:.2f}' for x in cl)} | {jain(cl):.3f} | {min(cl) / max(cl):.2f} |"
        )
        series[label] = (g, gw)
    (out / "table.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))

    # 2. Throughput over time, old defaults against new, Gran scenario 1.
    fig, axes = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    for ax, label in zip(axes, ["dequeue, whole buffer, per VoQ (the old defaults)",
                                "enqueue, beyond one packet, sum (default)"]):
        rows = list(csv.DictReader(open(series[label][0] / "throughput.csv")))
        for fl in ["F1", "F2", "F3", "F4", "F5"]:
            pts = [(float(r["time_us"]) / 1000, float(r["gbps"])) for r in rows if r["flow"] == fl]
            # 1 ms means: the 100 us samples oscillate with CCTI steps.
            xs, ys = [], []
            for k in range(0, len(pts), 10):
                chunk = pts[k:k + 10]
                xs.append(chunk[-1][0])
                ys.append(sum(y for _, y in chunk) / len(chunk))
            ax.plot(xs, ys, label=fl)
        ax.set_title(f"Gran & Reinemo scenario 1, hardware CC settings: {label}")
        ax.set_ylabel("Gbit/s (1 ms means)")
        ax.set_ylim(0, 17)
        ax.grid(alpha=0.3)
    axes[0].legend(ncol=5, loc="upper right")
    axes[1].set_xlabel(f"time (ms); F2, F3, F4, F5 join at {', '.join(str(k * gp // 1000) for k in range(1, 5))} ms")
    fig.tight_layout()
    fig.savefig(out / "gran-s1-old-new.png", dpi=90)

    # 3. Per-packet marking probability per contributor, last phase, by variant.
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.16
    for k, (label, (_, gw)) in enumerate(series.items()):
        w = gw[4]
        ps = [100 * mark_prob(w[f][0], w[f][1], gp / 3) for f in ["F2", "F3", "F4", "F5"]]
        ax.bar([i + k * width for i in range(4)], ps, width, label=label)
    ax.set_xticks([i + 2 * width for i in range(4)])
    ax.set_xticklabels([names[f] for f in ["F2", "F3", "F4", "F5"]])
    ax.set_ylabel("packets FECN-marked (%)")
    ax.set_title(f"Who is marked: Gran scenario 1, last phase ({4 * gp // 1000}-{5 * gp // 1000} ms), last third")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "marking-per-flow.png", dpi=90)

    # 4. Per clock: S2 -> H5's detector and the marks by flow, 150 us at steady state, dequeue against enqueue.
    def all_at_once(text):
        text = re.sub(r"^duration_us = \d+", "duration_us = 20000", text, flags=re.M)
        return re.sub(r"start_us = \d+", "start_us = 0", text)

    fig, axes = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    lid_flow = {2: "F2", 3: "F3", 6: "F4", 7: "F5"}
    colours = {"F2": "tab:orange", "F3": "tab:green", "F4": "tab:red", "F5": "tab:purple"}
    t0, t1 = 19_800.0, 19_950.0
    for ax, (label, keys) in zip(axes, [("FECN decided at dequeue", {"mark_point": '"dequeue"'}),
                                        ("FECN decided at enqueue (default)", {})]):
        tag = "trace-" + ("deq" if keys else "enq")
        o = run(variant("gran-s1-cc-on.toml", keys, tag, all_at_once), TMP / tag, "--trace", "S2:2:0",
                "--pcap", "H5")
        rows = list(csv.DictReader(open(o / "trace-S2_2-vl0.csv")))
        xs, fill, cong = [], [], []
        for r in rows:
            t = int(r["cycle"]) / 1000
            if t0 - 5 <= t <= t1:
                xs.append(t)
                fill.append(int(r["voq_fill"]))
                cong.append(int(r["congested"]))
        ax.step(xs, fill, where="post", color="black", lw=0.8, label="VoQ fill for S2:2, summed (blocks)")
        top = max(fill + [1])
        ax.fill_between(xs, 0, [top * c for c in cong], step="post", color="tab:blue", alpha=0.15,
                        label="congestion state")
        marks = pcap_marks(o / "H5.pcap")
        seen = set()
        for ts, lid, fecn in marks:
            t = ts * 1e6 - 0.1  # the wire's 100 ns: when the packet left S2
            if fecn and t0 <= t <= t1 and lid in lid_flow:
                f = lid_flow[lid]
                ax.axvline(t, color=colours[f], lw=1.2, label=f"{f} marked" if f not in seen else None)
                seen.add(f)
        # Marking probabilities over the last third, from the capture.
        n, m = collections.Counter(), collections.Counter()
        for ts, lid, fecn in marks:
            if ts * 1e6 > 20000 * 2 / 3 and lid in lid_flow:
                n[lid_flow[lid]] += 1
                m[lid_flow[lid]] += fecn
        ps = ", ".join(f"{f} {100 * m[f] / n[f]:.1f}%" for f in ["F2", "F3", "F4", "F5"] if n[f])
        ax.set_title(f"{label}: packets marked {ps}", fontsize=10)
        ax.set_ylabel("blocks")
        ax.set_xlim(t0, t1)
        ax.legend(fontsize=7, loc="upper right", ncol=3)
    axes[1].set_xlabel("time (us); all five flows from 0, 20 ms, hardware CC settings")
    fig.tight_layout()
    fig.savefig(out / "trace-s2-h5.png", dpi=90)
    print(f"figures in {out}")


if __name__ == "__main__":
    main()
