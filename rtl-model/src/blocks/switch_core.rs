//! `switch_core`: a small switch composed of the blocks of this module, the twin of `hdl/switch_core.sv`.
//!
//! [`N_PORTS`] ports and [`N_VL`] data VLs: per input VL a [`CreditRx`], per output VL a [`CreditTx`], a
//! [`CongDetect`] and a [`FecnMarker`], per output a [`VlArb`]. Packets are descriptors (byte lengths); the
//! payload is not stored. It is what a user validates as a whole against the RTL: the same blocks, composed
//! the same way, cycle by cycle. switch-asic's `Switch` composes the same blocks at fabric scale with more
//! features (any port count, SL-to-VL mapping, forwarding tables, a shared buffer); this one is small enough
//! to synthesise and co-simulate.
//!
//! Ports are the RTL's, packed the same way (lane `p` of a per-port vector at bits `[w*p, w*p + w)`, lane
//! `(p, v)` of a per-port-VL vector is lane `p * N_VL + v`), so the co-simulation drives both sides with one
//! struct. The composition, in the order one cycle evaluates it (designer choices, documented in the RTL):
//! - Descriptors (byte lengths) live in one pool of [`BUF_MAX`] slots per input VL, shared by that input
//!   VL's VoQs (i, o, v), each a linked list through the pool (head, tail, count) plus its fill in 64-byte
//!   blocks. An arrival takes the lowest free slot (free as of the cycle's start; a slot dequeued this cycle
//!   is free from the next). Lossless by construction: every queued packet holds at least one buffer block
//!   in `credit_rx` until it is granted, and `buf_blocks <= BUF_MAX` ([`Config::validate`]), so a sender
//!   that keeps to its credit always finds a slot. Only an arrival beyond the credit (`credit_rx`
//!   `overflow_o`) can find the pool empty, and a packet of 0 bytes (it would hold no block) or longer than
//!   the 7-bit block count describes (above [`BYTES_MAX`]) is malformed: both are dropped (`drop_o`), their blocks received and freed in
//!   the same cycle, so the credit loop stays whole.
//! - Head of (o, v): the first non-empty VoQ (i, o, v) from a round-robin pointer, which moves past the
//!   input granted.
//! - `credit_tx` (o, v) checks the head's blocks (`send_ok_o` is the arbiter's `credit_ok_i`); the grant of
//!   `vl_arb` o is the take. An output is ready when `out_ready_i` and it is not streaming.
//! - A granted packet streams one block a cycle for `blocks` cycles after the grant cycle; each block is
//!   freed in `credit_rx` of its input VL. The VoQ fill drops by the packet's blocks at the grant.
//! - `cong_detect` (o, v) sees the registered fills of the VoQs (i, o, v) and `credit_tx`'s `avail_o`;
//!   `fecn_marker` (o, v) marks the granted packet with `cong_detect`'s `mark_state_o`.

use super::cong_detect::{self, CongDetect};
use super::credit_rx::{self, CreditRx};
use super::credit_tx::{self, fits, CreditTx};
use super::fecn_marker::{self, FecnMarker};
use super::vl_arb::{self, VlArb};
use super::ConfigError;
use crate::clocked::Clocked;

/// Ports of the switch.
pub const N_PORTS: usize = 4;
/// Data VLs (VL15 is not modelled).
pub const N_VL: usize = 2;
/// Descriptor slots of each input VL's pool, and the largest `buf_blocks` the switch accepts (each queued
/// packet holds at least one block, so no sender within its credit can find the pool empty).
pub const BUF_MAX: usize = 128;
/// Bits of a slot number.
pub const SLOT_WIDTH: u32 = 7;
/// Longest packet, bytes: 127 blocks, the most the 7-bit block ports carry (an IB packet is at most 4,222).
pub const BYTES_MAX: u16 = 127 * 64;
/// Bits of a port number.
pub const PORT_WIDTH: u32 = 2;
/// Bits of a VL number.
pub const VL_WIDTH: u32 = 1;
/// Bits of a packet length in bytes.
pub const BYTES_WIDTH: u32 = 13;
/// Entries of each VL arbitration table the RTL has room for.
pub const ARB_TABLE_MAX: usize = 4;

