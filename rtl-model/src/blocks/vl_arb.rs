//! `vl_arb`: InfiniBand VL arbitration for one output port: which VL starts the next packet.
//!
//! Two weighted round-robin tables (high and low priority, up to 64 entries of (VL, weight) each, weight in
//! 64-byte blocks, 0 = skip, as in VLArbitrationTable) and the VLHighLimit (units of 4 KB = 64 blocks;
//! 255 = unbounded; 0 = one high packet before a waiting low packet may go). Facts from the reference
//! ("VL arbitration, SL2VL, credits") and the Mellanox-derived OMNeT model (`vlarb.cc`).
//!
//! | port            | dir | width  | meaning                                                                |
//! |-----------------|-----|--------|------------------------------------------------------------------------|
//! | `rst_ni`        | in  | 1      | synchronous reset, active low                                          |
//! | `ready_i`       | in  | 1      | the output is idle: a packet may start this cycle                      |
//! | `req_i`         | in  | 16     | bit v: VL v has a head packet                                          |
//! | `len_i`         | in  | 16 x 7 | head packet length of each VL in 64-byte blocks                        |
//! | `credit_ok_i`   | in  | 16     | bit v: VL v has credit for its head packet (bit 15 ignored)            |
//! | `hold_i`        | in  | 1      | give the grant but keep the state (a proposal committed later)         |
//! | `gnt_valid_o`   | out | 1      | a packet starts this cycle                                             |
//! | `gnt_vl_o`      | out | 4      | its VL                                                                 |
//! | `gnt_high_o`    | out | 1      | it was granted from the high table (0 for VL15)                        |
//!
//! State: `hi_idx_q`, `lo_idx_q` (6 bits: current entry), `hi_used_q`, `lo_used_q` (9 bits: blocks granted in
//! the current visit of that entry), `hi_cnt_q` (16 bits, saturating: high blocks granted while a low packet
//! was eligible since the last low grant).
//!
//! Rules, in priority order, evaluated only when `ready_i`:
//! 1. VL15 (management) goes first and needs no credit; it touches no table state.
//! 2. A table entry is a candidate if its weight is nonzero and its VL requests with credit (VLs without credit
//!    are skipped). The current entry keeps the grant while `used < weight`; otherwise the first candidate after
//!    it (wrapping, the current entry last) starts a fresh visit with `used = 0`.
//! 3. High table first, unless the high limit is reached and a low candidate exists: then low. The limit is
//!    reached when `vl_high_limit != 255 && hi_cnt_q != 0 && hi_cnt_q >= 64 * vl_high_limit`.
//!
//! Designer choices, named:
//! - Whole packets: a grant is for a whole packet and a started packet always finishes, so a visit can
//!   overdraw its weight by up to one packet minus one block. The overdraft is *not carried*
//!   ([`DEFICIT_CARRIED`] = false): a fresh visit starts at `used = 0`, as the OMNeT model resets `used` when
//!   it moves on. Hence each visit grants between `weight` and `weight + max packet - 1` blocks, and over `R`
//!   table rounds a VL gets its table weight share within one maximum packet per entry per round.
//! - Eligibility is `used < weight` (exactly `weight` blocks before the entry yields, at packet granularity);
//!   the OMNeT model uses `used <= weight`, one block more.
//! - High limit counting ([`HIGH_COUNT_ONLY_WHILE_LOW_WAITS`] = true): `hi_cnt_q` counts high blocks only when
//!   a low candidate existed at the grant (the limit bounds how long a waiting low packet waits; OMNeT counts
//!   every high block). It resets only when a low packet is granted, and holds otherwise.
//! - A limit of 0 lets one high packet go (`hi_cnt_q == 0`) before a waiting low packet; the limit check is
//!   made before a packet starts, so a high packet may run past the limit by up to one packet.
//! - Work conserving: if the limit is reached but no low candidate exists, high is still granted.

use super::{check_max, flag, mask, ConfigError};
use crate::clocked::Clocked;

