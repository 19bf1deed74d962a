//! The fabric: one `switch_asic::Switch` per topology switch, one [`Hca`] per topology HCA, and a
//! fixed-latency [`Wire`] in each direction of every link carrying packet heads and flow-control packets.
//!
//! # One cycle
//! 1. Everything due on a wire this cycle is handed to its receiver (`rx_packet` / `rx_fc`).
//! 2. Every switch and every HCA steps once; what each puts on its link goes onto the wire towards the far
//!    end, due `latency >= 1` cycles later.
//!
//! A block only sees what arrived by wire, i.e. what another block produced at least one cycle before, so
//! the order in which blocks step never changes a result.
//!
//! # Conversions
//! A link of `R` Mbit/s at a core clock of `F` MHz moves exactly `R / (8 F)` bytes per cycle (4x DDR,
//! 16 000 Mbit/s at 1 GHz: 2 bytes per cycle); a latency of `L` ns is `ceil(L F / 1000)` cycles, at least 1.
//! HCA `h` has LID `FIRST_HCA_LID + h`; the switches' forwarding tables come from `Topology::routes`.
//!
//! # RoCEv2 mode
//! With a `[roce]` section every port runs PFC ([`roce`]): wires also carry pause frames, and a quiet fabric is
//! checked for empty buffers instead of matching credits.

mod cc;
#[cfg(feature = "mpi")]
pub mod dist;
pub mod event;
pub mod hca;
pub mod roce;
pub mod rrcc;
pub mod tap;
pub mod traffic;
mod wheel;

use hca_model::port::EndpointOut;
use rtl_model::link::serial::Wire;
use switch_asic::port_mask::all_ports;
use switch_asic::{LinkRate, PacketStart, PortConfig, Switch, SwitchConfig, TxEvent};

use crate::scenario::{CcAlgorithm, Scenario};
use crate::topology::End;
pub use hca::{Hca, RxCount, TxFlow};

/// A fabric assembly error, naming the setting and the value.
#[derive(Debug, thiserror::Error)]
pub enum FabricError {
    /// A link rate or latency that does not convert to the core clock.
    #[error("link {link} ({a} - {b}): {why}")]
    Link {
        /// Link index in the topology.
        link: usize,
        /// Name of one end.
        a: String,
        /// Name of the other end.
        b: String,
        /// What is wrong.
        why: String,
    },
    /// A switch or HCA setting the models reject.
    #[error("{node}: {source}")]
    Config {
        /// The switch or HCA.
        node: String,
        /// The models' error (names the setting).
        source: switch_asic::ConfigError,
    },
    /// HCA congestion-control settings the reaction point rejects.
    #[error("hca_cc for flow {flow}: {why}")]
    Cc {
        /// Flow id.
        flow: String,
        /// What is wrong.
        why: String,
    },
    /// A flow's arrival pattern that the traffic generator rejects.
    #[error("flow {flow}: pattern: {why}")]
    Traffic {
        /// Flow id.
        flow: String,
        /// What is wrong.
        why: String,
    },
    /// Routing failed.
    #[error("routing: {0}")]
    Routes(#[from] crate::topology::TopologyError),
    /// A time that does not fit the model's cycle count (a scenario built in code, past the parser's
    /// ranges).
    #[error("{0} does not fit the model's 2^40-cycle horizon (docs/scenario-format.md, Limits and warnings)")]
    Limit(String),
}

/// What travels on a wire.
#[derive(Debug, Clone, Copy)]
enum Ev {
    Pkt(PacketStart),
    Fc(switch_asic::FcPacket),
    Pause(rtl_model::wire::pfc::Repr),
}

/// Where a wire ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rx {
    Switch(usize, usize),
    Hca(usize),
}

/// Bytes of one item on a wire (its due cycle and the item), for memory estimates.
pub const WIRE_ITEM_BYTES: usize = std::mem::size_of::<(u64, Ev)>();

/// A fault [`Fabric::inject_fault`] makes (tests of the integrity check only).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A switch delivers a packet twice.
    DuplicatePacket,
    /// A switch drops a packet.
    DropPacket,
    /// A switch returns one credit block too few.
    LeakCredit,
    /// A switch returns one credit block too many.
    ExtraCredit,
    /// A switch changes a field the ICRC covers (the SLID) of a packet it forwards.
    CorruptPacket,
}

