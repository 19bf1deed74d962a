//! Event-driven and parallel stepping: [`Fabric::run_until`] gives the state of as many [`Fabric::step`]
//! calls, but steps a switch or HCA only in cycles where it can do something, and can spread the switches
//! (each with its HCAs) over threads.
//!
//! # Why skipping is exact
//! A block's step in a cycle where nothing arrives for it and its own `next_event` is not due puts nothing
//! on its wire, and its exact `skip` brings its state there: counting timers down in O(1) (the `credit_rx`
//! closed form), stepping the receive-side work that puts nothing on the link (an `Endpoint` counting
//! blocks in, releasing them and firing its flow-control timer, see `Endpoint::next_event`), or leaving a
//! switch port's timer fire to be applied when the port is next looked at (`Switch::catch_up`). Every block
//! therefore has a wake-up cycle: the earliest of its own next event and the next item due on a wire into
//! it. In a cycle `t` the blocks due at `t` are each brought to `t`
//! (skip), handed what the wires deliver, and stepped. What a step puts on a wire is due at `t + latency`
//! with `latency >= 1`, so no block stepped at `t` sees another's output of `t`, and handling the due blocks
//! one after the other gives the reference's result, whatever their order (the reference delivers to
//! everyone first, then steps everyone). At the end every block is skipped to `end`, so [`Fabric::step`]
//! can go on from there.
//!
//! # Why running ahead is exact
//! An item due on a wire in cycle `c` was pushed in cycle `c - latency`, by a step of its sender that the
//! wheel reached no later than that cycle. So when the wheel reaches cycle `t`, every item due before
//! `t + L` on the wires into a block (`L` the shortest latency of those wires) is on them already, and
//! whatever any block pushes from then on is due at `t + L` or later. A block visited at `t` thus has its
//! inputs of the cycles `t..t + L` in hand, and takes its own wake-ups in them (before the run's `end`) in
//! the same visit, each as its own visit would: skipped to it, handed what its wires deliver, stepped, its
//! items pushed with their own cycle. No receiver has stepped the cycle such an item is due in: a receiver
//! ran ahead, in a visit at `t' <= t`, to before `t' + L'` at most, with `L'` at most this wire's latency,
//! and the item is due at or after `t + latency`. Under a part's window the run's `end` is the window's,
//! before which no other part's item is due. A loaded switch's pipeline stages, a packet's start and end
//! and the flow-control packets around them come a few cycles apart, against wire latencies of about 100:
//! most of them are one visit, with the switch's state still in cache.
//!
//! # Why parallel stepping is exact
//! With `T` threads the switches are dealt to `T` parts of about equal weight (ports, plus two per attached
//! HCA), each switch with the HCAs attached to it ([`partition`]). The lookahead `L` is the shortest
//! latency of a wire between two parts. Time advances in windows of `L` cycles; in a window every part
//! runs on its own thread, and what it puts on a wire into another part (due at least `L` cycles later, so
//! after the window) waits in an outbox that is delivered between windows. Each wire has one sender, so its
//! items keep their order. The blocks see exactly the items at exactly the cycles of the one-thread run,
//! so the results are bit-identical for any thread count.
//!
//! # Cost
//! Per cycle with any work in a part: the due blocks' steps, found in the part's timing wheel
//! (`super::wheel`); a cycle with no work anywhere is never visited. A switch's due input ports are found
//! among its busy ones (a bit mask of the wires holding items), not by a look at every port; an HCA is not
//! woken for a received packet's tail that only adds to counters (`Hca::skip` counts it at its own cycle),
//! nor at the end of a packet it sent when its reaction point foresaw the next send (`TxFlow::cc_wake`).
//! A periodic flow-control packet that
//! repeats the last one on its wire is not sent at all (`Switch::set_fc_repeats_off`,
//! `Endpoint::set_fc_repeats_off`), so it wakes no receiver; and a port whose timers fire only such
//! repeats needs no look at all: its own `skip` (or, for a switch port, the lazily applied fires) jumps
//! whole periods of them once one period has shown itself periodic. So an idle fabric costs nothing per
//! cycle, and a run is one stretch of event-driven stepping whatever the traffic. Threads meet at a barrier
//! once per window, a spinning one (`SpinBarrier`).

use rtl_model::link::serial::Wire;
use switch_asic::port_mask::ports;
use switch_asic::{Switch, TxEvent};

mod prefetch;
pub use prefetch::Prefetch;

use super::wheel::Wheel;
use super::{hand_to_hca, hand_to_switch, hca_items, wire_item, Ev, Fabric, Hca, Rx};

/// Weight of an HCA in the partition, in switch ports: an HCA steps for every packet it sends, receives
/// and every flow-control packet and CC message, and costs about twice a switch port: with equal weights
/// a part holding leaves and their HCAs is the busier one.
const HCA_WEIGHT: u64 = 2;

/// Part and index within it of a switch or HCA.
type Loc = (u32, u32);

/// Preallocated scratch reused by every [`Fabric::run_until`].
#[derive(Debug, Default, Clone)]
pub(super) struct Sched {
    /// Part of every switch (empty: not computed for the current thread count).
    pub(super) sw_part: Vec<u32>,
    /// The lookahead of the partition, in cycles.
    pub(super) lookahead: u64,
    /// Threads the partition was made for.
    parts: usize,
    /// Work counts of event-driven stepping so far.
    pub(super) work: StepWork,
    /// Per thread of the last threaded runs (summed over them): where its wall time went.
    pub(super) thread_times: Vec<ThreadTime>,
    /// The parts of the last run, emptied of blocks but keeping their allocations (wheel slots, wake-up
    /// tables, scratch), so a run of a few cycles (a driver that looks at the fabric often) allocates nothing.
    spare: Vec<Part>,
}

