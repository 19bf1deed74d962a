//! Segmentation of a SEND message into packets with real IB headers (LRH, BTH, DETH for UD), PSN sequencing
//! (24 bits, wrapping), and the wire length of each packet.
//!
//! - RC: SEND FIRST (0x00), MIDDLE (0x01), LAST (0x02), or ONLY (0x04) for a message of at most one MTU
//!   (a zero-byte message is one SEND ONLY with no payload). AckReq is set on the last packet of each
//!   message (a named choice: one ACK per message).
//! - UD: SEND ONLY (0x64) with DETH (Q_Key, source QP); a UD message must fit one MTU.
//! - Every packet but the last of a message carries exactly one MTU of payload.
//! - RoCEv2: the same transport (BTH, DETH, payload, ICRC) in Ethernet / IPv4 or IPv6 / UDP 4791
//!   ([`Segmenter::roce_packet`]); the LRH fields of the [`FlowSpec`] are then unused.

use rtl_model::wire::bth::{self, Opcode};
use rtl_model::wire::builder::{ExtHeader, IbPacket, IpHeader, Payload, RocePacket, Transport};
use rtl_model::wire::deth;
use rtl_model::wire::ethernet;
use rtl_model::wire::lrh::{self, Lnh};

use crate::error::CcError;
use crate::units::{Cycle, Mtu};

/// Transport service of a flow's QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Reliable connection.
    Rc,
    /// Unreliable datagram.
    Ud,
}

/// The addressing of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    /// Service.
    pub service: Service,
    /// Source LID.
    pub slid: u16,
    /// Destination LID.
    pub dlid: u16,
    /// Service level.
    pub sl: u8,
    /// VL the packets leave on (from the SL2VL table).
    pub vl: u8,
    /// P_Key.
    pub pkey: u16,
    /// Source QP (DETH SrcQP for UD).
    pub src_qp: u32,
    /// Destination QP.
    pub dest_qp: u32,
    /// Q_Key (UD).
    pub qkey: u32,
    /// Path MTU.
    pub mtu: Mtu,
}

/// One packet of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// BTH opcode.
    pub opcode: Opcode,
    /// PSN (24 bits).
    pub psn: u32,
    /// Payload bytes.
    pub payload: u32,
    /// AckReq.
    pub ack_req: bool,
    /// The cycle the message arrived at the sender (carried as metadata with the packet, not on the wire,
    /// so the receiver can measure message completion times).
    pub msg_arrival: Cycle,
}

/// The per-QP send state: the next PSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segmenter {
    spec: FlowSpec,
    psn: u32,
}

impl Segmenter {
    /// A QP whose first packet gets PSN `first_psn` (masked to 24 bits).
    pub fn new(spec: FlowSpec, first_psn: u32) -> Self {
        Segmenter {
            spec,
            psn: first_psn & 0x00FF_FFFF,
        }
    }

    /// The flow.
    pub fn spec(&self) -> &FlowSpec {
        &self.spec
    }

    /// Appends the packets of a `bytes`-byte message that arrived at cycle `arrival` to `out` and advances the
    /// PSN.
    pub fn message(
        &mut self,
        bytes: u64,
        arrival: Cycle,
        out: &mut Vec<Segment>,
    ) -> Result<(), CcError> {
        let mtu = u64::from(self.spec.mtu.bytes());
        let n = bytes.div_ceil(mtu).max(1);
        if self.spec.service == Service::Ud && n > 1 {
            return Err(CcError::Invalid {
                setting: "UD message bytes",
                value: bytes,
                reason: "a UD message must fit one MTU",
            });
        }
        for i in 0..n {
            let payload = if i + 1 < n {
                mtu
            } else {
                bytes - mtu * (n - 1)
            };
            let opcode = match (self.spec.service, n, i) {
                (Service::Ud, _, _) => Opcode::UdSendOnly,
                (Service::Rc, 1, _) => Opcode::RcSendOnly,
                (Service::Rc, _, 0) => Opcode::RcSendFirst,
                (Service::Rc, _, i) if i + 1 == n => Opcode::RcSendLast,
                (Service::Rc, _, _) => Opcode::RcSendMiddle,
            };
            out.push(Segment {
                opcode,
                psn: self.psn,
                payload: payload as u32,
                ack_req: self.spec.service == Service::Rc && i + 1 == n,
                msg_arrival: arrival,
            });
            self.psn = (self.psn + 1) & 0x00FF_FFFF;
        }
        Ok(())
    }

