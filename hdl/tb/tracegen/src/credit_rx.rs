//! `credit_rx` traces. Configuration line: `0 buf_blocks_i fc_interval_i fc_on_change_i fccl_cap_i`; cycle
//! line: `1 rst_ni blk_rx_i fc_valid_i fc_fctbs_i blk_free_i abr_o free_o fccl_o fc_send_o overflow_o
//! drain_err_o`.
//!
//! Stimulus: a transmitter sending blocks (up to 66 a cycle, mostly within the free space, now and then more:
//! `overflow_o`) and a drain freeing what is held (now and then more: `drain_err_o`); flow-control packets
//! carrying the transmitter's FCTBS (its blocks sent, so mostly equal to ABR, sometimes off), often in a
//! cycle with arriving blocks. Buffers from 1 block to far above the 2048-block cap, intervals from 1 cycle
//! to a few hundred, caps from 1 to 2048, either policy. Rare resets inside a segment.

use crate::io;
use crate::pack::{h, Rng};
use rtl_model::blocks::credit_rx::{Config, CreditRx, FcPolicy, In, FCCL_CAP};
use rtl_model::clocked::Clocked;
use std::io::Write;

/// One segment of `len` cycles under a fresh random configuration.
pub fn segment(rng: &mut Rng, len: u64, w: &mut dyn Write) -> Result<(), String> {
    let cfg = Config {
        buf_blocks: match rng.below(4) {
            0 => rng.range(1, 70),
            1 => rng.range(70, 2048),
            2 => rng.range(2049, 8000),
            _ => rng.range(1, 65535),
        } as u16,
        fc_interval: match rng.below(3) {
            0 => rng.range(1, 4),
            1 => rng.range(5, 300),
            _ => rng.range(1, 65535),
        } as u16,
        policy: if rng.chance(1, 2) {
            FcPolicy::Periodic
        } else {
            FcPolicy::PeriodicAndOnChange
        },
        fccl_cap: if rng.chance(1, 2) {
            FCCL_CAP
        } else {
            rng.range(1, u64::from(FCCL_CAP)) as u16
        },
    };
    let mut m = CreditRx::new(cfg).map_err(|e| e.to_string())?;
    writeln!(
        w,
        "0 {} {} {} {}",
        h(cfg.buf_blocks),
        h(cfg.fc_interval),
        h(u8::from(cfg.policy == FcPolicy::PeriodicAndOnChange)),
        h(cfg.fccl_cap)
    )
    .map_err(io)?;
    // The transmitter's FCTBS (12 bits), and percent of cycles with arrivals and with a drain.
    let mut fctbs = 0u16;
    let (mut rx_pct, mut free_pct) = (50, 50);
    for c in 0..len {
        if rng.chance(1, 300) {
            rx_pct = [0, 20, 60, 100][rng.below(4) as usize];
            free_pct = [0, 20, 60, 100][rng.below(4) as usize];
        }
        let held = u64::from(cfg.buf_blocks - m.free_q.min(cfg.buf_blocks));
        let free = u64::from(m.free_q);
        let rx = if rng.chance(rx_pct, 100) {
            if rng.chance(1, 200) {
                rng.range(0, 127)
            } else {
                rng.range(0, free.min(66))
            }
        } else {
            0
        } as u8;
        let drain = if rng.chance(free_pct, 100) {
            if rng.chance(1, 200) {
                rng.range(0, 127)
            } else {
                rng.range(0, (held + u64::from(rx)).min(127))
            }
        } else {
            0
        } as u8;
        let rst = c != 0 && !rng.chance(1, 5000);
        if !rst {
            fctbs = 0;
        }
        let fc = rng.chance(1, 20);
        let fc_fctbs = if rng.chance(1, 10) {
            rng.below(4096) as u16
        } else {
            fctbs
        };
        let i = In {
            rst_ni: rst,
            blk_rx_i: rx,
            fc_valid_i: fc,
            fc_fctbs_i: fc_fctbs,
            blk_free_i: drain,
        };
        if rst {
            fctbs = (fctbs + u16::from(rx)) & 0xfff;
        }
        let o = m.step(&i);
        writeln!(
            w,
            "1 {} {} {} {} {} {} {} {} {} {} {}",
            h(i.rst_ni),
            h(i.blk_rx_i),
            h(i.fc_valid_i),
            h(i.fc_fctbs_i),
            h(i.blk_free_i),
            h(o.abr_o),
            h(o.free_o),
            h(o.fccl_o),
            h(o.fc_send_o),
            h(o.overflow_o),
            h(o.drain_err_o)
        )
        .map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace reaches what the bug variants break: FCCL capped below the free space, flow-control packets
    /// with blocks arriving in the same cycle, periodic flow-control packets, and both error strobes.
    #[test]
    fn caps_bind_and_fc_packets_meet_arrivals() {
        let mut buf = Vec::new();
        for seed in 0..4 {
            segment(&mut Rng::new(seed), 5_000, &mut buf).unwrap();
        }
        let text = String::from_utf8(buf).unwrap();
        let (mut capped, mut fc_with_rx, mut sends, mut overflows, mut drain_errs) =
            (0, 0, 0, 0, 0);
        let mut cap = 0;
        for l in text.lines() {
            let t: Vec<u64> = l
                .split(' ')
                .map(|x| u64::from_str_radix(x, 16).unwrap())
                .collect();
            if t[0] == 0 {
                cap = t[4];
                continue;
            }
            let (rx, fc, abr, free, fccl) = (t[2], t[3], t[6], t[7], t[8]);
            capped += u32::from(free > cap && fccl == (abr + cap) % 4096);
            fc_with_rx += u32::from(fc == 1 && rx > 0);
            sends += t[9];
            overflows += t[10];
            drain_errs += t[11];
        }
        assert!(capped > 100, "{capped} capped cycles");
        assert!(fc_with_rx > 100, "{fc_with_rx}");
        assert!(
            sends > 100 && overflows > 5 && drain_errs > 5,
            "{sends} {overflows} {drain_errs}"
        );
    }
}