/// The assembled fabric. See the module documentation.
#[derive(Debug)]
pub struct Fabric {
    now: u64,
    /// The switches, in topology order.
    pub switches: Vec<Switch>,
    /// The switch names.
    pub switch_names: Vec<String>,
    /// The HCAs, in topology order.
    pub hcas: Vec<Hca>,
    /// Wire into switch `s`, port `p` (0-based), and where that port's output goes.
    sw_in: Vec<Vec<Option<Wire<Ev>>>>,
    sw_out: Vec<Vec<Option<Rx>>>,
    /// Wire into HCA `h`, and where its output goes.
    hca_in: Vec<Wire<Ev>>,
    hca_out: Vec<Rx>,
    /// Packet heads on wires.
    wire_pkts: u64,
    /// The events of the switch being stepped (preallocated).
    events: Vec<TxEvent>,
    /// Cycles per microsecond.
    pub cycles_per_us: u64,
    vls: u8,
    max_latency: u64,
    switch_buf: u16,
    hca_buf: u16,
    /// Wires whose traffic is recorded for a capture (`None`: no capture, nothing recorded).
    tap: Option<Box<tap::Tap>>,
    /// Per switch, whether its hand-ins are logged (switch port traces), and the log: (switch, cycle, port,
    /// item).
    hand_ins: Option<(Vec<bool>, Vec<HandInLog>)>,
    /// RoCEv2 mode (PFC instead of credits).
    roce: bool,
    /// Threads for [`Fabric::run_until`] (1: the calling thread only).
    threads: usize,
    /// Whether [`Fabric::run_until`] prefetches the state of the blocks it visits next.
    prefetch: event::Prefetch,
    /// Wake-up cycles of the event-driven [`Fabric::run_until`].
    sched: event::Sched,
    /// The split across MPI ranks (`None`: this process steps every block).
    #[cfg(feature = "mpi")]
    dist: Option<Box<dist::Dist>>,
}

/// Exact bytes per cycle of `rate_mbps` at `clock_mhz`.
pub fn link_rate(rate_mbps: u64, clock_mhz: u32) -> Result<LinkRate, String> {
    let num = u32::try_from(rate_mbps).map_err(|_| format!("rate {rate_mbps} Mbit/s too large"))?;
    LinkRate::new(num, 8 * clock_mhz)
        .map_err(|e| format!("rate {rate_mbps} Mbit/s at {clock_mhz} MHz: {}", e.reason))
}

/// Cycles of `latency_ns` at `clock_mhz`, rounded up, at least 1 (a wire's minimum). Saturates where the
/// product would not fit (the scenario's ranges keep it far below; [`Fabric::new`] refuses such a link).
pub fn latency_cycles(latency_ns: u64, clock_mhz: u32) -> u64 {
    crate::scenario::limits::ns_to_cycles(latency_ns, clock_mhz)
        .unwrap_or(u64::MAX)
        .max(1)
}

/// A logged hand-in: (switch, cycle, port, item).
pub type HandInLog = (usize, u64, usize, tap::TapEvent);

/// A wire item as a capture shows it.
fn tap_event(ev: Ev) -> tap::TapEvent {
    match ev {
        Ev::Pkt(p) => tap::TapEvent::Packet(p),
        Ev::Fc(f) => tap::TapEvent::Fc(f),
        Ev::Pause(f) => tap::TapEvent::Pause(f),
    }
}

/// Hands an item due on switch port `p`'s wire to the switch; whether it was a packet head. A refusal is
/// counted by the switch (`rx_errors`) and reported as a violation.
fn hand_to_switch(sw: &mut Switch, p: usize, e: Ev) -> bool {
    let _ = match e {
        Ev::Pkt(pk) => sw.rx_packet(p, pk),
        Ev::Fc(fc) => sw.rx_fc(p, fc),
        Ev::Pause(f) => sw.rx_pause(p, f),
    };
    matches!(e, Ev::Pkt(_))
}

/// Hands an item due at `t` on an HCA's wire to it; whether it was a packet head.
fn hand_to_hca(hc: &mut Hca, t: u64, e: Ev) -> bool {
    match e {
        Ev::Pkt(pk) => hc.rx_packet(t, pk),
        Ev::Fc(fc) => hc.rx_fc(fc),
        Ev::Pause(f) => hc.rx_pause(f),
    }
    matches!(e, Ev::Pkt(_))
}

/// A switch output as the port it leaves and the item on that port's wire.
fn wire_item(e: TxEvent) -> (u8, Ev) {
    match e {
        TxEvent::Packet { port, start } => (port, Ev::Pkt(start)),
        TxEvent::Fc { port, fc } => (port, Ev::Fc(fc)),
        TxEvent::Pause { port, frame } => (port, Ev::Pause(frame)),
    }
}

/// Hands what an HCA step puts on its wire to `push`, in wire order (packet head, flow-control packet,
/// pause frame), each where it is known: the one order for the event loop and the cycle-by-cycle
/// reference, without building a chained iterator of the three on the per-step path.
#[inline(always)]
fn hca_items(o: EndpointOut, mut push: impl FnMut(Ev)) {
    let EndpointOut { pkt, fc, pause } = o;
    if let Some(p) = pkt {
        push(Ev::Pkt(p));
    }
    if let Some(f) = fc {
        push(Ev::Fc(f));
    }
    if let Some(f) = pause {
        push(Ev::Pause(f));
    }
}