const N_PV: usize = N_PORTS * N_VL;
const N_Q: usize = N_PORTS * N_PORTS * N_VL;

/// The configuration: one setting per block kind, shared by every port or port-VL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Every input VL's `credit_rx`.
    pub rx: credit_rx::Config,
    /// Every output VL's `credit_tx`.
    pub tx: credit_tx::Config,
    /// Every output's `vl_arb` (tables of at most [`ARB_TABLE_MAX`] entries).
    pub arb: vl_arb::Config,
    /// Every output VL's `cong_detect`.
    pub cong: cong_detect::Config,
    /// Every output VL's `fecn_marker`.
    pub mark: fecn_marker::Config,
}

impl Config {
    /// Checks every block's configuration and the table sizes the RTL has room for.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.rx.validate()?;
        self.tx.validate()?;
        self.arb.validate()?;
        self.cong.validate()?;
        self.mark.validate()?;
        super::check_above(
            "buf_blocks",
            self.rx.buf_blocks.into(),
            "the slots of a descriptor pool",
            BUF_MAX as u64,
        )?;
        for (table, t) in [
            ("vl_arb_high", &self.arb.high),
            ("vl_arb_low", &self.arb.low),
        ] {
            super::check_above(table, t.len() as u64, "the entries", ARB_TABLE_MAX as u64)?;
        }
        Ok(())
    }
}

/// Input ports, packed as the RTL's (see the module docs). Bits beyond a port's width are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct In {
    /// Synchronous reset, active low.
    pub rst_ni: bool,
    /// Bit p: a packet starts arriving on input p.
    pub pkt_valid_i: u8,
    /// Lane p ([`VL_WIDTH`] bits): its VL.
    pub pkt_vl_i: u8,
    /// Lane p ([`BYTES_WIDTH`] bits): its length in bytes.
    pub pkt_bytes_i: u64,
    /// Lane p ([`PORT_WIDTH`] bits): its output port.
    pub pkt_dst_i: u8,
    /// Bit p: a flow-control packet arrived on port p.
    pub fc_valid_i: u8,
    /// Lane p: its VL.
    pub fc_vl_i: u8,
    /// Lane p (12 bits): its FCTBS, for `credit_rx` of input p.
    pub fc_fctbs_i: u64,
    /// Lane p (12 bits): its FCCL, for `credit_tx` of output p.
    pub fc_fccl_i: u64,
    /// Bit p: output p's link may start a packet.
    pub out_ready_i: u8,
}

/// Output ports, packed as the RTL's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    /// Bit p: a packet starts on output p.
    pub out_valid_o: u8,
    /// Lane p: its VL (0 without a packet).
    pub out_vl_o: u8,
    /// Lane p: its input port.
    pub out_src_o: u8,
    /// Lane p: its length in bytes.
    pub out_bytes_o: u64,
    /// Bit p: its FECN mark.
    pub out_fecn_o: u8,
    /// Lane (p, v): `credit_rx` sends a flow-control packet.
    pub fc_send_o: u8,
    /// Lane (p, v), 12 bits: the FCCL it advertises.
    pub fccl_o: u128,
    /// Lane (p, v), 12 bits: `credit_tx` `avail_o`.
    pub avail_o: u128,
    /// Lane (p, v): `cong_detect` `mark_state_o`.
    pub mark_state_o: u8,
    /// Lane (p, v): `credit_tx` `err_o`.
    pub tx_err_o: u8,
    /// Lane (p, v): `credit_rx` `overflow_o`.
    pub overflow_o: u8,
    /// Bit p: input p's packet was dropped: its pool had no free slot (it came beyond its credit), or it
    /// was longer than [`BYTES_MAX`].
    pub drop_o: u8,
}

/// Lane `k` of width `w` of a packed vector.
pub fn lane(v: u128, k: usize, w: u32) -> u64 {
    ((v >> (w as usize * k)) as u64) & ((1u64 << w) - 1)
}

