//! Packets as small descriptors, and the port interface of the switch.
//!
//! At fabric scale a packet is a [`PacketDesc`]: the header fields the switch reads or writes, the wire length
//! and a payload seed. Bytes are made only when a capture, a CRC check or the RTL needs them
//! ([`PacketDesc::materialise`]); the switch's egress edits are then applied to real bytes by
//! [`egress_rewrite`], which sets the LRH VL and the BTH FECN bit and regenerates the VCRC.
//! ICRC is unchanged by both edits (VL and FECN are masked in it).

use crate::crc::vcrc::fill_vcrc;
use crate::wire::builder::{ExtHeader, IbPacket, Payload, Transport, ICRC_LEN};
use crate::wire::{bth, grh, lrh};

/// Bytes of the Ethernet, IPv4 and UDP headers before a RoCEv2 BTH.
pub const ROCE_V4_HEADERS: usize = 14 + 20 + 8;

/// Bytes of a link flow-control packet on the wire.
pub const FC_PACKET_BYTES: u64 = 6;

/// A packet as the switch sees it. About 40 bytes, `Copy`: the hot path moves these, never bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketDesc {
    /// LRH DLID: the forwarding-table index.
    pub dlid: u16,
    /// LRH SLID.
    pub slid: u16,
    /// LRH SL: selects the output VL through SL2VL.
    pub sl: u8,
    /// LRH VL: the input VL on arrival, rewritten to the output VL at egress.
    pub vl: u8,
    /// BTH FECN.
    pub fecn: bool,
    /// BTH BECN.
    pub becn: bool,
    /// IP ECN bits of a RoCEv2 packet (0 not ECN-capable, 1/2 ECT, 3 CE); unused on IB links.
    pub ecn: u8,
    /// BTH opcode.
    pub opcode: u8,
    /// BTH DestQP (24 bits).
    pub dest_qp: u32,
    /// BTH PSN (24 bits).
    pub psn: u32,
    /// Payload length in bytes.
    pub payload_len: u16,
    /// Bytes on the wire, LRH through VCRC (what the link serialises and what credits count).
    pub wire_len: u16,
    /// Seed of the payload pattern (`crate::wire::builder::pattern_byte`).
    pub payload_seed: u32,
    /// Caller's tag (a flow or packet id); carried unchanged.
    pub tag: u32,
    /// The ICRC its source computed ([`PacketDesc::invariant_crc`]), for the destination to check; 0 where
    /// no source sealed the packet (tests, traces). No switch touches it.
    pub icrc: u32,
}

impl PacketDesc {
    /// The packet's ICRC as far as a descriptor holds the packet: CRC-32 with the ICRC's polynomial over the
    /// fields the ICRC covers, in wire order (LRH SL, DLID, SLID and length; BTH opcode, DestQP and PSN; the
    /// payload by its length and pattern seed, which decide its bytes). Left out as the ICRC leaves them out
    /// (the fields a switch may change on the way): the VL, FECN and BECN, and on RoCEv2 (`roce`) the IP
    /// traffic class, so the SL (its priority) and the ECN bits. The destination compares it with the value
    /// the source put in [`PacketDesc::icrc`]: a model that changed a covered field in flight fails there,
    /// as a corrupted packet fails the ICRC.
    pub fn invariant_crc(&self, roce: bool) -> u32 {
        let mut b = [0u8; 20];
        b[0] = if roce { 0 } else { self.sl };
        b[1..3].copy_from_slice(&self.dlid.to_be_bytes());
        b[3..5].copy_from_slice(&self.slid.to_be_bytes());
        b[5..7].copy_from_slice(&self.wire_len.to_be_bytes());
        b[7] = self.opcode;
        b[8..11].copy_from_slice(&self.dest_qp.to_be_bytes()[1..]);
        b[11..14].copy_from_slice(&self.psn.to_be_bytes()[1..]);
        b[14..16].copy_from_slice(&self.payload_len.to_be_bytes());
        b[16..20].copy_from_slice(&self.payload_seed.to_be_bytes());
        crate::crc::icrc::crc32(&b)
    }

