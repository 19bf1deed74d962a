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
