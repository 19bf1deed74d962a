//! One fabric split across MPI ranks (feature `mpi`): rank `r` of `R` steps only part `r` of the event
//! module's [`partition`](super::event::partition) (`R` parts, each switch with its HCAs), and the ranks
//! exchange what crosses between parts at window boundaries.
//!
//! # Why the results are exact
//! This is the event module's parallel stepping with the threads replaced by processes: windows are the
//! lookahead `L` (the shortest latency of a wire between two parts), so nothing put on a wire to another part
//! in a window is due before the window ends, and the outboxes are delivered between windows by an MPI
//! all-to-all. Every rank builds the whole fabric from the same scenario, so indices agree everywhere; blocks
//! of other ranks' parts are never stepped here and hold no meaning. Every figure a run reports is a sum over
//! blocks (or read from one block), so each rank reports its own blocks' share and the shares are summed
//! (`MPI_Allreduce`), see `crate::run::dist`.
//!
//! Idle stretches cost a rank no more than one process: every block fast-forwards its own idle timers
//! (`Switch::catch_up`, `Endpoint::skip`), so nothing needs the whole fabric's state in one place.
//!
//! # Wire format
//! An item crossing ranks is 8 `u64` words (receiver, push cycle, and the event's fields packed); the
//! encoding is private to one binary, so both ends always agree.

use std::time::{Duration, Instant};

use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;
use rtl_model::link::packet::PacketDesc;
use switch_asic::{FcPacket, PacketStart};

use super::{Ev, Fabric, Rx};

/// Words per encoded item.
const WORDS: usize = 8;

/// This process's place in an MPI world that shares one fabric.
pub struct Dist {
    world: SimpleCommunicator,
    rank: u32,
    size: usize,
    /// Part of every switch (the partition for `size` parts).
    sw_part: Vec<u32>,
    /// Part of every HCA (its switch's part).
    hca_part: Vec<u32>,
    /// Time spent in collective calls (waiting for the slowest rank, and the transfer itself).
    wait: Duration,
    /// Of it: in the all-to-all of item counts that opens every exchange, which returns when the slowest
    /// rank has arrived (waiting, plus a few bytes).
    wait_arrival: Duration,
    /// Of it: in the all-to-all of the items themselves (the transfer).
    wait_transfer: Duration,
    /// Sorting, encoding and decoding the exchanged items.
    pack: Duration,
    /// Items for other ranks, sent at the next synchronisation point.
    pending: Vec<(Rx, u64, Ev)>,
    /// The synchronisation period (the lookahead).
    period: u64,
    /// Reused buffers: encoded items per destination rank, counts and displacements.
    send: Vec<u64>,
    recv: Vec<u64>,
    send_counts: Vec<i32>,
    recv_counts: Vec<i32>,
    send_displs: Vec<i32>,
    recv_displs: Vec<i32>,
}

impl std::fmt::Debug for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dist")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

/// Packs `(rx, t, ev)` into `out` (8 words).
fn encode(rx: Rx, t: u64, ev: Ev, out: &mut Vec<u64>) {
    let (rk, a, b) = match rx {
        Rx::Switch(s, p) => (0u64, s as u64, p as u64),
        Rx::Hca(h) => (1u64, h as u64, 0),
    };
    let mut w = [0u64; WORDS];
    w[1] = a;
    w[2] = b;
    w[3] = t;
    let ek = match ev {
        Ev::Pkt(PacketStart { desc: d, offset }) => {
            w[4] = u64::from(d.dlid)
                | u64::from(d.slid) << 16
                | u64::from(d.sl) << 32
                | u64::from(d.vl) << 40
                | u64::from(d.ecn) << 48
                | u64::from(d.opcode) << 56;
            w[5] = u64::from(d.dest_qp) | u64::from(d.psn) << 32;
            w[6] = u64::from(d.payload_len)
                | u64::from(d.wire_len) << 16
                | u64::from(d.payload_seed) << 32;
            w[7] = u64::from(d.tag) | u64::from(offset) << 32;
            // The ICRC rides in the kind word's top half.
            u64::from(d.fecn) << 8 | u64::from(d.becn) << 9 | u64::from(d.icrc) << 28
        }
        Ev::Fc(fc) => {
            w[4] = u64::from(fc.vl) | u64::from(fc.fctbs) << 8 | u64::from(fc.fccl) << 24;
            1
        }
        Ev::Pause(f) => {
            w[4] = u64::from(f.class_enable);
            for (i, q) in f.quanta.iter().enumerate() {
                w[5 + i / 4] |= u64::from(*q) << (16 * (i % 4));
            }
            2
        }
    };
    w[0] = rk | ek << 4;
    out.extend_from_slice(&w);
}