/// What event-driven stepping did, summed over parts (a cost measure for benches and tests: speed follows
/// these counts, not the simulated time).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct StepWork {
    /// Cycles in which some block of a part was due (summed over parts).
    pub cycles_visited: u64,
    /// Switch steps.
    pub switch_steps: u64,
    /// HCA steps.
    pub hca_steps: u64,
    /// Items put on wires (packet heads, flow-control packets, pause frames).
    pub wire_items: u64,
}

impl StepWork {
    fn add(&mut self, o: &StepWork) {
        self.cycles_visited += o.cycles_visited;
        self.switch_steps += o.switch_steps;
        self.hca_steps += o.hca_steps;
        self.wire_items += o.wire_items;
    }
}

/// Where one thread's wall time of a threaded run went (the first thread is the caller's).
#[derive(Debug, Default, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ThreadTime {
    /// Stepping its part's blocks.
    pub stepping_seconds: f64,
    /// Handing its items to the other parts' inboxes and delivering its own inbox.
    pub exchange_seconds: f64,
    /// Waiting at the window's barrier for the slowest part.
    pub waiting_seconds: f64,
    /// Windows run.
    pub windows: u64,
}

/// Read-only routing between parts.
struct Links<'a> {
    sw_loc: &'a [Loc],
    hca_loc: &'a [Loc],
    sw_out: &'a [Vec<Option<Rx>>],
    hca_out: &'a [Rx],
}

impl Links<'_> {
    fn loc(&self, rx: Rx) -> Loc {
        match rx {
            Rx::Switch(s, _) => self.sw_loc[s],
            Rx::Hca(h) => self.hca_loc[h],
        }
    }
}

/// One thread's share of the fabric. Aligned to two cache lines: the parts lie side by side in one vector
/// and each thread writes its own part's counters and scratch at every step, so no line (nor the pair the
/// adjacent-line prefetcher fetches together) may hold the end of one part and the start of the next.
#[derive(Default, Debug, Clone)]
#[repr(align(128))]
struct Part {
    id: u32,
    sw_ids: Vec<usize>,
    switches: Vec<Switch>,
    sw_in: Vec<Vec<Option<Wire<Ev>>>>,
    /// Per switch and port: the cycle of the next item on the wire in (`u64::MAX`: none). Kept here so that
    /// finding due ports does not touch every wire's queue (a cache miss each).
    port_due: Vec<Vec<u64>>,
    /// Per switch: the ports whose wire in holds an item (bit `p`: `port_due[i][p] != u64::MAX`). Only
    /// these are looked at for due items and for the switch's wake-up: in a lightly loaded fabric a
    /// switch step finds a few busy ports among 36, and a scan over every port would cost more than the
    /// step's own work.
    port_busy: Vec<u64>,
    /// Per switch: the earliest of its `port_due` (`u64::MAX`: no item on any wire in). Most switch steps
    /// come at the switch's own next event with nothing due on its wires (under load about two in three on
    /// `ft18x2-uniform`): this one comparison spares them the pass over the busy ports, and their wake-up
    /// the fold over them.
    port_due_min: Vec<u64>,
    sw_wake: Vec<u64>,
    /// Per switch: the shortest latency of its wires in (`u64::MAX`: none), how far past the cycle being
    /// visited its own steps may run (see [`Part::run`]).
    sw_lat: Vec<u64>,
    hca_ids: Vec<usize>,
    hcas: Vec<Hca>,
    hca_in: Vec<Wire<Ev>>,
    /// Per HCA: the cycle of the next item on its wire in (`u64::MAX`: none).
    hca_due: Vec<u64>,
    hca_wake: Vec<u64>,
    /// Per HCA: the latency of its wire in.
    hca_lat: Vec<u64>,
    events: Vec<TxEvent>,
    /// Wake-ups by cycle: switch `i` is entry `i`, HCA `j` entry `switches + j`.
    wheel: Wheel,
    /// Scratch for the entries of one cycle.
    due: Vec<u32>,
    /// Items for other parts: receiver, push cycle, item.
    outbox: Vec<(Rx, u64, Ev)>,
    /// Packet heads put on wires minus those taken off, by this part.
    wire_pkts: i64,
    work: StepWork,
    /// This part's thread's times in the current run (threaded runs only).
    time: ThreadTime,
    /// Whether a visit has the state of the visits after it fetched into cache (see `prefetch`).
    prefetch: bool,
}

/// The ports of `due` (wake-up cycles per port) with an item on their wire, as bits: every cycle but
/// `u64::MAX` (no item) is due by `u64::MAX - 1`.
fn busy_mask(due: &[u64]) -> u64 {
    switch_asic::port_mask::due_mask(due, u64::MAX - 1)
}

