//! `vl_arb` under co-simulation: stimulus, ports, configuration, RTL adapter.
//!
//! The stimulus models the output port: after a grant of `b` blocks the port is busy (`ready_i` low) for
//! about `b` cycles (back-pressure), sometimes longer; VLs request in phases (all busy, a few busy, idle) with
//! head lengths of 1-66 blocks (now and then garbage above the 7-bit lanes), credit is withheld at random
//! per VL, and VL15 requests now and then. Configurations: high and low tables of 0-64 entries with VLs
//! 0-14 and weights mostly small (so visits end often) including zeros (skipped entries), and VLHighLimit
//! 0, small, or 255 (unbounded). Rare resets of 1-3 cycles.
//!
//! Port traces of `vl_arb` carry the tables as their flattened held ports (`hi_vl_i=0x...` 256 bits,
//! `hi_weight_i=0x...` 512 bits, entries at or above `hi_n_i` zero), so recorded stimulus replays.

use super::{held, held_wide, Block};
use crate::check::CosimError;
use crate::cover::{bin, count, event, Cover, Hits, Point};
use crate::ports::Ports;
use crate::ports::Wide;
use crate::rng::Rng;
use rtl_model::blocks::vl_arb::{ArbEntry, Config, In, Out, VlArb, TABLE_MAX, VL_MAX};

impl Ports for In {
    const NAMES: &'static [&'static str] = &[
        "rst_ni",
        "ready_i",
        "req_i",
        "len_i",
        "credit_ok_i",
        "hold_i",
    ];

    fn get(&self, i: usize) -> Wide {
        match i {
            0 => self.rst_ni.into(),
            1 => self.ready_i.into(),
            2 => self.req_i.into(),
            // 16 lanes of 7 bits, lane 0 lowest, as the RTL's len_i[7v +: 7].
            3 => self
                .len_i
                .iter()
                .enumerate()
                .fold(0u128, |acc, (v, &l)| {
                    acc | (u128::from(l) & 0x7f) << (7 * v)
                })
                .into(),
            4 => self.credit_ok_i.into(),
            5 => self.hold_i.into(),
            _ => Wide::ZERO,
        }
    }

    fn from_values(v: &[Wide]) -> Self {
        let at = |k: usize| v.get(k).map_or(0, Wide::low_u128);
        let mut len_i = [0u8; 16];
        for (lane, l) in len_i.iter_mut().enumerate() {
            *l = ((at(3) >> (7 * lane)) & 0x7f) as u8;
        }
        In {
            rst_ni: at(0) != 0,
            ready_i: at(1) != 0,
            req_i: at(2) as u16,
            len_i,
            credit_ok_i: at(4) as u16,
            hold_i: at(5) != 0,
        }
    }
}

crate::impl_ports!(Out {
    gnt_valid_o,
    gnt_vl_o,
    gnt_high_o,
    cfg_err_o
});

/// `vl_arb` as a co-simulation [`Block`].
#[derive(Debug, Clone, Copy)]
pub struct VlArbBlock;

/// Seeded random stimulus for `vl_arb` (see the module docs).
#[derive(Debug, Clone)]
pub struct VlArbStim {
    rng: Rng,
    /// The model of the port: cycles it stays busy after a grant is unknown to the stimulus (it does not see
    /// the grant), so busy periods are drawn like packet lengths.
    busy: u32,
    active: u16,
    len: [u8; 16],
    phase_left: u32,
    rst_left: u32,
}

impl Iterator for VlArbStim {
    type Item = In;

