//! `--vcd`: `DIR/waves.vcd`, the per-clock signals of chosen blocks as value changes (the `vcd` crate).
//!
//! - A switch port `S2:2` (scope `S2_2`, one sub-scope `vlN` per data VL): `cong`, `root`, `victim`,
//!   `mark_state` (`cong_detect` outputs), `started` and `marked` (a packet left this output VL in the cycle,
//!   and whether it got FECN), `voq_fill` (sum over inputs of the VoQs for this output VL, blocks),
//!   `in_buf_used` (this port's input buffer of the VL, blocks) and `credits_avail` (`credit_tx`, blocks).
//! - An HCA `H1` (scope `H1`): `ccti_<flow>` of every flow it sends under IB CC, and per VL `credits_avail`
//!   (towards its switch) and `rx_free` (its receive buffer).
//!
//! Time is simulated time in picoseconds (timescale 1 ps); the value at time `t` is the registered value
//! after the clock edge of the cycle starting at `t`. Values are written at time 0 and then only when
//! they change, so a quiet signal costs nothing in the file.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use switch_asic::PortVlSignals;
use vcd::{IdCode, TimescaleUnit, Value};

use super::observe::{Block, ObserveError};
use crate::fabric::Fabric;
use crate::scenario::Scenario;

/// How to read one signal from the fabric.
#[derive(Debug, Clone, Copy)]
enum Probe {
    Cong(usize, usize, usize),
    Root(usize, usize, usize),
    Victim(usize, usize, usize),
    MarkState(usize, usize, usize),
    Started(usize, usize, usize),
    Marked(usize, usize, usize),
    VoqFill(usize, usize, usize),
    InBufUsed(usize, usize, usize),
    SwCredits(usize, usize, usize),
    Ccti(usize, u32),
    HcaCredits(usize, usize),
    HcaRxFree(usize, usize),
}

/// The signals of the switch port-VL last read, reused by that port-VL's other probes in the same cycle.
type SignalCache = Option<((usize, usize, usize), PortVlSignals)>;

impl Probe {
    fn read(self, fab: &mut Fabric, cache: &mut SignalCache) -> u64 {
        use Probe::*;
        let mut sig = |s: usize, p: usize, v: usize| match cache {
            Some((k, o)) if *k == (s, p, v) => *o,
            _ => {
                let o = fab.switches[s].observe(p, v);
                *cache = Some(((s, p, v), o));
                o
            }
        };
        match self {
            Cong(s, p, v) => sig(s, p, v).cong.into(),
            Root(s, p, v) => sig(s, p, v).root.into(),
            Victim(s, p, v) => sig(s, p, v).victim.into(),
            MarkState(s, p, v) => sig(s, p, v).mark_state.into(),
            Started(s, p, v) => sig(s, p, v).started.into(),
            Marked(s, p, v) => sig(s, p, v).marked.into(),
            VoqFill(s, p, v) => sig(s, p, v).voq_fill.into(),
            InBufUsed(s, p, v) => sig(s, p, v).in_buf_used.into(),
            SwCredits(s, p, v) => sig(s, p, v).credits_avail.into(),
            Ccti(h, f) => fab.hcas[h].ccti(f).unwrap_or(0).into(),
            HcaCredits(h, v) => fab.hcas[h].credits_avail(v).into(),
            HcaRxFree(h, v) => fab.hcas[h].rx_free(v).into(),
        }
    }
}

struct Signal {
    id: IdCode,
    width: u32,
    probe: Probe,
    last: Option<u64>,
}

/// The open waveform of a run.
pub struct Waves {
    path: String,
    w: vcd::Writer<BufWriter<File>>,
    signals: Vec<Signal>,
    ps_per_cycle: u64,
    error: Option<std::io::Error>,
}

impl Waves {
    /// Creates `DIR/waves.vcd` with the signals of `blocks` declared.
    pub fn create(sc: &Scenario, blocks: &[Block], out: &Path) -> Result<Self, ObserveError> {
        let path = out.join("waves.vcd");
        let shown = path.display().to_string();
        let io = |source| ObserveError::Io {
            path: shown.clone(),
            source,
        };
        let f = File::create(&path).map_err(io)?;
        let mut w = vcd::Writer::new(BufWriter::new(f));
        let mut signals = Vec::new();
        declare(&mut w, sc, blocks, &mut signals).map_err(io)?;
        Ok(Waves {
            path: shown,
            w,
            signals,
            ps_per_cycle: 1_000_000 / u64::from(sc.settings.clock_mhz.max(1)),
            error: None,
        })
    }

