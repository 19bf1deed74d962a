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
//! A capture of [`LinkKind::Ethernet`] (RoCEv2 links) writes Ethernet frames without FCS: packets as RoCEv2
//! over IPv4 (`PacketDesc::materialise_roce_v4`: ECN as the switch set it, ICRC and IPv4 checksum filled,
//! UDP 4791 decodes as RRoCE) and pause frames as 802.1Qbb PFC frames from the sending end's MAC
//! ([`end_mac`]). The run picks the kind with [`link_kind`].

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use rtl_model::capture::{CaptureWriter, LinkKind};
use rtl_model::wire::{builder, ethernet, flow_ctl};

use super::observe::{link_file_stem, wire_end, ObserveError};
use crate::fabric::tap::{TapEvent, Tapped, WireEnd};
use crate::fabric::{link_rate, Fabric};
use crate::scenario::Scenario;
use crate::topology::End;

/// Events buffered before they are written (bounded memory for long captures).
const BATCH: usize = 4096;

/// The capture format of a scenario's links: InfiniBand (ERF) for IB links with credits, Ethernet in the
/// fabric's RoCEv2 mode (`[roce]`).
pub fn link_kind(sc: &Scenario) -> LinkKind {
    if sc.roce.is_some() {
        LinkKind::Ethernet
    } else {
        LinkKind::Infiniband
    }
}

/// The MAC address of a link end as a PFC frame's source: an HCA's is `02:00:00:00:` and its LID (as
/// `PacketDesc::materialise_roce_v4` makes them), a switch port's `02:00:01:` switch index, 0, port.
pub fn end_mac(sc: &Scenario, e: End) -> ethernet::MacAddr {
    match e {
        End::Hca { hca } => {
            let [h, l] = sc.topology.hca_lid(hca).to_be_bytes();
            ethernet::MacAddr([2, 0, 0, 0, h, l])
        }
        End::Switch { switch, port } => ethernet::MacAddr([2, 0, 1, switch as u8, 0, port]),
    }
}

struct LinkFile {
    path: String,
    w: CaptureWriter<BufWriter<File>>,
    /// Sub-cycle ticks per cycle of this link's rate.
    ticks: u64,
}

/// The open captures of a run.
pub struct Capture {
    files: Vec<LinkFile>,
    /// Tapped wire end -> its link's file, and the MAC of the end that sends into it.
    by_end: HashMap<WireEnd, (usize, ethernet::MacAddr)>,
    kind: LinkKind,
    ends: Vec<WireEnd>,
    ps_per_cycle: u64,
    pending: Vec<Tapped>,
    bytes: Vec<u8>,
    error: Option<ObserveError>,
}