/// Most entries in each table.
pub const TABLE_MAX: usize = 64;
/// Highest VL an arbitration entry may name (VL15 bypasses the tables).
pub const VL_MAX: u8 = 14;
/// `vl_high_limit` value meaning "no limit".
pub const HIGH_LIMIT_UNBOUNDED: u8 = 255;
/// Blocks per unit of `vl_high_limit` (4 KB / 64 B).
pub const HIGH_LIMIT_UNIT_BLOCKS: u16 = 64;
/// Width of each `len_i` lane, bits.
pub const LEN_WIDTH: u32 = 7;
/// Width of `hi_used_q`/`lo_used_q`: weight (<= 255) plus one packet (<= 127) fits in 9 bits.
pub const USED_WIDTH: u32 = 9;
/// The overdraft of a visit is not carried into the next visit of the entry.
pub const DEFICIT_CARRIED: bool = false;
/// `hi_cnt_q` counts high blocks only while a low candidate waits.
pub const HIGH_COUNT_ONLY_WHILE_LOW_WAITS: bool = true;

/// One VLArbitrationTable entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArbEntry {
    /// The VL (0..=14).
    pub vl: u8,
    /// Weight in 64-byte blocks; 0 skips the entry.
    pub weight: u8,
}

impl ArbEntry {
    /// An entry.
    pub const fn new(vl: u8, weight: u8) -> Self {
        ArbEntry { vl, weight }
    }
}

/// Static configuration (held-constant ports in the RTL).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// High-priority table (VLArbHighCap entries, at most 64).
    pub high: Vec<ArbEntry>,
    /// Low-priority table (VLArbLowCap entries, at most 64).
    pub low: Vec<ArbEntry>,
    /// VLHighLimit in 4 KB units; 255 unbounded; 0 one packet.
    pub vl_high_limit: u8,
}

/// `cfg_err_o` bit: the high table has more than [`TABLE_MAX`] entries.
pub const CFG_ERR_HIGH_LONG: u8 = 1 << 0;
/// `cfg_err_o` bit: the low table has more than [`TABLE_MAX`] entries.
pub const CFG_ERR_LOW_LONG: u8 = 1 << 1;
/// `cfg_err_o` bit: a high entry names VL 15.
pub const CFG_ERR_HIGH_VL15: u8 = 1 << 2;
/// `cfg_err_o` bit: a low entry names VL 15.
pub const CFG_ERR_LOW_VL15: u8 = 1 << 3;
/// Width of `cfg_err_o`, bits.
pub const CFG_ERR_WIDTH: u32 = 4;

impl Config {
    /// The arbiter of a port whose VLArbitrationTable (and VLHighLimit) is `t`.
    pub fn from_table(t: &crate::mad::vlarb::VlArbTable) -> Self {
        let conv = |l: &[crate::mad::vlarb::VlArbEntry]| -> Vec<ArbEntry> {
            l.iter().map(|e| ArbEntry::new(e.vl, e.weight)).collect()
        };
        Config {
            high: conv(&t.high),
            low: conv(&t.low),
            vl_high_limit: t.high_limit,
        }
    }

    /// The VLs this arbiter can grant: bit v set when VL v has an entry of nonzero weight in either table
    /// (among the first [`TABLE_MAX`]). A VL requesting with credit is granted some time exactly when its bit
    /// is set, and a step with `ready_i` grants exactly when some candidate has its bit set (the arbiter is
    /// work conserving).
    pub fn granted_vls(&self) -> u16 {
        self.high
            .iter()
            .take(TABLE_MAX)
            .chain(self.low.iter().take(TABLE_MAX))
            .filter(|e| e.weight != 0 && e.vl <= VL_MAX)
            .fold(0, |m, e| m | 1 << e.vl)
    }