/// Unpacks one item encoded by [`encode`].
fn decode(w: &[u64]) -> (Rx, u64, Ev) {
    let rx = if w[0] & 0xf == 0 {
        Rx::Switch(w[1] as usize, w[2] as usize)
    } else {
        Rx::Hca(w[1] as usize)
    };
    let ek = w[0] >> 4;
    let ev = match ek & 0xf {
        0 => Ev::Pkt(PacketStart {
            desc: PacketDesc {
                dlid: w[4] as u16,
                slid: (w[4] >> 16) as u16,
                sl: (w[4] >> 32) as u8,
                vl: (w[4] >> 40) as u8,
                ecn: (w[4] >> 48) as u8,
                opcode: (w[4] >> 56) as u8,
                fecn: (ek >> 8) & 1 == 1,
                becn: (ek >> 9) & 1 == 1,
                dest_qp: w[5] as u32,
                psn: (w[5] >> 32) as u32,
                payload_len: w[6] as u16,
                wire_len: (w[6] >> 16) as u16,
                payload_seed: (w[6] >> 32) as u32,
                tag: w[7] as u32,
                icrc: (w[0] >> 32) as u32,
            },
            offset: (w[7] >> 32) as u32,
        }),
        1 => Ev::Fc(FcPacket {
            vl: w[4] as u8,
            fctbs: (w[4] >> 8) as u16,
            fccl: (w[4] >> 24) as u16,
        }),
        _ => {
            let mut f = rtl_model::wire::pfc::Repr {
                class_enable: w[4] as u8,
                ..Default::default()
            };
            for (i, q) in f.quanta.iter_mut().enumerate() {
                *q = (w[5 + i / 4] >> (16 * (i % 4))) as u16;
            }
            Ev::Pause(f)
        }
    };
    (rx, w[3], ev)
}

impl Dist {
    /// This rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Ranks in the world.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Seconds spent in collective calls so far (synchronisation wait plus transfer).
    pub fn sync_wait_seconds(&self) -> f64 {
        self.wait.as_secs_f64()
    }

    /// Where this rank's time in exchanges went: (waiting for the other ranks at the opening all-to-all,
    /// transferring the items, packing and unpacking them), seconds.
    pub fn exchange_seconds(&self) -> (f64, f64, f64) {
        (
            self.wait_arrival.as_secs_f64(),
            self.wait_transfer.as_secs_f64(),
            self.pack.as_secs_f64(),
        )
    }

    /// The world communicator.
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// Adds the time of a collective call that started at `t0`.
    pub fn add_wait(&mut self, t0: Instant) {
        self.wait += t0.elapsed();
    }

    /// The first synchronisation point after cycle `t` (`u64::MAX`: none, nothing crosses between ranks).
    pub fn next_sync(&self, t: u64) -> u64 {
        super::event::next_sync(t, self.period)
    }

    /// Whether this rank steps switch `s`.
    pub fn owns_sw(&self, s: usize) -> bool {
        self.sw_part[s] == self.rank
    }

    /// Whether this rank steps HCA `h`.
    pub fn owns_hca(&self, h: usize) -> bool {
        self.hca_part[h] == self.rank
    }