/// Deals `switches` (weights: ports plus `HCA_WEIGHT` per attached HCA) to `parts` parts of about equal
/// weight: heaviest first, each to the lightest part so far (the lowest on ties), so switches of one weight
/// (the leaves of a fat tree, its spines) go round the parts in index order. Every part thus gets the same mix
/// of kinds. That matters more than locality: traffic makes work come in waves (a packet's head reaches a
/// spine one wire latency after its leaf), and a window costs what its busiest part does. Cut into contiguous
/// runs instead, `clos648-shift-cc` had one part with most leaves and one with the spines, and the sum over
/// windows of the busier part's time was 1/1.47 of the two parts' total; dealt, 1/1.75 to 1/1.85 (runs on a
/// loaded and on a quiet machine).
pub fn partition(weights: &[u64], parts: usize) -> Vec<u32> {
    let parts = parts.clamp(1, weights.len().max(1));
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&s| std::cmp::Reverse(weights[s]));
    let mut load = vec![0u64; parts];
    let mut part = vec![0u32; weights.len()];
    for s in order {
        let k = (0..parts)
            .min_by_key(|&k| (load[k], k))
            .expect("at least one part");
        load[k] += weights[s];
        part[s] = k as u32;
    }
    part
}

/// The first synchronisation point of an MPI-split fabric after cycle `t`: the next multiple of the lookahead
/// (never, i.e. `u64::MAX`, when nothing crosses between parts).
pub fn next_sync(t: u64, lookahead: u64) -> u64 {
    (t / lookahead.max(1) + 1).saturating_mul(lookahead)
}

impl Part {
    /// Makes a part of an earlier run (emptied of its blocks) part `id` of a new one, keeping its allocations.
    fn reuse(&mut self, id: u32) {
        self.id = id;
        self.sw_ids.clear();
        self.hca_ids.clear();
        self.outbox.clear();
        self.wire_pkts = 0;
        self.work = StepWork::default();
        self.time = ThreadTime::default();
    }

    fn sw_wake_of(&self, i: usize) -> u64 {
        let sw = &self.switches[i];
        let w = sw
            .next_event()
            .map_or(u64::MAX, |e| sw.now().saturating_add(e));
        w.min(self.port_due_min[i])
    }

    /// The earliest of switch `i`'s `port_due`, by a pass over its busy ports.
    fn port_due_min_of(&self, i: usize) -> u64 {
        let due = &self.port_due[i];
        ports(self.port_busy[i]).fold(u64::MAX, |a, p| a.min(due[p]))
    }

    fn hca_wake_of(&self, i: usize, now: u64) -> u64 {
        self.hcas[i].next_event(now).min(self.hca_due[i])
    }

    /// Readies a part whose blocks were just moved in for a run from cycle `now`, prefetching as `mode`
    /// says.
    fn prepare(&mut self, now: u64, mode: Prefetch) {
        self.init_wakes(now);
        self.events.reserve(256);
        self.prefetch = mode.on_for(self.weight());
    }

    /// The part's weight, as in [`partition`]: its switch ports plus `HCA_WEIGHT` per HCA.
    fn weight(&self) -> u64 {
        let ports: u64 = self.sw_in.iter().map(|p| p.len() as u64).sum();
        ports + HCA_WEIGHT * self.hcas.len() as u64
    }

    fn init_wakes(&mut self, now: u64) {
        let due = |w: &Wire<Ev>| w.next_due().unwrap_or(u64::MAX);
        self.port_due.resize_with(self.sw_in.len(), Vec::new);
        for (d, ins) in self.port_due.iter_mut().zip(&self.sw_in) {
            d.clear();
            d.extend(ins.iter().map(|w| w.as_ref().map_or(u64::MAX, due)));
        }
        self.port_busy.clear();
        self.port_busy
            .extend(self.port_due.iter().map(|d| busy_mask(d)));
        self.port_due_min.clear();
        for i in 0..self.port_due.len() {
            let m = self.port_due_min_of(i);
            self.port_due_min.push(m);
        }
        self.hca_due.clear();
        self.hca_due.extend(self.hca_in.iter().map(due));
        self.sw_lat.clear();
        self.sw_lat.extend(self.sw_in.iter().map(|ins| {
            ins.iter()
                .flatten()
                .map(Wire::latency)
                .min()
                .unwrap_or(u64::MAX)
        }));
        self.hca_lat.clear();
        self.hca_lat.extend(self.hca_in.iter().map(Wire::latency));
        self.wheel.reset(now);
        self.sw_wake.clear();
        for i in 0..self.switches.len() {
            let w = self.sw_wake_of(i);
            self.sw_wake.push(w);
            self.wheel.schedule(i as u32, w);
        }
        self.hca_wake.clear();
        let ns = self.switches.len() as u32;
        for i in 0..self.hcas.len() {
            let w = self.hca_wake_of(i, now);
            self.hca_wake.push(w);
            self.wheel.schedule(ns + i as u32, w);
        }
    }

    /// A wire into a block of this part, given the block's local location.
    fn wire(&mut self, rx: Rx, idx: usize) -> &mut Wire<Ev> {
        match rx {
            Rx::Switch(_, p) => self.sw_in[idx][p]
                .as_mut()
                .expect("a connected port's peer is connected"),
            Rx::Hca(_) => &mut self.hca_in[idx],
        }
    }

    /// Puts an item pushed at `t` on the local wire `rx` (at `idx`) and wakes its receiver.
    fn deliver(&mut self, rx: Rx, idx: usize, t: u64, ev: Ev) {
        let w = self.wire(rx, idx);
        w.push(t, ev);
        let at = t + w.latency();
        // A wire is a FIFO of one latency: an earlier item, if any, is due first.
        let ns = self.switches.len();
        let (due, wake, id) = match rx {
            Rx::Switch(_, p) => {
                self.port_busy[idx] |= 1 << p;
                self.port_due_min[idx] = self.port_due_min[idx].min(at);
                (&mut self.port_due[idx][p], &mut self.sw_wake[idx], idx)
            }
            Rx::Hca(_) => (&mut self.hca_due[idx], &mut self.hca_wake[idx], ns + idx),
        };
        *due = (*due).min(at);
        if at < *wake {
            *wake = at;
            self.wheel.schedule(id as u32, at);
        }
    }