impl Fabric {
    /// Builds the fabric of `sc`.
    pub fn new(sc: &Scenario) -> Result<Self, FabricError> {
        let topo = &sc.topology;
        let set = &sc.settings;
        let clock = set.clock_mhz;
        let name_of = |e: End| match e {
            End::Switch { switch, port } => format!("{}:{port}", topo.switches[switch].name),
            End::Hca { hca } => topo.hcas[hca].name.clone(),
        };
        let mut rates = Vec::with_capacity(topo.links.len());
        for (i, l) in topo.links.iter().enumerate() {
            let r = link_rate(l.rate_mbps, clock).map_err(|why| FabricError::Link {
                link: i,
                a: name_of(l.a),
                b: name_of(l.b),
                why,
            })?;
            let lat =
                crate::scenario::limits::ns_to_cycles(l.latency_ns, clock).ok_or_else(|| {
                    FabricError::Limit(format!("link {i}: latency_ns = {}", l.latency_ns))
                })?;
            rates.push((r, lat.max(1)));
        }
        let lfts = topo.routes()?;
        let mtu = sc.flows.iter().map(|f| f.mtu).max().unwrap_or(256);
        let roce_frame_blocks = sc
            .roce
            .map(|r| roce::frame_bytes(mtu, r.frame_overhead_bytes).div_ceil(64));
        let mut switches = Vec::new();
        let mut sw_in = Vec::new();
        let mut sw_out = Vec::new();
        for (s, node) in topo.switches.iter().enumerate() {
            // `[switch_cc]`, `[settings]` sl2vl/vl_arb and this switch's overrides.
            let ss = sc.switch_settings(s);
            let mut ports = Vec::new();
            let mut ins = Vec::new();
            let mut outs = Vec::new();
            for p in 0..usize::from(node.ports) {
                let (rate, wire, out) = match topo.switch_port_link[s][p] {
                    Some(l) => {
                        let (r, lat) = rates[l];
                        let far = topo.peer(
                            l,
                            End::Switch {
                                switch: s,
                                port: p as u8 + 1,
                            },
                        );
                        let rx = match far {
                            End::Switch { switch, port } => {
                                Rx::Switch(switch, usize::from(port) - 1)
                            }
                            End::Hca { hca } => Rx::Hca(hca),
                        };
                        (r, Some(Wire::new(lat)), Some(rx))
                    }
                    // An unconnected port: never receives, never sends.
                    None => (LinkRate { num: 1, den: 1 }, None, None),
                };
                let mut pc = PortConfig::new(rate, set.switch_vl_buf_blocks)
                    .with_vls(set.data_vls, set.switch_vl_buf_blocks);
                pc.fc_interval = set.fc_interval_cycles;
                pc.speedup = set.switch_speedup;
                pc.cc = ss.port_cc(p as u8 + 1);
                if let Some(a) = &ss.vl_arb {
                    pc.vlarb = a.table();
                }
                if ss.cc.mark_mode == switch_asic::config::MarkMode::Lfsr {
                    pc.cc.mark_mode = ss.cc.mark_mode;
                    pc.cc.lfsr_seed = roce::lfsr_seed(sc.seed, s, p);
                }
                if let (Some(r), Some(fb), Some(_)) = (&sc.roce, roce_frame_blocks, wire.as_ref()) {
                    let lat = topo.switch_port_link[s][p].map_or(1, |l| rates[l].1);
                    pc.pfc = Some(roce::pfc_config(r, rate, lat, fb, clock));
                    pc.cc.roce_detect = roce::detect(r);
                }
                ports.push(pc);
                ins.push(wire);
                outs.push(out);
            }
            let mut cfg = SwitchConfig::uniform(ports.len(), ports[0].clone());
            cfg.ports = ports;
            // Unset: the look-ahead allocator (the RTL twin's), the same-cycle one on PFC ports (the only
            // one they have).
            cfg.allocator =
                set.switch_allocator
                    .unwrap_or(if cfg.ports.iter().any(|p| p.pfc.is_some()) {
                        switch_asic::config::Allocator::SameCycle
                    } else {
                        switch_asic::config::Allocator::Lookahead
                    });
            if let Some(t) = ss.sl2vl {
                cfg.sl2vl = vec![rtl_model::mad::sl2vl::Sl2VlTable { vl: t }];
            }
            if !ss.sl2vl_scopes.is_empty() {
                // One table per (input, output) pair, input-major, as switch-asic indexes them.
                let n = cfg.ports.len();
                let mut pairs = Vec::with_capacity(n * n);
                for i in 0..n {
                    for o in 0..n {
                        let mut t = *cfg.sl2vl_of(i, o);
                        // Ports are 1-based in the scenario, at most 255 (checked by the topology).
                        let (pi, po) = ((i + 1) as u8, (o + 1) as u8);
                        if let Some(s) = ss.sl2vl_scopes.iter().rev().find(|s| s.covers(pi, po)) {
                            t = rtl_model::mad::sl2vl::Sl2VlTable { vl: s.sl2vl };
                        }
                        pairs.push(t);
                    }
                }
                cfg.sl2vl = pairs;
            }
            cfg.mtu = mtu;
            for (h, &port) in lfts[s].iter().enumerate() {
                cfg.route(topo.hca_lid(h), port - 1);
            }
            let mut sw = Switch::new(cfg).map_err(|source| FabricError::Config {
                node: node.name.clone(),
                source,
            })?;
            sw.set_fc_repeats_off(all_ports(sw.ports()));
            switches.push(sw);
            sw_in.push(ins);
            sw_out.push(outs);
        }
        let mut hcas = Vec::new();
        let mut hca_in = Vec::new();
        let mut hca_out = Vec::new();
        // Per-flow tables indexed by flow where every HCA's entry for every flow fits in this many entries
        // in all (about 100 bytes each), searched otherwise (see `hca_model::hca::FlowTable`).
        const DENSE_FLOW_ENTRIES: usize = 1 << 20;
        let dense_flows = sc.flows.len().saturating_mul(topo.hcas.len()) <= DENSE_FLOW_ENTRIES;
        for (h, node) in topo.hcas.iter().enumerate() {
            let l = topo.hca_link[h];
            let (r, lat) = rates[l];
            let mut hc = Hca::new(
                topo.hca_lid(h),
                r,
                set.data_vls,
                set.hca_vl_buf_blocks,
                set.fc_interval_cycles,
                sc.flows.len(),
            )
            .map_err(|source| FabricError::Config {
                node: node.name.clone(),
                source,
            })?;
            if dense_flows {
                hc.dense_flow_tables();
            }
            if let Some(t) = sc.sl2vl() {
                hc.set_sl2vl(t);
            }
            hc.set_acks(sc.settings.acks);
            if let Some(a) = &sc.settings.vl_arb {
                hc.set_vl_arb(&a.table())
                    .map_err(|source| FabricError::Config {
                        node: node.name.clone(),
                        source,
                    })?;
            }
            if let Some(cap) = sc.host_cap_mbps(h) {
                hc.set_host_cap(cap, clock);
            }
            if let (Some(ro), Some(fb)) = (&sc.roce, roce_frame_blocks) {
                hc.set_roce(
                    roce::pfc_config(ro, r, lat, fb, clock),
                    fb,
                    ro.frame_overhead_bytes,
                )
                .map_err(|source| FabricError::Config {
                    node: node.name.clone(),
                    source,
                })?;
            }
            if let Some(cap) = sc.drain_cap_mbps(h) {
                hc.set_drain_cap(cap, clock)
                    .map_err(|source| FabricError::Config {
                        node: node.name.clone(),
                        source,
                    })?;
            }
            hc.set_fc_repeats_off(true);
            hcas.push(hc);
            hca_in.push(Wire::new(lat));
            hca_out.push(match topo.peer(l, End::Hca { hca: h }) {
                End::Switch { switch, port } => Rx::Switch(switch, usize::from(port) - 1),
                End::Hca { hca } => Rx::Hca(hca),
            });
        }
        let cycles_per_us = u64::from(clock);
        let cycles = |what: &str, us: u64| {
            crate::scenario::limits::us_to_cycles(us, clock)
                .ok_or_else(|| FabricError::Limit(format!("{what} = {us}")))
        };
        cycles("duration_us", sc.duration_us)?;
        for (i, f) in sc.flows.iter().enumerate() {
            let start = cycles(&format!("flow {} start_us", f.id), f.start_us)?;
            let stop = match f.stop_us {
                Some(s) => cycles(&format!("flow {} stop_us", f.id), s)?,
                None => u64::MAX,
            };
            let mut tf = TxFlow::new(
                i as u32,
                topo.hca_lid(f.dst),
                f.sl,
                f.mtu,
                f.message_bytes,
                start,
                stop,
            );
            let src = traffic::MsgSource::new(
                traffic::pattern(f.pattern),
                clock,
                f.message_bytes,
                start,
                stop,
                traffic::flow_seed(sc.seed, i),
                set.max_queued_messages,
            )
            .map_err(|why| FabricError::Traffic {
                flow: f.id.clone(),
                why,
            })?;
            tf = tf.with_source(src);
            if let Some(cc) = &sc.hca_cc_of(f.src) {
                let rate = topo.links[topo.hca_link[f.src]].rate_mbps;
                let cc_err = |why| FabricError::Cc {
                    flow: f.id.clone(),
                    why,
                };
                if cc.algorithm == CcAlgorithm::Rrcc {
                    tf = tf.with_cc(rrcc::sender(cc, rate, clock).map_err(cc_err)?);
                    let rx = rrcc::receiver(cc, f.mtu, rate, clock).map_err(cc_err)?;
                    hcas[f.dst].set_rrcc_receiver(i, rx);
                } else {
                    tf = tf.with_cc(cc::reaction_point(cc, f.mtu, rate, clock).map_err(cc_err)?);
                }
            }
            if let Some(r) = &sc.roce {
                let rate = topo.links[topo.hca_link[f.src]].rate_mbps;
                let c =
                    roce::reaction_point(r, f.mtu, rate, clock).map_err(|why| FabricError::Cc {
                        flow: f.id.clone(),
                        why,
                    })?;
                if let Some(c) = c {
                    tf = tf.with_controller(c);
                }
            }
            hcas[f.src].add_flow(tf);
            hcas[f.src].note_flow(i);
            hcas[f.dst].note_flow(i);
        }
        let roce_np = sc
            .roce
            .is_some_and(|r| r.reaction != crate::scenario::roce::Reaction::None);
        if sc.hca_cc.is_some_and(|c| c.algorithm == CcAlgorithm::Ib) || roce_np {
            for h in &mut hcas {
                h.set_notification_point(true);
                if let Some(r) = &sc.roce {
                    h.set_cnp_interval(r.cnp_interval_us * cycles_per_us);
                }
            }
        }
        Ok(Fabric {
            now: 0,
            switches,
            switch_names: topo.switches.iter().map(|s| s.name.clone()).collect(),
            hcas,
            sw_in,
            sw_out,
            hca_in,
            hca_out,
            wire_pkts: 0,
            events: Vec::with_capacity(256),
            cycles_per_us,
            vls: set.data_vls,
            max_latency: rates.iter().map(|r| r.1).max().unwrap_or(1),
            switch_buf: set.switch_vl_buf_blocks,
            hca_buf: set.hca_vl_buf_blocks,
            tap: None,
            hand_ins: None,
            roce: sc.roce.is_some(),
            threads: 1,
            prefetch: event::Prefetch::Auto,
            sched: event::Sched::default(),
            #[cfg(feature = "mpi")]
            dist: None,
        })
    }

