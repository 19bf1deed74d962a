//! Port traces of a fabric switch for the `switch_core` co-simulation: per cycle, what arrives at the
//! switch's ports (packet heads and flow-control packets) and whether each output may start a packet, written
//! in the cosim port-trace format (v1, see `cosim/src/trace.rs`) so `ibcycle cosim switch_core --replay FILE`
//! drives `hdl/switch_core.sv` and its Rust twin with traffic from a real scenario.
//!
//! Mapping onto `switch_core` (4 ports, 2 VLs, designer choices):
//! - Ports: the switch's connected ports, in port order, become core ports 0, 1, 2, 3; a fifth connected port
//!   folds onto core port 0 again (port k onto k mod 4). Two events of one kind (packet, flow-control packet)
//!   for one core port in one cycle: the first (lower fabric port) is kept, the other is counted in
//!   [`Recorder::collisions`] and left out. A switch with at most 4 connected ports (gran-s1's S1, S2) is not
//!   folded and has no collisions.
//! - Packets: a packet's core output port is the one its DLID is forwarded to by the fabric's routes, mapped
//!   the same way; its VL is the LRH VL as it arrived (the VL the upstream sent it on: with `data_vls = 2` and
//!   the default SL-to-VL map, SL s arrives on VL s mod 2); its length is its wire length in bytes.
//! - VLs: the core has data VLs 0 and 1. Packets and flow-control packets of VL 2 and above (a scenario with
//!   more data VLs) are left out and counted in [`Recorder::other_vl`], since folding them would mix two VLs'
//!   credit counters.
//! - Timing: an event is placed in the cycle it arrives, the cycle it was put on the wire plus the link
//!   latency. Flow-control packets carry the upstream's FCTBS (to the core's `credit_rx` of that input and VL)
//!   and the downstream receiver's FCCL (to its `credit_tx` of that output and VL).
//! - Flow-control values are the fabric's. FCTBS is exact for the core (it counts the blocks of exactly the
//!   packets the trace delivers, unless some were left out). FCCL is the fabric downstream's limit, relative
//!   to the fabric switch's FCTBS: the core's own FCTBS equals it only when the core has forwarded the same
//!   blocks as the fabric switch. Where the core is behind (a packet still queued, or dropped: `drop_o`, as
//!   its input buffers are the fabric's capped at `switch_core::BUF_MAX` blocks, so an upstream sending on
//!   the fabric's larger credit can overrun them) its credit check is looser than the
//!   fabric's by the difference; where it is ahead (it sent a packet before the fabric did), stricter. FCCL
//!   after reset is 0: the first flow-control packets set it.
//! - Output readiness (`out_ready_i`) follows the fabric link out of the port: core output c is not ready in a
//!   cycle strictly inside a packet the fabric switch sends on a port folded onto c, from the cycle after its
//!   head to the cycle before the one holding its last byte (the link's exact rate, `switch_asic::LinkRate`).
//!   The core may start a packet in every cycle in which the fabric's link starts one or is idle, so its
//!   departures take the fabric's slots and its VoQs fill as the fabric's queues do (bounded by its
//!   buffers); between those slots its own link timing (one block a cycle) applies. Link time of
//!   outgoing flow-control packets is not counted (they are 6 bytes). [`Readiness::Always`] (`--port-trace-ready
//!   always`) instead keeps every output ready, the mapping before readiness was recorded; each catches a
//!   `switch_core` bug the other misses on the full-length gran-s1 trace (numbers in `hdl/README.md`).
//! - Configuration: the switch's buffer size (capped at `BUF_MAX`, the core's descriptor pool) and
//!   flow-control interval, `[switch_cc]` threshold (the table
//!   of its `threshold_map` for the buffer and the flows' largest MTU, as the fabric switch builds it) and
//!   fill comparison, Marking_Rate, Packet_Size and Victim_Mask; both VLs in the low VL
//!   arbitration table with weight 255 (not the scenario's `vl_arb`, whose 64-entry tables do not fit the
//!   core's 4), no high-priority entries; `fecn_marker` in counter mode.
//!
//! The recording is a second run of the scenario with a tap on the switch's input and output wires; the
//! fabric is deterministic, so the outputs of the normal run are unchanged by it.

