//! The receive side of an HCA port (native IB, and RoCEv2 frames): consumes packets (as bytes, or as parsed
//! headers when the run carries no payload bytes), verifies the ICRC when bytes exist, keeps per-flow
//! statistics, runs the notification point ([`IbNp`]: CNPs, BECN on ACKs; [`RoceNp`] for RoCEv2),
//! acknowledges RC requests, and reports congestion feedback for the port's own flows (received CNPs and
//! BECNs on ACKs).
//!
//! Named choices:
//! - An RC request is acknowledged when it has AckReq set, or when it arrives with FECN and the NP's rule is
//!   [`crate::np::ib::RcRequestFecn::AckWithBecn`] (hfi1 sends that ACK at once). ACKs carry the syndrome
//!   "ACK, credits unlimited" (0x1F, as Linux rxe), PSN = the request's PSN, MSN = messages completed on the QP.
//! - RC replies go to the remote QP of the connection ([`Sink::connect`]); UD CNPs to the DETH SrcQP. A packet
//!   on an RC QP with no connection gets no reply (counted as `unknown_qp`).
//! - A flow is (SLID, destination QP). A message completes with a SEND LAST/ONLY (any transport).
//! - RoCEv2 frames ([`Sink::receive_roce_frame`]): the notification point is the RoCEv2 one (ECN CE, minimum
//!   interval per flow, [`RoceNp`]); a RoCEv2 flow is (source IP as IPv6, IPv4 mapped to `::ffff:a.b.c.d`,
//!   destination QP); RC requests are acknowledged as for IB (the ACK's Ethernet/IP headers are the
//!   caller's: reverse the frame's).

use std::collections::BTreeMap;

use rtl_model::crc::icrc::{ib_covered, verify_icrc};
use rtl_model::wire::aeth::{self, Syndrome};
use rtl_model::wire::bth::{self, Opcode, Transport};
use rtl_model::wire::lrh::{self, Lnh};
use rtl_model::wire::{deth, grh, ib_cnp};

use crate::np::ib::{IbNp, IbNpAction, IbNpConfig};
use crate::np::roce::{ipv4_is_multicast, ipv6_is_multicast, RoceNp, RoceNpAction, RoceNpConfig};
use crate::units::Cycle;
use rtl_model::crc::icrc::{roce_covered, roce_kind_of_ethernet_frame, IcrcKind};
use rtl_model::wire::{ipv4, ipv6, roce_cnp, udp};

/// Receive counters of one flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowRxStats {
    /// Packets received.
    pub packets: u64,
    /// Payload bytes received.
    pub payload_bytes: u64,
    /// Packets that arrived with FECN.
    pub fecn_marked: u64,
    /// CNPs sent for this flow.
    pub cnps_sent: u64,
    /// ACKs with BECN sent for this flow.
    pub becn_acks: u64,
    /// Messages completed.
    pub messages: u64,
    /// Cycle of the last message completion.
    pub last_message_at: Option<Cycle>,
    /// Sum of message completion times (completion minus the message's arrival at the sender), for the
    /// messages whose arrival was known.
    pub completion_sum: u64,
    /// Longest message completion time.
    pub completion_max: u64,
    /// Messages counted in `completion_sum`.
    pub completions_timed: u64,
    /// Packets whose ICRC did not match.
    pub icrc_errors: u64,
}

/// An ACK to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// Its LRH (to the sender).
    pub lrh: lrh::Repr,
    /// Its BTH (opcode ACKNOWLEDGE, BECN as decided).
    pub bth: bth::Repr,
    /// Its AETH.
    pub aeth: aeth::Repr,
}

/// What a received packet causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reaction {
    /// A CNP to queue.
    pub cnp: Option<ib_cnp::Repr>,
    /// An ACK to send.
    pub ack: Option<Ack>,
    /// Congestion feedback for this port's own QP (a CNP or an ACK with BECN arrived for it).
    pub becn_for_qp: Option<u32>,
    /// A RoCEv2 CNP to send (to the frame's source address).
    pub roce_cnp: Option<roce_cnp::Repr>,
}

