//! `fecn_marker` traces. Configuration line: `0 packet_size_i marking_rate_i mode_i lfsr_seed_i lfsr_thresh_i`;
//! cycle line: `1 rst_ni pkt_valid_i pkt_bytes_i mark_state_i mark_o`. `mode_i` is 0 Counter, 1 Lfsr (the
//! encoding in fecn_marker.sv).

use crate::io;
use crate::pack::{h, Rng};
use rtl_model::blocks::fecn_marker::{Config, FecnMarker, In, MarkMode};
use rtl_model::clocked::Clocked;
use std::io::Write;

/// One segment of `len` cycles under a fresh random configuration.
pub fn segment(rng: &mut Rng, len: u64, w: &mut dyn Write) -> Result<(), String> {
    let mode = if rng.chance(1, 2) {
        MarkMode::Counter
    } else {
        MarkMode::Lfsr
    };
    let cfg = Config {
        packet_size: match rng.below(4) {
            0 => 0,
            1 => 8,
            2 => rng.range(1, 127) as u8,
            _ => rng.below(256) as u8,
        },
        // Marking_Rate 0 marks every eligible packet: in LFSR mode no decision leaves one unmarked, so the
        // LFSR's advance on unmarked packets shows only at other rates; 0 is drawn in counter mode only.
        // Mostly rates that mark within a segment (a counter reloads, the LFSR leaves packets unmarked).
        marking_rate: match rng.below(8) {
            0 if mode == MarkMode::Counter => 0,
            0..=3 => rng.range(1, 5) as u16,
            4..=6 => rng.range(6, 200) as u16,
            _ => rng.next() as u16,
        },
        mode,
        lfsr_seed: rng.range(1, 0xffff) as u16,
    };
    let m = FecnMarker::new(cfg).map_err(|e| e.to_string())?;
    writeln!(
        w,
        "0 {} {} {} {} {}",
        h(cfg.packet_size),
        h(cfg.marking_rate),
        h(u8::from(cfg.mode == MarkMode::Lfsr)),
        h(cfg.lfsr_seed),
        h(m.lfsr_thresh())
    )
    .map_err(io)?;
    let mut m = m;
    let min_len = i64::from(cfg.packet_size) * 64;
    for c in 0..len {
        let bytes = if rng.chance(2, 3) {
            // Around the size boundary, within a block either side.
            (min_len + rng.range(0, 140) as i64 - 70).clamp(0, 0x1fff) as u16
        } else {
            rng.below(0x2000) as u16
        };
        // Bits above the 13-bit port, on the Rust side only: the model must mask them as the port does.
        let high = if rng.chance(1, 8) {
            0xe000 & rng.next() as u16
        } else {
            0
        };
        let i = In {
            rst_ni: c != 0 && !rng.chance(1, 1000),
            pkt_valid_i: rng.chance(3, 4),
            pkt_bytes_i: bytes | high,
            mark_state_i: rng.chance(7, 8),
        };
        let o = m.step(&i);
        writeln!(
            w,
            "1 {} {} {} {} {}",
            h(i.rst_ni),
            h(i.pkt_valid_i),
            h(bytes),
            h(i.mark_state_i),
            h(o.mark_o)
        )
        .map_err(io)?;
    }
    Ok(())
}