    /// The longest wire latency in cycles.
    pub fn max_latency(&self) -> u64 {
        self.max_latency
    }

    /// The current cycle (the next to be stepped).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Records what is put on the wires into `ends` from now on (see [`tap::Tap`]); an empty list removes
    /// the tap.
    pub fn set_tap(&mut self, ends: &[tap::WireEnd]) {
        self.tap = (!ends.is_empty()).then(|| Box::new(tap::Tap::new(ends)));
        // A capture shows every flow-control packet, repeats included.
        self.leave_off_fc_repeats(ends.is_empty());
    }

    /// Whether switches and HCAs leave off the timer-fired flow-control packets that repeat the last one on
    /// their wire (on by default; [`switch_asic::switch::Switch::set_fc_repeats_off`],
    /// [`hca_model::port::Endpoint::set_fc_repeats_off`]: their receivers would set ABR and the limit
    /// to the values they hold, so only the wire's contents differ).
    pub fn leave_off_fc_repeats(&mut self, on: bool) {
        for sw in &mut self.switches {
            sw.set_fc_repeats_off(if on { all_ports(sw.ports()) } else { 0 });
        }
        for h in &mut self.hcas {
            h.set_fc_repeats_off(on);
        }
    }

    /// Logs every item handed to the switches in `switches` from now on, in the order handed in (an empty
    /// list stops): what a switch port trace records. While logging, [`Fabric::run_until`] single-steps
    /// (the same results).
    pub fn log_hand_ins(&mut self, switches: &[usize]) {
        self.hand_ins = (!switches.is_empty()).then(|| {
            let mut on = vec![false; self.switches.len()];
            for &s in switches {
                on[s] = true;
            }
            (on, Vec::new())
        });
    }