    fn push(&mut self, links: &Links, rx: Rx, t: u64, ev: Ev) {
        self.work.wire_items += 1;
        self.wire_pkts += i64::from(matches!(ev, Ev::Pkt(_)));
        let (part, idx) = links.loc(rx);
        if part == self.id {
            self.deliver(rx, idx as usize, t, ev);
        } else {
            self.outbox.push((rx, t, ev));
        }
    }

    /// Runs every block due in cycles `now..end`.
    fn run(&mut self, links: &Links, end: u64) {
        let ns = self.switches.len();
        let mut due = std::mem::take(&mut self.due);
        while let Some(t) = self.wheel.next_before(end) {
            self.work.cycles_visited += 1;
            self.wheel.take_current(&mut due);
            // The order of the due blocks does not matter (see the module documentation). A block's
            // wake-ups before `t` plus the shortest latency of its wires in (and before `end`) are taken in
            // the same visit, one step after the other (see "Why running ahead is exact").
            for (j, &id) in due.iter().enumerate() {
                if self.prefetch {
                    self.prefetch_ahead(&due, j, t);
                }
                let i = id as usize;
                if i < ns {
                    if self.sw_wake[i] == t {
                        let horizon = t.saturating_add(self.sw_lat[i]).min(end);
                        let mut at = t;
                        let w = loop {
                            self.step_switch(links, i, at);
                            let w = self.sw_wake_of(i);
                            if w >= horizon {
                                break w;
                            }
                            at = w;
                        };
                        self.sw_wake[i] = w;
                        self.wheel.schedule(id, w);
                    }
                } else if self.hca_wake[i - ns] == t {
                    let h = i - ns;
                    let horizon = t.saturating_add(self.hca_lat[h]).min(end);
                    let mut at = t;
                    let w = loop {
                        self.step_hca(links, h, at);
                        let w = self.hca_wake_of(h, at + 1);
                        if w >= horizon {
                            break w;
                        }
                        at = w;
                    };
                    self.hca_wake[h] = w;
                    self.wheel.schedule(id, w);
                }
            }
        }
        self.due = due;
    }

    /// This part's share of the packets in flight at the start of cycle `t` (every block run to `t`: see
    /// [`Fabric::owned_packets_in_flight`]), `wires` the fabric's own count before this run. Read without
    /// moving the blocks to `t`: a switch's skip changes no packet count, and an HCA's counts the tails it
    /// passes (`Hca::receiving_at`), which would leave its wake-up here stale (a tail counted can make work).
    #[cfg(feature = "mpi")]
    fn in_flight_at(&self, t: u64, wires: i64) -> i64 {
        let receiving = self.hcas.iter().map(|hc| hc.receiving_at(t));
        wires + self.wire_pkts + super::held_or_arriving(self.switches.iter(), receiving) as i64
    }

    fn step_switch(&mut self, links: &Links, i: usize, t: u64) {
        self.work.switch_steps += 1;
        let sw = &mut self.switches[i];
        let n = t - sw.now();
        sw.skip(n);
        if self.port_due_min[i] <= t {
            // Lowest port first, as a scan of every port would hand them in; the new earliest item in
            // the same pass.
            let mut min = u64::MAX;
            for p in ports(self.port_busy[i]) {
                let mut d = self.port_due[i][p];
                if d <= t {
                    let Some(w) = &mut self.sw_in[i][p] else {
                        continue;
                    };
                    while let Some(e) = w.pop_due(t) {
                        self.wire_pkts -= i64::from(hand_to_switch(sw, p, e));
                    }
                    d = w.next_due().unwrap_or(u64::MAX);
                    self.port_due[i][p] = d;
                    if d == u64::MAX {
                        self.port_busy[i] &= !(1 << p);
                    }
                }
                min = min.min(d);
            }
            self.port_due_min[i] = min;
        }
        self.switches[i].step_into(&mut self.events);
        let s = self.sw_ids[i];
        for k in 0..self.events.len() {
            let (port, ev) = wire_item(self.events[k]);
            if let Some(rx) = links.sw_out[s][usize::from(port)] {
                self.push(links, rx, t, ev);
            }
        }
    }

    fn step_hca(&mut self, links: &Links, i: usize, t: u64) {
        self.work.hca_steps += 1;
        let hc = &mut self.hcas[i];
        let n = t - hc.port_now();
        hc.skip(n);
        while let Some(e) = self.hca_in[i].pop_due(t) {
            self.wire_pkts -= i64::from(hand_to_hca(hc, t, e));
        }
        self.hca_due[i] = self.hca_in[i].next_due().unwrap_or(u64::MAX);
        let out = hc.step(t);
        let rx = links.hca_out[self.hca_ids[i]];
        hca_items(out, |ev| self.push(links, rx, t, ev));
    }
}

/// Items handed from one part to another: receiver, push cycle, item.
type Inbox = Vec<(Rx, u64, Ev)>;