use std::io::Write;
use std::path::{Path, PathBuf};

use rtl_model::blocks::fecn_marker::FecnMarker;
use rtl_model::blocks::switch_core::{set_lane, BUF_MAX, N_PORTS, N_VL};
use switch_asic::config::{mtu_packet_blocks, FillCompare};
use switch_asic::LinkRate;

use crate::fabric::tap::{TapEvent, Tapped, WireEnd};
use crate::fabric::{latency_cycles, link_rate, Fabric, FabricError};
use crate::run::observe::wire_end;
use crate::scenario::Scenario;
use crate::topology::End;

/// A port-trace request that cannot be met, or a failed write.
#[derive(Debug, thiserror::Error)]
pub enum PortTraceError {
    /// No switch of that name.
    #[error("--port-trace {name}: no switch {name:?} (switches: {known})")]
    NoSwitch {
        /// The name given.
        name: String,
        /// The switches of the scenario.
        known: String,
    },
    /// The fabric could not be built.
    #[error(transparent)]
    Fabric(#[from] FabricError),
    /// Writing the trace failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Where a port trace's `out_ready_i` comes from (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Readiness {
    /// Not ready strictly inside a packet the fabric switch sends on that port.
    #[default]
    Fabric,
    /// Every output always ready: only the core's own link timing applies.
    Always,
}

/// The per-cycle inputs of `switch_core`, packed as its ports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Row {
    pkt_valid: u8,
    pkt_vl: u8,
    pkt_bytes: u128,
    pkt_dst: u8,
    fc_valid: u8,
    fc_vl: u8,
    fc_fctbs: u128,
    fc_fccl: u128,
    /// Core outputs whose fabric link is inside a packet (not ready).
    busy: u8,
}

/// Records the arrivals at one switch's ports as `switch_core` input rows.
#[derive(Debug)]
pub struct Recorder {
    switch: usize,
    /// Core port of each fabric port (None: unconnected).
    core: Vec<Option<usize>>,
    /// Link latency of each fabric port in cycles.
    lat: Vec<u64>,
    /// Rate of the link of each fabric port (None: unconnected).
    rate: Vec<Option<LinkRate>>,
    /// The receiving end of the wire out of each connected fabric port, with the port.
    outs: Vec<(WireEnd, usize)>,
    /// Forwarding: fabric output port (0-based) of each HCA.
    route: Vec<usize>,
    /// Rows by arrival cycle, from cycle 0.
    rows: Vec<Row>,
    /// Events left out because another event of the same core port came in the same cycle.
    pub collisions: u64,
    /// Events left out because their VL is not one of the core's.
    pub other_vl: u64,
    /// Where `out_ready_i` comes from.
    pub readiness: Readiness,
}

impl Recorder {
    /// A recorder of switch `name` of `sc`, with the tap it needs set on `fab`.
    pub fn new(sc: &Scenario, name: &str, fab: &mut Fabric) -> Result<Self, PortTraceError> {
        let topo = &sc.topology;
        let switch = switch_index(sc, name)?;
        let links = &topo.switch_port_link[switch];
        let clock = sc.settings.clock_mhz;
        let mut core = vec![None; links.len()];
        let mut lat = vec![1; links.len()];
        let mut rate = vec![None; links.len()];
        let mut outs = Vec::new();
        let mut k = 0;
        for (p, l) in links.iter().enumerate() {
            if let Some(l) = *l {
                let link = &topo.links[l];
                core[p] = Some(k % N_PORTS);
                lat[p] = latency_cycles(link.latency_ns, clock);
                let why = |why| FabricError::Link {
                    link: l,
                    a: format!("{:?}", link.a),
                    b: format!("{:?}", link.b),
                    why,
                };
                rate[p] = Some(link_rate(link.rate_mbps, clock).map_err(why)?);
                let here = End::Switch {
                    switch,
                    port: (p + 1) as u8,
                };
                let far = if link.a == here { link.b } else { link.a };
                outs.push((wire_end(far), p));
                k += 1;
            }
        }
        let routes = topo.routes().map_err(FabricError::from)?;
        let route = routes[switch]
            .iter()
            .map(|&p| usize::from(p).saturating_sub(1))
            .collect();
        let mut ends: Vec<WireEnd> = (0..links.len())
            .filter(|&p| core[p].is_some())
            .map(|p| WireEnd::Switch(switch, p))
            .collect();
        ends.extend(outs.iter().map(|&(e, _)| e));
        fab.set_tap(&ends);
        Ok(Recorder {
            switch,
            core,
            lat,
            rate,
            outs,
            route,
            rows: Vec::new(),
            collisions: 0,
            other_vl: 0,
            readiness: Readiness::Fabric,
        })
    }