    fn next(&mut self) -> Option<In> {
        let r = &mut self.rng;
        if self.rst_left == 0 && r.one_in(100_000) {
            self.rst_left = r.range(1, 3) as u32;
        }
        if self.rst_left > 0 {
            self.rst_left -= 1;
            let n = r.next_u64();
            return Some(In {
                rst_ni: false,
                ready_i: n & 1 != 0,
                req_i: (n >> 8) as u16,
                len_i: self.len,
                credit_ok_i: (n >> 24) as u16,
                hold_i: n & 2 != 0,
            });
        }
        if self.phase_left == 0 {
            self.active = match r.below(4) {
                0 => 0x7fff,
                1 => r.next_u64() as u16 & 0x7fff,
                2 => 1 << r.below(15),
                _ => 0,
            };
            self.phase_left = r.range(1, 400) as u32;
        }
        self.phase_left -= 1;
        // A head packet changes now and then (a new packet reached the head of the VL).
        if r.one_in(4) {
            let v = r.below(16) as usize;
            self.len[v] = if r.one_in(50) {
                r.next_u64() as u8
            } else {
                r.range(1, 66) as u8
            };
        }
        let ready = if self.busy > 0 {
            self.busy -= 1;
            false
        } else {
            if r.one_in(6) {
                self.busy = r.range(1, 33) as u32;
            }
            true
        };
        // Each active VL requests with probability 3/4 in a cycle.
        let mut req = self.active & !(r.next_u64() as u16 & r.next_u64() as u16);
        if r.one_in(200) {
            req |= 0x8000; // VL15 management packet
        }
        let credit = if r.pct(70) {
            0xffff
        } else {
            r.next_u64() as u16
        };
        // Now and then a proposal (a grant held, the state kept), as ib_switch's look-ahead allocator makes.
        let hold = ready && r.one_in(5);
        Some(In {
            rst_ni: true,
            ready_i: ready,
            req_i: req,
            len_i: self.len,
            credit_ok_i: credit,
            hold_i: hold,
        })
    }
}

/// A table as its flattened (VL, weight) ports: entry e at [4e +: 4] and [8e +: 8].
fn flatten(t: &[ArbEntry]) -> (Wide, Wide) {
    let (mut vl, mut w) = (Wide::ZERO, Wide::ZERO);
    for (e, a) in (0u32..).zip(t) {
        vl.set_field(4 * e, 4, a.vl.into());
        w.set_field(8 * e, 8, a.weight.into());
    }
    (vl, w)
}

fn random_table(r: &mut Rng) -> Vec<ArbEntry> {
    let n = match r.below(4) {
        0 => r.below(4),
        1 => r.range(1, 16),
        _ => r.range(1, TABLE_MAX as u64),
    };
    (0..n)
        .map(|_| {
            let weight = match r.below(10) {
                0 => 0,
                1..=6 => r.range(1, 8),
                _ => r.below(256),
            } as u8;
            ArbEntry::new(r.range(0, VL_MAX.into()) as u8, weight)
        })
        .collect()
}

impl Block for VlArbBlock {
    const NAME: &'static str = "vl_arb";
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = VlArb;
    type Stim = VlArbStim;
    type Cover = VlArbCover;

    fn model(cfg: &Config) -> Result<VlArb, CosimError> {
        VlArb::new(cfg.clone()).map_err(|e| CosimError::Config {
            block: Self::NAME,
            msg: e.to_string(),
        })
    }

    const CORNERS: u32 = 7;

    /// Corners: empty tables, full tables of weight 255, tables of weight 0 only, small weights over
    /// several VLs (a VL's weight runs out while it still has packets), VL_High_Limit 0 and unbounded, one
    /// entry per table.
    fn configure(seed: u64, corner: Option<u32>) -> (Config, VlArbStim) {
        let mut r = Rng::new(seed ^ 0x71a_4b00);
        let mut cfg = Config {
            high: random_table(&mut r),
            low: random_table(&mut r),
            vl_high_limit: match r.below(4) {
                0 => 0,
                1 => 255,
                _ => r.range(1, 4) as u8,
            },
        };
        let entries = |r: &mut Rng, n: usize, w: &dyn Fn(&mut Rng) -> u8| -> Vec<ArbEntry> {
            (0..n)
                .map(|_| {
                    let vl = r.range(0, VL_MAX.into()) as u8;
                    ArbEntry::new(vl, w(r))
                })
                .collect()
        };
        match corner {
            Some(0) => (cfg.high, cfg.low) = (Vec::new(), Vec::new()),
            Some(1) => {
                cfg.high = entries(&mut r, TABLE_MAX, &|_| 255);
                cfg.low = entries(&mut r, TABLE_MAX, &|_| 255);
            }
            Some(2) => {
                cfg.high = entries(&mut r, 8, &|_| 0);
                cfg.low = entries(&mut r, 8, &|_| 0);
            }
            Some(3) => {
                // Two or more VLs of weights 1-4 in each table (ArbEntry VLs from the draw, at least two).
                let small = |r: &mut Rng| r.range(1, 4) as u8;
                let (nh, nl) = (r.range(2, 8) as usize, r.range(2, 8) as usize);
                let mut h = entries(&mut r, nh, &small);
                let mut l = entries(&mut r, nl, &small);
                h[0] = ArbEntry::new(0, h[0].weight);
                h[1] = ArbEntry::new(1, h[1].weight);
                l[0] = ArbEntry::new(2, l[0].weight);
                l[1] = ArbEntry::new(3, l[1].weight);
                (cfg.high, cfg.low) = (h, l);
            }
            Some(4) => cfg.vl_high_limit = 0,
            Some(5) => cfg.vl_high_limit = 255,
            Some(_) => {
                let w = |r: &mut Rng| r.range(1, 255) as u8;
                cfg.high = entries(&mut r, 1, &w);
                cfg.low = entries(&mut r, 1, &w);
            }
            None => {}
        }
        let stim = VlArbStim {
            rng: Rng::new(seed),
            busy: 0,
            active: 0,
            len: [1; 16],
            phase_left: 0,
            rst_left: 0,
        };
        (cfg, stim)
    }

