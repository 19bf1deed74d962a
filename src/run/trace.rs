//! `--trace SWITCH:PORT:VL`: `DIR/trace-<SWITCH>_<PORT>-vl<VL>.csv`, a per-clock trace of one switch
//! port-VL written as one row per change (a row whenever any column but `cycle` differs from the row
//! before; the first row is the state after cycle 0). Between two rows every value holds, so the file is
//! exactly the per-clock trace with repeated rows left out, and stays small in quiet periods.
//!
//! Columns: `cycle` (the clock edge after which the values hold), `congested`, `root`, `victim` (the
//! output VL's `cong_detect` state, 0/1), `voq_fill` (blocks queued for this output VL, summed over inputs),
//! `buf_used` (blocks in use in this port's input buffer of the VL), `credits_avail` (credit of this output
//! VL, blocks), `marks` and `packets_started` (packets FECN-marked and started on this output VL since the
//! start of the run, cumulative).

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use super::observe::ObserveError;
use crate::fabric::Fabric;
use crate::scenario::Scenario;

/// The column names, in order.
pub const COLUMNS: [&str; 9] = [
    "cycle",
    "congested",
    "root",
    "victim",
    "voq_fill",
    "buf_used",
    "credits_avail",
    "marks",
    "packets_started",
];

struct PortTrace {
    path: String,
    switch: usize,
    port: usize,
    vl: usize,
    w: csv::Writer<BufWriter<File>>,
    last: Option<[u64; 8]>,
}

/// The open traces of a run.
pub struct Traces {
    ports: Vec<PortTrace>,
    error: Option<ObserveError>,
}

impl Traces {
    /// Creates one file per (switch, 0-based port, VL) in `ports`.
    pub fn create(
        sc: &Scenario,
        ports: &[(usize, usize, u8)],
        out: &Path,
    ) -> Result<Self, ObserveError> {
        let mut v = Vec::new();
        for &(switch, port, vl) in ports {
            let name = format!(
                "trace-{}_{}-vl{vl}.csv",
                super::output::file_component(&sc.topology.switches[switch].name),
                port + 1
            );
            let path = out.join(name);
            let shown = path.display().to_string();
            let mut w = csv::Writer::from_writer(BufWriter::new(File::create(&path).map_err(
                |source| ObserveError::Io {
                    path: shown.clone(),
                    source,
                },
            )?));
            w.write_record(COLUMNS).map_err(|e| ObserveError::Io {
                path: shown.clone(),
                source: e.into(),
            })?;
            v.push(PortTrace {
                path: shown,
                switch,
                port,
                vl: usize::from(vl),
                w,
                last: None,
            });
        }
        Ok(Traces {
            ports: v,
            error: None,
        })
    }

    /// Writes a row for every traced port-VL that changed in the cycle just stepped.
    pub fn after_step(&mut self, fab: &mut Fabric) {
        let cycle = fab.now().saturating_sub(1);
        for t in &mut self.ports {
            let sw = &fab.switches[t.switch];
            let o = sw.observe(t.port, t.vl);
            let c = sw.counters(t.port, t.vl);
            let row = [
                o.cong.into(),
                o.root.into(),
                o.victim.into(),
                o.voq_fill.into(),
                o.in_buf_used.into(),
                o.credits_avail.into(),
                c.marked,
                c.xmit_pkts,
            ];
            if t.last == Some(row) {
                continue;
            }
            t.last = Some(row);
            let mut rec = [0u64; 9];
            rec[0] = cycle;
            rec[1..].copy_from_slice(&row);
            if let Err(e) = t.w.serialize(rec) {
                if self.error.is_none() {
                    self.error = Some(ObserveError::Io {
                        path: t.path.clone(),
                        source: e.into(),
                    });
                }
            }
        }
    }

    /// Flushes and closes the files.
    pub fn finish(self) -> Result<(), ObserveError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        for mut t in self.ports {
            t.w.flush().map_err(|source| ObserveError::Io {
                path: t.path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}