    fn part_of(&self, rx: Rx) -> u32 {
        match rx {
            Rx::Switch(s, _) => self.sw_part[s],
            Rx::Hca(h) => self.hca_part[h],
        }
    }

    /// Moves `outbox` (items for other ranks) to the items to send at the next synchronisation point.
    pub(super) fn defer(&mut self, outbox: &mut Vec<(Rx, u64, Ev)>) {
        self.pending.append(outbox);
    }

    /// Sends every deferred item to the rank that owns its receiver and returns, in `into`, the items
    /// other ranks sent here (each wire's items in push order: a wire has one sender). Collective.
    pub(super) fn exchange(&mut self, into: &mut Vec<(Rx, u64, Ev)>) {
        let mut outbox = std::mem::take(&mut self.pending);
        self.exchange_items(&mut outbox, into);
        self.pending = outbox;
    }

    fn exchange_items(&mut self, outbox: &mut Vec<(Rx, u64, Ev)>, into: &mut Vec<(Rx, u64, Ev)>) {
        let n = self.size;
        let t_pack = Instant::now();
        // Stable by destination, so every wire keeps its order.
        outbox.sort_by_key(|&(rx, _, _)| self.part_of(rx));
        self.send.clear();
        self.send_counts.clear();
        self.send_counts.resize(n, 0);
        for &(rx, t, ev) in outbox.iter() {
            let k = self.part_of(rx) as usize;
            self.send_counts[k] += WORDS as i32;
            encode(rx, t, ev, &mut self.send);
        }
        outbox.clear();
        self.recv_counts.clear();
        self.recv_counts.resize(n, 0);
        self.pack += t_pack.elapsed();
        let t0 = Instant::now();
        self.world
            .all_to_all_into(&self.send_counts[..], &mut self.recv_counts[..]);
        self.wait_arrival += t0.elapsed();
        let displs = |c: &[i32], d: &mut Vec<i32>| {
            d.clear();
            let mut acc = 0;
            for &x in c {
                d.push(acc);
                acc += x;
            }
            acc as usize
        };
        displs(&self.send_counts, &mut self.send_displs);
        let total = displs(&self.recv_counts, &mut self.recv_displs);
        self.recv.clear();
        self.recv.resize(total, 0);
        {
            let sp = Partition::new(&self.send[..], &self.send_counts[..], &self.send_displs[..]);
            let mut rp = PartitionMut::new(
                &mut self.recv[..],
                &self.recv_counts[..],
                &self.recv_displs[..],
            );
            let t1 = Instant::now();
            self.world.all_to_all_varcount_into(&sp, &mut rp);
            self.wait_transfer += t1.elapsed();
        }
        self.add_wait(t0);
        let t_unpack = Instant::now();
        into.extend(self.recv.chunks_exact(WORDS).map(decode));
        self.pack += t_unpack.elapsed();
    }

    /// The sum over ranks of every element of `v` (in place). Collective.
    pub fn sum(&mut self, v: &mut [u64]) {
        let t0 = Instant::now();
        let mine = v.to_vec();
        self.world
            .all_reduce_into(&mine[..], v, mpi::collective::SystemOperation::sum());
        self.add_wait(t0);
    }

    /// Every rank's `v`, in rank order. Collective.
    pub fn gather(&mut self, v: &[u64]) -> Vec<Vec<u64>> {
        let t0 = Instant::now();
        let mut counts = vec![0i32; self.size];
        self.world
            .all_gather_into(&(v.len() as i32), &mut counts[..]);
        let mut displs = Vec::new();
        let mut acc = 0;
        for &c in &counts {
            displs.push(acc);
            acc += c;
        }
        let mut all = vec![0u64; acc as usize];
        {
            let mut rp = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(v, &mut rp);
        }
        self.add_wait(t0);
        counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec())
            .collect()
    }
}