    /// The row of cycle `t`, added if needed.
    fn row(&mut self, t: u64) -> &mut Row {
        let t = t as usize;
        if self.rows.len() <= t {
            self.rows.resize(t + 1, Row::default());
        }
        &mut self.rows[t]
    }

    /// A packet the fabric switch put on the wire out of fabric port `p` in cycle `t`: the core output of `p`
    /// is busy strictly inside it (see the module docs).
    fn departure(&mut self, p: usize, t: u64, pk: &switch_asic::PacketStart) {
        let (Some(c), Some(rate)) = (self.core[p], self.rate[p]) else {
            return;
        };
        let start = rate.tick_of(t) + u64::from(pk.offset);
        let end = rate.cycle_of_byte_end(start, u64::from(pk.desc.wire_len));
        for k in t + 1..end {
            self.row(k).busy |= 1 << c;
        }
    }

    /// Places the tapped events in the cycles they arrive.
    pub fn add(&mut self, sc: &Scenario, events: &[Tapped]) {
        for e in events {
            if let TapEvent::Packet(pk) = &e.event {
                // A wire may be both (a link between two ports of this switch): each role is recorded.
                if let Some(&(_, p)) = self.outs.iter().find(|(w, _)| *w == e.to) {
                    self.departure(p, e.cycle, pk);
                }
            }
            let WireEnd::Switch(s, p) = e.to else {
                continue;
            };
            let Some(c) = self.core.get(p).copied().flatten() else {
                continue;
            };
            if s != self.switch {
                continue;
            }
            let vl = match e.event {
                TapEvent::Packet(pk) => pk.desc.vl,
                TapEvent::Fc(fc) => fc.vl,
                TapEvent::Pause(_) => continue,
            };
            if usize::from(vl) >= N_VL {
                self.other_vl += 1;
                continue;
            }
            let t = (e.cycle + self.lat[p]) as usize;
            if self.rows.len() <= t {
                self.rows.resize(t + 1, Row::default());
            }
            let r = &mut self.rows[t];
            match e.event {
                TapEvent::Packet(pk) => {
                    if r.pkt_valid >> c & 1 != 0 {
                        self.collisions += 1;
                        continue;
                    }
                    let d = &pk.desc;
                    let hca = sc
                        .topology
                        .hcas
                        .iter()
                        .enumerate()
                        .position(|(h, _)| sc.topology.hca_lid(h) == d.dlid);
                    let dst = hca
                        .and_then(|h| self.route.get(h))
                        .and_then(|&op| self.core.get(op).copied().flatten())
                        .unwrap_or(0);
                    r.pkt_valid |= 1 << c;
                    r.pkt_vl |= d.vl << c;
                    set_lane(&mut r.pkt_bytes, c, 13, u64::from(d.wire_len));
                    r.pkt_dst |= (dst as u8) << (2 * c);
                }
                TapEvent::Fc(fc) => {
                    if r.fc_valid >> c & 1 != 0 {
                        self.collisions += 1;
                        continue;
                    }
                    r.fc_valid |= 1 << c;
                    r.fc_vl |= fc.vl << c;
                    set_lane(&mut r.fc_fctbs, c, 12, u64::from(fc.fctbs));
                    set_lane(&mut r.fc_fccl, c, 12, u64::from(fc.fccl));
                }
                TapEvent::Pause(_) => {}
            }
        }
    }

