//! `cong_detect` traces. Configuration line: `0 threshold_i thr_table_i compare_i root_min_credits_i
//! victim_mask_i`; cycle line: `1 rst_ni voq_cnt_i voq_fill_i credit_avail_i cong_o root_o victim_o
//! mark_state_o`. `compare_i` is 0 PerVoq, 1 SumVoqs, 2 SumPerContributor (the encoding in cong_detect.sv).

use crate::io;
use crate::pack::{h, Packed, Rng};
use rtl_model::blocks::cong_detect::{
    linear_thr_table, Config, CongDetect, FillCompare, In, MAX_INPUTS,
};
use std::io::Write;

/// The RTL's `compare_i` code of a comparison.
fn code(c: FillCompare) -> u8 {
    match c {
        FillCompare::PerVoq => 0,
        FillCompare::SumVoqs => 1,
        FillCompare::SumPerContributor => 2,
    }
}

/// `v + d` clamped to 16 bits, for fills near a threshold.
fn near(v: u32, d: i64) -> u16 {
    (i64::from(v) + d).clamp(0, 0xffff) as u16
}

/// A fill vector of `len` lanes, often placed exactly at, just under or just over the threshold.
fn fills(rng: &mut Rng, cfg: &Config, len: usize, out: &mut Vec<u16>) {
    out.clear();
    let thr = u32::from(cfg.thr_table[usize::from(cfg.threshold)]);
    let d = rng.range(0, 2) as i64 - 1;
    let lanes = len.min(MAX_INPUTS);
    match rng.below(6) {
        // Random, mostly small.
        0 => out.extend(
            (0..len).map(|_| rng.below(u64::from(thr) * 2 / (lanes as u64).max(1) + 2) as u16),
        ),
        // One lane near the threshold, the others below it.
        1 => {
            out.extend((0..len).map(|_| rng.below(u64::from(thr).max(1)) as u16));
            if lanes > 0 {
                out[rng.below(lanes as u64) as usize] = near(thr, d);
            }
        }
        // The sum near the threshold.
        2 | 3 => {
            let per_contrib = rng.chance(1, 2);
            out.extend((0..len).map(|_| {
                if rng.chance(1, 3) {
                    0
                } else {
                    rng.range(1, 4) as u16
                }
            }));
            if lanes > 0 {
                let k = rng.below(lanes as u64) as usize;
                out[k] = 1;
                let n = out[..lanes].iter().filter(|&&f| f != 0).count() as u32;
                let target = if per_contrib { thr / n } else { thr };
                let rest: u32 = out[..lanes].iter().map(|&f| u32::from(f)).sum::<u32>() - 1;
                // Keep lane k nonzero so the contributor count, and with it the target, stays put.
                out[k] = near(target.saturating_sub(rest), d).max(1);
            }
        }
        // Anything, including full 16-bit fills (the sums must not wrap).
        4 => out.extend((0..len).map(|_| rng.next() as u16)),
        _ => out.extend((0..len).map(|_| {
            if rng.chance(1, 2) {
                0
            } else {
                rng.below(8) as u16
            }
        })),
    }
}

/// One segment of `len` cycles under a fresh random configuration.
pub fn segment(rng: &mut Rng, len: u64, w: &mut dyn Write) -> Result<(), String> {
    let mut thr_table = linear_thr_table(rng.range(1, 0xffff) as u16);
    if rng.chance(1, 2) {
        for e in thr_table.iter_mut() {
            *e = match rng.below(3) {
                0 => rng.below(8) as u16,
                1 => rng.below(300) as u16,
                _ => rng.next() as u16,
            };
        }
    }
    let cfg = Config {
        threshold: rng.below(16) as u8,
        thr_table,
        compare: [
            FillCompare::PerVoq,
            FillCompare::SumVoqs,
            FillCompare::SumPerContributor,
        ][rng.below(3) as usize],
        root_min_credits: if rng.chance(1, 2) {
            66
        } else {
            rng.below(0x1000) as u16
        },
        victim_mask: rng.chance(1, 2),
    };
    let mut table = Packed::new();
    for &e in &cfg.thr_table {
        table.push(e.into(), 16);
    }
    writeln!(
        w,
        "0 {} {} {} {} {}",
        h(cfg.threshold),
        table.hex(),
        h(code(cfg.compare)),
        h(cfg.root_min_credits),
        h(cfg.victim_mask)
    )
    .map_err(io)?;
    let mut det = CongDetect::new(cfg).map_err(|e| e.to_string())?;
    let mut fill = Vec::with_capacity(128);
    let width = rng.range(1, MAX_INPUTS as u64);
    for c in 0..len {
        // Mostly a segment-wide number of inputs; sometimes another, or more than the RTL's 64 lanes.
        let n = match rng.below(10) {
            0 => rng.range(0, MAX_INPUTS as u64),
            1 => rng.range(MAX_INPUTS as u64 + 1, 127),
            _ => width,
        } as usize;
        fills(rng, &cfg, n, &mut fill);
        let mut lanes = Packed::new();
        for k in 0..MAX_INPUTS {
            // Lanes beyond the count carry junk that the RTL must ignore.
            lanes.push(fill.get(k).copied().unwrap_or(rng.next() as u16).into(), 16);
        }
        let credit = if rng.chance(1, 2) {
            near(cfg.root_min_credits.into(), rng.range(0, 4) as i64 - 2)
        } else {
            rng.next() as u16
        };
        let i = In {
            rst_ni: c != 0 && !rng.chance(1, 1000),
            voq_fill_i: &fill,
            credit_avail_i: credit,
        };
        let o = det.step_with(&i);
        writeln!(
            w,
            "1 {} {} {} {} {} {} {} {}",
            h(i.rst_ni),
            h(n as u64),
            lanes.hex(),
            h(credit & 0xfff),
            h(o.cong_o),
            h(o.root_o),
            h(o.victim_o),
            h(o.mark_state_o)
        )
        .map_err(io)?;
    }
    Ok(())
}