/// Why a packet was not consumed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinkError {
    /// The headers do not parse.
    #[error("bad packet: {0}")]
    Parse(#[from] rtl_model::wire::Error),
}

/// The receive side of one port.
#[derive(Debug, Clone)]
pub struct Sink {
    own_lid: u16,
    np: IbNp,
    ack_becn: bool,
    conns: BTreeMap<u32, u32>,
    msn: BTreeMap<u32, u32>,
    flows: BTreeMap<(u16, u32), FlowRxStats>,
    unknown_qp: u64,
    becn_rx: u64,
    roce_np: RoceNp<([u8; 16], u32)>,
    roce_flows: BTreeMap<([u8; 16], u32), FlowRxStats>,
}

impl Sink {
    /// A sink with the notification point `np` (its `own_lid` is this port's LID).
    pub fn new(np: IbNpConfig) -> Self {
        Sink {
            own_lid: np.own_lid,
            ack_becn: np.rc_request == crate::np::ib::RcRequestFecn::AckWithBecn,
            np: IbNp::new(np),
            conns: BTreeMap::new(),
            msn: BTreeMap::new(),
            flows: BTreeMap::new(),
            unknown_qp: 0,
            becn_rx: 0,
            roce_np: RoceNp::new(RoceNpConfig::default()),
            roce_flows: BTreeMap::new(),
        }
    }

    /// Sets the RoCEv2 notification point's settings (default: a CNP for every CE).
    pub fn with_roce_np(mut self, cfg: RoceNpConfig) -> Self {
        self.roce_np = RoceNp::new(cfg);
        self
    }

    /// Counters of RoCEv2 flow (source address as IPv6, destination QP).
    pub fn roce_flow(&self, src: [u8; 16], dest_qp: u32) -> FlowRxStats {
        self.roce_flows
            .get(&(src, dest_qp))
            .copied()
            .unwrap_or_default()
    }

    /// Consumes a RoCEv2 frame (Ethernet header through ICRC, one 802.1Q tag allowed): checks the ICRC,
    /// counts the flow, answers ECN CE with a RoCEv2 CNP (minimum interval per flow), acknowledges RC
    /// requests with AckReq, and reports received CNPs as feedback for this port's QPs.
    pub fn receive_roce_frame(
        &mut self,
        now: Cycle,
        frame: &[u8],
        msg_arrival: Option<Cycle>,
    ) -> Result<Reaction, SinkError> {
        let (kind, ip_at) = roce_kind_of_ethernet_frame(frame)?;
        let ip = &frame[ip_at..];
        let (src, ecn, mc, ip_hdr) = match kind {
            IcrcKind::RoceV6 => {
                let r = ipv6::Repr::parse(&ipv6::Packet::new_checked(ip)?)?;
                (
                    r.src_addr,
                    r.ecn,
                    ipv6_is_multicast(&r.dst_addr),
                    ipv6::HEADER_LEN,
                )
            }
            _ => {
                let p = ipv4::Packet::new_checked(ip)?;
                let hl = p.header_len();
                let r = ipv4::Repr::parse(&p)?;
                let mut a = [0u8; 16];
                a[10] = 0xff;
                a[11] = 0xff;
                a[12..].copy_from_slice(&r.src_addr);
                (a, r.ecn, ipv4_is_multicast(&r.dst_addr), hl)
            }
        };
        let bth_at = ip_at + ip_hdr + udp::HEADER_LEN;
        let b = bth::Repr::parse(&bth::Packet::new_checked(
            frame.get(bth_at..).unwrap_or(&[]),
        )?)?;
        let mut r = Reaction::default();
        if b.opcode.is_cnp() || (b.opcode.is_ack() && b.becn) {
            self.becn_rx += 1;
            r.becn_for_qp = Some(b.dest_qp);
            return Ok(r);
        }
        if b.opcode.is_ack() {
            return Ok(r);
        }
        let ext_at = bth_at + bth::HEADER_LEN;
        let src_qp = if b.opcode.has_deth() {
            deth::Repr::parse(&deth::Packet::new_checked(
                frame.get(ext_at..).unwrap_or(&[]),
            )?)?
            .src_qp
        } else {
            0
        };
        let (_, covered) = roce_covered(frame)?;
        let icrc_ok = verify_icrc(kind, covered).unwrap_or(false);
        let ext = b.opcode.ext_header_len().unwrap_or(0);
        let payload = covered.len().saturating_sub(
            ip_hdr + udp::HEADER_LEN + bth::HEADER_LEN + ext + usize::from(b.pad_cnt) + 4,
        );
        let transport = Transport::of(u8::from(b.opcode));
        let remote = match transport {
            Transport::Rc | Transport::Uc => self.conns.get(&b.dest_qp).copied(),
            _ => Some(src_qp & 0x00FF_FFFF),
        };
        let f = self.roce_flows.entry((src, b.dest_qp)).or_default();
        f.packets += 1;
        f.payload_bytes += payload as u64;
        f.icrc_errors += u64::from(!icrc_ok);
        f.fecn_marked += u64::from(ecn == ipv4::Ecn::Ce);
        if completes(b.opcode) {
            f.messages += 1;
            f.last_message_at = Some(now);
            if let Some(a) = msg_arrival {
                let d = now.saturating_sub(a);
                f.completion_sum += d;
                f.completion_max = f.completion_max.max(d);
                f.completions_timed += 1;
            }
        }
        let Some(remote) = remote else {
            self.unknown_qp += 1;
            return Ok(r);
        };
        if let RoceNpAction::Cnp(c) =
            self.roce_np
                .on_packet(now, (src, b.dest_qp), ecn, mc, &b, remote)
        {
            f.cnps_sent += 1;
            r.roce_cnp = Some(c);
        }
        let is_request = transport == Transport::Rc && !(0x0d..=0x12).contains(&u8::from(b.opcode));
        if is_request && b.ack_req {
            r.ack = Some(self.ack_for(&b, remote, 0, 0, 0, 0, false));
        }
        Ok(r)
    }