    fn config_ports(cfg: &Config) -> Vec<(&'static str, Wide)> {
        let (hi_vl, hi_w) = flatten(&cfg.high);
        let (lo_vl, lo_w) = flatten(&cfg.low);
        vec![
            ("hi_vl_i", hi_vl),
            ("hi_weight_i", hi_w),
            ("hi_n_i", (cfg.high.len() as u64).into()),
            ("lo_vl_i", lo_vl),
            ("lo_weight_i", lo_w),
            ("lo_n_i", (cfg.low.len() as u64).into()),
            ("vl_high_limit_i", cfg.vl_high_limit.into()),
        ]
    }

    /// Entries at or above a table's length must be zero: the RTL ignores them, so a trace carrying them
    /// would describe a configuration the Rust block cannot have.
    fn config_from_ports(v: &[(String, Wide)]) -> Result<Config, String> {
        let table = |vl: &str, w: &str, n: &str| -> Result<Vec<ArbEntry>, String> {
            let (vls, ws, len) = (held_wide(v, vl)?, held_wide(v, w)?, held(v, n)?);
            if len > TABLE_MAX as u64 {
                return Err(format!(
                    "{n} is {len}, above the {TABLE_MAX} entries of a table"
                ));
            }
            let t: Vec<ArbEntry> = (0..len as u32)
                .map(|e| ArbEntry::new(vls.field(4 * e, 4) as u8, ws.field(8 * e, 8) as u8))
                .collect();
            if flatten(&t) != (vls, ws) {
                return Err(format!("{vl}/{w} have entries at or above {n} ({len})"));
            }
            Ok(t)
        };
        let cfg = Config {
            high: table("hi_vl_i", "hi_weight_i", "hi_n_i")?,
            low: table("lo_vl_i", "lo_weight_i", "lo_n_i")?,
            vl_high_limit: held(v, "vl_high_limit_i")? as u8,
        };
        cfg.validate().map_err(|e| e.to_string())?;
        Ok(cfg)
    }

    #[cfg(feature = "verilator")]
    type Rtl = rtl::VlArbRtl;

    #[cfg(feature = "verilator")]
    fn rtl(cfg: &Config, bug: Option<&str>) -> Result<rtl::VlArbRtl, CosimError> {
        rtl::VlArbRtl::new(cfg, bug)
    }
}

/// `vl_arb`'s cover points.
#[derive(Debug, Clone, Copy)]
pub struct VlArbCover;

/// What `vl_arb`'s sampler keeps.
#[derive(Debug, Clone)]
pub struct VlArbCovState {
    /// (VL, weight) of each entry, high table then low.
    tables: [Vec<(u8, u8)>; 2],
    /// The block's current entry and blocks used in its visit, per table, before this cycle's edge.
    idx: [u8; 2],
    used: [u16; 2],
    /// The VL of the last grant (16: none since reset).
    last: u8,
}

