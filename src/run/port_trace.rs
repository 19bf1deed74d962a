//! Switch port traces for the switch co-simulation: what the fabric hands one switch each cycle (every
//! packet head with its sub-cycle offset, every flow-control packet, in the order handed in) and that
//! switch's own configuration (its `SwitchConfig`, embedded as JSON), in the switch trace format (v1, see
//! `cosim/src/switch_trace.rs`), so `ibcycle cosim ib_switch --replay FILE` drives the switch RTL
//! (`hdl/ib_switch.sv`) and `switch_asic::Switch` with exactly the traffic of a real scenario. Nothing is
//! mapped, folded or left out: the trace is the switch's port interface.
//!
//! The recording is a second run of the scenario with the hand-ins of that switch logged
//! ([`Fabric::log_hand_ins`]); the fabric is deterministic, so the outputs of the normal run are unchanged.

use std::io::Write;
use std::path::{Path, PathBuf};

use cosim::switch_trace::{Event, HandIn, SwitchTrace};

use crate::fabric::tap::TapEvent;
use crate::fabric::{Fabric, FabricError};
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

/// What a recording saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recorded {
    /// Packet heads handed in.
    pub packets: u64,
    /// Flow-control packets handed in.
    pub fcs: u64,
    /// Pause frames handed in (RoCEv2 ports; the switch RTL has none, so a replay refuses such a trace).
    pub pauses: u64,
}

/// Runs `sc` for `cycles` cycles logging the hand-ins of switch `name`: its port trace.
pub fn trace_of(
    sc: &Scenario,
    name: &str,
    cycles: u64,
) -> Result<(SwitchTrace, Recorded), PortTraceError> {
    let s = switch_index(sc, name)?;
    let mut all = traces_of(sc, &[s], cycles)?;
    Ok(all.remove(0))
}

/// Runs `sc` once for `cycles` cycles logging the hand-ins of the switches `switches` (indices in the
/// topology): their port traces, in the order given.
pub fn traces_of(
    sc: &Scenario,
    switches: &[usize],
    cycles: u64,
) -> Result<Vec<(SwitchTrace, Recorded)>, PortTraceError> {
    let mut fab = Fabric::new(sc)?;
    fab.log_hand_ins(switches);
    fab.run_until(cycles);
    let mut log = Vec::new();
    fab.take_hand_ins(&mut log);
    let mut out: Vec<(SwitchTrace, Recorded)> = switches
        .iter()
        .map(|&s| {
            let t = SwitchTrace {
                config: fab.switches[s].config().clone(),
                cycles,
                events: Vec::new(),
            };
            (t, Recorded::default())
        })
        .collect();
    for (s, cycle, port, ev) in log {
        let Some(k) = switches.iter().position(|&x| x == s) else {
            continue;
        };
        let (t, rec) = &mut out[k];
        let what = match ev {
            TapEvent::Packet(ps) => {
                rec.packets += 1;
                HandIn::Packet(ps)
            }
            TapEvent::Fc(f) => {
                rec.fcs += 1;
                HandIn::Fc(f)
            }
            TapEvent::Pause(_) => {
                rec.pauses += 1;
                continue;
            }
        };
        t.events.push(Event { cycle, port, what });
    }
    Ok(out)
}

/// Runs `sc` for `cycles` cycles with switch `name`'s hand-ins logged, writing its port trace to `path`.
pub fn record(
    sc: &Scenario,
    name: &str,
    cycles: u64,
    path: &Path,
) -> Result<Recorded, PortTraceError> {
    let (trace, rec) = trace_of(sc, name, cycles)?;
    let io = |source| PortTraceError::Io {
        path: path.display().to_string(),
        source,
    };
    let f = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(f);
    let mut comment = vec![format!("switch {name} of scenario {}", sc.name)];
    if rec.pauses > 0 {
        comment.push(format!(
            "{} pause frames handed in are not in the trace (the switch RTL has no PFC ports)",
            rec.pauses
        ));
    }
    trace.write(&mut w, &comment).map_err(io)?;
    w.flush().map_err(io)?;
    Ok(rec)
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
pub fn record_into(sc: &Scenario, name: &str, dir: &Path) -> Result<String, PortTraceError> {
    let cycles = crate::scenario::limits::us_to_cycles(sc.duration_us, sc.settings.clock_mhz)
        .expect("a checked scenario's duration fits");
    let path = file_name(dir, name);
    let r = record(sc, name, cycles, &path)?;
    Ok(format!(
        "port trace of {name}: {cycles} cycles, {} packet heads, {} flow-control packets handed in",
        r.packets, r.fcs
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gran_s1() -> Scenario {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/gran-s1-cc-on-quick.toml");
        crate::scenario::load(&file).unwrap()
    }

    /// The trace is the switch's port interface: replayed into a fresh `Switch` (eager or not) it gives the
    /// events the fabric's switch produced, and it round-trips through the file format.
    #[test]
    fn a_trace_replays_into_the_switch_as_the_fabric_ran_it() {
        let sc = gran_s1();
        let (t, rec) = trace_of(&sc, "S1", 20_000).unwrap();
        assert!(rec.packets > 0 && rec.fcs > 0, "{rec:?}");
        assert_eq!(rec.pauses, 0);
        let mut b = Vec::new();
        t.write(&mut b, &[]).unwrap();
        let back = SwitchTrace::parse(std::str::from_utf8(&b).unwrap()).unwrap();
        assert_eq!(back.events, t.events);
        assert_eq!(back.config, t.config);
        let mut a = switch_asic::Switch::new(t.config.clone()).unwrap();
        let mut e = switch_asic::Switch::new(t.config.clone()).unwrap();
        e.set_eager(true);
        let mut k = 0;
        for c in 0..t.cycles {
            while k < t.events.len() && t.events[k].cycle == c {
                let ev = t.events[k];
                for sw in [&mut a, &mut e] {
                    let r = match ev.what {
                        HandIn::Packet(ps) => sw.rx_packet(ev.port, ps),
                        HandIn::Fc(f) => sw.rx_fc(ev.port, f),
                    };
                    assert!(r.is_ok(), "cycle {c}: {r:?}");
                }
                k += 1;
            }
            assert_eq!(a.step(), e.step(), "cycle {c}");
        }
    }

    #[test]
    fn an_unknown_switch_is_named() {
        let e = trace_of(&gran_s1(), "S9", 10).unwrap_err().to_string();
        assert!(e.contains("S9") && e.contains("S1"), "{e}");
    }
}