    /// Fills [`PacketDesc::icrc`] (the source's last step, after every covered field is set).
    pub fn seal(&mut self, roce: bool) {
        self.icrc = self.invariant_crc(roce);
    }

    /// Whether [`PacketDesc::icrc`] matches the covered fields as they arrived.
    pub fn icrc_ok(&self, roce: bool) -> bool {
        self.icrc == self.invariant_crc(roce)
    }

    /// A local (no GRH) packet with opcode `opcode` and `payload_len` bytes of payload; the wire length follows
    /// from the opcode's extension headers (unknown opcodes: none).
    pub fn local(dlid: u16, slid: u16, sl: u8, opcode: bth::Opcode, payload_len: u16) -> Self {
        let ext = opcode.ext_header_len().unwrap_or(0);
        let wire = lrh::HEADER_LEN
            + bth::HEADER_LEN
            + ext
            + usize::from(payload_len).div_ceil(4) * 4
            + ICRC_LEN
            + crate::crc::vcrc::VCRC_LEN;
        PacketDesc {
            dlid,
            slid,
            sl,
            opcode: opcode.into(),
            payload_len,
            wire_len: wire.min(usize::from(u16::MAX)) as u16,
            ..PacketDesc::default()
        }
    }

    /// A RoCEv2-over-IPv4 packet (Ethernet 14 + IPv4 20 + UDP 8 + BTH, extension headers, payload, ICRC; no
    /// FCS), ECN-capable (ECT(0)) as DCQCN senders send. `dlid`/`slid` stand for the destination and source
    /// (they route it and make its addresses, see [`PacketDesc::materialise_roce_v4`]); `sl` is its priority.
    pub fn roce_v4(dlid: u16, slid: u16, sl: u8, opcode: bth::Opcode, payload_len: u16) -> Self {
        let ext = opcode.ext_header_len().unwrap_or(0);
        let wire = ROCE_V4_HEADERS
            + bth::HEADER_LEN
            + ext
            + usize::from(payload_len).div_ceil(4) * 4
            + ICRC_LEN;
        PacketDesc {
            dlid,
            slid,
            sl,
            ecn: 2,
            opcode: opcode.into(),
            payload_len,
            wire_len: wire.min(usize::from(u16::MAX)) as u16,
            ..PacketDesc::default()
        }
    }

    /// Writes the RoCEv2 frame of a [`PacketDesc::roce_v4`] descriptor into `out`: MAC 02:00:00:00:hi:lo and
    /// IPv4 10.0.hi.lo from the LIDs, DSCP 8 x priority, the descriptor's ECN, UDP source port 0xC000 | QP
    /// low bits; IPv4 checksum and ICRC filled. FECN/BECN go into the BTH as for IB.
    pub fn materialise_roce_v4(&self, out: &mut Vec<u8>) -> crate::wire::Result<()> {
        use crate::wire::builder::{IpHeader, RocePacket};
        use crate::wire::{ethernet, ipv4};
        static ZEROS: [u8; 64] = [0; 64];
        let opcode = bth::Opcode::from(self.opcode);
        let ext_len = opcode.ext_header_len().unwrap_or(0).min(ZEROS.len());
        let [dh, dl] = self.dlid.to_be_bytes();
        let [sh, sl] = self.slid.to_be_bytes();
        RocePacket {
            eth: ethernet::Repr {
                src_addr: ethernet::MacAddr([2, 0, 0, 0, sh, sl]),
                dst_addr: ethernet::MacAddr([2, 0, 0, 0, dh, dl]),
                ethertype: ethernet::EtherType::Ipv4,
            },
            ip: IpHeader::V4(ipv4::Repr {
                src_addr: [10, 0, sh, sl],
                dst_addr: [10, 0, dh, dl],
                protocol: ipv4::IpProtocol::Udp,
                payload_len: 0,
                ttl: 64,
                dscp: (self.sl & 7) * 8,
                ecn: ipv4::Ecn::from_bits(self.ecn),
                ident: 0,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
            }),
            udp_src_port: 0xC000 | (self.dest_qp & 0x3FFF) as u16,
            transport: Transport {
                bth: bth::Repr {
                    opcode,
                    se: false,
                    migreq: false,
                    pad_cnt: 0,
                    tver: 0,
                    pkey: 0xFFFF,
                    fecn: self.fecn,
                    becn: self.becn,
                    resv6: 0,
                    dest_qp: self.dest_qp,
                    ack_req: false,
                    resv7: 0,
                    psn: self.psn,
                },
                ext: if ext_len == 0 {
                    ExtHeader::None
                } else {
                    ExtHeader::Raw(&ZEROS[..ext_len])
                },
                payload: Payload::Pattern {
                    len: self.payload_len.into(),
                    seed: self.payload_seed,
                },
            },
        }
        .build(out)
    }