/// Runs `parts` from `t0` to `end` on one thread each (this one runs the first), in windows of at most
/// `lookahead` cycles (the shortest latency of a wire between two parts). After a window each part hands its items for
/// other parts to their inboxes and waits for the others; then it delivers its own inbox and goes on. An item
/// sent in a window is due at least `lookahead` cycles after the window's start, so at or after the next
/// window's end: delivering it at any point before the receiver's next window ends is exact. A part may even
/// find items of the next window in its inbox (another part ran ahead): they are due after that window too.
/// Each wire has one sender, whose items keep their order. The threads live for the whole stretch, so a window
/// costs one barrier, not a spawn. A window in which no part has anything to do is skipped: the parts publish a
/// lower bound of their next work before the barrier and all start the next window at the earliest (windows
/// need not be aligned; what matters is that none is longer than the lookahead).
fn run_threads(parts: &mut [Part], links: &Links, t0: u64, end: u64, lookahead: u64) {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::Mutex;
    let n = parts.len();
    let inboxes: Vec<Mutex<Inbox>> = (0..n).map(|_| Mutex::new(Vec::new())).collect();
    let barrier = SpinBarrier::new(n);
    // Per window parity and part: a lower bound of the part's next work (its next wake-up, or the earliest
    // item it sent to another part). Two sets, so a part that runs ahead writes the next window's set while
    // a slower one still reads this window's.
    let next: [Vec<AtomicU64>; 2] =
        std::array::from_fn(|_| (0..n).map(|_| AtomicU64::new(0)).collect());
    let body = |p: &mut Part| {
        let _poison = PoisonOnPanic(&barrier);
        let me = p.id as usize;
        let mut t = t0;
        let mut round = 0usize;
        let mut clock = std::time::Instant::now();
        let lap = |clock: &mut std::time::Instant| {
            let now = std::time::Instant::now();
            let d = now.duration_since(*clock).as_secs_f64();
            *clock = now;
            d
        };
        while t < end {
            let t1 = t.saturating_add(lookahead).min(end);
            p.run(links, t1);
            p.time.stepping_seconds += lap(&mut clock);
            let mut soon = p.wheel.next_entry().unwrap_or(u64::MAX);
            // One lock per run of items for the same part (with 2 parts: one per window).
            let mut held: Option<(u32, std::sync::MutexGuard<'_, Inbox>)> = None;
            for (rx, at, ev) in p.outbox.drain(..) {
                // Due at least one lookahead after its push.
                soon = soon.min(at.saturating_add(lookahead));
                let (k, _) = links.loc(rx);
                match &mut held {
                    Some((hk, inbox)) if *hk == k => inbox.push((rx, at, ev)),
                    _ => {
                        // Never two inboxes at once (two parts each holding one and waiting for the
                        // other's would deadlock).
                        drop(held.take());
                        let mut inbox = lock(&inboxes[k as usize]);
                        inbox.push((rx, at, ev));
                        held = Some((k, inbox));
                    }
                }
            }
            drop(held);
            next[round & 1][me].store(soon, Relaxed);
            p.time.exchange_seconds += lap(&mut clock);
            barrier.wait();
            p.time.waiting_seconds += lap(&mut clock);
            let mut inbox = lock(&inboxes[me]);
            for (rx, at, ev) in inbox.drain(..) {
                let (_, idx) = links.loc(rx);
                p.deliver(rx, idx as usize, at, ev);
            }
            drop(inbox);
            p.time.exchange_seconds += lap(&mut clock);
            p.time.windows += 1;
            // Every part computes the same start: nothing anywhere happens before the earliest bound, so the
            // next window may start there (skipping windows in which no part has work).
            let soonest = next[round & 1].iter().map(|a| a.load(Relaxed)).min();
            t = t1.max(soonest.unwrap_or(u64::MAX));
            round += 1;
        }
    };
    std::thread::scope(|sc| {
        let (first, rest) = parts.split_first_mut().expect("at least one part");
        for p in rest {
            let b = &body;
            sc.spawn(move || b(p));
        }
        body(first)
    })
}

/// A barrier whose waiters spin before they yield. A window's work is a fraction of a millisecond: waking a
/// thread that slept on a futex (what `std::sync::Barrier` does) can take as long on a virtual machine, whose
/// idle virtual CPU is halted; spinning keeps the waiting core awake. After `SPIN` rounds a waiter yields its
/// core at every round, so an oversubscribed machine (more threads than cores) still makes progress, and after
/// `YIELDS` more it sleeps between rounds, so a part with far less work than the others does not burn a core.
///
/// A thread that panics poisons it (see [`PoisonOnPanic`]): the others then panic too instead of waiting
/// for ever, and the scope reports the first panic.
struct SpinBarrier {
    n: usize,
    arrived: std::sync::atomic::AtomicUsize,
    generation: std::sync::atomic::AtomicUsize,
    poisoned: std::sync::atomic::AtomicBool,
}

/// Poisons the barrier when dropped during a panic.
struct PoisonOnPanic<'a>(&'a SpinBarrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0
                .poisoned
                .store(true, std::sync::atomic::Ordering::Release);
        }
    }
}

impl SpinBarrier {
    /// Spin rounds before yielding: about 100 us.
    const SPIN: u32 = 1 << 14;
    /// Yielding rounds before sleeping.
    const YIELDS: u32 = 1 << 10;

    fn new(n: usize) -> Self {
        SpinBarrier {
            n,
            arrived: 0.into(),
            generation: 0.into(),
            poisoned: false.into(),
        }
    }