    /// Writes cycles `0..cycles` as a port trace of `switch_core`.
    pub fn write(&self, sc: &Scenario, cycles: u64, mut w: impl Write) -> std::io::Result<()> {
        writeln!(w, "# ibcycle port trace v1")?;
        writeln!(
            w,
            "# switch {} of scenario {}; {} events left out (two on one core port in one cycle), {} on VLs above 1",
            sc.topology.switches[self.switch].name, sc.name, self.collisions, self.other_vl
        )?;
        writeln!(w, "block,switch_core")?;
        writeln!(w, "config,{}", config_line(sc))?;
        writeln!(
            w,
            "cycle,rst_ni,pkt_valid_i,pkt_vl_i,pkt_bytes_i,pkt_dst_i,fc_valid_i,fc_vl_i,fc_fctbs_i,fc_fccl_i,out_ready_i"
        )?;
        let idle = Row::default();
        let busy_mask = match self.readiness {
            Readiness::Fabric => u8::MAX,
            Readiness::Always => 0,
        };
        for t in 0..cycles {
            let r = self.rows.get(t as usize).unwrap_or(&idle);
            writeln!(
                w,
                "{t},1,{},{},0x{:x},{},{},{},0x{:x},0x{:x},{}",
                r.pkt_valid,
                r.pkt_vl,
                r.pkt_bytes,
                r.pkt_dst,
                r.fc_valid,
                r.fc_vl,
                r.fc_fctbs,
                r.fc_fccl,
                !(r.busy & busy_mask) & ((1 << N_PORTS) - 1)
            )?;
        }
        Ok(())
    }
}

/// The held ports of `switch_core` for the scenario's switches (see the module docs).
fn config_line(sc: &Scenario) -> String {
    let s = &sc.settings;
    let cc = &sc.switch_cc;
    let buf = s.switch_vl_buf_blocks;
    let mut table = 0u128;
    let mut hi = 0u128;
    // The fabric switch's own table: its Threshold mapping for this buffer and the fabric's MTU.
    let mtu = sc.flows.iter().map(|f| f.mtu).max().unwrap_or(256);
    let map = cc.threshold_map;
    for (t, e) in map.table(buf, mtu_packet_blocks(mtu)).iter().enumerate() {
        if t < 8 {
            set_lane(&mut table, t, 16, u64::from(*e));
        } else {
            set_lane(&mut hi, t - 8, 16, u64::from(*e));
        }
    }
    let mark = rtl_model::blocks::fecn_marker::Config {
        packet_size: cc.packet_size,
        marking_rate: cc.marking_rate,
        ..Default::default()
    };
    let thresh = FecnMarker::new(mark).map_or(0, |m| m.lfsr_thresh());
    let core_buf = buf.min(BUF_MAX as u16);
    let rx = rtl_model::blocks::credit_rx::Config::new(core_buf, s.fc_interval_cycles);
    let cong = rtl_model::blocks::cong_detect::Config::new(buf);
    [
        format!("buf_blocks_i={core_buf}"),
        format!("fc_interval_i={}", s.fc_interval_cycles),
        format!(
            "fc_on_change_i={}",
            u8::from(rx.policy == rtl_model::blocks::credit_rx::FcPolicy::PeriodicAndOnChange)
        ),
        format!("fccl_cap_i={}", rx.fccl_cap),
        "fccl_reset_i=0".into(),
        "hi_vl_i=0".into(),
        "hi_weight_i=0".into(),
        "hi_n_i=0".into(),
        // Entries (VL 0, 255) and (VL 1, 255): VL at [4e +: 4], weight at [8e +: 8].
        "lo_vl_i=0x10".into(),
        "lo_weight_i=0xffff".into(),
        "lo_n_i=2".into(),
        "vl_high_limit_i=255".into(),
        format!("threshold_i={}", cc.threshold),
        format!("thr_table_i=0x{hi:032x}{table:032x}"),
        format!(
            "compare_i={}",
            match cc.fill_comparison {
                FillCompare::PerVoq => 0,
                FillCompare::SumVoqs => 1,
                FillCompare::SumPerContributor => 2,
            }
        ),
        format!("root_min_credits_i={}", cong.root_min_credits),
        format!("victim_mask_i={}", u8::from(cc.victim_mask)),
        format!("packet_size_i={}", cc.packet_size),
        format!("marking_rate_i={}", cc.marking_rate),
        "mode_i=0".into(),
        format!("lfsr_seed_i={}", mark.lfsr_seed),
        format!("lfsr_thresh_i={thresh}"),
    ]
    .join(",")
}