    /// Moves the hand-ins logged since the last call into `into`.
    pub fn take_hand_ins(&mut self, into: &mut Vec<HandInLog>) {
        if let Some((_, log)) = self.hand_ins.as_mut() {
            into.append(log);
        }
    }

    /// Moves what the tap recorded since the last call into `into`.
    pub fn take_tapped(&mut self, into: &mut Vec<tap::Tapped>) {
        if let Some(t) = self.tap.as_mut() {
            t.take(into);
        }
    }

    /// Hands `ev`, put at `t` on the wire into `rx`, to the tap if there is one.
    fn tap_ev(&mut self, t: u64, rx: Rx, ev: Ev) {
        if let Some(tap) = self.tap.as_mut() {
            let to = match rx {
                Rx::Switch(s, p) => tap::WireEnd::Switch(s, p),
                Rx::Hca(h) => tap::WireEnd::Hca(h),
            };
            tap.record(t, to, tap_event(ev));
        }
    }

    fn wire_to(&mut self, rx: Rx) -> &mut Wire<Ev> {
        match rx {
            Rx::Switch(s, p) => self.sw_in[s][p]
                .as_mut()
                .expect("a connected port's peer is connected"),
            Rx::Hca(h) => &mut self.hca_in[h],
        }
    }

    /// Makes this fabric the all-eager reference (or not): every switch clocks every port and block every
    /// cycle (`Switch::set_eager`). Together with [`Fabric::step`], which steps every switch and every HCA
    /// in every cycle, that is the plain cycle-by-cycle model the differential tests compare the
    /// event-driven [`Fabric::run_until`] with: none of the blocks' own `next_event`/`skip` shortcuts is
    /// taken. Results are identical either way by contract; only the cost differs.
    pub fn set_eager(&mut self, on: bool) {
        for sw in &mut self.switches {
            sw.set_eager(on);
        }
    }