impl Capture {
    /// Creates `DIR/<link>.pcap` for every link in `links`, in the format `kind`.
    pub fn create(
        sc: &Scenario,
        links: &[usize],
        out: &Path,
        kind: LinkKind,
    ) -> Result<Self, ObserveError> {
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
            let w = CaptureWriter::new(BufWriter::new(f), kind).map_err(|e| ObserveError::Io {
                path: shown.clone(),
                source: std::io::Error::other(e),
            })?;
            // The fabric has already accepted this rate; a failure here would be a bug, shown as 1 tick.
            let ticks = link_rate(topo.links[l].rate_mbps, clock)
                .map(|r| r.ticks_per_cycle())
                .unwrap_or(1);
            let (a, b) = (topo.links[l].a, topo.links[l].b);
            for (to, from) in [(a, b), (b, a)] {
                by_end.insert(wire_end(to), (files.len(), end_mac(sc, from)));
                ends.push(wire_end(to));
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
            kind,
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
        let f = self.by_end[&e.to].0;
        let off = match e.event {
            TapEvent::Packet(p) => u64::from(p.offset) * self.ps_per_cycle / self.files[f].ticks,
            TapEvent::Fc(_) | TapEvent::Pause(_) => 0,
        };
        (e.cycle * self.ps_per_cycle + off, f)
    }

    fn write_pending(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        // Both directions of a link in time order (within a cycle, heads may start at different offsets).
        pending.sort_by_key(|e| self.place(e).0);
        for e in &pending {
            let (t, f) = self.place(e);
            let r = match (e.event, self.kind) {
                (TapEvent::Packet(p), kind) => {
                    let made = match kind {
                        LinkKind::Infiniband => p.desc.materialise(&mut self.bytes),
                        LinkKind::Ethernet => p.desc.materialise_roce_v4(&mut self.bytes),
                    };
                    match made {
                        Ok(()) => self.files[f].w.write(t, &self.bytes),
                        Err(err) => {
                            self.fail(f, std::io::Error::other(err.to_string()));
                            continue;
                        }
                    }
                }
                (TapEvent::Pause(frame), LinkKind::Ethernet) => {
                    builder::pfc_frame(self.by_end[&e.to].1, &frame, &mut self.bytes);
                    self.files[f].w.write(t, &self.bytes)
                }
                // Neither kind of link carries the other's link-level frames.
                (TapEvent::Pause(_), LinkKind::Infiniband)
                | (TapEvent::Fc(_), LinkKind::Ethernet) => continue,
                (TapEvent::Fc(fc), LinkKind::Infiniband) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use pcap_file::pcap::PcapReader;
    use pcap_file::DataLink;
    use rtl_model::crc::icrc::{roce_covered, verify_icrc};
    use rtl_model::wire::bth::Opcode;
    use rtl_model::wire::pfc;
    use switch_asic::{FcPacket, PacketDesc, PacketStart};

    /// Writes `events` on H4's link of the Cao scenario in format `kind`; returns the file's records.
    fn capture(
        kind: LinkKind,
        events: &[Tapped],
    ) -> (DataLink, Vec<(std::time::Duration, Vec<u8>)>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cao-cc-on-quick.toml");
        let sc = crate::scenario::load(&path).unwrap();
        let out = std::env::temp_dir().join(format!(
            "ibcycle-capture-unit-{}-{kind:?}",
            std::process::id()
        ));
        std::fs::create_dir_all(&out).unwrap();
        let l = sc.topology.hca_link[3];
        let mut c = Capture::create(&sc, &[l], &out, kind).unwrap();
        c.pending.extend_from_slice(events);
        let mut fab = Fabric::new(&sc).unwrap();
        c.finish(&mut fab).unwrap();
        let data = std::fs::read(out.join("H4.pcap")).unwrap();
        let _ = std::fs::remove_dir_all(&out);
        let mut r = PcapReader::new(&data[..]).unwrap();
        let link = r.header().datalink;
        let mut v = Vec::new();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            v.push((p.timestamp, p.data.to_vec()));
        }
        (link, v)
    }

    fn events() -> Vec<Tapped> {
        let mut d = PacketDesc::roce_v4(4, 1, 0, Opcode::RcSendOnly, 1024);
        d.ecn = 3;
        d.dest_qp = 2;
        let pause = pfc::Repr {
            class_enable: 1,
            quanta: [0xFFFF, 0, 0, 0, 0, 0, 0, 0],
        };
        vec![
            // Out of time order on purpose: the capture sorts (cycle 10 before cycle 5's later offset).
            Tapped {
                cycle: 10,
                to: WireEnd::Switch(1, 1),
                event: TapEvent::Pause(pause),
            },
            Tapped {
                cycle: 5,
                to: WireEnd::Hca(3),
                event: TapEvent::Packet(PacketStart { desc: d, offset: 2 }),
            },
            Tapped {
                cycle: 7,
                to: WireEnd::Hca(3),
                event: TapEvent::Fc(FcPacket {
                    vl: 0,
                    fctbs: 1,
                    fccl: 2,
                }),
            },
        ]
    }

    #[test]
    fn roce_links_are_ethernet_frames_with_pfc_from_the_sending_end() {
        let (link, recs) = capture(LinkKind::Ethernet, &events());
        assert_eq!(link, DataLink::ETHERNET);
        assert_eq!(
            recs.len(),
            2,
            "the flow-control packet has no place on Ethernet"
        );
        // 250 MHz: 4000 ps per cycle; 4 bytes per cycle is 4 ticks per cycle, so offset 2 is 2000 ps.
        assert_eq!(recs[0].0, std::time::Duration::from_nanos(5 * 4 + 2));
        let f = &recs[0].1;
        assert_eq!(&f[12..14], &[0x08, 0x00], "IPv4");
        assert_eq!(f[15] & 3, 3, "ECN CE as the descriptor says");
        assert_eq!(u16::from_be_bytes([f[36], f[37]]), 4791);
        let (kind, covered) = roce_covered(f).unwrap();
        assert!(verify_icrc(kind, covered).unwrap());
        let p = &recs[1].1;
        assert_eq!(recs[1].0, std::time::Duration::from_nanos(40));
        assert_eq!(&p[12..14], &[0x88, 0x08], "MAC control");
        // Into S2 port 2 (0-based 1): sent by H4, LID 4.
        assert_eq!(&p[6..12], &[2, 0, 0, 0, 0, 4]);
    }

    #[test]
    fn ib_links_carry_no_pause_frames() {
        let mut ev = events();
        if let TapEvent::Packet(p) = &mut ev[1].event {
            p.desc = PacketDesc::local(4, 1, 0, Opcode::RcSendOnly, 1024);
        }
        let (link, recs) = capture(LinkKind::Infiniband, &ev);
        assert_eq!(link, DataLink::ERF);
        let types: Vec<u8> = recs.iter().map(|r| r.1[8]).collect();
        assert_eq!(
            types,
            vec![21, 25],
            "data, then the flow-control packet; no pause"
        );
    }
}