/// Sets lane `k` of width `w` of a packed vector to `x` (truncated to `w` bits).
pub fn set_lane(v: &mut u128, k: usize, w: u32, x: u64) {
    let m = ((1u128 << w) - 1) << (w as usize * k);
    *v = (*v & !m) | ((u128::from(x) << (w as usize * k)) & m);
}

/// Blocks of a packet of `bytes` bytes (13 bits): ceil(bytes / 64), saturating at 127, the most the 7-bit
/// block ports carry (a packet that long is dropped as malformed).
pub fn blocks_of(bytes: u16) -> u8 {
    (((bytes & 0x1fff) + 63) >> 6).min(127) as u8
}

/// Every slot of a pool free.
const ALL_FREE: u128 = u128::MAX >> (128 - BUF_MAX);

/// VoQ index of (input, output, VL), as the RTL numbers them.
const fn qi(i: usize, o: usize, v: usize) -> usize {
    (i * N_PORTS + o) * N_VL + v
}

/// The switch: its blocks and the composition state (VoQ FIFOs, streaming outputs, round-robin pointers).
#[derive(Debug, Clone)]
pub struct SwitchCore {
    cfg: Config,
    rx: Vec<CreditRx>,
    tx: Vec<CreditTx>,
    arb: Vec<VlArb>,
    cong: Vec<CongDetect>,
    mark: Vec<FecnMarker>,
    /// Descriptor pools per input VL (byte lengths, next slot of the VoQ's list); not reset, as RAM.
    mem: Box<[[u16; BUF_MAX]; N_PV]>,
    nxt: Box<[[u8; BUF_MAX]; N_PV]>,
    /// Free slots of each pool, bit per slot.
    free: [u128; N_PV],
    /// Head slot, tail slot and count of each VoQ's list.
    hd: [u8; N_Q],
    tl: [u8; N_Q],
    cnt: [u8; N_Q],
    /// Blocks held per VoQ.
    pub fill: [u16; N_Q],
    busy: [u8; N_PORTS],
    bsrc: [u8; N_PORTS],
    bvl: [u8; N_PORTS],
    rr: [u8; N_PV],
}