    /// Writes the signals that changed in the cycle just stepped.
    pub fn after_step(&mut self, fab: &mut Fabric) {
        if self.error.is_some() {
            return;
        }
        let cycle = fab.now().saturating_sub(1);
        if let Err(e) = self.sample(fab, cycle) {
            self.error = Some(e);
        }
    }

    fn sample(&mut self, fab: &mut Fabric, cycle: u64) -> std::io::Result<()> {
        let mut stamped = false;
        let mut cache = None;
        for s in &mut self.signals {
            let v = s.probe.read(fab, &mut cache);
            if s.last == Some(v) {
                continue;
            }
            if !stamped {
                // Everything before the first step is the reset state: the first sample is at time 0.
                let t = if s.last.is_none() {
                    0
                } else {
                    cycle * self.ps_per_cycle
                };
                self.w.timestamp(t)?;
                stamped = true;
            }
            s.last = Some(v);
            if s.width == 1 {
                self.w.change_scalar(s.id, v != 0)?;
            } else {
                let bits = (0..s.width).rev().map(|i| Value::from((v >> i) & 1 == 1));
                self.w.change_vector(s.id, bits)?;
            }
        }
        Ok(())
    }

    /// Flushes and closes the file.
    pub fn finish(mut self) -> Result<(), ObserveError> {
        let r = match self.error.take() {
            Some(e) => Err(e),
            None => self.w.flush(),
        };
        r.map_err(|source| ObserveError::Io {
            path: self.path,
            source,
        })
    }
}

fn declare(
    w: &mut vcd::Writer<BufWriter<File>>,
    sc: &Scenario,
    blocks: &[Block],
    signals: &mut Vec<Signal>,
) -> std::io::Result<()> {
    let topo = &sc.topology;
    w.timescale(1, TimescaleUnit::PS)?;
    w.add_module("ibcycle")?;
    let mut add = |w: &mut vcd::Writer<_>, width: u32, name: &str, probe: Probe| {
        let id = w.add_wire(width, name)?;
        signals.push(Signal {
            id,
            width,
            probe,
            last: None,
        });
        std::io::Result::Ok(())
    };
    for &b in blocks {
        match b {
            Block::SwitchPort(s, p) => {
                w.add_module(&format!("{}_{}", topo.switches[s].name, p + 1))?;
                for v in 0..usize::from(sc.settings.data_vls) {
                    w.add_module(&format!("vl{v}"))?;
                    add(w, 1, "cong", Probe::Cong(s, p, v))?;
                    add(w, 1, "root", Probe::Root(s, p, v))?;
                    add(w, 1, "victim", Probe::Victim(s, p, v))?;
                    add(w, 1, "mark_state", Probe::MarkState(s, p, v))?;
                    add(w, 1, "started", Probe::Started(s, p, v))?;
                    add(w, 1, "marked", Probe::Marked(s, p, v))?;
                    add(w, 32, "voq_fill", Probe::VoqFill(s, p, v))?;
                    add(w, 16, "in_buf_used", Probe::InBufUsed(s, p, v))?;
                    add(w, 16, "credits_avail", Probe::SwCredits(s, p, v))?;
                    w.upscope()?;
                }
                w.upscope()?;
            }
            Block::Hca(h) => {
                w.add_module(&topo.hcas[h].name)?;
                if sc.hca_cc.is_some() {
                    for (i, f) in sc.flows.iter().enumerate() {
                        if f.src == h {
                            add(w, 8, &format!("ccti_{}", f.id), Probe::Ccti(h, i as u32))?;
                        }
                    }
                }
                for v in 0..usize::from(sc.settings.data_vls) {
                    add(
                        w,
                        16,
                        &format!("credits_avail_vl{v}"),
                        Probe::HcaCredits(h, v),
                    )?;
                    add(w, 16, &format!("rx_free_vl{v}"), Probe::HcaRxFree(h, v))?;
                }
                w.upscope()?;
            }
        }
    }
    w.upscope()?;
    w.enddefinitions()
}
