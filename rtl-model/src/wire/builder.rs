//! Complete packets with every length field right and every CRC filled.
//!
//! The caller gives the header `Repr`s; the builder overwrites the fields that follow from the packet's shape:
//! LRH LNH and PktLen, GRH PayLen and NxtHdr, BTH PadCnt; for RoCEv2 the EtherType, IP total/payload length,
//! IP protocol (and IPv4 header checksum), UDP destination port, length and checksum (0: RoCEv2 senders leave
//! it out and the ICRC covers the payload). Then ICRC and VCRC are computed over the finished bytes.
//!
//! Packets are written into a caller-owned `Vec<u8>` (cleared first), so a caller that reuses one buffer
//! allocates nothing once it has grown to the largest packet.

use super::{
    aeth, bth, deth, ethernet, flow_ctl, grh, ib_cnp, ipv4, ipv6, lrh, pfc, roce_cnp, udp,
};
use super::{Error, Result};
use crate::crc::icrc::{fill_icrc, IcrcKind};
use crate::crc::vcrc::{fill_vcrc, VCRC_LEN};

const HEADER: &str = "builder";

/// Length of the ICRC.
pub const ICRC_LEN: usize = 4;
/// Largest LRH-to-ICRC length PktLen (11 bits of 4-byte words) can express.
pub const MAX_IB_PACKET_LEN: usize = 0x7FF * 4;

/// The payload of a built packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    /// These exact bytes.
    Bytes(&'a [u8]),
    /// `len` bytes of the deterministic pattern [`pattern_byte`]`(seed, i)`: lets a model that keeps only a
    /// payload length and seed materialise the same bytes whenever a capture or CRC needs them.
    Pattern { len: usize, seed: u32 },
}

impl Payload<'_> {
    /// Payload length in bytes.
    pub fn len(&self) -> usize {
        match *self {
            Payload::Bytes(b) => b.len(),
            Payload::Pattern { len, .. } => len,
        }
    }

    /// True when the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn write(&self, out: &mut Vec<u8>) {
        match *self {
            Payload::Bytes(b) => out.extend_from_slice(b),
            Payload::Pattern { len, seed } => out.extend((0..len).map(|i| pattern_byte(seed, i))),
        }
    }
}

/// Byte `i` of the payload pattern with `seed`: a cheap integer hash, so any byte can be made on its own.
pub fn pattern_byte(seed: u32, i: usize) -> u8 {
    let mut x = seed ^ (i as u32).wrapping_mul(0x9E37_79B9);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    (x >> 8) as u8
}

/// The extension headers between the BTH and the payload. Which ones an opcode needs is fixed by the opcode
/// ([`bth::Opcode::ext_header_len`]); the builder checks that the given ones have that length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtHeader<'a> {
    /// None (RC/UC sends and writes without RETH or immediate data, CNP 0x80).
    None,
    /// A DETH (UD).
    Deth(deth::Repr),
    /// An AETH (RC ACK, read response first/last/only).
    Aeth(aeth::Repr),
    /// Any other extension bytes, in wire order (RETH, ImmDt, the RoCEv2 CNP's 16 reserved bytes, ...).
    Raw(&'a [u8]),
}

impl ExtHeader<'_> {
    fn len(&self) -> usize {
        match self {
            ExtHeader::None => 0,
            ExtHeader::Deth(_) => deth::HEADER_LEN,
            ExtHeader::Aeth(_) => aeth::HEADER_LEN,
            ExtHeader::Raw(b) => b.len(),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.resize(at + self.len(), 0);
        match self {
            ExtHeader::None => {}
            ExtHeader::Deth(r) => r.emit(&mut deth::Packet::new_unchecked(&mut out[at..])),
            ExtHeader::Aeth(r) => r.emit(&mut aeth::Packet::new_unchecked(&mut out[at..])),
            ExtHeader::Raw(b) => out[at..].copy_from_slice(b),
        }
    }
}

/// The transport part shared by IB and RoCEv2 packets: BTH, extension headers, payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transport<'a> {
    /// BTH; `pad_cnt` is overwritten.
    pub bth: bth::Repr,
    /// Extension headers; must match the opcode.
    pub ext: ExtHeader<'a>,
    /// Payload (padded to a 4-byte multiple on the wire, PadCnt says by how much).
    pub payload: Payload<'a>,
}