    fn wait(&self) {
        use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
        let g = self.generation.load(Acquire);
        if self.arrived.fetch_add(1, AcqRel) + 1 == self.n {
            // Nobody touches `arrived` again before the generation moves on.
            self.arrived.store(0, Relaxed);
            self.generation.fetch_add(1, Release);
            return;
        }
        let mut spins = 0u32;
        while self.generation.load(Acquire) == g {
            assert!(
                !self.poisoned.load(Acquire),
                "another thread of the run panicked"
            );
            spins = spins.saturating_add(1);
            if spins < Self::SPIN {
                std::hint::spin_loop();
            } else if spins < Self::SPIN + Self::YIELDS {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        }
    }
}

/// The inbox, whether or not another part's thread panicked while holding it (the panic ends the run).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Fabric {
    /// The part of every switch for the current thread count and the partition's lookahead.
    pub(super) fn ensure_partition(&mut self) {
        let parts = self.threads.min(self.switches.len()).max(1);
        if self.sched.parts == parts && self.sched.sw_part.len() == self.switches.len() {
            return;
        }
        let mut weights: Vec<u64> = self.sw_in.iter().map(|p| p.len() as u64).collect();
        for out in &self.hca_out {
            if let Rx::Switch(s, _) = *out {
                weights[s] += HCA_WEIGHT;
            }
        }
        let sw_part = partition(&weights, parts);
        let part_of = |rx: Rx| match rx {
            Rx::Switch(s, _) => sw_part[s],
            Rx::Hca(h) => match self.hca_out[h] {
                Rx::Switch(s, _) => sw_part[s],
                Rx::Hca(_) => 0,
            },
        };
        let mut lookahead = u64::MAX;
        for (s, outs) in self.sw_out.iter().enumerate() {
            for (p, out) in outs.iter().enumerate() {
                if let (Some(rx), Some(w)) = (out, &self.sw_in[s][p]) {
                    if part_of(*rx) != sw_part[s] {
                        lookahead = lookahead.min(w.latency());
                    }
                }
            }
        }
        self.sched = Sched {
            sw_part,
            lookahead,
            parts,
            work: self.sched.work,
            thread_times: Vec::new(),
            spare: std::mem::take(&mut self.sched.spare),
        };
        if parts > 1 && self.own_part().is_none() {
            self.regroup();
        }
    }

    /// Re-allocates each part's state (its blocks, their wires in, its own tables) on a thread of its own,
    /// so that each part's state lies in memory of its own. The fabric is built in topology order on one
    /// thread, and [`partition`] deals neighbouring switches to different parts: their state lay side by
    /// side, and on the 2-vCPU development machines two threads then stepped at about half speed each in
    /// some periods (while two MPI ranks, each with a fabric of its own, stepped at full speed in the same
    /// minutes); with the state re-allocated this way they step at the speed of one (docs/performance.md
    /// has the measurements). Lines written by both threads' cores are the likely cause. Re-allocated on the
    /// calling thread instead, the threads stayed slow in a few runs: the allocations a thread makes while
    /// it steps come from its allocator heap, which then also holds the other parts' state.
    ///
    /// The state is cloned, so the results do not change. Once per partition (a change of thread count):
    /// runs afterwards move the blocks between the fabric and the parts, not their state, and keep the
    /// parts' tables. Until the allocator reuses the old copy's memory, the peak memory grows by about the
    /// fabric's state.
    fn regroup(&mut self) {
        let (sw_part, mut parts, _, hca_loc) = self.parts_out();
        let now = self.now;
        std::thread::scope(|sc| {
            for p in &mut parts {
                sc.spawn(move || {
                    p.prepare(now, Prefetch::Off);
                    let copy = p.clone();
                    *p = copy;
                });
            }
        });
        self.unpart(&mut parts, &sw_part, &hca_loc);
        self.sched.sw_part = sw_part;
        self.sched.spare = parts;
    }

    /// The current partition's parts (those of the last run, reused) with the blocks moved into them:
    /// every switch's part, the parts, and every switch's and HCA's part and index in it.
    fn parts_out(&mut self) -> (Vec<u32>, Vec<Part>, Vec<Loc>, Vec<Loc>) {
        let sw_part = std::mem::take(&mut self.sched.sw_part);
        let mut parts = std::mem::take(&mut self.sched.spare);
        parts.resize_with(self.sched.parts, Part::default);
        for (i, p) in parts.iter_mut().enumerate() {
            p.reuse(i as u32);
        }
        let (sw_loc, hca_loc) = self.share_out(&mut parts, &sw_part);
        (sw_part, parts, sw_loc, hca_loc)
    }

    /// Steps to cycle `end` (no-op if already there), event-driven and on [`Fabric::threads`] threads; the
    /// state afterwards is the state after `end - now()` calls of [`Fabric::step`], for any thread count (see
    /// the `event` module documentation).
    pub fn run_until(&mut self, end: u64) {
        if self.tap.is_some() || self.hand_ins.is_some() {
            // A capture records every wire push (a hand-in log every hand-in) with its cycle: single-step
            // (the same results).
            while self.now < end {
                self.step();
            }
            return;
        }
        self.run_parts(end, None);
    }