    /// One cycle of the whole fabric.
    pub fn step(&mut self) {
        let t = self.now;
        for (s, sw) in self.switches.iter_mut().enumerate() {
            for (p, w) in self.sw_in[s].iter_mut().enumerate() {
                let Some(w) = w else { continue };
                while let Some(e) = w.pop_due(t) {
                    if let Some((on, log)) = &mut self.hand_ins {
                        if on[s] {
                            log.push((s, t, p, tap_event(e)));
                        }
                    }
                    self.wire_pkts -= u64::from(hand_to_switch(sw, p, e));
                }
            }
        }
        for (h, hc) in self.hcas.iter_mut().enumerate() {
            while let Some(e) = self.hca_in[h].pop_due(t) {
                self.wire_pkts -= u64::from(hand_to_hca(hc, t, e));
            }
        }
        for s in 0..self.switches.len() {
            self.events.clear();
            self.events.extend_from_slice(self.switches[s].step());
            for i in 0..self.events.len() {
                let (port, ev) = wire_item(self.events[i]);
                if let Some(rx) = self.sw_out[s][usize::from(port)] {
                    self.wire_pkts += u64::from(matches!(ev, Ev::Pkt(_)));
                    self.wire_to(rx).push(t, ev);
                    self.tap_ev(t, rx, ev);
                }
            }
        }
        for h in 0..self.hcas.len() {
            let out = self.hcas[h].step(t);
            let rx = self.hca_out[h];
            hca_items(out, |ev| {
                self.wire_pkts += u64::from(matches!(ev, Ev::Pkt(_)));
                self.wire_to(rx).push(t, ev);
                self.tap_ev(t, rx, ev);
            });
        }
        self.now += 1;
    }