impl Transport<'_> {
    /// Bytes from the BTH through the ICRC.
    pub fn len(&self) -> usize {
        bth::HEADER_LEN + self.ext.len() + padded(self.payload.len()) + ICRC_LEN
    }

    /// Always false: a transport part holds at least a BTH and an ICRC.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn check(&self) -> Result<()> {
        match self.bth.opcode.ext_header_len() {
            Some(n) if n != self.ext.len() => Err(Error::BadField {
                header: HEADER,
                field: "extension headers (length for this opcode)",
                value: self.ext.len() as u32,
            }),
            _ => Ok(()),
        }
    }

    /// Writes BTH, extension headers, payload and pad; leaves room for the ICRC (zeros).
    fn write(&self, out: &mut Vec<u8>) {
        let mut bth = self.bth;
        bth.pad_cnt = bth::pad_cnt_for(self.payload.len());
        let at = out.len();
        out.resize(at + bth::HEADER_LEN, 0);
        bth.emit(&mut bth::Packet::new_unchecked(&mut out[at..]));
        self.ext.write(out);
        self.payload.write(out);
        out.resize(out.len() + usize::from(bth.pad_cnt) + ICRC_LEN, 0);
    }
}

fn padded(len: usize) -> usize {
    (len + 3) & !3
}

/// A native InfiniBand packet: LRH, optional GRH, transport, ICRC, VCRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IbPacket<'a> {
    /// LRH; `lnh` and `pkt_len` are overwritten.
    pub lrh: lrh::Repr,
    /// GRH for a global packet; `pay_len` and `nxt_hdr` are overwritten.
    pub grh: Option<grh::Repr>,
    /// BTH, extension headers, payload.
    pub transport: Transport<'a>,
}

impl IbPacket<'_> {
    /// Bytes on the wire, LRH through VCRC.
    pub fn wire_len(&self) -> usize {
        lrh::HEADER_LEN + self.grh.map_or(0, |_| grh::HEADER_LEN) + self.transport.len() + VCRC_LEN
    }

    /// Writes the whole packet into `out` (cleared first), LRH through VCRC, with ICRC and VCRC filled.
    /// Fails when the extension headers do not match the opcode or the packet is longer than PktLen allows.
    pub fn build(&self, out: &mut Vec<u8>) -> Result<()> {
        self.transport.check()?;
        let icrc_end = self.wire_len() - VCRC_LEN;
        if icrc_end > MAX_IB_PACKET_LEN {
            return Err(Error::BadField {
                header: HEADER,
                field: "PktLen (packet too long)",
                value: icrc_end as u32,
            });
        }
        out.clear();
        let mut lrh = self.lrh;
        lrh.lnh = if self.grh.is_some() {
            lrh::Lnh::IbaGlobal
        } else {
            lrh::Lnh::IbaLocal
        };
        lrh.pkt_len = (icrc_end / 4) as u16;
        out.resize(lrh::HEADER_LEN, 0);
        lrh.emit(&mut lrh::Packet::new_unchecked(&mut out[..]));
        if let Some(mut grh) = self.grh {
            grh.pay_len = self.transport.len() as u16;
            grh.nxt_hdr = grh::NXT_HDR_IBA;
            let at = out.len();
            out.resize(at + grh::HEADER_LEN, 0);
            grh.emit(&mut grh::Packet::new_unchecked(&mut out[at..]));
        }
        self.transport.write(out);
        let kind = if self.grh.is_some() {
            IcrcKind::IbGlobal
        } else {
            IcrcKind::IbLocal
        };
        fill_icrc(kind, &mut out[..icrc_end])?;
        out.resize(icrc_end + VCRC_LEN, 0);
        fill_vcrc(out);
        Ok(())
    }

    /// The packet as a new vector (convenience for tests and captures; the hot path uses [`IbPacket::build`]).
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = Vec::with_capacity(self.wire_len());
        self.build(&mut v)?;
        Ok(v)
    }
}