    /// Under MPI: runs to cycle `end` as [`Fabric::run_until`] does, pushing onto `shares` this rank's
    /// [`Fabric::owned_packets_in_flight`] at the start of each cycle from `now()` to `end - 1` (as a `u64`: the
    /// sum over ranks wraps to the exact total). One cycle at a time within the run, the blocks kept in their
    /// part: a `run_until` per cycle moves every block out of the fabric and back, which made the drain of a
    /// large fabric (a thousand cycles and more) take longer than its traffic.
    #[cfg(feature = "mpi")]
    pub fn run_counting_in_flight(&mut self, end: u64, shares: &mut Vec<u64>) {
        assert!(
            self.tap.is_none() && self.hand_ins.is_none() && self.dist.is_some(),
            "counting in flight by cycle is for an MPI-split fabric without capture"
        );
        self.run_parts(end, Some(shares));
    }

    /// The part this process steps when split across MPI ranks (`None`: not split, every part).
    #[cfg(feature = "mpi")]
    fn own_part(&self) -> Option<u32> {
        self.dist.as_ref().map(|d| d.rank())
    }

    /// The part this process steps when split across MPI ranks (`None`: not split, every part).
    #[cfg(not(feature = "mpi"))]
    fn own_part(&self) -> Option<u32> {
        None
    }

    /// What event-driven stepping did so far (see [`StepWork`]).
    pub fn step_work(&self) -> StepWork {
        self.sched.work
    }

    /// Per thread, where the wall time of the threaded runs so far went (empty with one thread or under
    /// MPI).
    pub fn thread_times(&self) -> &[ThreadTime] {
        &self.sched.thread_times
    }

    /// Every wire's items with their due cycles, in topology order (switch ports, then HCAs): a fingerprint
    /// of what is in flight, for equivalence tests.
    pub fn wires_fingerprint(&self) -> String {
        let mut out = String::new();
        for w in self
            .sw_in
            .iter()
            .flatten()
            .flatten()
            .chain(self.hca_in.iter())
        {
            for (at, e) in w.items() {
                out += &format!("{at}:{e:?};");
            }
            out.push('\n');
        }
        out
    }

    /// Event-driven stepping to `end` on the partition's threads.
    /// Under MPI with `counts`, this rank's part runs one cycle at a time, its share of the packets in flight
    /// pushed before each (see [`Fabric::run_counting_in_flight`]).
    fn run_parts(&mut self, end: u64, counts: Option<&mut Vec<u64>>) {
        if self.now >= end {
            return;
        }
        #[cfg(not(feature = "mpi"))]
        let _ = &counts;
        #[cfg(feature = "mpi")]
        let mut counts = counts;
        self.ensure_partition();
        let nparts = self.sched.parts;
        let (sw_part, mut parts, sw_loc, hca_loc) = self.parts_out();
        let own = self.own_part();
        for p in &mut parts {
            if own.is_none_or(|o| o == p.id) {
                p.prepare(self.now, self.prefetch);
            }
        }
        #[cfg(feature = "mpi")]
        let mut inbox = Vec::new();
        let links = Links {
            sw_loc: &sw_loc,
            hca_loc: &hca_loc,
            sw_out: &self.sw_out,
            hca_out: &self.hca_out,
        };
        let mut t0 = self.now;
        // Threads ran (not one part, nor one rank's part under MPI): their times are summed below.
        let mut threaded = false;
        while t0 < end {
            #[cfg(feature = "mpi")]
            if let Some(d) = self.dist.as_deref_mut() {
                // One part per rank: run ours to the next synchronisation point (a multiple of the
                // lookahead, the same on every rank whatever the calls), then the all-to-all of the outboxes
                // (see `dist`).
                let sync = next_sync(t0, self.sched.lookahead);
                let t1 = sync.min(end);
                let me = d.rank() as usize;
                if let Some(p) = parts.get_mut(me) {
                    if let Some(c) = counts.as_deref_mut() {
                        let wires = self.wire_pkts as i64;
                        for t in t0..t1 {
                            c.push(p.in_flight_at(t, wires) as u64);
                            p.run(&links, t + 1);
                        }
                    } else {
                        p.run(&links, t1);
                    }
                    d.defer(&mut p.outbox);
                } else if let Some(c) = counts.as_deref_mut() {
                    // A rank without a part (more ranks than switches) counts too: the ranks' sums are
                    // element by element.
                    c.extend((t0..t1).map(|_| self.wire_pkts));
                }
                if t1 == sync {
                    d.exchange(&mut inbox);
                    if let Some(p) = parts.get_mut(me) {
                        for (rx, t, ev) in inbox.drain(..) {
                            let (_, idx) = links.loc(rx);
                            p.deliver(rx, idx as usize, t, ev);
                        }
                    }
                }
                t0 = t1;
                continue;
            }
            if nparts == 1 {
                parts[0].run(&links, end);
            } else {
                run_threads(&mut parts, &links, t0, end, self.sched.lookahead);
                threaded = true;
            }
            t0 = end;
        }
        // Every block brought to `end` (other ranks' blocks are never stepped here and hold no meaning),
        // then back into the fabric in topology order.
        for p in &mut parts {
            if own.is_none_or(|o| o == p.id) {
                for sw in &mut p.switches {
                    let n = end - sw.now();
                    sw.skip(n);
                }
                for hc in &mut p.hcas {
                    let n = end - hc.port_now();
                    hc.skip(n);
                }
            }
        }
        self.unpart(&mut parts, &sw_part, &hca_loc);
        for p in &parts {
            self.sched.work.add(&p.work);
        }
        if threaded {
            self.sched
                .thread_times
                .resize(nparts, ThreadTime::default());
            for (acc, p) in self.sched.thread_times.iter_mut().zip(&parts) {
                acc.stepping_seconds += p.time.stepping_seconds;
                acc.exchange_seconds += p.time.exchange_seconds;
                acc.waiting_seconds += p.time.waiting_seconds;
                acc.windows += p.time.windows;
            }
        }
        let delta: i64 = parts.iter().map(|p| p.wire_pkts).sum();
        self.wire_pkts = (self.wire_pkts as i64 + delta) as u64;
        self.now = end;
        self.sched.sw_part = sw_part;
        self.sched.spare = parts;
    }