    /// Length in 64-byte blocks (what credits count).
    pub fn blocks(&self) -> u16 {
        self.wire_len.div_ceil(64)
    }

    /// Writes the packet's bytes into `out` (cleared first) with ICRC and VCRC filled. Extension headers are
    /// zero bytes of the opcode's length.
    pub fn materialise(&self, out: &mut Vec<u8>) -> crate::wire::Result<()> {
        static ZEROS: [u8; 64] = [0; 64];
        let opcode = bth::Opcode::from(self.opcode);
        let ext_len = opcode.ext_header_len().unwrap_or(0).min(ZEROS.len());
        let pkt = IbPacket {
            lrh: lrh::Repr {
                vl: self.vl,
                lver: 0,
                sl: self.sl,
                resv2: 0,
                lnh: lrh::Lnh::IbaLocal,
                dlid: self.dlid,
                resv5: 0,
                pkt_len: 0,
                slid: self.slid,
            },
            grh: None,
            transport: Transport {
                bth: bth::Repr {
                    opcode,
                    se: false,
                    migreq: false,
                    pad_cnt: 0,
                    tver: 0,
                    pkey: 0xFFFF,
                    fecn: self.fecn,
                    becn: self.becn,
                    resv6: 0,
                    dest_qp: self.dest_qp,
                    ack_req: false,
                    resv7: 0,
                    psn: self.psn,
                },
                ext: if ext_len == 0 {
                    ExtHeader::None
                } else {
                    ExtHeader::Raw(&ZEROS[..ext_len])
                },
                payload: Payload::Pattern {
                    len: self.payload_len.into(),
                    seed: self.payload_seed,
                },
            },
        };
        pkt.build(out)
    }
}

/// The switch's egress edits on real bytes (LRH through VCRC): the LRH VL becomes `out_vl`, FECN is set when
/// `set_fecn`, and the VCRC is regenerated. Fails only on a buffer too short for the headers it names.
pub fn egress_rewrite(bytes: &mut [u8], out_vl: u8, set_fecn: bool) -> crate::wire::Result<()> {
    let mut l = lrh::Packet::new_checked(&mut *bytes)?;
    l.set_vl(out_vl);
    let bth_at = match l.lnh() {
        lrh::Lnh::IbaGlobal => lrh::HEADER_LEN + grh::HEADER_LEN,
        _ => lrh::HEADER_LEN,
    };
    if set_fecn {
        let at = bth_at.min(bytes.len());
        let mut b = bth::Packet::new_checked(&mut bytes[at..])?;
        b.set_fecn(true);
    }
    fill_vcrc(bytes);
    Ok(())
}

/// A packet head arriving on (or leaving from) a port.
///
/// The head's first byte is on the wire `offset` ticks (`1 / rate.num` cycle, see [`super::rate`]) after the
/// start of the cycle in which the event is given; the rest of the packet follows at the link's exact rate, so
/// the receiver knows in which cycle every 64-byte block arrives without further events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketStart {
    /// The packet.
    pub desc: PacketDesc,
    /// Sub-cycle start, in ticks (`< rate.num`).
    pub offset: u32,
}