    /// The packet of `seg`, with a deterministic payload pattern (seeded by the PSN), ready to build.
    pub fn packet(&self, seg: &Segment) -> IbPacket<'static> {
        let s = &self.spec;
        IbPacket {
            lrh: lrh::Repr {
                vl: s.vl,
                lver: 0,
                sl: s.sl,
                resv2: 0,
                lnh: Lnh::IbaLocal,
                dlid: s.dlid,
                resv5: 0,
                // Filled in by the builder.
                pkt_len: 0,
                slid: s.slid,
            },
            grh: None,
            transport: Transport {
                bth: bth::Repr {
                    opcode: seg.opcode,
                    se: false,
                    migreq: false,
                    pad_cnt: bth::pad_cnt_for(seg.payload as usize),
                    tver: 0,
                    pkey: s.pkey,
                    fecn: false,
                    becn: false,
                    resv6: 0,
                    dest_qp: s.dest_qp & 0x00FF_FFFF,
                    ack_req: seg.ack_req,
                    resv7: 0,
                    psn: seg.psn,
                },
                ext: match s.service {
                    Service::Ud => ExtHeader::Deth(deth::Repr {
                        qkey: s.qkey,
                        resv8: 0,
                        src_qp: s.src_qp & 0x00FF_FFFF,
                    }),
                    Service::Rc => ExtHeader::None,
                },
                payload: Payload::Pattern {
                    len: seg.payload as usize,
                    seed: seg.psn,
                },
            },
        }
    }

    /// Bytes of the packet on the wire (LRH through VCRC).
    pub fn wire_len(&self, seg: &Segment) -> u32 {
        self.packet(seg).wire_len() as u32
    }

    /// The RoCEv2 frame of `seg` (Ethernet header through ICRC, no FCS), ready to build.
    pub fn roce_packet(&self, seg: &Segment, encap: &RoceEncap) -> RocePacket<'static> {
        RocePacket {
            eth: encap.eth,
            ip: encap.ip,
            udp_src_port: encap.udp_src_port,
            transport: self.packet(seg).transport,
        }
    }
}