    /// Threads [`Fabric::run_until`] steps on (at least 1).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Sets the threads [`Fabric::run_until`] steps on; results do not depend on it. With more than one, the
    /// switches are dealt to the threads' parts here, and the blocks' state re-allocated part by part (see
    /// `Fabric::regroup`): a copy of the fabric's state, paid once, not at each run.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
        self.ensure_partition();
    }

    /// Whether [`Fabric::run_until`] has the state of the blocks it visits next fetched into cache while it
    /// steps the current one (see [`event::Prefetch`]); results do not depend on it.
    pub fn set_prefetch(&mut self, mode: event::Prefetch) {
        self.prefetch = mode;
    }

    /// Whether this process steps switch `s` (always, unless the fabric is split across MPI ranks).
    pub fn owns_sw(&self, s: usize) -> bool {
        #[cfg(feature = "mpi")]
        if let Some(d) = &self.dist {
            return d.owns_sw(s);
        }
        let _ = s;
        true
    }

    /// Whether this process steps HCA `h` (always, unless the fabric is split across MPI ranks).
    pub fn owns_hca(&self, h: usize) -> bool {
        #[cfg(feature = "mpi")]
        if let Some(d) = &self.dist {
            return d.owns_hca(h);
        }
        let _ = h;
        true
    }

    /// Packets on wires, held in switches, or arriving at an HCA.
    pub fn packets_in_flight(&self) -> u64 {
        self.wire_pkts
            + held_or_arriving(self.switches.iter(), self.hcas.iter().map(Hca::receiving)) as u64
    }

    /// No packet in flight (periodic flow-control packets never stop, so they do not count).
    pub fn quiet(&self) -> bool {
        self.packets_in_flight() == 0
    }

    /// Credit blocks that a quiet fabric has lost or gained: for every link direction and VL, the sender's
    /// credit differs from the receiver's buffer, or a receiver's buffer is not empty. Zero once flow-control
    /// packets have resynchronised every link after traffic stopped. Split across MPI ranks: this rank's
    /// blocks' share (the ranks' shares sum to the whole).
    pub fn credits_leaked(&self) -> u64 {
        if self.roce {
            return self.roce_blocks_held();
        }
        let mut leak = 0u64;
        self.credit_counts(|have, full, used| {
            leak += u64::from(have.abs_diff(full)) + u64::from(used);
        });
        leak
    }

    /// Of [`Fabric::credits_leaked`], the blocks gained rather than lost: a sender with more credit than its
    /// receiver's buffer, a receive buffer with more free blocks than it has. Split across MPI ranks: this
    /// rank's share.
    pub fn credits_gained(&self) -> u64 {
        if self.roce {
            return 0;
        }
        let mut gained = 0u64;
        self.credit_counts(|have, full, _| gained += u64::from(have.saturating_sub(full)));
        gained
    }

    /// Calls `f(have, full, used)` for every credit count this rank owns, per VL: a switch output's credit
    /// against its receiver's buffer (with the blocks its own input buffer still holds), an HCA's credit
    /// against the switch buffer, and an HCA's free receive blocks against its buffer.
    fn credit_counts(&self, mut f: impl FnMut(u16, u16, u16)) {
        for (s, sw) in self.switches.iter().enumerate() {
            if !self.owns_sw(s) {
                continue;
            }
            for (p, out) in self.sw_out[s].iter().enumerate() {
                let Some(rx) = out else { continue };
                let far_buf = match rx {
                    Rx::Switch(..) => self.switch_buf,
                    Rx::Hca(_) => self.hca_buf,
                };
                for vl in 0..usize::from(self.vls) {
                    let o = sw.observe(p, vl);
                    f(o.credits_avail, far_buf, o.in_buf_used);
                }
            }
        }
        for (h, hca) in self.hcas.iter().enumerate() {
            if !self.owns_hca(h) {
                continue;
            }
            for vl in 0..usize::from(self.vls) {
                f(hca.credits_avail(vl), self.switch_buf, 0);
                f(hca.rx_free(vl), self.hca_buf, 0);
            }
        }
    }

    /// Test hook: makes the fabric misbehave as a faulty switch would, so that a test can show the
    /// integrity check sees it. Never called by a run.
    ///
    /// - [`Fault::DropPacket`]: the first packet head on a wire from a switch to an HCA vanishes.
    /// - [`Fault::DuplicatePacket`]: returns a copy of that packet head and its HCA, for
    ///   [`Fabric::fault_resend`] to send again once the fabric is quiet.
    /// - [`Fault::LeakCredit`], [`Fault::ExtraCredit`]: the switch sends an HCA a flow-control packet
    ///   with its FCTBS and a credit limit one block lower (higher) than it advertises. Meant for a
    ///   settled fabric, where that repeats its last one but for the limit.
    ///
    /// `Err` when there is nothing to act on (no packet on such a wire; no switch port with one data VL
    /// and IB credits facing an HCA).
    #[doc(hidden)]
    pub fn inject_fault(
        &mut self,
        fault: Fault,
    ) -> Result<Option<(usize, PacketStart)>, &'static str> {
        match fault {
            Fault::DropPacket | Fault::DuplicatePacket => {
                for h in 0..self.hca_in.len() {
                    if !matches!(self.hca_out[h], Rx::Switch(..)) {
                        continue;
                    }
                    let first = self.hca_in[h].items().find_map(|(_, e)| match e {
                        Ev::Pkt(p) => Some(p),
                        _ => None,
                    });
                    if let Some(p) = first {
                        if fault == Fault::DropPacket {
                            self.hca_in[h].remove_first(|e| matches!(e, Ev::Pkt(_)));
                            self.wire_pkts -= 1;
                            return Ok(None);
                        }
                        return Ok(Some((h, p)));
                    }
                }
                Err("no packet on a wire from a switch to an HCA")
            }
            Fault::CorruptPacket => {
                for h in 0..self.hca_in.len() {
                    if !matches!(self.hca_out[h], Rx::Switch(..)) {
                        continue;
                    }
                    let corrupt = |e: &mut Ev| match e {
                        Ev::Pkt(p) => {
                            p.desc.slid ^= 1;
                            true
                        }
                        _ => false,
                    };
                    if self.hca_in[h].modify_first(corrupt) {
                        return Ok(None);
                    }
                }
                Err("no packet on a wire from a switch to an HCA")
            }
            Fault::LeakCredit | Fault::ExtraCredit => {
                for h in 0..self.hca_in.len() {
                    let Rx::Switch(s, p) = self.hca_out[h] else {
                        continue;
                    };
                    if let Some(sync) = self.switches[s].fc_sync(p) {
                        let d: u16 = if fault == Fault::LeakCredit { 4095 } else { 1 };
                        // The switch's own next packets repeat its last one and are left off
                        // (`Switch::set_fc_repeats_off`), so the wrong limit stays.
                        let fc = switch_asic::FcPacket {
                            vl: 0,
                            fctbs: sync.fctbs,
                            fccl: sync.fccl.wrapping_add(d) & 0xFFF,
                        };
                        self.hca_in[h].push(self.now, Ev::Fc(fc));
                        return Ok(None);
                    }
                }
                Err("no switch port with one data VL and IB credits faces an HCA")
            }
        }
    }

    /// Test hook: sends packet `p` to HCA `h` again now (see [`Fabric::inject_fault`]).
    #[doc(hidden)]
    pub fn fault_resend(&mut self, h: usize, p: PacketStart) {
        self.hca_in[h].push(self.now, Ev::Pkt(p));
        self.wire_pkts += 1;
    }

    /// RoCEv2 mode has no credits to compare: the blocks a quiet fabric still holds in any receive buffer.
    fn roce_blocks_held(&self) -> u64 {
        let mut held = 0u64;
        for (s, sw) in self.switches.iter().enumerate() {
            if !self.owns_sw(s) {
                continue;
            }
            for (p, out) in self.sw_out[s].iter().enumerate() {
                if out.is_some() {
                    for vl in 0..usize::from(self.vls) {
                        held += u64::from(sw.observe(p, vl).in_buf_used);
                    }
                }
            }
        }
        for (_, h) in self
            .hcas
            .iter()
            .enumerate()
            .filter(|(h, _)| self.owns_hca(*h))
        {
            for vl in 0..usize::from(self.vls) {
                held += u64::from(self.hca_buf.abs_diff(h.rx_free(vl)));
            }
        }
        held
    }

    /// Lossless violations the blocks flagged: switch drops, overflows, credit errors and refused hand-ins,
    /// HCA overflows and credit errors. Split across MPI ranks: this rank's blocks' share.
    pub fn violations(&self) -> u64 {
        let mut v = 0;
        for (_, sw) in self
            .switches
            .iter()
            .enumerate()
            .filter(|(s, _)| self.owns_sw(*s))
        {
            v += sw.rx_errors();
            for p in 0..sw.ports() {
                let c = sw.port_counters(p);
                v += c.dropped + c.overflow + c.credit_err;
            }
        }
        v + (0..self.hcas.len())
            .filter(|&h| self.owns_hca(h))
            .map(|h| self.hcas[h].violations())
            .sum::<u64>()
    }

    /// What the destinations' checks found, over the HCAs this process steps: packets failing the ICRC
    /// check and packets out of PSN order (zero in a correct run).
    pub fn sink_errors(&self) -> hca_model::hca::SinkErrors {
        let mut e = hca_model::hca::SinkErrors::default();
        for h in (0..self.hcas.len()).filter(|&h| self.owns_hca(h)) {
            let s = self.hcas[h].sink_errors;
            e.icrc += s.icrc;
            e.psn_order += s.psn_order;
        }
        e
    }
}

