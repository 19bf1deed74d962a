//! Flow-control packet state of a port: the last packet it sent on each VL ([`FcLast`], by which a sender
//! leaves off repeats) and the registers a packet is made from ([`FcSync`]).

use crate::blocks::credit_rx::CreditRx;
use crate::blocks::credit_tx::{CreditTx, FC_MOD};

/// The flow-control registers of one port and VL, as an observer (or a test comparing two ways of
/// stepping) reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FcSync {
    /// FCTBS this port sends (blocks it has sent, `credit_tx`).
    pub fctbs: u16,
    /// FCCL this port advertises now (`credit_rx`: ABR plus free space, capped).
    pub fccl: u16,
    /// FCCL of a flow-control packet waiting to be sent, if any.
    pub pending_fccl: Option<u16>,
    /// FCCL last received from the peer (`credit_tx`'s limit).
    pub peer_fccl: u16,
    /// ABR: blocks received (`credit_rx`).
    pub abr: u16,
}

impl FcSync {
    /// The state of a port-VL from its blocks and pending packet.
    pub fn of(crx: &CreditRx, ctx: &CreditTx, pending_fccl: Option<u16>) -> Self {
        let cap = crx.config().fccl_cap;
        FcSync {
            fctbs: ctx.fctbs_q,
            fccl: crx.abr_q.wrapping_add(crx.free_q.min(cap)) & (FC_MOD as u16 - 1),
            pending_fccl,
            peer_fccl: ctx.fccl_q,
            abr: crx.abr_q,
        }
    }
}

/// The last flow-control packet a port sent on a VL, forgotten when a packet head follows it: what a sender
/// that leaves off repeats (`Switch::set_fc_repeats_off`, `Endpoint::set_fc_repeats_off`) compares the next
/// one with.
///
/// # Why leaving a repeat off is exact
/// A flow-control packet for VL `v` carrying FCTBS `b` and FCCL `c` does two things at its receiver:
/// `credit_rx` sets ABR to `b` (before adding the blocks arriving in that cycle) and `credit_tx` latches `c`
/// as its limit. Nothing else changes ABR or the limit: ABR otherwise only grows by blocks received, the
/// limit only changes by flow-control packets (a fabric never resets a block). Let packet `k + 1` on a wire
/// carry the same `(b, c)` for `v` as packet `k`, with no packet head on the wire between them. After packet
/// `k` the limit is `c`, and no other flow-control packet for `v` came in between, so it is still `c`. ABR
/// was set to `b`, and every block received since belongs to a packet put on the wire after packet `k` (a
/// flow-control packet starts only after the previous packet's last byte, so every earlier packet's blocks
/// were in before it): there is none, so ABR is still `b`. Packet `k + 1` therefore sets both to the values
/// they have; only its wire time remains, which the sender still accounts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FcLast(u32);

impl FcLast {
    /// `1 << 31 | fctbs << 12 | fccl`: never 0, which is "none".
    fn word(fctbs: u16, fccl: u16) -> u32 {
        1 << 31 | u32::from(fctbs) << 12 | u32::from(fccl)
    }

    /// A packet is remembered (none after a packet head).
    pub fn is_some(self) -> bool {
        self.0 != 0
    }

    /// A packet carrying `fctbs` and `fccl` would repeat the last one.
    pub fn repeats(self, fctbs: u16, fccl: u16) -> bool {
        self.0 == Self::word(fctbs, fccl)
    }

    /// Remembers a packet sent; returns whether it repeated the last one.
    pub fn sent(&mut self, fctbs: u16, fccl: u16) -> bool {
        let repeat = self.repeats(fctbs, fccl);
        self.0 = Self::word(fctbs, fccl);
        repeat
    }

    /// A packet head went out: the next flow-control packet is news whatever it carries.
    pub fn forget(&mut self) {
        self.0 = 0;
    }
}