    /// Connects local RC QP `local` to remote QP `remote`.
    pub fn connect(&mut self, local: u32, remote: u32) {
        self.conns.insert(local & 0x00FF_FFFF, remote & 0x00FF_FFFF);
    }

    /// Counters of flow (SLID, destination QP).
    pub fn flow(&self, slid: u16, dest_qp: u32) -> FlowRxStats {
        self.flows
            .get(&(slid, dest_qp))
            .copied()
            .unwrap_or_default()
    }

    /// RC packets for QPs without a connection.
    pub fn unknown_qp(&self) -> u64 {
        self.unknown_qp
    }

    /// CNPs and BECN-carrying ACKs received for this port's QPs.
    pub fn becn_rx(&self) -> u64 {
        self.becn_rx
    }

    /// Consumes a whole packet (LRH through VCRC or ICRC): parses, verifies the ICRC, reacts.
    pub fn receive_bytes(&mut self, now: Cycle, pkt: &[u8]) -> Result<Reaction, SinkError> {
        let l = lrh::Repr::parse(&lrh::Packet::new_checked(pkt)?)?;
        let mut off = lrh::HEADER_LEN;
        if l.lnh == Lnh::IbaGlobal {
            off += grh::HEADER_LEN;
        }
        let b = bth::Repr::parse(&bth::Packet::new_checked(pkt.get(off..).unwrap_or(&[]))?)?;
        let ext_at = off + bth::HEADER_LEN;
        let src_qp = if b.opcode.has_deth() {
            deth::Repr::parse(&deth::Packet::new_checked(
                pkt.get(ext_at..).unwrap_or(&[]),
            )?)?
            .src_qp
        } else {
            0
        };
        let ext = b.opcode.ext_header_len().unwrap_or(0);
        let payload =
            (usize::from(l.pkt_len) * 4).saturating_sub(ext_at + ext + usize::from(b.pad_cnt) + 4);
        let icrc_ok = match ib_covered(pkt) {
            Ok((kind, covered)) => verify_icrc(kind, covered).unwrap_or(false),
            Err(_) => false,
        };
        let r = self.receive(now, &l, &b, src_qp, payload as u32, None);
        if !icrc_ok {
            self.flows
                .entry((l.slid, b.dest_qp))
                .or_default()
                .icrc_errors += 1;
        }
        Ok(r)
    }

