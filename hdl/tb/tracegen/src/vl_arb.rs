//! `vl_arb` traces. Configuration line: `0 hi_vl hi_weight hi_n lo_vl lo_weight lo_n vl_high_limit`; cycle line:
//! `1 rst_ni ready_i req_i len_i credit_ok_i gnt_valid_o gnt_vl_o gnt_high_o`.

use crate::io;
use crate::pack::{h, Packed, Rng};
use rtl_model::blocks::vl_arb::{ArbEntry, Config, In, VlArb, TABLE_MAX};
use rtl_model::clocked::Clocked;
use std::io::Write;

fn table(rng: &mut Rng) -> Vec<ArbEntry> {
    let n = match rng.below(4) {
        0 => rng.range(0, 3),
        1 => rng.range(1, 8),
        _ => rng.range(0, TABLE_MAX as u64),
    };
    // Few VLs in a segment make VLs repeat across entries and collide on requests.
    let vls = rng.range(1, 15);
    (0..n)
        .map(|_| {
            let weight = match rng.below(5) {
                0 => 0,
                1 | 2 => rng.range(1, 8),
                _ => rng.below(256),
            } as u8;
            ArbEntry::new(rng.below(vls) as u8, weight)
        })
        .collect()
}

fn packed(t: &[ArbEntry]) -> (String, String) {
    let (mut vl, mut weight) = (Packed::new(), Packed::new());
    for e in 0..TABLE_MAX {
        // Entries beyond the table's length get junk: the RTL must ignore them.
        let x = t.get(e).copied().unwrap_or(ArbEntry::new(e as u8 % 15, 1));
        vl.push(x.vl.into(), 4);
        weight.push(x.weight.into(), 8);
    }
    (vl.hex(), weight.hex())
}

/// One segment of `len` cycles under a fresh random configuration.
pub fn segment(rng: &mut Rng, len: u64, w: &mut dyn Write) -> Result<(), String> {
    let cfg = Config {
        high: table(rng),
        low: table(rng),
        // VL_High_Limit 0 (one high packet, then a low one) in two segments of five: its limit check shows
        // only where both tables have candidates.
        vl_high_limit: match rng.below(5) {
            0 | 1 => 0,
            2 => rng.range(1, 3) as u8,
            3 => 255,
            _ => rng.below(256) as u8,
        },
    };
    let (hv, hw) = packed(&cfg.high);
    let (lv, lw) = packed(&cfg.low);
    writeln!(
        w,
        "0 {hv} {hw} {} {lv} {lw} {} {}",
        h(cfg.high.len() as u64),
        h(cfg.low.len() as u64),
        h(cfg.vl_high_limit)
    )
    .map_err(io)?;
    let mut arb = VlArb::new(cfg).map_err(|e| e.to_string())?;
    let max_len = if rng.chance(1, 2) { 65 } else { 255 };
    for c in 0..len {
        let mut i = In {
            rst_ni: c != 0 && !rng.chance(1, 1000),
            ready_i: rng.chance(3, 4),
            req_i: rng.next() as u16 & if rng.chance(1, 8) { 0xffff } else { 0x7fff },
            len_i: [0; 16],
            credit_ok_i: (rng.next() | rng.next()) as u16,
        };
        let mut lens = Packed::new();
        for l in i.len_i.iter_mut() {
            // Lengths above 127 check that both sides see only the 7-bit lane.
            *l = rng.range(1, max_len) as u8;
            lens.push(u64::from(*l & 0x7f), 7);
        }
        let o = arb.step(&i);
        writeln!(
            w,
            "1 {} {} {} {} {} {} {} {}",
            h(i.rst_ni),
            h(i.ready_i),
            h(i.req_i),
            lens.hex(),
            h(i.credit_ok_i),
            h(o.gnt_valid_o),
            h(o.gnt_vl_o),
            h(o.gnt_high_o)
        )
        .map_err(io)?;
    }
    Ok(())
}