    /// The configuration rules this configuration breaks, a bit per rule ([`CFG_ERR_HIGH_LONG`],
    /// [`CFG_ERR_LOW_LONG`], [`CFG_ERR_HIGH_VL15`], [`CFG_ERR_LOW_VL15`]): what the RTL shows on `cfg_err_o`
    /// for these held ports (entries' VLs as their 4-bit ports carry them; the RTL sees the first
    /// [`TABLE_MAX`] entries). [`Config::validate`] refuses exactly the configurations with a bit set, among
    /// those the ports carry (VLs up to 15, at most 127 entries).
    pub fn cfg_err(&self) -> u8 {
        let vl15 = |t: &[ArbEntry]| t.iter().take(TABLE_MAX).any(|e| e.vl & 0xf == 15);
        flag(self.high.len() > TABLE_MAX, CFG_ERR_HIGH_LONG)
            | flag(self.low.len() > TABLE_MAX, CFG_ERR_LOW_LONG)
            | flag(vl15(&self.high), CFG_ERR_HIGH_VL15)
            | flag(vl15(&self.low), CFG_ERR_LOW_VL15)
    }

    /// Checks table sizes and VLs.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, t) in [("vl_arb_high", &self.high), ("vl_arb_low", &self.low)] {
            check_max(name, t.len() as u64, TABLE_MAX as u64)?;
            for (index, e) in t.iter().enumerate() {
                if e.vl > VL_MAX {
                    return Err(ConfigError::EntryAbove {
                        table: name,
                        index,
                        field: "vl",
                        value: e.vl.into(),
                        limit: VL_MAX.into(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Input ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Reset, active low.
    pub rst_ni: bool,
    /// The output may start a packet.
    pub ready_i: bool,
    /// VLs with a head packet.
    pub req_i: u16,
    /// Head packet length per VL in blocks (7 bits each).
    pub len_i: [u8; 16],
    /// VLs with credit for their head packet (bit 15 ignored).
    pub credit_ok_i: u16,
    /// The outputs are this cycle's grant but the state does not move: a switch that proposes a grant in one
    /// cycle and commits it in a later one (the same inputs without `hold_i`, on the same state) gets the
    /// grant it proposed.
    pub hold_i: bool,
}

/// Output ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// A packet starts.
    pub gnt_valid_o: bool,
    /// Its VL (0 when no grant).
    pub gnt_vl_o: u8,
    /// Granted from the high table.
    pub gnt_high_o: bool,
    /// Configuration rules broken ([`Config::cfg_err`]): 0 for every block built, as [`Config::validate`]
    /// refuses the rest; the RTL computes it from its held ports.
    pub cfg_err_o: u8,
}

/// An arbiter's tables and what is derived from them: constant once built, and shared by the arbiters of
/// ports with one table ([`VlArb::sharing`]).
#[derive(Debug, PartialEq, Eq)]
struct Tables {
    /// Per table (high, low): for each VL, the entries naming it with a nonzero weight, as bits. Derived from
    /// `cfg` once; not state: rule 2's candidate search becomes mask operations instead of a table scan.
    by_vl: [[u64; 15]; 2],
    cfg: Config,
}

/// The VL arbiter of one output port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlArb {
    /// The tables, constant: behind a pointer so that the ports of a switch with one table read one copy (a
    /// switch of 36 ports kept 36 copies of 300 bytes and more, each read cold by its port's grants).
    tables: std::sync::Arc<Tables>,
    /// Current high-table entry.
    pub hi_idx_q: u8,
    /// Current low-table entry.
    pub lo_idx_q: u8,
    /// Blocks granted in the current high entry's visit.
    pub hi_used_q: u16,
    /// Blocks granted in the current low entry's visit.
    pub lo_used_q: u16,
    /// High blocks granted while a low packet was eligible, since the last low grant.
    pub hi_cnt_q: u16,
}

/// For each VL, the entries of `table` naming it with a nonzero weight, as bits (at most 64 entries).
fn entries_by_vl(table: &[ArbEntry]) -> [u64; 15] {
    let mut by_vl = [0u64; 15];
    for (j, e) in table.iter().enumerate() {
        if e.weight != 0 {
            if let Some(m) = by_vl.get_mut(usize::from(e.vl)) {
                *m |= 1 << j;
            }
        }
    }
    by_vl
}

/// The table entry that gets the next grant, and whether it starts a fresh visit: [`pick_scan`] with the
/// candidate entries as a mask (`by_vl` from [`entries_by_vl`]), so the first candidate after the current
/// entry is a priority encode instead of a scan.
fn pick(
    table: &[ArbEntry],
    by_vl: &[u64; 15],
    idx: u8,
    used: u16,
    cand: u16,
) -> Option<(u8, bool)> {
    let n = table.len();
    let mut entries = 0u64;
    let mut c = cand & 0x7fff;
    while c != 0 {
        entries |= by_vl[c.trailing_zeros() as usize];
        c &= c - 1;
    }
    if n == 0 || entries == 0 {
        return None;
    }
    let cur = usize::from(idx).min(n - 1);
    if entries >> cur & 1 != 0 && used < u16::from(table[cur].weight) {
        return Some((cur as u8, false));
    }
    // Entries after the current one first (bits above `cur`), the current one last (wrapping).
    let after = entries & (!1u64 << cur);
    let j = if after != 0 { after } else { entries }.trailing_zeros();
    Some((j as u8, true))
}

/// The table scan [`pick`] replaces, as the RTL describes it; the tests compare the two.
#[cfg(test)]
fn pick_scan(table: &[ArbEntry], idx: u8, used: u16, cand: u16) -> Option<(u8, bool)> {
    let n = table.len();
    if n == 0 {
        return None;
    }
    let is_cand = |e: &ArbEntry| e.weight != 0 && cand & (1 << e.vl) != 0;
    let cur = usize::from(idx).min(n - 1);
    let e = &table[cur];
    if is_cand(e) && used < u16::from(e.weight) {
        return Some((cur as u8, false));
    }
    // Rotate-and-priority-encode in the RTL: entries after the current one first, the current one last.
    let mut j = cur;
    for _ in 0..n {
        j += 1;
        if j == n {
            j = 0;
        }
        if is_cand(&table[j]) {
            return Some((j as u8, true));
        }
    }
    None
}

impl VlArb {
    /// Builds the block in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Self::reset_with(std::sync::Arc::new(Tables {
            by_vl: [entries_by_vl(&cfg.high), entries_by_vl(&cfg.low)],
            cfg,
        })))
    }

    /// The block in its reset state with `tables`.
    fn reset_with(tables: std::sync::Arc<Tables>) -> Self {
        VlArb {
            tables,
            hi_idx_q: 0,
            lo_idx_q: 0,
            hi_used_q: 0,
            lo_used_q: 0,
            hi_cnt_q: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.tables.cfg
    }

    /// An arbiter in its reset state with this one's tables, sharing them rather than copying them: for the
    /// ports of a switch with one VLArbitrationTable.
    pub fn sharing(&self) -> Self {
        Self::reset_with(std::sync::Arc::clone(&self.tables))
    }

    fn high_limit_reached(&self) -> bool {
        let lim = self.tables.cfg.vl_high_limit;
        lim != HIGH_LIMIT_UNBOUNDED
            && self.hi_cnt_q != 0
            && self.hi_cnt_q >= u16::from(lim) * HIGH_LIMIT_UNIT_BLOCKS
    }
}