/// An IB CNP (BTH opcode 0x80) as a complete packet, LRH through VCRC.
pub fn ib_cnp(cnp: &ib_cnp::Repr, out: &mut Vec<u8>) -> Result<()> {
    IbPacket {
        lrh: cnp.lrh_repr(),
        grh: None,
        transport: Transport {
            bth: cnp.bth_repr(),
            ext: ExtHeader::None,
            payload: Payload::Bytes(&[]),
        },
    }
    .build(out)
}

/// The IP header of a RoCEv2 packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpHeader {
    /// IPv4; `protocol` and `payload_len` are overwritten, the header checksum filled.
    V4(ipv4::Repr),
    /// IPv6; `next_header` and `payload_len` are overwritten.
    V6(ipv6::Repr),
}

impl IpHeader {
    fn len(&self) -> usize {
        match self {
            IpHeader::V4(_) => ipv4::HEADER_LEN,
            IpHeader::V6(_) => ipv6::HEADER_LEN,
        }
    }
}

/// A RoCEv2 packet: Ethernet, IPv4 or IPv6, UDP to port 4791, transport, ICRC (no FCS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RocePacket<'a> {
    /// Ethernet header; `ethertype` is overwritten.
    pub eth: ethernet::Repr,
    /// IP header.
    pub ip: IpHeader,
    /// UDP source port (RoCEv2 uses it for ECMP entropy); the destination is always 4791.
    pub udp_src_port: u16,
    /// BTH, extension headers, payload.
    pub transport: Transport<'a>,
}

impl RocePacket<'_> {
    /// Bytes of the frame, Ethernet header through ICRC (no FCS).
    pub fn wire_len(&self) -> usize {
        ethernet::HEADER_LEN + self.ip.len() + udp::HEADER_LEN + self.transport.len()
    }

    /// Writes the frame into `out` (cleared first) with IPv4 checksum and ICRC filled.
    pub fn build(&self, out: &mut Vec<u8>) -> Result<()> {
        self.transport.check()?;
        let udp_len = udp::HEADER_LEN + self.transport.len();
        if self.ip.len() + udp_len > usize::from(u16::MAX) {
            return Err(Error::BadField {
                header: HEADER,
                field: "IP length (packet too long)",
                value: (self.ip.len() + udp_len) as u32,
            });
        }
        out.clear();
        out.resize(ethernet::HEADER_LEN + self.ip.len() + udp::HEADER_LEN, 0);
        let mut eth = self.eth;
        let ip_at = ethernet::HEADER_LEN;
        let kind = match self.ip {
            IpHeader::V4(mut ip) => {
                eth.ethertype = ethernet::EtherType::Ipv4;
                ip.protocol = ipv4::IpProtocol::Udp;
                ip.payload_len = udp_len;
                ip.emit(&mut ipv4::Packet::new_unchecked(&mut out[ip_at..]));
                IcrcKind::RoceV4
            }
            IpHeader::V6(mut ip) => {
                eth.ethertype = ethernet::EtherType::Ipv6;
                ip.next_header = ipv4::IpProtocol::Udp;
                ip.payload_len = udp_len;
                ip.emit(&mut ipv6::Packet::new_unchecked(&mut out[ip_at..]));
                IcrcKind::RoceV6
            }
        };
        eth.emit(&mut ethernet::Packet::new_unchecked(&mut out[..]));
        udp::Repr {
            src_port: self.udp_src_port,
            dst_port: udp::ROCEV2_PORT,
            payload_len: self.transport.len(),
            checksum: 0,
        }
        .emit(&mut udp::Packet::new_unchecked(
            &mut out[ip_at + self.ip.len()..],
        ));
        self.transport.write(out);
        fill_icrc(kind, &mut out[ip_at..])
    }

    /// The frame as a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        let mut v = Vec::with_capacity(self.wire_len());
        self.build(&mut v)?;
        Ok(v)
    }
}

/// The 16 zero bytes a RoCEv2 CNP carries after its BTH.
const ROCE_CNP_RESERVED: [u8; roce_cnp::HEADER_LEN - bth::HEADER_LEN] = [0; 16];

/// A RoCEv2 CNP (BTH opcode 0x81, 16 reserved bytes) as a complete frame.
pub fn roce_cnp(
    eth: ethernet::Repr,
    ip: IpHeader,
    udp_src_port: u16,
    cnp: &roce_cnp::Repr,
    out: &mut Vec<u8>,
) -> Result<()> {
    RocePacket {
        eth,
        ip,
        udp_src_port,
        transport: Transport {
            bth: cnp.bth_repr(),
            ext: ExtHeader::Raw(&ROCE_CNP_RESERVED),
            payload: Payload::Bytes(&[]),
        },
    }
    .build(out)
}

