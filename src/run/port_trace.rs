//! Port traces of a fabric switch for the `switch_core` co-simulation: per cycle, what arrives at the
//! switch's ports (packet heads and flow-control packets), written in the cosim port-trace format (v1, see
//! `cosim/src/trace.rs`) so `ibcycle cosim switch_core --replay FILE` drives `hdl/switch_core.sv` and its Rust twin with
//! traffic from a real scenario.
//!
//! Mapping onto `switch_core` (4 ports, 2 VLs, designer choices):
//! - The switch's connected ports, in port order, become core ports 0, 1, 2, 3; a fifth connected port folds
//!   onto core port 0 again (port k onto k mod 4). Two events for one core port in one cycle: the first (lower
//!   fabric port) is kept, the other is counted in [`Recorder::collisions`] and left out.
//! - A packet's core output port is the one its DLID is forwarded to by the fabric's routes, mapped the same
//!   way; its VL is the LRH VL (0 or 1; the fabric runs 1 VL); its length is its wire length in bytes.
//! - An event is placed in the cycle it arrives: the cycle it was put on the wire plus the link latency.
//! - Flow-control packets carry FCTBS (to the core's `credit_rx`) and FCCL (to its `credit_tx`) of one VL.
//! - Outputs are always ready: the core's own link timing (one block a cycle) applies.
//! - Configuration: the switch's buffer size and flow-control interval, `[switch_cc]` threshold (linear
//!   threshold table of the buffer), Marking_Rate, Packet_Size and Victim_Mask; both VLs in the low VL
//!   arbitration table with weight 255; FCCL after reset 0 (the first flow-control packets set it).
//!
//! The recording is a second run of the scenario with a tap on the switch's input wires; the fabric is
//! deterministic, so the outputs of the normal run are unchanged by it.

use std::io::Write;
use std::path::{Path, PathBuf};

use rtl_model::blocks::cong_detect::linear_thr_table;
use rtl_model::blocks::fecn_marker::FecnMarker;
use rtl_model::blocks::switch_core::{set_lane, N_PORTS};

use crate::fabric::tap::{TapEvent, Tapped, WireEnd};
use crate::fabric::{latency_cycles, Fabric, FabricError};
use crate::scenario::Scenario;

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
}

/// Records the arrivals at one switch's ports as `switch_core` input rows.
#[derive(Debug)]
pub struct Recorder {
    switch: usize,
    /// Core port of each fabric port (None: unconnected).
    core: Vec<Option<usize>>,
    /// Link latency of each fabric port in cycles.
    lat: Vec<u64>,
    /// Forwarding: fabric output port (0-based) of each HCA.
    route: Vec<usize>,
    /// Rows by arrival cycle, from cycle 0.
    rows: Vec<Row>,
    /// Events left out because another event of the same core port came in the same cycle.
    pub collisions: u64,
}