impl Clocked for VlArb {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        if i.hold_i && i.rst_ni {
            let saved = (
                self.hi_idx_q,
                self.lo_idx_q,
                self.hi_used_q,
                self.lo_used_q,
                self.hi_cnt_q,
            );
            let o = self.grant(i);
            (
                self.hi_idx_q,
                self.lo_idx_q,
                self.hi_used_q,
                self.lo_used_q,
                self.hi_cnt_q,
            ) = saved;
            return o;
        }
        self.grant(i)
    }

    fn idle_input(&self) -> In {
        In {
            rst_ni: true,
            ..In::default()
        }
    }

    fn skip(&mut self, _n: u64) {
        // Without ready_i nothing moves.
    }
}

impl VlArb {
    /// The grant of `i` in this state, the state moved as a grant moves it (`step` without `hold_i`).
    #[inline(always)]
    fn grant(&mut self, i: &In) -> Out {
        if !i.rst_ni {
            self.hi_idx_q = 0;
            self.lo_idx_q = 0;
            self.hi_used_q = 0;
            self.lo_used_q = 0;
            self.hi_cnt_q = 0;
            return Out::default();
        }
        if !i.ready_i {
            return Out::default();
        }
        if i.req_i & 0x8000 != 0 {
            return Out {
                gnt_valid_o: true,
                gnt_vl_o: 15,
                gnt_high_o: false,
                cfg_err_o: 0,
            };
        }
        let cand = i.req_i & i.credit_ok_i & 0x7fff;
        let hi = pick(
            &self.tables.cfg.high,
            &self.tables.by_vl[0],
            self.hi_idx_q,
            self.hi_used_q,
            cand,
        );
        let lo = pick(
            &self.tables.cfg.low,
            &self.tables.by_vl[1],
            self.lo_idx_q,
            self.lo_used_q,
            cand,
        );
        let len = |vl: u8| u16::from(i.len_i[usize::from(vl)]) & mask(LEN_WIDTH) as u16;
        let used_mask = mask(USED_WIDTH) as u16;
        match (hi, lo) {
            (Some((j, fresh)), lo) if lo.is_none() || !self.high_limit_reached() => {
                let vl = self.tables.cfg.high[usize::from(j)].vl;
                let base = if fresh { 0 } else { self.hi_used_q };
                self.hi_idx_q = j;
                self.hi_used_q = (base + len(vl)) & used_mask;
                if lo.is_some() {
                    self.hi_cnt_q = self.hi_cnt_q.saturating_add(len(vl));
                }
                Out {
                    gnt_valid_o: true,
                    gnt_vl_o: vl,
                    gnt_high_o: true,
                    cfg_err_o: 0,
                }
            }
            (_, Some((j, fresh))) => {
                let vl = self.tables.cfg.low[usize::from(j)].vl;
                let base = if fresh { 0 } else { self.lo_used_q };
                self.lo_idx_q = j;
                self.lo_used_q = (base + len(vl)) & used_mask;
                self.hi_cnt_q = 0;
                Out {
                    gnt_valid_o: true,
                    gnt_vl_o: vl,
                    gnt_high_o: false,
                    cfg_err_o: 0,
                }
            }
            _ => Out::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Largest packet length the properties draw, in blocks.
    const MAX_LEN: u16 = 65;

    fn all(len: [u8; 16]) -> In {
        In {
            rst_ni: true,
            ready_i: true,
            req_i: 0x7fff,
            len_i: len,
            credit_ok_i: 0xffff,
            hold_i: false,
        }
    }

    fn grants(arb: &mut VlArb, i: &In, n: usize) -> Vec<(u8, bool)> {
        (0..n)
            .map(|_| {
                let o = arb.step(i);
                assert!(o.gnt_valid_o);
                (o.gnt_vl_o, o.gnt_high_o)
            })
            .collect()
    }

    #[test]
    fn weighted_round_with_overdraft_and_skip() {
        // low: VL0 w2, VL1 w1, VL2 w0 (skipped), VL3 w3. Lengths VL0 1, VL1 2, VL3 2.
        // VL0: 1 (<2) then 2; VL1: 2 (overdraws 1); VL3: 2 (<3) then 4 (overdraws 1); wrap.
        let mut arb = VlArb::new(Config {
            low: vec![
                ArbEntry::new(0, 2),
                ArbEntry::new(1, 1),
                ArbEntry::new(2, 0),
                ArbEntry::new(3, 3),
            ],
            ..Config::default()
        })
        .unwrap();
        let mut len = [0u8; 16];
        len[0] = 1;
        len[1] = 2;
        len[2] = 1;
        len[3] = 2;
        let vls: Vec<u8> = grants(&mut arb, &all(len), 10)
            .iter()
            .map(|g| g.0)
            .collect();
        assert_eq!(vls, [0, 0, 1, 3, 3, 0, 0, 1, 3, 3]);
    }

    #[test]
    fn vls_without_credit_are_skipped_and_vl15_bypasses() {
        let mut arb = VlArb::new(Config {
            low: vec![ArbEntry::new(0, 10), ArbEntry::new(1, 10)],
            ..Config::default()
        })
        .unwrap();
        let mut i = all([1; 16]);
        i.credit_ok_i = 0b10;
        assert_eq!(arb.step(&i).gnt_vl_o, 1);
        i.req_i |= 0x8000;
        i.credit_ok_i = 0; // VL15 needs no credit
        let o = arb.step(&i);
        assert_eq!((o.gnt_valid_o, o.gnt_vl_o, o.gnt_high_o), (true, 15, false));
        i.req_i = 0x0003;
        assert!(!arb.step(&i).gnt_valid_o);
        i.ready_i = false;
        i.credit_ok_i = 0xffff;
        assert!(!arb.step(&i).gnt_valid_o);
        assert_eq!((arb.lo_idx_q, arb.lo_used_q), (1, 1));
    }

    fn limit_pattern(limit: u8, n: usize) -> Vec<bool> {
        let mut arb = VlArb::new(Config {
            high: vec![ArbEntry::new(1, 255)],
            low: vec![ArbEntry::new(0, 255)],
            vl_high_limit: limit,
        })
        .unwrap();
        let mut len = [0u8; 16];
        len[0] = 10;
        len[1] = 30;
        grants(&mut arb, &all(len), n).iter().map(|g| g.1).collect()
    }

    #[test]
    fn high_limit_counts_blocks_while_low_waits() {
        // Limit 1 = 64 blocks: high packets of 30 blocks start at counts 0, 30, 60 (all < 64), reaching 90.
        assert_eq!(
            limit_pattern(1, 8),
            [true, true, true, false, true, true, true, false]
        );
        // Limit 0: one high packet, then the waiting low one.
        assert_eq!(limit_pattern(0, 6), [true, false, true, false, true, false]);
        assert_eq!(limit_pattern(255, 5), [true; 5]);
    }

    #[test]
    fn high_count_holds_while_no_low_packet_waits() {
        let mut arb = VlArb::new(Config {
            high: vec![ArbEntry::new(1, 255)],
            low: vec![ArbEntry::new(0, 255)],
            vl_high_limit: 0,
        })
        .unwrap();
        let mut i = all([5; 16]);
        i.req_i = 0b10;
        for _ in 0..4 {
            assert!(arb.step(&i).gnt_high_o);
        }
        assert_eq!(arb.hi_cnt_q, 0);
        i.req_i = 0b11;
        assert!(arb.step(&i).gnt_high_o);
        assert_eq!(arb.hi_cnt_q, 5);
        assert!(!arb.step(&i).gnt_high_o);
        assert_eq!(arb.hi_cnt_q, 0);
    }

    #[test]
    fn a_sharing_arbiter_starts_reset_and_grants_as_a_built_one() {
        let cfg = Config {
            high: vec![ArbEntry::new(0, 2), ArbEntry::new(1, 1)],
            low: vec![ArbEntry::new(2, 3)],
            vl_high_limit: 1,
        };
        let mut a = VlArb::new(cfg.clone()).unwrap();
        let _ = grants(&mut a, &all([4; 16]), 3);
        let mut shared = a.sharing();
        let mut built = VlArb::new(cfg).unwrap();
        assert_eq!(shared, built);
        for len in [[1u8; 16], [2; 16], [5; 16]] {
            let i = all(len);
            assert_eq!(grants(&mut shared, &i, 7), grants(&mut built, &i, 7));
        }
    }

    #[test]
    fn config_rejects_vl15_and_big_tables() {
        let e = VlArb::new(Config {
            low: vec![ArbEntry::new(3, 1), ArbEntry::new(15, 1)],
            ..Config::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "vl_arb_low[1].vl (15) is above the maximum (14)"
        );
        assert!(VlArb::new(Config {
            high: vec![ArbEntry::new(0, 1); 65],
            ..Config::default()
        })
        .is_err());
    }

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    fn entries(max: usize) -> impl Strategy<Value = Vec<ArbEntry>> {
        proptest::collection::vec(
            (0u8..=14, prop_oneof![Just(0u8), 1u8..=8, any::<u8>()])
                .prop_map(|(vl, weight)| ArbEntry { vl, weight }),
            0..=max,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// The mask search picks what the table scan picks, for any table, current entry, use and requests.
        #[test]
        fn pick_equals_the_table_scan(
            table in entries(TABLE_MAX),
            idx in 0u8..64,
            used in 0u16..300,
            cand in any::<u16>(),
        ) {
            let by_vl = entries_by_vl(&table);
            prop_assert_eq!(pick(&table, &by_vl, idx, used, cand), pick_scan(&table, idx, used, cand));
        }

        /// All VLs always requesting with random lengths 1..=65 and credit: the low table is served entry by
        /// entry, each visit grants between `weight` and `weight + 64` blocks, and after `R` rounds every VL
        /// has between `R * W_v` and `R * (W_v + n_v * 64)` blocks (`W_v` its summed weight, `n_v` its entries):
        /// its weight share within one maximum packet per entry per round.
        #[test]
        fn share_matches_weights(table in entries(TABLE_MAX), seed in any::<u64>()) {
            let nz: Vec<ArbEntry> = table.iter().copied().filter(|e| e.weight != 0).collect();
            let mut arb = VlArb::new(Config { low: table, ..Config::default() }).unwrap();
            let mut rng = seed | 1;
            let mut w = [0u64; 16];
            let mut n = [0u64; 16];
            for e in &nz {
                w[usize::from(e.vl)] += u64::from(e.weight);
                n[usize::from(e.vl)] += 1;
            }
            let mut blocks = [0u64; 16];
            let (mut ptr, mut acc, mut rounds) = (0usize, 0u16, 0u64);
            for _ in 0..1500 {
                let mut i = all([0; 16]);
                for l in i.len_i.iter_mut() {
                    *l = (xorshift(&mut rng) % u64::from(MAX_LEN) + 1) as u8;
                }
                let o = arb.step(&i);
                prop_assert_eq!(o.gnt_valid_o, !nz.is_empty());
                if nz.is_empty() {
                    break;
                }
                let e = nz[ptr];
                prop_assert_eq!(o.gnt_vl_o, e.vl, "entry order");
                let len = u16::from(i.len_i[usize::from(o.gnt_vl_o)]);
                blocks[usize::from(e.vl)] += u64::from(len);
                acc += len;
                if acc >= u16::from(e.weight) {
                    prop_assert!(acc < u16::from(e.weight) + MAX_LEN, "visit overdrew more than a packet");
                    acc = 0;
                    ptr += 1;
                    if ptr == nz.len() {
                        ptr = 0;
                        rounds += 1;
                        for v in 0..16 {
                            prop_assert!(blocks[v] >= rounds * w[v]);
                            prop_assert!(blocks[v] <= rounds * (w[v] + n[v] * u64::from(MAX_LEN - 1)),
                                "vl {} got {} blocks in {} rounds of weight {}", v, blocks[v], rounds, w[v]);
                        }
                    }
                }
            }
        }

        /// Random tables, requests, credits and readiness: grants only when ready, only to requesting VLs,
        /// only with credit (except VL15), VL15 first, from the table the grant says, work conserving, and a
        /// waiting low packet sees at most the high limit plus one packet of high blocks.
        #[test]
        fn grants_are_legal_and_high_limit_holds(
            high in entries(TABLE_MAX),
            low in entries(TABLE_MAX),
            limit in prop_oneof![Just(0u8), 1u8..=3, Just(255u8), any::<u8>()],
            seed in any::<u64>(),
        ) {
            let mut arb = VlArb::new(Config { high: high.clone(), low: low.clone(), vl_high_limit: limit }).unwrap();
            let mut rng = seed | 1;
            let in_table = |t: &[ArbEntry], vl: u8| t.iter().any(|e| e.weight != 0 && e.vl == vl);
            let any_cand = |t: &[ArbEntry], cand: u16| t.iter().any(|e| e.weight != 0 && cand & (1 << e.vl) != 0);
            let (mut hi_blocks, mut hi_pkts) = (0u64, 0u64);
            for _ in 0..300 {
                let r = xorshift(&mut rng);
                let mut i = In {
                    rst_ni: r & 63 != 0,
                    ready_i: r & 0x300 != 0,
                    req_i: (xorshift(&mut rng) & 0xffff) as u16 & if r & 0x400 != 0 { 0x7fff } else { 0xffff },
                    len_i: [0; 16],
                    credit_ok_i: (xorshift(&mut rng) & 0xffff) as u16,
                    hold_i: false,
                };
                for l in i.len_i.iter_mut() {
                    *l = (xorshift(&mut rng) % u64::from(MAX_LEN) + 1) as u8;
                }
                let o = if r & 0x800 != 0 && i.rst_ni {
                    // A held step (a proposal) gives the grant the committing step then gives, and moves
                    // nothing.
                    let before = (arb.hi_idx_q, arb.lo_idx_q, arb.hi_used_q, arb.lo_used_q, arb.hi_cnt_q);
                    let h = arb.step(&In { hold_i: true, ..i });
                    let after = (arb.hi_idx_q, arb.lo_idx_q, arb.hi_used_q, arb.lo_used_q, arb.hi_cnt_q);
                    prop_assert_eq!(before, after, "a held step moved the state");
                    let o = arb.step(&i);
                    prop_assert_eq!(h, o, "the commit differs from the proposal");
                    o
                } else {
                    arb.step(&i)
                };
                if !i.rst_ni {
                    prop_assert!(!o.gnt_valid_o);
                    hi_blocks = 0;
                    hi_pkts = 0;
                    continue;
                }
                let cand = i.req_i & i.credit_ok_i & 0x7fff;
                let hi_cand = any_cand(&high, cand);
                let lo_cand = any_cand(&low, cand);
                let vl15 = i.req_i & 0x8000 != 0;
                prop_assert_eq!(o.gnt_valid_o, i.ready_i && (vl15 || hi_cand || lo_cand), "work conserving");
                if !o.gnt_valid_o {
                    continue;
                }
                let v = o.gnt_vl_o;
                prop_assert!(i.req_i & (1 << v) != 0, "granted a VL that is not requesting");
                if vl15 {
                    prop_assert_eq!((v, o.gnt_high_o), (15, false));
                    continue;
                }
                prop_assert!(i.credit_ok_i & (1 << v) != 0, "granted a VL without credit");
                let table = if o.gnt_high_o { &high } else { &low };
                prop_assert!(in_table(table, v));
                if !o.gnt_high_o {
                    hi_blocks = 0;
                    hi_pkts = 0;
                } else if lo_cand {
                    hi_blocks += u64::from(i.len_i[usize::from(v)]);
                    hi_pkts += 1;
                    if limit == 0 {
                        prop_assert!(hi_pkts <= 1, "limit 0 lets only one high packet pass a waiting low one");
                    } else if limit != HIGH_LIMIT_UNBOUNDED {
                        prop_assert!(hi_blocks < u64::from(limit) * 64 + u64::from(MAX_LEN),
                            "{} high blocks passed a waiting low packet, limit {}", hi_blocks, limit);
                    }
                }
            }
        }
    }
}
