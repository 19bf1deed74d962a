//! `--pcap`: packet captures of chosen links, one file per link holding both directions, in the format
//! DESIGN.md names (InfiniBand: pcap link type 197 = ERF, records of ERF type 21 as ibdump writes them; link
//! flow-control packets as ERF type 25 padded, see `rtl_model::capture`).
//!
//! The fabric moves descriptors; bytes are made here, only for the tapped wires: each descriptor as it left
//! its sender (output VL, FECN/BECN as the switch set them; CNPs as IB CNPs, opcode 0x80 with BECN), with
//! ICRC and VCRC computed over the final bytes and the payload the descriptor's deterministic pattern.
//! Timestamps are simulated time: the cycle the head was put on the wire plus its sub-cycle offset, in
//! nanoseconds (pcap) and ERF's 2^-32 s fixed point.
//!
//! Only IB links are written: the fabric has no RoCEv2 ports yet (a RoCE port's packets would be written as
//! Ethernet with `PacketDesc::materialise_roce_v4` in a capture of `LinkKind::Ethernet`).

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use rtl_model::capture::{CaptureWriter, LinkKind};
use rtl_model::wire::{builder, flow_ctl};

use super::observe::{link_file_stem, wire_end, ObserveError};
use crate::fabric::tap::{TapEvent, Tapped, WireEnd};
use crate::fabric::{link_rate, Fabric};
use crate::scenario::Scenario;

/// Events buffered before they are written (bounded memory for long captures).
const BATCH: usize = 4096;

struct LinkFile {
    path: String,
    w: CaptureWriter<BufWriter<File>>,
    /// Sub-cycle ticks per cycle of this link's rate.
    ticks: u64,
}

/// The open captures of a run.
pub struct Capture {
    files: Vec<LinkFile>,
    /// Tapped wire end -> its link's file.
    by_end: HashMap<WireEnd, usize>,
    ends: Vec<WireEnd>,
    ps_per_cycle: u64,
    pending: Vec<Tapped>,
    bytes: Vec<u8>,
    error: Option<ObserveError>,
}

impl Capture {
    /// Creates `DIR/<link>.pcap` for every link in `links`.
    pub fn create(sc: &Scenario, links: &[usize], out: &Path) -> Result<Self, ObserveError> {
        let topo = &sc.topology;
        let clock = sc.settings.clock_mhz;
        let ps_per_cycle = 1_000_000 / u64::from(clock.max(1));
        let mut files = Vec::new();
        let mut by_end = HashMap::new();
        let mut ends = Vec::new();
        for &l in links {
            let path = out.join(format!("{}.pcap", link_file_stem(topo, l)));
            let shown = path.display().to_string();
            let io = |source| ObserveError::Io {
                path: shown.clone(),
                source,
            };
            let f = File::create(&path).map_err(io)?;
            let w = CaptureWriter::new(BufWriter::new(f), LinkKind::Infiniband).map_err(|e| {
                ObserveError::Io {
                    path: shown.clone(),
                    source: std::io::Error::other(e),
                }
            })?;
            // The fabric has already accepted this rate; a failure here would be a bug, shown as 1 tick.
            let ticks = link_rate(topo.links[l].rate_mbps, clock)
                .map(|r| r.ticks_per_cycle())
                .unwrap_or(1);
            for e in [topo.links[l].a, topo.links[l].b] {
                by_end.insert(wire_end(e), files.len());
                ends.push(wire_end(e));
            }
            files.push(LinkFile {
                path: shown,
                w,
                ticks: ticks.max(1),
            });
        }
        Ok(Capture {
            files,
            by_end,
            ends,
            ps_per_cycle,
            pending: Vec::with_capacity(BATCH),
            bytes: Vec::with_capacity(4200),
            error: None,
        })
    }

    /// The wire ends to tap.
    pub fn wire_ends(&self) -> &[WireEnd] {
        &self.ends
    }

    /// Collects the cycle's tapped events; writes them in batches.
    pub fn after_step(&mut self, fab: &mut Fabric) {
        fab.take_tapped(&mut self.pending);
        if self.pending.len() >= BATCH {
            self.write_pending();
        }
    }

    /// Simulated time of `e` in picoseconds, and the index of its link's file.
    fn place(&self, e: &Tapped) -> (u64, usize) {
        let f = self.by_end[&e.to];
        let off = match e.event {
            TapEvent::Packet(p) => u64::from(p.offset) * self.ps_per_cycle / self.files[f].ticks,
            TapEvent::Fc(_) => 0,
        };
        (e.cycle * self.ps_per_cycle + off, f)
    }

    fn write_pending(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        // Both directions of a link in time order (within a cycle, heads may start at different offsets).
        pending.sort_by_key(|e| self.place(e).0);
        for e in &pending {
            let (t, f) = self.place(e);
            let r = match e.event {
                TapEvent::Packet(p) => match p.desc.materialise(&mut self.bytes) {
                    Ok(()) => self.files[f].w.write(t, &self.bytes),
                    Err(err) => {
                        self.fail(f, std::io::Error::other(err.to_string()));
                        continue;
                    }
                },
                TapEvent::Fc(fc) => {
                    let repr = flow_ctl::Repr {
                        op: flow_ctl::Op::Normal,
                        fctbs: fc.fctbs,
                        vl: fc.vl,
                        fccl: fc.fccl,
                        lpcrc: 0,
                    };
                    builder::flow_control(&repr, &mut self.bytes);
                    self.files[f].w.write_link_packet(t, &self.bytes)
                }
            };
            if let Err(err) = r {
                self.fail(f, std::io::Error::other(err));
            }
        }
        pending.clear();
        self.pending = pending;
    }

    fn fail(&mut self, f: usize, source: std::io::Error) {
        if self.error.is_none() {
            self.error = Some(ObserveError::Io {
                path: self.files[f].path.clone(),
                source,
            });
        }
    }

    /// Writes the rest and closes the files.
    pub fn finish(mut self, fab: &mut Fabric) -> Result<(), ObserveError> {
        fab.take_tapped(&mut self.pending);
        self.write_pending();
        for f in self.files.drain(..) {
            let r = std::io::Write::flush(&mut f.w.into_inner());
            if let (Err(source), None) = (r, &self.error) {
                self.error = Some(ObserveError::Io {
                    path: f.path,
                    source,
                });
            }
        }
        self.error.map_or(Ok(()), Err)
    }
}