impl Cover for VlArbCover {
    const POINTS: &'static [Point] = &[
        bin("tables_empty", "both tables empty"),
        bin("tables_full", "a table of 64 entries"),
        bin("weight_zero", "an entry of weight 0"),
        bin("weight_max", "an entry of weight 255"),
        bin("high_limit_zero", "VL_High_Limit 0"),
        bin("high_limit_unbounded", "VL_High_Limit 255 (no limit)"),
        event("grant", "a grant"),
        event("grant_high", "a grant from the high table"),
        event("grant_low", "a grant from the low table"),
        event("vl15_grant", "a VL15 packet granted"),
        event("vl15_over_table", "VL15 granted while a table VL could go"),
        event(
            "weight_used_up",
            "the grant leaves a VL that still has a packet and credit",
        ),
        event("request_without_credit", "a VL requests without credit"),
        event("reset", "a reset cycle"),
        event(
            "grant_moves_on",
            "the grant leaves a VL that still has a packet and credit",
        ),
    ];
    const EXPOSED_BY: &'static [(&'static str, &'static str)] = &[
        ("BUG_WEIGHT_UNIT", "weight_used_up"),
        ("BUG_VL15_PRIORITY", "vl15_over_table"),
        ("BUG_HIGH_LIMIT", "high_limit_zero"),
    ];
    type Config = Config;
    type In = In;
    type Out = Out;
    type Model = VlArb;
    type State = VlArbCovState;

    fn begin(c: &Config, h: &mut Hits) -> VlArbCovState {
        let all = || c.high.iter().chain(&c.low);
        count(h, 0, c.high.is_empty() && c.low.is_empty());
        count(h, 1, c.high.len() == TABLE_MAX || c.low.len() == TABLE_MAX);
        count(h, 2, all().any(|e| e.weight == 0));
        count(h, 3, all().any(|e| e.weight == 255));
        count(h, 4, c.vl_high_limit == 0);
        count(h, 5, c.vl_high_limit == 255);
        let t = |t: &[ArbEntry]| t.iter().map(|e| (e.vl, e.weight)).collect();
        VlArbCovState {
            tables: [t(&c.high), t(&c.low)],
            idx: [0; 2],
            used: [0; 2],
            last: 16,
        }
    }

    #[inline(always)]
    fn sample(st: &mut VlArbCovState, m: &VlArb, i: &In, o: &Out, h: &mut Hits) {
        let on = i.rst_ni;
        let cand = i.req_i & i.credit_ok_i;
        let g = on & o.gnt_valid_o;
        let last = st.last;
        count(h, 6, g);
        count(h, 7, g & o.gnt_high_o);
        count(h, 8, g & !o.gnt_high_o & (o.gnt_vl_o != 15));
        count(h, 9, g & (o.gnt_vl_o == 15));
        count(h, 10, g & (o.gnt_vl_o == 15) & (cand & 0x7fff != 0));
        // The current entry of a table (as the block clamps it) has used its weight and its VL could go on.
        let mut used_up = false;
        for (t, entries) in st.tables.iter().enumerate() {
            if let Some(&(vl, w)) =
                entries.get(usize::from(st.idx[t]).min(entries.len().max(1) - 1))
            {
                used_up |= (w != 0) & (st.used[t] >= u16::from(w)) & (cand >> (vl & 15) & 1 != 0);
            }
        }
        count(h, 11, on & i.ready_i & used_up);
        count(h, 12, on & (i.req_i & !i.credit_ok_i != 0));
        count(h, 13, !on);
        count(
            h,
            14,
            g & (last < 15) & (o.gnt_vl_o != last) & (cand >> (last & 15) & 1 != 0),
        );
        if g {
            st.last = o.gnt_vl_o;
        }
        if !on {
            st.last = 16;
        }
        st.idx = [m.hi_idx_q, m.lo_idx_q];
        st.used = [m.hi_used_q, m.lo_used_q];
    }
}

/// The adapter to the Verilated `vl_arb`.
#[cfg(feature = "verilator")]
pub mod rtl {
    use super::*;
    use crate::blocks::mask;
    use crate::dut::Dut;
    use crate::ffi::{Rtl, VlArbIo, VL_ARB_VARIANTS};
    use rtl_model::blocks::vl_arb::LEN_WIDTH;

    /// The Verilated `vl_arb` (clean or a bug variant) with its tables on the held ports.
    #[derive(Debug)]
    pub struct VlArbRtl {
        m: Rtl<VlArbIo>,
        io: VlArbIo,
    }

    /// A table as its flattened (VL, weight) port words.
    fn table(t: &[ArbEntry]) -> ([u32; 8], [u32; 16]) {
        let (vl, w) = flatten(t);
        let (mut a, mut b) = ([0u32; 8], [0u32; 16]);
        a.copy_from_slice(&vl.words()[..8]);
        b.copy_from_slice(&w.words()[..16]);
        (a, b)
    }