impl SwitchCore {
    /// The switch in its reset state.
    pub fn new(cfg: Config) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let rx = (0..N_PV)
            .map(|_| CreditRx::new(cfg.rx))
            .collect::<Result<_, _>>()?;
        let tx = (0..N_PV)
            .map(|_| CreditTx::new(cfg.tx))
            .collect::<Result<_, _>>()?;
        let arb = (0..N_PORTS)
            .map(|_| VlArb::new(cfg.arb.clone()))
            .collect::<Result<_, _>>()?;
        let cong = (0..N_PV)
            .map(|_| CongDetect::new(cfg.cong))
            .collect::<Result<_, _>>()?;
        let mark = (0..N_PV)
            .map(|_| FecnMarker::new(cfg.mark))
            .collect::<Result<_, _>>()?;
        Ok(SwitchCore {
            cfg,
            rx,
            tx,
            arb,
            cong,
            mark,
            mem: Box::new([[0; BUF_MAX]; N_PV]),
            nxt: Box::new([[0; BUF_MAX]; N_PV]),
            free: [ALL_FREE; N_PV],
            hd: [0; N_Q],
            tl: [0; N_Q],
            cnt: [0; N_Q],
            fill: [0; N_Q],
            busy: [0; N_PORTS],
            bsrc: [0; N_PORTS],
            bvl: [0; N_PORTS],
            rr: [0; N_PV],
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    fn reset_state(&mut self) {
        self.free = [ALL_FREE; N_PV];
        self.hd = [0; N_Q];
        self.tl = [0; N_Q];
        self.cnt = [0; N_Q];
        self.fill = [0; N_Q];
        self.busy = [0; N_PORTS];
        self.bsrc = [0; N_PORTS];
        self.bvl = [0; N_PORTS];
        self.rr = [0; N_PV];
    }
}

impl Clocked for SwitchCore {
    type In = In;
    type Out = Out;

    // Inlinable across crates: the co-simulation steps it in its per-cycle loop.
    #[inline]
    fn step(&mut self, i: &In) -> Out {
        let rst = i.rst_ni;
        let vl_m = (1u8 << VL_WIDTH) - 1;
        let lane_u8 = |v: u8, k: usize, w: u32| lane64(v.into(), k, w) as u8;
        let bit = |v: u8, k: usize| v >> k & 1 != 0;

        // Heads of the output VLs.
        let (mut has, mut sel, mut hbytes, mut hblk) =
            ([false; N_PV], [0u8; N_PV], [0u16; N_PV], [0u8; N_PV]);
        for o in 0..N_PORTS {
            for v in 0..N_VL {
                let ov = o * N_VL + v;
                // The first non-empty VoQ from the pointer on, as a rotate and a bit scan of the non-empty
                // inputs (the search loop's exit was a mispredicted branch per output VL).
                let mut full = 0u32;
                for p in 0..N_PORTS {
                    full |= u32::from(self.cnt[qi(p, o, v)] != 0) << p;
                }
                let r = u32::from(self.rr[ov]) % N_PORTS as u32;
                let rot = ((full >> r) | (full << (N_PORTS as u32 - r))) & ((1 << N_PORTS) - 1);
                if rot != 0 {
                    let p = (r + rot.trailing_zeros()) as usize % N_PORTS;
                    let q = qi(p, o, v);
                    has[ov] = true;
                    sel[ov] = p as u8;
                    hbytes[ov] = self.mem[p * N_VL + v][usize::from(self.hd[q])];
                }
                hblk[ov] = blocks_of(hbytes[ov]);
            }
        }

        // Arbitration: credit_tx's send check (combinational from its state and the request) feeds vl_arb.
        let mut o_ = Out::default();
        let (mut gnt, mut gvl) = ([false; N_PORTS], [0usize; N_PORTS]);
        for (o, arb) in self.arb.iter_mut().enumerate() {
            let mut a = vl_arb::In {
                rst_ni: rst,
                ready_i: bit(i.out_ready_i, o) && self.busy[o] == 0,
                ..vl_arb::In::default()
            };
            for v in 0..N_VL {
                let ov = o * N_VL + v;
                let t = &self.tx[ov];
                let ok = has[ov] && fits(t.fccl_q, t.fctbs_q, hblk[ov]);
                a.req_i |= u16::from(has[ov]) << v;
                a.credit_ok_i |= u16::from(ok) << v;
                a.len_i[v] = hblk[ov];
            }
            let g = arb.step(&a);
            gnt[o] = g.gnt_valid_o;
            gvl[o] = usize::from(g.gnt_vl_o & vl_m);
        }

        let mut blk_free = [0u8; N_PV];
        let mut avail = [0u16; N_PV];
        let mut take = [false; N_PV];
        for o in 0..N_PORTS {
            let fc_vl = usize::from(lane_u8(i.fc_vl_i, o, VL_WIDTH));
            for v in 0..N_VL {
                let ov = o * N_VL + v;
                take[ov] = gnt[o] && gvl[o] == v;
                let t = self.tx[ov].step(&credit_tx::In {
                    rst_ni: rst,
                    fc_valid_i: bit(i.fc_valid_i, o) && fc_vl == v,
                    fc_fccl_i: lane64(i.fc_fccl_i, o, 12) as u16,
                    req_valid_i: has[ov],
                    req_blocks_i: hblk[ov],
                    take_i: take[ov],
                });
                avail[ov] = t.avail_o;
                o_.tx_err_o |= u8::from(t.err_o) << ov;
            }
            if self.busy[o] != 0 {
                let l = usize::from(self.bsrc[o]) * N_VL + usize::from(self.bvl[o]);
                blk_free[l] = (blk_free[l] + 1) & 0x7f;
                self.busy[o] -= 1;
            }
        }

        // Congestion state and marking of the output VLs.
        let mut lanes = [0u16; N_PORTS];
        let mut mark = [false; N_PV];
        for ov in 0..N_PV {
            let (o, v) = (ov / N_VL, ov % N_VL);
            for (k, l) in lanes.iter_mut().enumerate() {
                *l = self.fill[qi(k, o, v)];
            }
            let c = self.cong[ov].step_with(&cong_detect::In {
                rst_ni: rst,
                voq_fill_i: &lanes,
                credit_avail_i: avail[ov],
            });
            o_.mark_state_o |= u8::from(c.mark_state_o) << ov;
            mark[ov] = self.mark[ov]
                .step(&fecn_marker::In {
                    rst_ni: rst,
                    pkt_valid_i: take[ov],
                    pkt_bytes_i: hbytes[ov],
                    mark_state_i: c.mark_state_o,
                })
                .mark_o;
        }

        // Grants: the packet starts, its VoQ dequeues (its slot is free from the next cycle), the output
        // streams it.
        let mut cnt_d = self.cnt;
        let mut fill_d = self.fill;
        let mut free_d = self.free;
        for o in 0..N_PORTS {
            if !gnt[o] {
                continue;
            }
            let ov = o * N_VL + gvl[o];
            let q = qi(usize::from(sel[ov]), o, gvl[o]);
            o_.out_valid_o |= 1 << o;
            set_lane8(&mut o_.out_vl_o, o, VL_WIDTH, gvl[o] as u8);
            set_lane8(&mut o_.out_src_o, o, PORT_WIDTH, sel[ov]);
            set_lane64(&mut o_.out_bytes_o, o, BYTES_WIDTH, hbytes[ov].into());
            o_.out_fecn_o |= u8::from(mark[ov]) << o;
            self.busy[o] = hblk[ov];
            self.bsrc[o] = sel[ov];
            self.bvl[o] = gvl[o] as u8;
            self.rr[ov] = (sel[ov] + 1) % N_PORTS as u8;
            let pool = usize::from(sel[ov]) * N_VL + gvl[o];
            let h = self.hd[q];
            free_d[pool] |= 1 << h;
            self.hd[q] = self.nxt[pool][usize::from(h)];
            cnt_d[q] -= 1;
            fill_d[q] = fill_d[q].wrapping_sub(hblk[ov].into());
        }

        // Arrivals: enqueue at the lowest slot free at the cycle's start, or drop; credit_rx counts them and
        // frees what streamed (and what was dropped).
        let mut blk_rx = [0u8; N_PV];
        for p in 0..N_PORTS {
            let pv = usize::from(lane_u8(i.pkt_vl_i, p, VL_WIDTH));
            let bytes = lane64(i.pkt_bytes_i, p, BYTES_WIDTH) as u16;
            let b = blocks_of(bytes);
            let q = qi(p, usize::from(lane_u8(i.pkt_dst_i, p, PORT_WIDTH)), pv);
            if bit(i.pkt_valid_i, p) {
                let l = p * N_VL + pv;
                blk_rx[l] = b;
                if self.free[l] == 0 || bytes == 0 || bytes > BYTES_MAX {
                    o_.drop_o |= u8::from(rst) << p;
                    blk_free[l] = (blk_free[l] + b) & 0x7f;
                } else {
                    let slot = self.free[l].trailing_zeros() as u8;
                    free_d[l] &= !(1 << slot);
                    self.mem[l][usize::from(slot)] = bytes;
                    if cnt_d[q] == 0 {
                        self.hd[q] = slot;
                    } else {
                        self.nxt[l][usize::from(self.tl[q])] = slot;
                    }
                    self.tl[q] = slot;
                    cnt_d[q] += 1;
                    fill_d[q] = fill_d[q].wrapping_add(b.into());
                }
            }
        }
        let mut fccl = [0u16; N_PV];
        for (l, rx) in self.rx.iter_mut().enumerate() {
            let (p, v) = (l / N_VL, l % N_VL);
            let fc_vl = usize::from(lane_u8(i.fc_vl_i, p, VL_WIDTH));
            let r = rx.step(&credit_rx::In {
                rst_ni: rst,
                blk_rx_i: blk_rx[l],
                fc_valid_i: bit(i.fc_valid_i, p) && fc_vl == v,
                fc_fctbs_i: lane64(i.fc_fctbs_i, p, 12) as u16,
                blk_free_i: blk_free[l],
            });
            o_.fc_send_o |= u8::from(r.fc_send_o) << l;
            fccl[l] = r.fccl_o;
            o_.overflow_o |= u8::from(r.overflow_o) << l;
        }
        // Every lane of these two is written once a cycle: packed at the end, with constant shifts.
        o_.avail_o = pack12(&avail);
        o_.fccl_o = pack12(&fccl);
        self.cnt = cnt_d;
        self.fill = fill_d;
        self.free = free_d;
        if !rst {
            self.reset_state();
        }
        o_
    }

    fn idle_input(&self) -> In {
        In {
            rst_ni: true,
            out_ready_i: (1 << N_PORTS) - 1,
            ..In::default()
        }
    }
}

fn set_lane8(v: &mut u8, k: usize, w: u32, x: u8) {
    let mut t = u64::from(*v);
    set_lane64(&mut t, k, w, x.into());
    *v = t as u8;
}

/// [`lane`] of a vector of at most 64 bits (`w * (k + 1) <= 64`): the per-cycle path's lanes, without the
/// variable 128-bit shifts that were a fifth of [`SwitchCore`]'s step.
#[inline]
fn lane64(v: u64, k: usize, w: u32) -> u64 {
    (v >> (w as usize * k)) & ((1u64 << w) - 1)
}

/// [`set_lane`] of a vector of at most 64 bits (`w * (k + 1) <= 64`).
#[inline]
fn set_lane64(v: &mut u64, k: usize, w: u32, x: u64) {
    let m = ((1u64 << w) - 1) << (w as usize * k);
    *v = (*v & !m) | ((x << (w as usize * k)) & m);
}

/// The 12-bit lanes `a[k]` (truncated) packed as lane `k` of a vector.
#[inline]
fn pack12(a: &[u16; N_PV]) -> u128 {
    a.iter()
        .enumerate()
        .fold(0, |v, (k, &x)| v | u128::from(x & 0xfff) << (12 * k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::vl_arb::ArbEntry;

    fn cfg() -> Config {
        Config {
            rx: credit_rx::Config::new(BUF_MAX as u16, 64),
            tx: credit_tx::Config { fccl_reset: 300 },
            arb: vl_arb::Config {
                high: vec![],
                low: vec![ArbEntry::new(0, 8), ArbEntry::new(1, 8)],
                vl_high_limit: 255,
            },
            cong: cong_detect::Config::new(200),
            mark: fecn_marker::Config::default(),
        }
    }

    fn pkt(p: usize, vl: u8, bytes: u16, dst: u8) -> In {
        let mut i = In {
            rst_ni: true,
            out_ready_i: 0xf,
            pkt_valid_i: 1 << p,
            ..In::default()
        };
        set_lane8(&mut i.pkt_vl_i, p, VL_WIDTH, vl);
        set_lane8(&mut i.pkt_dst_i, p, PORT_WIDTH, dst);
        let mut b = 0u128;
        set_lane(&mut b, p, BYTES_WIDTH, bytes.into());
        i.pkt_bytes_i = b as u64;
        i
    }

    #[test]
    fn a_packet_crosses_from_input_to_output_and_its_credit_returns() {
        let mut s = SwitchCore::new(cfg()).unwrap();
        let idle = s.idle_input();
        let o = s.step(&pkt(1, 1, 300, 2));
        assert_eq!(o.out_valid_o, 0, "enqueued this cycle, granted next");
        let o = s.step(&idle);
        assert_eq!(o.out_valid_o, 1 << 2);
        assert_eq!(lane(o.out_src_o.into(), 2, PORT_WIDTH), 1);
        assert_eq!(lane(o.out_vl_o.into(), 2, VL_WIDTH), 1);
        assert_eq!(lane(o.out_bytes_o.into(), 2, BYTES_WIDTH), 300);
        // 300 bytes are 5 blocks: credit of output 2 VL 1 drops by 5 at the grant.
        let o = s.step(&idle);
        assert_eq!(lane(o.avail_o, 2 * N_VL + 1, 12), 295);
        assert_eq!(
            s.rx[N_VL + 1].free_q,
            BUF_MAX as u16 - 4,
            "5 blocks received, one streamed and freed"
        );
        for _ in 0..10 {
            s.step(&idle);
        }
        assert_eq!(s.rx[N_VL + 1].free_q, BUF_MAX as u16, "every block freed");
        assert_eq!(s.fill, [0; N_Q]);
    }

    /// The bench of a link partner that keeps to the credit rule (IBA: it sends a packet of b blocks only
    /// while (FCCL - (FCTBS + b)) mod 4096 <= 2048) into an output held not-ready: every packet is queued,
    /// none dropped and no credit overrun, until the buffer is full; then they all leave, in order.
    #[test]
    fn a_sender_within_its_credit_is_never_dropped() {
        for (buf, bytes) in [(BUF_MAX as u16, 64u16), (100, 64), (128, 300), (70, 4224)] {
            let mut c = cfg();
            c.rx = credit_rx::Config::new(buf, 16);
            let mut s = SwitchCore::new(c).unwrap();
            let b = blocks_of(bytes);
            let (mut fccl, mut fctbs, mut sent, mut left, mut held) =
                (0u16, 0u16, 0usize, 0usize, 0);
            let mut link = 0u8;
            for cycle in 0..6000 {
                // Held for 2,000 cycles, then released; no new packets in the last 1,000.
                let mut i = if cycle < 5000 && link == 0 && fits(fccl, fctbs, b) {
                    sent += 1;
                    fctbs = (fctbs + u16::from(b)) % 4096;
                    link = b;
                    pkt(0, 0, bytes, 3)
                } else {
                    s.idle_input()
                };
                link = link.saturating_sub(1);
                i.out_ready_i = if cycle >= 2000 { 0xf } else { 0 };
                // The far end of output 3 returns credit every 16 cycles: 1,024 blocks beyond what left.
                if cycle % 16 == 0 {
                    i.fc_valid_i |= 1 << 3;
                    let lim = (left * usize::from(b) + 1024) % 4096;
                    let mut v = u128::from(i.fc_fccl_i);
                    set_lane(&mut v, 3, 12, lim as u64);
                    i.fc_fccl_i = v as u64;
                }
                if cycle == 1999 {
                    held = sent;
                }
                let o = s.step(&i);
                assert_eq!(o.drop_o, 0, "buf {buf} bytes {bytes} cycle {cycle}");
                assert_eq!(o.overflow_o, 0, "buf {buf} bytes {bytes} cycle {cycle}");
                left += (o.out_valid_o >> 3 & 1) as usize;
                if o.fc_send_o & 1 != 0 {
                    fccl = lane(o.fccl_o, 0, 12) as u16;
                }
            }
            assert_eq!(
                held,
                usize::from(buf / u16::from(b)),
                "buf {buf}: the buffer's worth while held"
            );
            assert!(sent > 2 * held, "buf {buf}: {sent} sent");
            assert_eq!(left, sent, "buf {buf}: every packet left");
        }
    }

    /// A sender that ignores its credit finds the pool empty after `BUF_MAX` queued packets: those beyond
    /// are dropped (and `credit_rx` flags the overrun); a packet longer than the block ports is dropped too.
    #[test]
    fn arrivals_beyond_credit_and_overlong_packets_are_dropped() {
        let mut s = SwitchCore::new(cfg()).unwrap();
        let mut i = pkt(0, 0, 64, 3);
        i.out_ready_i = 0;
        let mut drops = 0;
        for _ in 0..BUF_MAX + 2 {
            drops += u32::from(s.step(&i).drop_o);
        }
        assert_eq!(drops, 2);
        assert_eq!(s.fill[qi(0, 3, 0)], BUF_MAX as u16);
        let mut s = SwitchCore::new(cfg()).unwrap();
        for (bytes, drop) in [(BYTES_MAX, 0), (BYTES_MAX + 1, 1 << 1), (0, 1 << 1)] {
            let mut i = pkt(1, 0, bytes, 0);
            i.out_ready_i = 0;
            assert_eq!(s.step(&i).drop_o, drop, "{bytes} bytes");
        }
        assert_eq!(s.fill[qi(1, 0, 0)], 127);
    }

    /// Interleaved arrivals for several outputs share one pool and leave each in its own order.
    #[test]
    fn voqs_sharing_a_pool_keep_their_order() {
        let mut s = SwitchCore::new(cfg()).unwrap();
        for k in 0..12u16 {
            let mut i = pkt(2, (k % 2) as u8, 64 * (k + 1), (k % 3) as u8);
            i.out_ready_i = 0;
            assert_eq!(s.step(&i).drop_o, 0);
        }
        let mut seen: Vec<(u64, u64, u64)> = Vec::new();
        for _ in 0..400 {
            let o = s.step(&s.idle_input());
            for p in 0..N_PORTS {
                if o.out_valid_o >> p & 1 != 0 {
                    let k = lane(o.out_bytes_o.into(), p, BYTES_WIDTH) / 64 - 1;
                    seen.push((p as u64, lane(o.out_vl_o.into(), p, VL_WIDTH), k));
                }
            }
        }
        assert_eq!(seen.len(), 12);
        for (p, v) in (0..3u64).flat_map(|p| (0..2u64).map(move |v| (p, v))) {
            let ks: Vec<u64> = seen
                .iter()
                .filter(|x| (x.0, x.1) == (p, v))
                .map(|x| x.2)
                .collect();
            assert_eq!(ks.len(), 2, "output {p} VL {v}");
            assert!(ks[0] < ks[1], "output {p} VL {v}: {ks:?}");
            assert!(ks.iter().all(|k| k % 3 == p && k % 2 == v));
        }
        assert_eq!(s.free, [ALL_FREE; N_PV]);
    }

    #[test]
    fn lanes_round_trip_and_truncate() {
        let mut v = 0u128;
        set_lane(&mut v, 7, 12, 0x1abc);
        assert_eq!(lane(v, 7, 12), 0xabc);
        assert_eq!(lane(v, 6, 12), 0);
        assert_eq!(blocks_of(64), 1);
        assert_eq!(blocks_of(65), 2);
        assert_eq!(blocks_of(0), 0);
        assert_eq!(blocks_of(4224), 66);
        assert_eq!(blocks_of(BYTES_MAX), 127);
        assert_eq!(
            blocks_of(0x1fff),
            127,
            "saturates: no wrap to a short packet"
        );
    }

    #[test]
    fn narrow_lane_helpers_agree_with_the_128_bit_ones() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for (w, lanes) in [(1u32, 4usize), (2, 4), (12, 4), (13, 4), (12, 5)] {
                for k in 0..lanes {
                    assert_eq!(lane64(x, k, w), lane(x.into(), k, w));
                    let (mut a, mut b) = (x.rotate_left(17), u128::from(x.rotate_left(17)));
                    set_lane64(&mut a, k, w, x >> 3);
                    set_lane(&mut b, k, w, x >> 3);
                    assert_eq!(u128::from(a), b, "w {w} k {k}");
                }
            }
            let a: [u16; N_PV] = std::array::from_fn(|k| (x >> (7 * k)) as u16);
            let mut b = 0u128;
            for (k, &v) in a.iter().enumerate() {
                set_lane(&mut b, k, 12, v.into());
            }
            assert_eq!(pack12(&a), b);
        }
    }

    #[test]
    fn tables_longer_than_the_rtl_are_refused() {
        let mut c = cfg();
        c.arb.low = vec![ArbEntry::new(0, 1); 5];
        assert!(SwitchCore::new(c).is_err());
    }
}