    /// Consumes a packet given by its headers (`src_qp`: the DETH SrcQP for UD, else ignored; `msg_arrival`:
    /// when its message arrived at the sender, if the packet carries that metadata).
    pub fn receive(
        &mut self,
        now: Cycle,
        l: &lrh::Repr,
        b: &bth::Repr,
        src_qp: u32,
        payload: u32,
        msg_arrival: Option<Cycle>,
    ) -> Reaction {
        let mut r = Reaction::default();
        // Feedback for our own senders.
        if b.opcode.is_cnp() || (b.opcode.is_ack() && b.becn) {
            self.becn_rx += 1;
            r.becn_for_qp = Some(b.dest_qp);
            return r;
        }
        if b.opcode.is_ack() {
            return r;
        }
        let transport = Transport::of(u8::from(b.opcode));
        let remote = match transport {
            Transport::Rc | Transport::Uc => self.conns.get(&b.dest_qp).copied(),
            _ => Some(src_qp & 0x00FF_FFFF),
        };
        let key = (l.slid, b.dest_qp);
        let f = self.flows.entry(key).or_default();
        f.packets += 1;
        f.payload_bytes += u64::from(payload);
        f.fecn_marked += u64::from(b.fecn);
        if completes(b.opcode) {
            f.messages += 1;
            f.last_message_at = Some(now);
            if let Some(a) = msg_arrival {
                let d = now.saturating_sub(a);
                f.completion_sum += d;
                f.completion_max = f.completion_max.max(d);
                f.completions_timed += 1;
            }
            if transport == Transport::Rc {
                *self.msn.entry(b.dest_qp).or_default() += 1;
            }
        }
        let Some(remote) = remote else {
            self.unknown_qp += 1;
            return r;
        };
        let mut becn_on_ack = false;
        match self.np.on_packet(now, l, b, remote) {
            IbNpAction::Cnp(c) => {
                f.cnps_sent += 1;
                r.cnp = Some(c);
            }
            IbNpAction::BecnOnAck => {
                f.becn_acks += 1;
                becn_on_ack = true;
            }
            IbNpAction::Ignore(_) | IbNpAction::Coalesced => {}
        }
        let is_request = transport == Transport::Rc && !(0x0d..=0x12).contains(&u8::from(b.opcode));
        if is_request && (b.ack_req || (becn_on_ack && self.ack_becn)) {
            r.ack = Some(self.ack_for(b, remote, l.vl, l.sl, l.slid, self.own_lid, becn_on_ack));
        }
        r
    }

    /// The ACK of RC request `b` to QP `remote` (LRH fields for native IB; zero for RoCEv2, whose caller
    /// builds Ethernet/IP/UDP headers instead).
    #[allow(clippy::too_many_arguments)]
    fn ack_for(
        &self,
        b: &bth::Repr,
        remote: u32,
        vl: u8,
        sl: u8,
        dlid: u16,
        slid: u16,
        becn: bool,
    ) -> Ack {
        let msn = self.msn.get(&b.dest_qp).copied().unwrap_or(0) & 0x00FF_FFFF;
        Ack {
            lrh: lrh::Repr {
                vl,
                lver: 0,
                sl,
                resv2: 0,
                lnh: Lnh::IbaLocal,
                dlid,
                resv5: 0,
                pkt_len: ((lrh::HEADER_LEN + bth::HEADER_LEN + aeth::HEADER_LEN + 4) / 4) as u16,
                slid,
            },
            bth: bth::Repr {
                opcode: Opcode::RcAcknowledge,
                se: false,
                migreq: false,
                pad_cnt: 0,
                tver: 0,
                pkey: b.pkey,
                fecn: false,
                becn,
                resv6: 0,
                dest_qp: remote,
                ack_req: false,
                resv7: 0,
                psn: b.psn,
            },
            aeth: aeth::Repr {
                syndrome: Syndrome::ACK_UNLIMITED,
                msn,
            },
        }
    }
}