impl Recorder {
    /// A recorder of switch `name` of `sc`, with the tap it needs set on `fab`.
    pub fn new(sc: &Scenario, name: &str, fab: &mut Fabric) -> Result<Self, PortTraceError> {
        let topo = &sc.topology;
        let switch = topo
            .switches
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
            })?;
        let links = &topo.switch_port_link[switch];
        let mut core = vec![None; links.len()];
        let mut lat = vec![1; links.len()];
        let mut k = 0;
        for (p, l) in links.iter().enumerate() {
            if let Some(l) = l {
                core[p] = Some(k % N_PORTS);
                lat[p] = latency_cycles(topo.links[*l].latency_ns, sc.settings.clock_mhz);
                k += 1;
            }
        }
        let routes = topo.routes().map_err(FabricError::from)?;
        let route = routes[switch]
            .iter()
            .map(|&p| usize::from(p).saturating_sub(1))
            .collect();
        let ends: Vec<WireEnd> = (0..links.len())
            .filter(|&p| core[p].is_some())
            .map(|p| WireEnd::Switch(switch, p))
            .collect();
        fab.set_tap(&ends);
        Ok(Recorder {
            switch,
            core,
            lat,
            route,
            rows: Vec::new(),
            collisions: 0,
        })
    }

    /// Places the tapped events in the cycles they arrive.
    pub fn add(&mut self, sc: &Scenario, events: &[Tapped]) {
        for e in events {
            let WireEnd::Switch(s, p) = e.to else {
                continue;
            };
            let Some(c) = self.core.get(p).copied().flatten() else {
                continue;
            };
            if s != self.switch {
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
                    r.pkt_vl |= (d.vl & 1) << c;
                    set_lane(&mut r.pkt_bytes, c, 13, u64::from(d.wire_len));
                    r.pkt_dst |= (dst as u8) << (2 * c);
                }
                TapEvent::Fc(fc) => {
                    if r.fc_valid >> c & 1 != 0 {
                        self.collisions += 1;
                        continue;
                    }
                    r.fc_valid |= 1 << c;
                    r.fc_vl |= (fc.vl & 1) << c;
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
            "# switch {} of scenario {}; {} events left out (two on one core port in one cycle)",
            sc.topology.switches[self.switch].name, sc.name, self.collisions
        )?;
        writeln!(w, "block,switch_core")?;
        writeln!(w, "config,{}", config_line(sc))?;
        writeln!(
            w,
            "cycle,rst_ni,pkt_valid_i,pkt_vl_i,pkt_bytes_i,pkt_dst_i,fc_valid_i,fc_vl_i,fc_fctbs_i,fc_fccl_i,out_ready_i"
        )?;
        let idle = Row::default();
        for t in 0..cycles {
            let r = self.rows.get(t as usize).unwrap_or(&idle);
            writeln!(
                w,
                "{t},1,{},{},0x{:x},{},{},{},0x{:x},0x{:x},15",
                r.pkt_valid,
                r.pkt_vl,
                r.pkt_bytes,
                r.pkt_dst,
                r.fc_valid,
                r.fc_vl,
                r.fc_fctbs,
                r.fc_fccl
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
    for (t, e) in linear_thr_table(buf).iter().enumerate() {
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
    let rx = rtl_model::blocks::credit_rx::Config::new(buf, s.fc_interval_cycles);
    let cong = rtl_model::blocks::cong_detect::Config::new(buf);
    [
        format!("buf_blocks_i={buf}"),
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
        "compare_i=0".into(),
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

/// Runs `sc` for `cycles` cycles with a recorder on switch `name`, writing the trace to `path`.
pub fn record(sc: &Scenario, name: &str, cycles: u64, path: &Path) -> Result<u64, PortTraceError> {
    let mut fab = Fabric::new(sc)?;
    let mut rec = Recorder::new(sc, name, &mut fab)?;
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
    Ok(rec.collisions)
}

/// The file `--port-trace NAME` writes into `out`.
pub fn file_name(out: &Path, name: &str) -> PathBuf {
    out.join(format!("port-trace-{name}.txt"))
}

/// `ibcycle run FILE --out DIR --port-trace NAME`: records the whole run of the scenario in `file` (its
/// `duration_us`) into DIR/port-trace-NAME.txt. Errors name the file or the option.
pub fn cli(file: &Path, out: &Path, name: &str) -> std::process::ExitCode {
    let sc = match crate::scenario::load(file) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let cycles = sc.duration_us * u64::from(sc.settings.clock_mhz);
    let path = file_name(out, name);
    let r = std::fs::create_dir_all(out)
        .map_err(|source| PortTraceError::Io {
            path: out.display().to_string(),
            source,
        })
        .and_then(|()| record(&sc, name, cycles, &path));
    match r {
        Ok(collisions) => {
            println!(
                "wrote {} ({cycles} cycles, {collisions} events left out)",
                path.display()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