    /// Moves the blocks and their input wires into their parts (cheap: the structs hold pointers; one part
    /// takes the vectors whole) and returns every switch's and HCA's part and index in it.
    fn share_out(&mut self, parts: &mut [Part], sw_part: &[u32]) -> (Vec<Loc>, Vec<Loc>) {
        let mut sw_loc = Vec::with_capacity(sw_part.len());
        let mut hca_loc = Vec::with_capacity(self.hcas.len());
        if parts.len() == 1 {
            // Everything in one part: the vectors move whole, in topology order.
            let p = &mut parts[0];
            p.switches = std::mem::take(&mut self.switches);
            p.sw_in = std::mem::take(&mut self.sw_in);
            p.hcas = std::mem::take(&mut self.hcas);
            p.hca_in = std::mem::take(&mut self.hca_in);
            p.sw_ids.extend(0..p.switches.len());
            p.hca_ids.extend(0..p.hcas.len());
            sw_loc.extend((0..p.switches.len() as u32).map(|s| (0, s)));
            hca_loc.extend((0..p.hcas.len() as u32).map(|h| (0, h)));
        } else {
            // Drained, not taken: the fabric's vectors and the parts' keep their allocations from call to
            // call (a large fabric's HCAs are hundreds of KB; allocated afresh, they came back as new pages,
            // and clearing them cost more than a window's work).
            for (s, (sw, ins)) in self
                .switches
                .drain(..)
                .zip(self.sw_in.drain(..))
                .enumerate()
            {
                let k = sw_part[s];
                let p = &mut parts[k as usize];
                sw_loc.push((k, p.switches.len() as u32));
                p.sw_ids.push(s);
                p.switches.push(sw);
                p.sw_in.push(ins);
            }
            for (h, (hc, w)) in self.hcas.drain(..).zip(self.hca_in.drain(..)).enumerate() {
                let k = match self.hca_out[h] {
                    Rx::Switch(s, _) => sw_part[s],
                    Rx::Hca(_) => 0,
                };
                let p = &mut parts[k as usize];
                hca_loc.push((k, p.hcas.len() as u32));
                p.hca_ids.push(h);
                p.hcas.push(hc);
                p.hca_in.push(w);
            }
        }
        (sw_loc, hca_loc)
    }

    /// Moves the blocks of the parts back into the fabric in topology order (the inverse of
    /// [`Fabric::share_out`]).
    fn unpart(&mut self, parts: &mut [Part], sw_part: &[u32], hca_loc: &[Loc]) {
        if let [p] = parts {
            self.switches = std::mem::take(&mut p.switches);
            self.sw_in = std::mem::take(&mut p.sw_in);
            self.hcas = std::mem::take(&mut p.hcas);
            self.hca_in = std::mem::take(&mut p.hca_in);
            return;
        }
        let mut sw_iters: Vec<_> = parts
            .iter_mut()
            .map(|p| (p.switches.drain(..), p.sw_in.drain(..)))
            .collect();
        self.switches.reserve(sw_part.len());
        self.sw_in.reserve(sw_part.len());
        for &k in sw_part {
            let (a, b) = &mut sw_iters[k as usize];
            self.switches
                .push(a.next().expect("every switch is in its part"));
            self.sw_in.push(b.next().expect("with its wires"));
        }
        drop(sw_iters);
        let mut h_iters: Vec<_> = parts
            .iter_mut()
            .map(|p| (p.hcas.drain(..), p.hca_in.drain(..)))
            .collect();
        self.hcas.reserve(hca_loc.len());
        self.hca_in.reserve(hca_loc.len());
        for &(k, _) in hca_loc {
            let (a, b) = &mut h_iters[k as usize];
            self.hcas.push(a.next().expect("every HCA is in its part"));
            self.hca_in.push(b.next().expect("with its wire"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::partition;

    #[test]
    fn partition_deals_every_kind_of_switch_evenly() {
        // The 648-port Clos: 36 leaves of weight 72 (36 ports + 18 HCAs of 2), 18 spines of 36.
        let mut w = vec![72u64; 36];
        w.extend(vec![36u64; 18]);
        for parts in [2u32, 3, 6] {
            let p = partition(&w, parts as usize);
            for k in 0..parts {
                let leaves = p[..36].iter().filter(|&&x| x == k).count();
                let spines = p[36..].iter().filter(|&&x| x == k).count();
                assert_eq!(
                    (leaves, spines),
                    (36 / parts as usize, 18 / parts as usize),
                    "{parts} parts: {p:?}"
                );
            }
        }
        // Leaves go round the parts in index order.
        assert_eq!(&partition(&w, 2)[..4], &[0, 1, 0, 1]);
        assert_eq!(partition(&w, 1), vec![0; 54]);
        // Heaviest first: one heavy switch alone, the light ones together.
        assert_eq!(partition(&[1, 1, 1, 1, 4], 2), vec![1, 1, 1, 1, 0]);
        assert_eq!(partition(&[5], 4), vec![0]);
        assert_eq!(partition(&[], 3), Vec::<u32>::new());
    }
}