/// A link flow-control packet for one VL (op normal): the sender's FCTBS for data it sends on this link and
/// its receiver's FCCL for data it receives.
///
/// An FC packet event is given in the cycle after every byte of the data before it was sent (it starts on a
/// cycle boundary), so at the receiver it never shares a cycle with blocks of an earlier packet; blocks of a
/// later packet in its cycle count after it, as `credit_rx` expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FcPacket {
    /// The VL (0..=14).
    pub vl: u8,
    /// Flow Control Total Blocks Sent (12 bits).
    pub fctbs: u16,
    /// Flow Control Credit Limit (12 bits).
    pub fccl: u16,
}

/// What a port puts on its link in one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxEvent {
    /// A packet head leaves `port`.
    Packet {
        /// Output port.
        port: u8,
        /// The packet and its sub-cycle start.
        start: PacketStart,
    },
    /// A flow-control packet leaves `port`.
    Fc {
        /// Output port.
        port: u8,
        /// Its contents.
        fc: FcPacket,
    },
    /// A PFC pause frame leaves `port` (a RoCEv2-mode port; see [`super::pfc`]).
    Pause {
        /// Output port.
        port: u8,
        /// The frame.
        frame: crate::wire::pfc::Repr,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc::icrc::{ib_covered, verify_icrc};
    use crate::crc::vcrc::verify_vcrc;

    #[test]
    fn descriptor_length_matches_materialised_bytes() {
        for payload in [0u16, 1, 3, 4, 255, 256, 2048, 4096] {
            let d = PacketDesc::local(5, 9, 2, bth::Opcode::RcSendOnly, payload);
            let mut b = Vec::new();
            d.materialise(&mut b).unwrap();
            assert_eq!(b.len(), usize::from(d.wire_len), "payload {payload}");
            assert!(verify_vcrc(&b));
        }
        assert_eq!(
            PacketDesc::local(1, 1, 0, bth::Opcode::RcSendOnly, 4096).blocks(),
            65
        );
        assert_eq!(
            PacketDesc::local(1, 1, 0, bth::Opcode::RcSendOnly, 0).blocks(),
            1
        );
    }

    #[test]
    fn roce_descriptor_and_ce_marking_on_bytes_agree() {
        let d = PacketDesc::roce_v4(0x0102, 0x0304, 3, bth::Opcode::RcSendOnly, 999);
        let mut b = Vec::new();
        d.materialise_roce_v4(&mut b).unwrap();
        assert_eq!(b.len(), usize::from(d.wire_len));
        // What the switch does to the descriptor (ECN := CE) equals what mark_ce_ipv4 does to the bytes.
        assert!(crate::link::pfc::mark_ce_ipv4(&mut b).unwrap());
        let mut e = d;
        e.ecn = 3;
        let mut want = Vec::new();
        e.materialise_roce_v4(&mut want).unwrap();
        assert_eq!(b, want);
        let (kind, covered) = crate::crc::icrc::roce_covered(&b).unwrap();
        assert!(verify_icrc(kind, covered).unwrap());
    }

    #[test]
    fn egress_rewrite_equals_materialising_the_egress_descriptor() {
        let mut d = PacketDesc::local(0x12, 0x34, 3, bth::Opcode::RcSendOnly, 100);
        d.vl = 1;
        d.payload_seed = 77;
        d.psn = 0xABCDE;
        let mut b = Vec::new();
        d.materialise(&mut b).unwrap();
        egress_rewrite(&mut b, 4, true).unwrap();
        let mut e = d;
        e.vl = 4;
        e.fecn = true;
        let mut want = Vec::new();
        e.materialise(&mut want).unwrap();
        assert_eq!(b, want);
        assert!(verify_vcrc(&b));
        let (kind, covered) = ib_covered(&b).unwrap();
        assert!(
            verify_icrc(kind, covered).unwrap(),
            "ICRC untouched by VL and FECN"
        );
        // Without a mark only the VL changes; a stale VCRC would fail.
        let mut c = Vec::new();
        d.materialise(&mut c).unwrap();
        egress_rewrite(&mut c, 0, false).unwrap();
        assert!(verify_vcrc(&c));
        assert_eq!(c[0] >> 4, 0);
        assert!(egress_rewrite(&mut [0u8; 5], 0, true).is_err());
    }
}