    impl VlArbRtl {
        /// Builds the model, drives the tables and applies one power-on reset edge.
        pub fn new(cfg: &Config, bug: Option<&str>) -> Result<Self, CosimError> {
            cfg.validate().map_err(|e| CosimError::Config {
                block: "vl_arb",
                msg: e.to_string(),
            })?;
            let m = Rtl::new("vl_arb", VL_ARB_VARIANTS, bug)?;
            let (hi_vl_i, hi_weight_i) = table(&cfg.high);
            let (lo_vl_i, lo_weight_i) = table(&cfg.low);
            let io = VlArbIo {
                hi_vl_i,
                hi_weight_i,
                hi_n_i: cfg.high.len() as u32,
                lo_vl_i,
                lo_weight_i,
                lo_n_i: cfg.low.len() as u32,
                vl_high_limit_i: cfg.vl_high_limit.into(),
                ..VlArbIo::default()
            };
            let mut s = VlArbRtl { m, io };
            s.step(&In::default())
                .map_err(|kind| CosimError::Halted { cycle: 0, kind })?;
            s.m.time_zero();
            Ok(s)
        }
    }

    impl VlArbRtl {
        /// Writes one cycle's inputs (masked to the port widths) into the port struct.
        #[inline]
        fn drive(&mut self, i: &In) {
            let io = &mut self.io;
            io.rst_ni = i.rst_ni.into();
            io.ready_i = i.ready_i.into();
            io.req_i = i.req_i.into();
            // 16 lanes of 7 bits packed in a u128, then split into the port's words.
            let packed = i.len_i.iter().enumerate().fold(0u128, |acc, (v, &l)| {
                acc | (u128::from(l) & mask(LEN_WIDTH) as u128) << (7 * v)
            });
            io.len_i = [
                packed as u32,
                (packed >> 32) as u32,
                (packed >> 64) as u32,
                (packed >> 96) as u32,
            ];
            io.credit_ok_i = i.credit_ok_i.into();
            io.hold_i = i.hold_i.into();
        }
    }

    crate::rtl_dut!(VlArbRtl [VlArbIo]: In => Out {
        gnt_valid_o: |v| *v != 0,
        gnt_vl_o: |v| *v as u8,
        gnt_high_o: |v| *v != 0,
        cfg_err_o: |v| *v as u8,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn len_lanes_pack_like_the_rtl_and_back() {
        let mut i = In {
            len_i: [0; 16],
            ..In::default()
        };
        for (v, l) in i.len_i.iter_mut().enumerate() {
            *l = (v as u8) * 8 + 1;
        }
        let packed = i.get(3);
        assert_eq!(packed.field(0, 7), 1);
        assert_eq!(packed.field(7 * 15, 7), 121);
        assert!(packed.fits(112));
        let vals: Vec<Wide> = (0..In::NAMES.len()).map(|k| i.get(k)).collect();
        assert_eq!(In::from_values(&vals), i);
        assert!(VlArbBlock::config_from_ports(&[]).is_err());
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;

    fn pairs(cfg: &Config) -> Vec<(String, Wide)> {
        crate::blocks::held_pairs::<VlArbBlock>(cfg)
    }

    #[test]
    fn tables_survive_the_held_ports() {
        for seed in 0..200 {
            let (cfg, _) = VlArbBlock::random(seed);
            assert_eq!(
                VlArbBlock::config_from_ports(&pairs(&cfg)).unwrap(),
                cfg,
                "seed {seed}"
            );
        }
    }

    #[test]
    fn entries_beyond_the_length_and_long_tables_are_refused() {
        let (mut cfg, _) = VlArbBlock::random(3);
        cfg.high = vec![ArbEntry::new(2, 5), ArbEntry::new(7, 9)];
        let mut p = pairs(&cfg);
        // hi_n_i = 1 leaves entry 1 (VL 7, weight 9) beyond the table.
        p[2].1 = Wide::from(1u8);
        let e = VlArbBlock::config_from_ports(&p).unwrap_err();
        assert!(e.contains("at or above hi_n_i"), "{e}");
        p[2].1 = Wide::from(65u8);
        let e = VlArbBlock::config_from_ports(&p).unwrap_err();
        assert!(e.contains("above the 64 entries"), "{e}");
    }
}