/// The Ethernet, IP and UDP headers of a RoCEv2 flow (ECN as the sender sets it, ECT(0) under DCQCN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceEncap {
    /// Ethernet header (the EtherType is set by the builder).
    pub eth: ethernet::Repr,
    /// IP header (protocol and length set by the builder).
    pub ip: IpHeader,
    /// UDP source port (ECMP entropy).
    pub udp_src_port: u16,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtl_model::wire::lrh::Packet as LrhPacket;

    fn spec(service: Service) -> FlowSpec {
        FlowSpec {
            service,
            slid: 1,
            dlid: 4,
            sl: 2,
            vl: 1,
            pkey: 0xffff,
            src_qp: 0x11,
            dest_qp: 0x22,
            qkey: 0x8001_0000,
            mtu: Mtu::new(2048).unwrap(),
        }
    }

    /// 5000 bytes at MTU 2048: FIRST 2048, MIDDLE 2048, LAST 904 (AckReq), PSNs wrapping past 0xFFFFFF.
    /// Wire lengths: 8 + 12 + 2048 + 4 + 2 = 2074 twice, then 8 + 12 + 904 + 4 + 2 = 930.
    #[test]
    fn rc_message_segments() {
        let mut s = Segmenter::new(spec(Service::Rc), 0xFF_FFFE);
        let mut v = Vec::new();
        s.message(5000, 0, &mut v).unwrap();
        let ops: Vec<(Opcode, u32, u32, bool)> = v
            .iter()
            .map(|g| (g.opcode, g.psn, g.payload, g.ack_req))
            .collect();
        assert_eq!(
            ops,
            [
                (Opcode::RcSendFirst, 0xFF_FFFE, 2048, false),
                (Opcode::RcSendMiddle, 0xFF_FFFF, 2048, false),
                (Opcode::RcSendLast, 0, 904, true)
            ]
        );
        let lens: Vec<u32> = v.iter().map(|g| s.wire_len(g)).collect();
        assert_eq!(lens, [2074, 2074, 930]);
        // The bytes: PktLen counts LRH..ICRC in words.
        let bytes = s.packet(&v[2]).to_vec().unwrap();
        assert_eq!(bytes.len(), 930);
        assert_eq!(LrhPacket::new_checked(&bytes[..]).unwrap().pkt_len(), 232);
        v.clear();
        s.message(0, 0, &mut v).unwrap();
        assert_eq!(
            (v[0].opcode, v[0].payload, v[0].psn),
            (Opcode::RcSendOnly, 0, 1)
        );
    }

    /// A RoCEv2 RC packet: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 1024 payload + ICRC 4 = 1082 bytes. A
    /// switch marks CE (IPv4 checksum updated, ICRC untouched since TOS is masked); the receiver's RoCEv2
    /// notification point answers with a CNP 0x81 to the sender's QP, built and parsed back.
    #[test]
    fn roce_packet_ce_and_cnp() {
        use crate::np::roce::{RoceNp, RoceNpAction, RoceNpConfig};
        use rtl_model::crc::icrc::{roce_covered, verify_icrc};
        use rtl_model::wire::ipv4::{self, Ecn};
        use rtl_model::wire::{builder, roce_cnp, udp};
        let mut sp = spec(Service::Rc);
        sp.mtu = Mtu::new(1024).unwrap();
        let mut s = Segmenter::new(sp, 3);
        let mut v = Vec::new();
        s.message(1024, 0, &mut v).unwrap();
        let ip = ipv4::Repr {
            src_addr: [10, 0, 0, 1],
            dst_addr: [10, 0, 0, 2],
            protocol: ipv4::IpProtocol::Udp,
            payload_len: 0,
            ttl: 64,
            dscp: 26,
            ecn: Ecn::Ect0,
            ident: 0,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
        };
        let encap = RoceEncap {
            eth: ethernet::Repr {
                src_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 1]),
                dst_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 2]),
                ethertype: ethernet::EtherType::Ipv4,
            },
            ip: IpHeader::V4(ip),
            udp_src_port: 0xC000,
        };
        let mut frame = s.roce_packet(&v[0], &encap).to_vec().unwrap();
        assert_eq!(frame.len(), 1082);
        ipv4::Packet::new_unchecked(&mut frame[14..]).set_ecn_ce();
        let (kind, covered) = roce_covered(&frame).unwrap();
        assert!(
            verify_icrc(kind, covered).unwrap(),
            "CE marking leaves the ICRC valid"
        );
        let ipr = ipv4::Repr::parse(&ipv4::Packet::new_checked(&frame[14..]).unwrap()).unwrap();
        assert_eq!(ipr.ecn, Ecn::Ce);
        let b = bth::Repr::parse(
            &bth::Packet::new_checked(&frame[14 + 20 + udp::HEADER_LEN..]).unwrap(),
        )
        .unwrap();
        let mut np = RoceNp::new(RoceNpConfig { min_interval: 1000 });
        let RoceNpAction::Cnp(cnp) = np.on_packet(0, ipr.src_addr, ipr.ecn, false, &b, sp.src_qp)
        else {
            panic!("expected a CNP");
        };
        let mut reply = Vec::new();
        let back = ipv4::Repr {
            src_addr: ipr.dst_addr,
            dst_addr: ipr.src_addr,
            ..ip
        };
        builder::roce_cnp(encap.eth, IpHeader::V4(back), 0xC000, &cnp, &mut reply).unwrap();
        let at = 14 + 20 + udp::HEADER_LEN;
        let parsed =
            roce_cnp::Repr::parse(&roce_cnp::Packet::new_checked(&reply[at..]).unwrap()).unwrap();
        assert_eq!((parsed.dest_qp, parsed.becn), (0x11, true));
        let (kind, covered) = roce_covered(&reply).unwrap();
        assert!(verify_icrc(kind, covered).unwrap());
    }

    #[test]
    fn ud_has_deth_and_fits_one_mtu() {
        let mut s = Segmenter::new(spec(Service::Ud), 7);
        let mut v = Vec::new();
        s.message(1001, 0, &mut v).unwrap();
        // 8 + 12 + 8 + 1004 (padded) + 4 + 2.
        assert_eq!(s.wire_len(&v[0]), 1038);
        let b = s.packet(&v[0]).to_vec().unwrap();
        assert_eq!(b[8], 0x64, "UD SEND ONLY");
        assert_eq!(
            &b[20..24],
            &[0x80, 0x01, 0, 0],
            "DETH Q_Key after LRH and BTH"
        );
        assert_eq!(&b[25..28], &[0, 0, 0x11], "DETH SrcQP");
        assert_eq!(
            s.message(2049, 0, &mut v).unwrap_err().to_string(),
            "UD message bytes (2049) is invalid: a UD message must fit one MTU"
        );
    }
}