/// Events a recording left out (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LeftOut {
    /// Two events of one kind on one core port in one cycle: all but the first.
    pub collisions: u64,
    /// Events on VLs the core does not have (2 and above).
    pub other_vl: u64,
}

/// Runs `sc` for `cycles` cycles with a recorder on switch `name`, writing the trace to `path`, outputs
/// ready as the fabric's links are ([`Readiness::Fabric`]).
pub fn record(
    sc: &Scenario,
    name: &str,
    cycles: u64,
    path: &Path,
) -> Result<LeftOut, PortTraceError> {
    record_with(sc, name, cycles, Readiness::Fabric, path)
}

/// [`record`] with a choice of output readiness.
pub fn record_with(
    sc: &Scenario,
    name: &str,
    cycles: u64,
    readiness: Readiness,
    path: &Path,
) -> Result<LeftOut, PortTraceError> {
    let mut fab = Fabric::new(sc)?;
    let mut rec = Recorder::new(sc, name, &mut fab)?;
    rec.readiness = readiness;
    let mut buf = Vec::new();
    while fab.now() < cycles {
        fab.step();
        fab.take_tapped(&mut buf);
        rec.add(sc, &buf);
        buf.clear();
    }
    let io = |source| PortTraceError::Io {
        path: path.display().to_string(),
        source,
    };
    let f = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(f);
    rec.write(sc, cycles, &mut w).map_err(io)?;
    w.flush().map_err(io)?;
    Ok(LeftOut {
        collisions: rec.collisions,
        other_vl: rec.other_vl,
    })
}

/// The file `--port-trace NAME` writes into `out` (the name made safe as a file name).
pub fn file_name(out: &Path, name: &str) -> PathBuf {
    out.join(format!(
        "port-trace-{}.txt",
        super::output::file_component(name)
    ))
}

