//! The tandem's link-level flow control, made of rtl-model's clocked credit blocks: node 1 holds a
//! [`CreditTx`], node 2 a [`CreditRx`] whose buffer is `m` blocks, and every packet is one 64-byte block, so
//! a credit is a packet (per-packet credits). The receiver sends a flow-control packet whenever its FCCL
//! changes (`FcPolicy::PeriodicAndOnChange`) and the wire between them has no delay.
//!
//! The blocks are stepped only at cycles where something happens and skipped in between (their
//! `Clocked::skip`), so a run of 1e11 cycles costs a few steps per packet. Credit freed at cycle `t` reaches
//! the transmitter as a flow-control packet at `t + 1` (the receiver's output is registered) and can be used
//! from `t + 2` (so is the transmitter's): [`CREDIT_DELAY`] cycles, 2e-6 of a model time unit, which the
//! CTMC's "zero credit latency" does not resolve.

use rtl_model::blocks::credit_rx::{self, CreditRx, FcPolicy};
use rtl_model::blocks::credit_tx::{self, CreditTx};
use rtl_model::clocked::Clocked;

/// Cycles from a freed buffer slot to usable credit at the transmitter.
pub const CREDIT_DELAY: u64 = 2;

/// The credit blocks of one link and the inputs collected for the current cycle.
#[derive(Debug, Clone)]
pub struct Credits {
    tx: CreditTx,
    rx: CreditRx,
    /// The cycle whose inputs are being collected (every earlier cycle is stepped).
    cur: u64,
    take: u8,
    free: u8,
    /// Lossless violations and disagreements the blocks flagged (zero in a correct model).
    pub violations: u64,
}

impl Credits {
    /// Blocks for a downstream buffer of `m` packets, reset and with the initial credit delivered
    /// (cycles 0 and 1 are stepped).
    pub fn new(m: u16) -> Result<Self, String> {
        let mut cfg = credit_rx::Config::new(m, u16::MAX);
        cfg.policy = FcPolicy::PeriodicAndOnChange;
        let mut c = Credits {
            tx: CreditTx::new(credit_tx::Config::default()).map_err(|e| e.to_string())?,
            rx: CreditRx::new(cfg).map_err(|e| e.to_string())?,
            cur: 0,
            take: 0,
            free: 0,
            violations: 0,
        };
        c.at(CREDIT_DELAY);
        Ok(c)
    }

    fn cycle(&mut self) {
        let r = self.rx.step(&credit_rx::In {
            rst_ni: true,
            blk_rx_i: self.take,
            fc_valid_i: false,
            fc_fctbs_i: 0,
            blk_free_i: self.free,
        });
        let o = self.tx.step(&credit_tx::In {
            rst_ni: true,
            fc_valid_i: r.fc_send_o,
            fc_fccl_i: r.fccl_o,
            req_valid_i: self.take > 0,
            req_blocks_i: self.take,
            take_i: self.take > 0,
        });
        self.violations += u64::from(r.overflow_o || r.drain_err_o || o.err_o);
        self.take = 0;
        self.free = 0;
        self.cur += 1;
    }

    /// Moves to cycle `t` (not before the current one): steps the current cycle with its inputs, then the
    /// idle cycles up to `t`, one by one while a flow-control packet is due, skipped after that.
    pub fn at(&mut self, t: u64) {
        while self.cur < t {
            if self.take > 0 || self.free > 0 || self.rx.next_event() == Some(0) {
                self.cycle();
            } else {
                // Idle: only periodic packets with an unchanged FCCL, which the transmitter already has.
                self.rx.skip(t - self.cur);
                self.cur = t;
            }
        }
    }

    /// Whether the transmitter has credit for one more packet now.
    pub fn credit(&self) -> bool {
        let fctbs = self.tx.fctbs_q.wrapping_add(u16::from(self.take)) & 0xfff;
        credit_tx::fits(self.tx.fccl_q, fctbs, 1)
    }

    /// Node 1 sends a packet (one block) into node 2's buffer this cycle.
    pub fn send(&mut self) {
        self.take += 1;
    }

    /// Node 2 frees a buffer slot this cycle.
    pub fn drain(&mut self) {
        self.free += 1;
    }

    /// No input collected for the current cycle (the blocks' state is the whole story).
    pub fn settled(&self) -> bool {
        self.take == 0 && self.free == 0
    }

    /// Free blocks of node 2's buffer as the receiver holds them (after the stepped cycles).
    pub fn rx_free(&self) -> u16 {
        self.rx.free_q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// m = 2: two packets use the credit up; a drain at cycle 100 is usable from 102, not before.
    #[test]
    fn credit_per_packet_comes_back_after_the_delay() {
        let mut c = Credits::new(2).unwrap();
        assert!(c.credit());
        c.at(10);
        c.send();
        assert!(c.credit());
        c.at(20);
        c.send();
        assert!(!c.credit());
        c.at(100);
        c.drain();
        c.at(101);
        assert!(!c.credit(), "the flow-control packet is on its way");
        c.at(102);
        assert!(c.credit());
        c.send();
        c.at(1_000_000_000);
        assert!(!c.credit());
        assert_eq!((c.rx_free(), c.violations), (0, 0));
    }
}
