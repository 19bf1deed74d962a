//! `cct_shaper` traces. Configuration line: `0 cct_i ccti_limit_i ccti_min_i ccti_increase_i ccti_timer_i
//! trigger_threshold_i t_pkt_i`; cycle line: `1 rst_ni becn_i tick_i sent_i ccti_o ird_o ready_o trigger_o`.

use crate::io;
use crate::pack::{h, Packed, Rng};
use rtl_model::blocks::cct_shaper::{CctEntryBits, CctShaper, Config, In, CCT_MAX_ENTRIES};
use rtl_model::clocked::Clocked;
use std::io::Write;

/// One segment of `len` cycles under a fresh random configuration.
pub fn segment(rng: &mut Rng, len: u64, w: &mut dyn Write) -> Result<(), String> {
    let limit = match rng.below(3) {
        0 => rng.range(0, 10),
        _ => rng.range(0, 127),
    } as u16;
    // Small multipliers half the time, so that delays end and `ready_o` rises within a segment.
    let raw_mask = if rng.chance(1, 2) { 0xc00f } else { 0xffff };
    let cfg = Config {
        cct: (0..CCT_MAX_ENTRIES)
            .map(|_| CctEntryBits::from_raw(rng.next() as u16 & raw_mask))
            .collect(),
        ccti_limit: limit,
        ccti_min: rng.range(0, u64::from(limit)) as u8,
        ccti_increase: match rng.below(3) {
            0 => rng.range(0, 3),
            1 => rng.range(0, 20),
            _ => rng.below(256),
        } as u8,
        ccti_timer: match rng.below(4) {
            0 => 0,
            1 | 2 => rng.range(1, 6),
            _ => rng.below(0x1_0000),
        } as u16,
        trigger_threshold: match rng.below(3) {
            0 => 0,
            1 => rng.range(1, 130),
            _ => rng.below(256),
        } as u8,
        t_pkt: if rng.chance(1, 2) {
            rng.below(64) as u16
        } else {
            rng.next() as u16
        },
    };
    let mut cct = Packed::new();
    for e in &cfg.cct {
        cct.push(e.to_raw().into(), 16);
    }
    writeln!(
        w,
        "0 {} {} {} {} {} {} {}",
        cct.hex(),
        h(cfg.ccti_limit),
        h(cfg.ccti_min),
        h(cfg.ccti_increase),
        h(cfg.ccti_timer),
        h(cfg.trigger_threshold),
        h(cfg.t_pkt)
    )
    .map_err(io)?;
    let mut s = CctShaper::new(cfg).map_err(|e| e.to_string())?;
    let becn_rate = rng.range(1, 16);
    for c in 0..len {
        let i = In {
            rst_ni: c != 0 && !rng.chance(1, 1000),
            becn_i: rng.chance(1, becn_rate * 4),
            tick_i: rng.chance(1, 3),
            sent_i: rng.chance(1, 10),
        };
        let o = s.step(&i);
        writeln!(
            w,
            "1 {} {} {} {} {} {} {} {}",
            h(i.rst_ni),
            h(i.becn_i),
            h(i.tick_i),
            h(i.sent_i),
            h(o.ccti_o),
            h(o.ird_o),
            h(o.ready_o),
            h(o.trigger_o)
        )
        .map_err(io)?;
    }
    Ok(())
}