impl Fabric {
    /// Splits this fabric across the ranks of `world` (see the module documentation): from now on
    /// [`Fabric::run_until`] steps only this rank's part and exchanges with the others; it must be called
    /// on every rank with the same arguments (collective). [`Fabric::step`] and captures are not for a
    /// split fabric.
    pub fn split_mpi(&mut self, world: SimpleCommunicator) {
        let size = world.size().max(1) as usize;
        let rank = world.rank() as u32;
        self.threads = size;
        self.ensure_partition();
        let sw_part = self.sched.sw_part.clone();
        let hca_part = self
            .hca_out
            .iter()
            .map(|rx| match *rx {
                Rx::Switch(s, _) => sw_part[s],
                Rx::Hca(_) => 0,
            })
            .collect();
        self.dist = Some(Box::new(Dist {
            world,
            rank,
            size,
            sw_part,
            hca_part,
            wait: Duration::ZERO,
            wait_arrival: Duration::ZERO,
            wait_transfer: Duration::ZERO,
            pack: Duration::ZERO,
            pending: Vec::new(),
            period: self.sched.lookahead,
            send: Vec::new(),
            recv: Vec::new(),
            send_counts: Vec::new(),
            recv_counts: Vec::new(),
            send_displs: Vec::new(),
            recv_displs: Vec::new(),
        }));
    }

    /// The MPI split, if any.
    pub fn dist(&self) -> Option<&Dist> {
        self.dist.as_deref()
    }

    /// The MPI split, if any (for collectives).
    pub fn dist_mut(&mut self) -> Option<&mut Dist> {
        self.dist.as_deref_mut()
    }

    /// This rank's share of [`Fabric::packets_in_flight`]: the sum over ranks is the whole fabric's (a
    /// rank's own count of packets on wires can be negative: it takes off wires what others put on).
    pub fn owned_packets_in_flight(&self) -> i64 {
        let switches = (0..self.switches.len())
            .filter(|&s| self.owns_sw(s))
            .map(|s| &self.switches[s]);
        let receiving = (0..self.hcas.len())
            .filter(|&h| self.owns_hca(h))
            .map(|h| self.hcas[h].receiving());
        self.wire_pkts as i64 + super::held_or_arriving(switches, receiving) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_round_trip() {
        let desc = PacketDesc {
            dlid: 0xfedc,
            slid: 0x1234,
            sl: 15,
            vl: 7,
            fecn: true,
            becn: false,
            ecn: 3,
            opcode: 0xa4,
            dest_qp: 0xff_ffff,
            psn: 0xab_cdef,
            payload_len: 4096,
            wire_len: 4130,
            payload_seed: 0xdead_beef,
            tag: 0xffff_fffe,
            icrc: 0x8765_4321,
        };
        let pause = rtl_model::wire::pfc::Repr {
            class_enable: 0xa5,
            quanta: [1, 0xffff, 3, 4, 5, 6, 0x8000, 8],
        };
        let items = [
            (
                Rx::Switch(53, 35),
                7,
                Ev::Pkt(PacketStart { desc, offset: 9 }),
            ),
            (
                Rx::Hca(647),
                u64::MAX - 1,
                Ev::Pkt(PacketStart {
                    desc: PacketDesc {
                        fecn: false,
                        becn: true,
                        ..desc
                    },
                    offset: u32::MAX,
                }),
            ),
            (
                Rx::Hca(0),
                1,
                Ev::Fc(FcPacket {
                    vl: 14,
                    fctbs: 0xfff,
                    fccl: 0xabc,
                }),
            ),
            (Rx::Switch(0, 1), 2, Ev::Pause(pause)),
        ];
        let mut buf = Vec::new();
        for &(rx, t, ev) in &items {
            encode(rx, t, ev, &mut buf);
        }
        assert_eq!(buf.len(), items.len() * WORDS);
        for (w, &(rx, t, ev)) in buf.chunks_exact(WORDS).zip(&items) {
            let (rx2, t2, ev2) = decode(w);
            assert_eq!((rx2, t2), (rx, t));
            // Ev has no PartialEq; its Debug form shows every field.
            assert_eq!(format!("{ev2:?}"), format!("{ev:?}"));
        }
    }
}