/// An 802.1Qbb PFC frame from `src` (to the reserved multicast address), padded to the minimum frame size.
pub fn pfc_frame(src: ethernet::MacAddr, pfc: &pfc::Repr, out: &mut Vec<u8>) {
    out.clear();
    out.resize(ethernet::HEADER_LEN + pfc::PAYLOAD_LEN, 0);
    ethernet::Repr {
        src_addr: src,
        dst_addr: pfc::PFC_DST_MAC,
        ethertype: ethernet::EtherType::MacControl,
    }
    .emit(&mut ethernet::Packet::new_unchecked(&mut out[..]));
    pfc.emit(&mut pfc::Packet::new_unchecked(
        &mut out[ethernet::HEADER_LEN..],
    ));
}

/// A link flow-control packet (6 bytes) with its LPCRC filled.
pub fn flow_control(fc: &flow_ctl::Repr, out: &mut Vec<u8>) {
    out.clear();
    out.resize(flow_ctl::PACKET_LEN, 0);
    let mut p = flow_ctl::Packet::new_unchecked(&mut out[..]);
    fc.emit(&mut p);
    p.fill_lpcrc();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc::icrc::{ib_covered, roce_covered, verify_icrc};
    use crate::crc::vcrc::verify_vcrc;
    use crate::wire::ipv4::{Ecn, IpProtocol};
    use proptest::prelude::*;

    fn lrh_repr(vl: u8, sl: u8, dlid: u16, slid: u16) -> lrh::Repr {
        lrh::Repr {
            vl,
            lver: 0,
            sl,
            resv2: 0,
            lnh: lrh::Lnh::Raw,
            dlid,
            resv5: 0,
            pkt_len: 0,
            slid,
        }
    }

    fn bth_repr(opcode: bth::Opcode, dest_qp: u32, psn: u32) -> bth::Repr {
        bth::Repr {
            opcode,
            se: false,
            migreq: false,
            pad_cnt: 3,
            tver: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            resv6: 0,
            dest_qp,
            ack_req: false,
            resv7: 0,
            psn,
        }
    }

    fn grh_repr(tclass: u8, flow_label: u32, hop_lmt: u8) -> grh::Repr {
        grh::Repr {
            tclass,
            flow_label,
            pay_len: 0,
            nxt_hdr: 0,
            hop_lmt,
            sgid: grh::Gid::new(0xFE80 << 48, 1),
            dgid: grh::Gid::new(0xFE80 << 48, 2),
        }
    }

    /// A UD send with DETH; `global` adds a GRH.
    fn ud_packet(global: bool, len: usize, seed: u32) -> IbPacket<'static> {
        IbPacket {
            lrh: lrh_repr(2, 3, 0x10, 0x20),
            grh: global.then(|| grh_repr(0x12, 0x34567, 9)),
            transport: Transport {
                bth: bth_repr(bth::Opcode::UdSendOnly, 0x99, 7),
                ext: ExtHeader::Deth(deth::Repr {
                    qkey: 1,
                    resv8: 0,
                    src_qp: 2,
                }),
                payload: Payload::Pattern { len, seed },
            },
        }
    }

    #[test]
    fn ib_length_fields_are_right() {
        // UD, 101-byte payload: 8 LRH + 12 BTH + 8 DETH + 101 + 3 pad + 4 ICRC = 136 = 34 words; + 2 VCRC.
        let v = ud_packet(false, 101, 1).to_vec().unwrap();
        assert_eq!(v.len(), 138);
        let l = lrh::Repr::parse(&lrh::Packet::new_checked(&v[..]).unwrap()).unwrap();
        assert_eq!((l.lnh, l.pkt_len), (lrh::Lnh::IbaLocal, 34));
        let b = bth::Repr::parse(&bth::Packet::new_checked(&v[8..]).unwrap()).unwrap();
        assert_eq!(b.pad_cnt, 3);
        assert_eq!(
            &v[8 + 12 + 8 + 101..][..3],
            &[0, 0, 0],
            "pad bytes are zero"
        );
        // Global: PayLen covers BTH..ICRC = 12 + 8 + 104 + 4 = 128.
        let v = ud_packet(true, 101, 1).to_vec().unwrap();
        assert_eq!(v.len(), 138 + 40);
        let g = grh::Repr::parse(&grh::Packet::new_checked(&v[8..]).unwrap()).unwrap();
        assert_eq!((g.pay_len, g.nxt_hdr), (128, grh::NXT_HDR_IBA));
        assert_eq!(v[1] & 3, 3, "LNH global");
    }

    #[test]
    fn ext_headers_must_match_the_opcode() {
        let mut p = ud_packet(false, 8, 1);
        p.transport.ext = ExtHeader::None;
        assert!(matches!(p.to_vec(), Err(Error::BadField { value: 0, .. })));
        let mut p = ud_packet(false, MAX_IB_PACKET_LEN, 1);
        p.transport.ext = ExtHeader::Deth(deth::Repr {
            qkey: 0,
            resv8: 0,
            src_qp: 0,
        });
        assert!(p.to_vec().is_err(), "PktLen overflow is an error");
    }

    #[test]
    fn roce_length_fields_are_right() {
        let p = RocePacket {
            eth: ethernet::Repr {
                src_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 1]),
                dst_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 2]),
                ethertype: ethernet::EtherType::Unknown(0),
            },
            ip: IpHeader::V4(ipv4_repr(Ecn::Ect0)),
            udp_src_port: 1000,
            transport: Transport {
                bth: bth_repr(bth::Opcode::RcSendOnly, 5, 6),
                ext: ExtHeader::None,
                payload: Payload::Pattern { len: 10, seed: 3 },
            },
        };
        let v = p.to_vec().unwrap();
        // 14 + 20 + 8 + 12 + 12 (10 + 2 pad) + 4 = 70.
        assert_eq!(v.len(), 70);
        assert_eq!(&v[12..14], &[0x08, 0x00]);
        assert_eq!(u16::from_be_bytes([v[16], v[17]]), 56, "IP total length");
        assert_eq!(v[23], 17, "protocol UDP");
        assert_eq!(u16::from_be_bytes([v[36], v[37]]), 4791);
        assert_eq!(u16::from_be_bytes([v[38], v[39]]), 36, "UDP length");
        assert_eq!((v[43] >> 4) & 3, 2, "PadCnt");
        assert!(ipv4::Packet::new_checked(&v[14..])
            .unwrap()
            .verify_checksum());
    }

    fn ipv4_repr(ecn: Ecn) -> ipv4::Repr {
        ipv4::Repr {
            src_addr: [10, 0, 0, 1],
            dst_addr: [10, 0, 0, 2],
            protocol: IpProtocol::Unknown(0),
            payload_len: 0,
            ttl: 64,
            dscp: 0,
            ecn,
            ident: 0,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
        }
    }

    /// Bits that differ between two equal-length byte strings.
    fn bit_diff(a: &[u8], b: &[u8]) -> u32 {
        a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
    }

    fn ib_packet_strategy() -> impl Strategy<Value = (bool, u8, u8, u16, u16, usize, u32, u32, u32)>
    {
        (
            any::<bool>(),
            0u8..16,
            0u8..16,
            any::<u16>(),
            any::<u16>(),
            0usize..600,
            any::<u32>(),
            0u32..1 << 24,
            0u32..1 << 24,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// A switch marking FECN (or BECN) flips exactly one bit, leaves the ICRC valid, invalidates the
        /// VCRC, and the regenerated VCRC verifies.
        #[test]
        fn fecn_becn_keep_icrc_and_regenerated_vcrc_verifies(
            (global, vl, sl, dlid, slid, len, seed, qp, psn) in ib_packet_strategy(),
            becn in any::<bool>(),
        ) {
            let mut p = ud_packet(global, len, seed);
            p.lrh = lrh_repr(vl, sl, dlid, slid);
            p.transport.bth = bth_repr(bth::Opcode::UdSendOnly, qp, psn);
            let orig = p.to_vec().unwrap();
            let (kind, covered) = ib_covered(&orig).unwrap();
            prop_assert!(verify_icrc(kind, covered).unwrap());
            prop_assert!(verify_vcrc(&orig));

            let bth_at = lrh::HEADER_LEN + if global { grh::HEADER_LEN } else { 0 };
            let mut marked = orig.clone();
            {
                let mut b = bth::Packet::new_unchecked(&mut marked[bth_at..]);
                if becn { b.set_becn(true) } else { b.set_fecn(true) }
            }
            prop_assert_eq!(bit_diff(&orig, &marked), 1);
            let (kind, covered) = ib_covered(&marked).unwrap();
            prop_assert!(verify_icrc(kind, covered).unwrap(), "ICRC changed by marking");
            prop_assert!(!verify_vcrc(&marked), "the VCRC must change when FECN/BECN is set");
            fill_vcrc(&mut marked);
            prop_assert!(verify_vcrc(&marked));
            // Only the BTH bit and the VCRC differ from the original packet.
            prop_assert_eq!(&marked[..bth_at + 4], &orig[..bth_at + 4]);
            prop_assert_eq!(&marked[bth_at + 5..orig.len() - 2], &orig[bth_at + 5..orig.len() - 2]);
        }

        /// A switch changing the VL (SL2VL) leaves the ICRC valid; the VCRC is regenerated.
        #[test]
        fn vl_change_keeps_icrc(global in any::<bool>(), len in 0usize..300, vl in 0u8..16) {
            let orig = ud_packet(global, len, 5).to_vec().unwrap();
            let mut moved = orig.clone();
            lrh::Packet::new_unchecked(&mut moved[..]).set_vl(vl);
            let (kind, covered) = ib_covered(&moved).unwrap();
            prop_assert!(verify_icrc(kind, covered).unwrap());
            fill_vcrc(&mut moved);
            prop_assert!(verify_vcrc(&moved));
        }

        /// ECN CE marking of a RoCEv2 frame (IPv4 or IPv6) never changes the ICRC; the IPv4 header checksum
        /// stays valid; FECN/BECN in the BTH do not change the ICRC either.
        #[test]
        fn ecn_ce_and_fecn_keep_roce_icrc(
            v6 in any::<bool>(),
            ecn in 0u8..4,
            len in 0usize..1500,
            seed in any::<u32>(),
            qp in 0u32..1 << 24,
            fecn in any::<bool>(),
        ) {
            let ecn = Ecn::from_bits(ecn);
            let ip = if v6 {
                IpHeader::V6(ipv6::Repr {
                    src_addr: [0xfd; 16],
                    dst_addr: [0xfe; 16],
                    next_header: IpProtocol::Unknown(0),
                    payload_len: 0,
                    hop_limit: 64,
                    dscp: 10,
                    ecn,
                    flow_label: 0x12345,
                })
            } else {
                IpHeader::V4(ipv4_repr(ecn))
            };
            let p = RocePacket {
                eth: ethernet::Repr {
                    src_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 1]),
                    dst_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 2]),
                    ethertype: ethernet::EtherType::Unknown(0),
                },
                ip,
                udp_src_port: 0xC000,
                transport: Transport {
                    bth: bth_repr(bth::Opcode::RcSendOnly, qp, 1),
                    ext: ExtHeader::None,
                    payload: Payload::Pattern { len, seed },
                },
            };
            let orig = p.to_vec().unwrap();
            let (kind, covered) = roce_covered(&orig).unwrap();
            prop_assert!(verify_icrc(kind, covered).unwrap());
            let mut marked = orig.clone();
            let ip_at = ethernet::HEADER_LEN;
            if v6 {
                ipv6::Packet::new_unchecked(&mut marked[ip_at..]).set_ecn_ce();
            } else {
                let mut ip = ipv4::Packet::new_unchecked(&mut marked[ip_at..]);
                ip.set_ecn_ce();
                prop_assert!(ip.verify_checksum());
            }
            let bth_at = ip_at + p.ip.len() + udp::HEADER_LEN;
            bth::Packet::new_unchecked(&mut marked[bth_at..]).set_fecn(fecn);
            prop_assert_eq!(marked != orig, ecn != Ecn::Ce || fecn);
            let (kind, covered) = roce_covered(&marked).unwrap();
            prop_assert!(verify_icrc(kind, covered).unwrap(), "ICRC changed by ECN/FECN marking");
        }
    }
}