/// Packets held in `switches` plus the HCAs with a packet arriving (`receiving`, one per HCA): the blocks'
/// part of a count of packets in flight, the wires' being kept apart.
fn held_or_arriving<'a>(
    switches: impl Iterator<Item = &'a Switch>,
    receiving: impl Iterator<Item = bool>,
) -> usize {
    switches.map(Switch::packets_held).sum::<usize>() + receiving.filter(|&r| r).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain_scenario(extra: &str) -> Scenario {
        let text = format!(
            "duration_us = 100\n[chain]\nswitches = 2\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\nlatency_ns = 50\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H3\"\n{extra}"
        );
        crate::scenario::parse(std::path::Path::new("c.toml"), &text).unwrap()
    }

    #[test]
    fn one_flow_crosses_two_switches_at_line_rate_and_nothing_is_lost() {
        let sc = chain_scenario("");
        let mut f = Fabric::new(&sc).unwrap();
        for _ in 0..100_000 {
            f.step();
        }
        let got = f.hcas[3].per_flow[0].rx.payload_bytes;
        // 2 bytes per cycle, 2074 wire bytes per 2048 payload: at most 197 493 payload bytes in 100 us, less
        // the first packet's path latency (three 50 ns wires, store-and-forward onto the faster trunk) and
        // the packet on the wire at the end.
        assert!((190_000..=197_493).contains(&got), "{got}");
        let injected = f.hcas[0].per_flow[0].injected;
        assert_eq!(
            injected,
            f.hcas[3].per_flow[0].rx.packets + f.packets_in_flight()
        );
        assert_eq!(f.violations(), 0);
        assert_eq!(
            f.hcas[1].per_flow[0].rx.packets + f.hcas[2].per_flow[0].rx.packets,
            0
        );
    }

    #[test]
    fn a_rate_the_clock_cannot_carry_is_named() {
        let mut sc = chain_scenario("");
        sc.topology.links[0].rate_mbps = 96_969;
        let e = Fabric::new(&sc).unwrap_err().to_string();
        assert!(e.starts_with("link 0 (") && e.contains("96969"), "{e}");
        sc.settings.clock_mhz = 8;
        let e = Fabric::new(&sc).unwrap_err().to_string();
        assert!(e.contains("at 8 MHz"), "{e}");
    }

    #[test]
    fn rates_and_latencies_convert_exactly() {
        assert_eq!(
            link_rate(16_000, 1000).unwrap(),
            LinkRate { num: 2, den: 1 }
        );
        assert_eq!(
            link_rate(32_000, 1000).unwrap(),
            LinkRate { num: 4, den: 1 }
        );
        assert_eq!(link_rate(8_000, 1000).unwrap(), LinkRate { num: 1, den: 1 });
        assert_eq!(
            link_rate(10_000, 1000).unwrap(),
            LinkRate { num: 5, den: 4 }
        );
        assert!(link_rate(96_969, 1000).unwrap_err().contains("96969"));
        assert_eq!(latency_cycles(0, 1000), 1);
        assert_eq!(latency_cycles(100, 1000), 100);
        assert_eq!(latency_cycles(1, 250), 1);
        assert_eq!(latency_cycles(10, 250), 3);
    }
}