/// The index of switch `name` of `sc`: `ibcycle run` checks `--port-trace` with it before the run.
pub fn switch_index(sc: &Scenario, name: &str) -> Result<usize, PortTraceError> {
    let topo = &sc.topology;
    topo.switches
        .iter()
        .position(|s| s.name == name)
        .ok_or_else(|| PortTraceError::NoSwitch {
            name: name.to_string(),
            known: topo
                .switches
                .iter()
                .map(|s| s.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Records the port trace of switch `name` over the whole run of `sc` into `dir`; the line `run` prints.
pub fn record_into(
    sc: &Scenario,
    name: &str,
    readiness: Readiness,
    dir: &Path,
) -> Result<String, PortTraceError> {
    let cycles = crate::scenario::limits::us_to_cycles(sc.duration_us, sc.settings.clock_mhz)
        .expect("a checked scenario's duration fits");
    let path = file_name(dir, name);
    let left = record_with(sc, name, cycles, readiness, &path)?;
    Ok(format!(
        "port trace of {name}: {cycles} cycles, {} events left out: {} collisions, {} on VLs above 1",
        left.collisions + left.other_vl,
        left.collisions,
        left.other_vl
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use switch_asic::{FcPacket, PacketDesc, PacketStart};

    fn gran_s1() -> Scenario {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on-quick.toml");
        crate::scenario::load(&file).unwrap()
    }

    /// The data rows of a written trace, split at commas.
    fn rows(rec: &Recorder, sc: &Scenario, cycles: u64) -> Vec<Vec<String>> {
        let mut buf = Vec::new();
        rec.write(sc, cycles, &mut buf).unwrap();
        String::from_utf8(buf)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect()
    }

    fn packet(dlid: u16, vl: u8, wire_len: u16, offset: u32) -> TapEvent {
        TapEvent::Packet(PacketStart {
            desc: PacketDesc {
                dlid,
                vl,
                wire_len,
                ..PacketDesc::default()
            },
            offset,
        })
    }

    /// S1 port 8 (core port 3) is the 4x QDR trunk to S2 port 8: 4 bytes a cycle at 1000 MHz. A 2130-byte
    /// packet put on it in cycle 100 at tick offset 2 (half a cycle in) holds its last byte in cycle
    /// 100 + (2 + 2130 - 1) / 4 = 632 (integer division), so output 3 is not ready in cycles 101..=631 and
    /// ready again in 632, when the fabric may start its next packet.
    #[test]
    fn an_output_is_not_ready_strictly_inside_a_fabric_packet() {
        let sc = gran_s1();
        let mut fab = Fabric::new(&sc).unwrap();
        let mut rec = Recorder::new(&sc, "S1", &mut fab).unwrap();
        let out = Tapped {
            cycle: 100,
            to: WireEnd::Switch(1, 7),
            event: packet(5, 0, 2130, 2),
        };
        rec.add(&sc, &[out]);
        let r = rows(&rec, &sc, 700);
        let ready = |t: usize| r[t][10].parse::<u8>().unwrap();
        for t in [0, 99, 100, 632, 699] {
            assert_eq!(ready(t), 0b1111, "cycle {t}");
        }
        for t in [101, 400, 631] {
            assert_eq!(ready(t), 0b0111, "cycle {t}");
        }
        // A departure is no arrival: nothing was put on an input.
        assert!(r.iter().all(|row| row[2] == "0"));
        // The other choice keeps every output ready.
        rec.readiness = Readiness::Always;
        assert!(rows(&rec, &sc, 700).iter().all(|row| row[10] == "15"));
    }

    /// An arrival on S1 port 2 (core port 1) from H2 for H5 (LID 5, forwarded out of port 8, core port 3) is
    /// placed after the 100 ns (100-cycle) link latency with its VL; events of VL 2 and above are left out.
    #[test]
    fn arrivals_keep_their_vl_and_other_vls_are_left_out() {
        let sc = gran_s1();
        let mut fab = Fabric::new(&sc).unwrap();
        let mut rec = Recorder::new(&sc, "S1", &mut fab).unwrap();
        let fc = |vl| {
            TapEvent::Fc(FcPacket {
                vl,
                fctbs: 0x123,
                fccl: 0x456,
            })
        };
        let ev = [
            Tapped {
                cycle: 10,
                to: WireEnd::Switch(0, 1),
                event: packet(5, 1, 2130, 0),
            },
            Tapped {
                cycle: 10,
                to: WireEnd::Switch(0, 2),
                event: fc(1),
            },
            Tapped {
                cycle: 20,
                to: WireEnd::Switch(0, 1),
                event: packet(5, 2, 2130, 0),
            },
            Tapped {
                cycle: 20,
                to: WireEnd::Switch(0, 2),
                event: fc(3),
            },
        ];
        rec.add(&sc, &ev);
        assert_eq!((rec.collisions, rec.other_vl), (0, 2));
        let r = rows(&rec, &sc, 200);
        let at = &r[110];
        // pkt_valid lane 1, pkt_vl lane 1 = 1, bytes 2130 at [13 +: 13], dst 3 at [2 +: 2].
        assert_eq!(
            &at[2..6],
            ["2", "2", &format!("0x{:x}", 2130u64 << 13), "12"]
        );
        // fc_valid lane 2, fc_vl lane 2 = 1, FCTBS and FCCL at [24 +: 12].
        assert_eq!(
            &at[6..10],
            [
                "4",
                "4",
                &format!("0x{:x}", 0x123u64 << 24),
                &format!("0x{:x}", 0x456u64 << 24)
            ]
        );
        assert!(r
            .iter()
            .enumerate()
            .all(|(t, row)| t == 110 || (row[2] == "0" && row[6] == "0")));
    }
}