/// Whether `op` ends a SEND message.
fn completes(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::RcSendLast
            | Opcode::RcSendOnly
            | Opcode::RcSendLastWithImmediate
            | Opcode::RcSendOnlyWithImmediate
            | Opcode::UcSendLast
            | Opcode::UcSendOnly
            | Opcode::UdSendOnly
            | Opcode::UdSendOnlyWithImmediate
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::np::ib::{CnpCoalescing, RcRequestFecn};
    use crate::traffic::segment::{FlowSpec, Segmenter, Service};
    use crate::units::Mtu;

    fn sink() -> Sink {
        let mut s = Sink::new(IbNpConfig {
            own_lid: 2,
            rc_request: RcRequestFecn::AckWithBecn,
            coalescing: CnpCoalescing::Off,
        });
        s.connect(0x22, 0x11);
        s
    }

    fn segs(service: Service, bytes: u64) -> (Segmenter, Vec<crate::traffic::segment::Segment>) {
        let mut g = Segmenter::new(
            FlowSpec {
                service,
                slid: 1,
                dlid: 2,
                sl: 3,
                vl: 3,
                pkey: 0xffff,
                src_qp: 0x11,
                dest_qp: 0x22,
                qkey: 5,
                mtu: Mtu::new(1024).unwrap(),
            },
            100,
        );
        let mut v = Vec::new();
        g.message(bytes, 0, &mut v).unwrap();
        (g, v)
    }

    /// An RC message of 2500 bytes (1024 + 1024 + 452) as real bytes: ICRC checks, payload counted, one ACK
    /// for the last packet (AckReq) with MSN 1; the middle packet FECN-marked: ACK with BECN at once.
    #[test]
    fn rc_message_bytes_stats_and_acks() {
        let mut s = sink();
        let (g, v) = segs(Service::Rc, 2500);
        let mut acks = Vec::new();
        for (i, seg) in v.iter().enumerate() {
            let mut p = g.packet(seg);
            p.transport.bth.fecn = i == 1;
            let bytes = p.to_vec().unwrap();
            let r = s.receive_bytes(10 * i as u64, &bytes).unwrap();
            assert_eq!(r.cnp, None, "RC requests get BECN on the ACK");
            acks.push(r.ack);
        }
        assert_eq!(acks[0], None);
        let a1 = acks[1].unwrap();
        assert!(a1.bth.becn);
        assert_eq!((a1.bth.psn, a1.bth.dest_qp, a1.lrh.dlid), (101, 0x11, 1));
        let a2 = acks[2].unwrap();
        assert!(!a2.bth.becn);
        assert_eq!((a2.bth.psn, a2.aeth.msn), (102, 1));
        let f = s.flow(1, 0x22);
        assert_eq!(
            (
                f.packets,
                f.payload_bytes,
                f.fecn_marked,
                f.becn_acks,
                f.messages,
                f.icrc_errors
            ),
            (3, 2500, 1, 1, 1, 0)
        );
        assert_eq!(f.last_message_at, Some(20));
    }

    /// A corrupted payload byte is an ICRC error; FECN is not (it is masked in the ICRC).
    #[test]
    fn icrc_errors_counted() {
        let mut s = sink();
        let (g, v) = segs(Service::Ud, 600);
        let mut bytes = g.packet(&v[0]).to_vec().unwrap();
        bytes[8 + 4] |= 0x80; // FECN after the ICRC was computed
        let r = s.receive_bytes(0, &bytes).unwrap();
        assert_eq!(s.flow(1, 0x22).icrc_errors, 0);
        let cnp = r.cnp.unwrap();
        assert_eq!(
            (cnp.dlid, cnp.dest_qp, cnp.sl),
            (1, 0x11, 3),
            "UD: CNP to the DETH SrcQP"
        );
        bytes[40] ^= 1;
        s.receive_bytes(1, &bytes).unwrap();
        assert_eq!(s.flow(1, 0x22).icrc_errors, 1);
        assert!(s.receive_bytes(2, &bytes[..5]).is_err());
    }

    /// RoCEv2 frames: an RC message of 2000 bytes at MTU 1024 (two frames, the second with AckReq), both
    /// CE-marked: one CNP to the connected remote QP (the second CE falls within the 50 000-cycle minimum
    /// interval), one ACK; payload and marks counted under the v4-mapped source address; a flipped payload
    /// bit is an ICRC error.
    #[test]
    fn roce_frames() {
        use crate::traffic::segment::RoceEncap;
        use rtl_model::wire::builder::IpHeader;
        use rtl_model::wire::ethernet;
        let mut s = sink().with_roce_np(RoceNpConfig {
            min_interval: 50_000,
        });
        let (mut g, _) = segs(Service::Rc, 0);
        let mut v = Vec::new();
        g.message(2000, 0, &mut v).unwrap();
        let encap = RoceEncap {
            eth: ethernet::Repr {
                src_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 1]),
                dst_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 2]),
                ethertype: ethernet::EtherType::Ipv4,
            },
            ip: IpHeader::V4(ipv4::Repr {
                src_addr: [10, 0, 0, 1],
                dst_addr: [10, 0, 0, 2],
                protocol: ipv4::IpProtocol::Udp,
                payload_len: 0,
                ttl: 64,
                dscp: 0,
                ecn: ipv4::Ecn::Ect0,
                ident: 0,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
            }),
            udp_src_port: 0xC001,
        };
        let mut reactions = Vec::new();
        let mut last = Vec::new();
        for (i, seg) in v.iter().enumerate() {
            let mut f = g.roce_packet(seg, &encap).to_vec().unwrap();
            ipv4::Packet::new_unchecked(&mut f[14..]).set_ecn_ce();
            reactions.push(s.receive_roce_frame(100 * i as u64, &f, Some(0)).unwrap());
            last = f;
        }
        let cnp = reactions[0].roce_cnp.unwrap();
        assert_eq!((cnp.dest_qp, cnp.becn), (0x11, true));
        assert_eq!(reactions[1].roce_cnp, None, "within the minimum interval");
        assert_eq!(reactions[0].ack, None);
        // PSN 100 went to the empty message segs() made; this message has 101 and 102.
        assert_eq!(reactions[1].ack.unwrap().bth.psn, 102);
        let mut src = [0u8; 16];
        src[10..].copy_from_slice(&[0xff, 0xff, 10, 0, 0, 1]);
        let f = s.roce_flow(src, 0x22);
        assert_eq!(
            (
                f.packets,
                f.payload_bytes,
                f.fecn_marked,
                f.cnps_sent,
                f.messages,
                f.completion_sum
            ),
            (2, 2000, 2, 1, 1, 100)
        );
        assert_eq!(f.icrc_errors, 0);
        let n = last.len();
        last[n - 10] ^= 1;
        s.receive_roce_frame(200, &last, None).unwrap();
        assert_eq!(s.roce_flow(src, 0x22).icrc_errors, 1);
        assert!(s.receive_roce_frame(0, &last[..30], None).is_err());
    }

    #[test]
    fn feedback_for_own_qps() {
        let mut s = sink();
        let cnp = ib_cnp::Repr {
            vl: 0,
            sl: 0,
            dlid: 2,
            slid: 1,
            pkey: 0xffff,
            dest_qp: 0x22,
            fecn: false,
        };
        let r = s.receive(0, &cnp.lrh_repr(), &cnp.bth_repr(), 0, 0, None);
        assert_eq!(r.becn_for_qp, Some(0x22));
        assert_eq!(s.becn_rx(), 1);
        assert_eq!(s.flow(1, 0x22).packets, 0, "a CNP is not data");
    }

    /// Completion times from the arrival metadata: two messages arriving at 100 and 300, completed at 1000
    /// and 1500: sum 900 + 1200, max 1200.
    #[test]
    fn message_completion_times() {
        let mut s = sink();
        let (g, v) = segs(Service::Ud, 100);
        let p = g.packet(&v[0]);
        let (l, b) = (p.lrh, p.transport.bth);
        s.receive(1000, &l, &b, 0x11, 100, Some(100));
        s.receive(1500, &l, &b, 0x11, 100, Some(300));
        s.receive(1600, &l, &b, 0x11, 100, None);
        let f = s.flow(1, 0x22);
        assert_eq!(
            (
                f.messages,
                f.completions_timed,
                f.completion_sum,
                f.completion_max
            ),
            (3, 2, 2100, 1200)
        );
    }
}
