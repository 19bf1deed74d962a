//! Strategies for packets: valid native IB packets (local and global, LRH through VCRC, ICRC and VCRC
//! right), valid RoCEv2 frames (Ethernet, IPv4 or IPv6, UDP 4791, BTH through ICRC), and malformed ones of
//! either kind with what is wrong named ([`Malformation`]).
//!
//! Opcodes are drawn from every IBA opcode that has a fixed set of extension headers (RC, UC, UD, the CNPs),
//! with those headers filled with random bytes of the right length; payloads are 0 to 4,096 bytes, mostly
//! short. Header fields are random within their widths, FECN and BECN included: a packet may arrive marked.

use proptest::prelude::*;

use crate::crc::icrc::fill_icrc;
use crate::crc::vcrc::{fill_vcrc, VCRC_LEN};
use crate::wire::builder::{ExtHeader, IbPacket, IpHeader, Payload, RocePacket, Transport};
use crate::wire::{bth, ethernet, grh, ipv4, ipv6, lrh};

/// Largest payload drawn: the 4,096-byte MTU.
pub const PAYLOAD_MAX: usize = 4096;

/// Where the BTH starts in a native IB packet: after the LRH (LNH 2) or LRH and GRH (LNH 3); `None` for a
/// raw packet (LNH 0 or 1) or one too short to hold an LRH.
pub fn bth_offset(pkt: &[u8]) -> Option<usize> {
    match lrh::Lnh::from(*pkt.get(1)?) {
        lrh::Lnh::IbaLocal => Some(lrh::HEADER_LEN),
        lrh::Lnh::IbaGlobal => Some(lrh::HEADER_LEN + grh::HEADER_LEN),
        _ => None,
    }
}

/// Opcodes whose extension headers are fixed (the builder can lay them out).
fn opcode() -> impl Strategy<Value = bth::Opcode> {
    (0u16..=0xFF)
        .prop_map(|v| bth::Opcode::from(v as u8))
        .prop_filter("an opcode with fixed extension headers", |op| {
            !matches!(op, bth::Opcode::Unknown(_)) && op.ext_header_len().is_some()
        })
}

/// Payload lengths: mostly short (headers dominate what marking touches), sometimes up to the MTU.
fn payload_len(max: usize) -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => 0..=max.min(64),
        2 => 0..=max.min(600),
        1 => 0..=max,
    ]
}

/// The transport part as owned parts: BTH, extension bytes, payload bytes.
fn transport_parts(max_payload: usize) -> impl Strategy<Value = (bth::Repr, Vec<u8>, Vec<u8>)> {
    (
        opcode(),
        any::<(bool, bool, u16, bool, bool)>(),
        0u32..1 << 24,
        0u32..1 << 24,
        any::<bool>(),
        payload_len(max_payload),
    )
        .prop_flat_map(
            |(opcode, (se, migreq, pkey, fecn, becn), dest_qp, psn, ack_req, len)| {
                let ext = opcode.ext_header_len().unwrap_or(0);
                let bth = bth::Repr {
                    opcode,
                    se,
                    migreq,
                    pad_cnt: 0,
                    tver: 0,
                    pkey,
                    fecn,
                    becn,
                    resv6: 0,
                    dest_qp,
                    ack_req,
                    resv7: 0,
                    psn,
                };
                (
                    Just(bth),
                    proptest::collection::vec(any::<u8>(), ext),
                    proptest::collection::vec(any::<u8>(), len),
                )
            },
        )
}

fn gid() -> impl Strategy<Value = grh::Gid> {
    any::<[u8; 16]>().prop_map(grh::Gid)
}

/// A valid native IB packet (local or global), LRH through VCRC.
pub fn ib_packet() -> impl Strategy<Value = Vec<u8>> {
    ib_packet_up_to(PAYLOAD_MAX)
}

/// A valid native IB packet with at most `max_payload` payload bytes.
pub fn ib_packet_up_to(max_payload: usize) -> impl Strategy<Value = Vec<u8>> {
    let lrh =
        (0u8..15, 0u8..16, any::<u16>(), any::<u16>()).prop_map(|(vl, sl, dlid, slid)| lrh::Repr {
            vl,
            lver: 0,
            sl,
            resv2: 0,
            lnh: lrh::Lnh::IbaLocal,
            dlid,
            resv5: 0,
            pkt_len: 0,
            slid,
        });
    let grh = proptest::option::of(
        (any::<u8>(), 0u32..1 << 20, any::<u8>(), gid(), gid()).prop_map(
            |(tclass, flow_label, hop_lmt, sgid, dgid)| grh::Repr {
                tclass,
                flow_label,
                pay_len: 0,
                nxt_hdr: grh::NXT_HDR_IBA,
                hop_lmt,
                sgid,
                dgid,
            },
        ),
    );
    (lrh, grh, transport_parts(max_payload)).prop_map(|(lrh, grh, (bth, ext, payload))| {
        IbPacket {
            lrh,
            grh,
            transport: Transport {
                bth,
                ext: ExtHeader::Raw(&ext),
                payload: Payload::Bytes(&payload),
            },
        }
        .to_vec()
        .expect("a packet within the MTU with its opcode's extension headers builds")
    })
}

fn ecn() -> impl Strategy<Value = ipv4::Ecn> {
    (0u8..4).prop_map(ipv4::Ecn::from_bits)
}

/// A valid RoCEv2 frame over IPv4, Ethernet header through ICRC, any ECN codepoint.
pub fn roce_v4_packet() -> impl Strategy<Value = Vec<u8>> {
    let ip = (
        any::<([u8; 4], [u8; 4])>(),
        1u8..=255,
        0u8..64,
        ecn(),
        any::<u16>(),
    )
        .prop_map(|((src_addr, dst_addr), ttl, dscp, ecn, ident)| {
            IpHeader::V4(ipv4::Repr {
                src_addr,
                dst_addr,
                protocol: ipv4::IpProtocol::Udp,
                payload_len: 0,
                ttl,
                dscp,
                ecn,
                ident,
                dont_frag: true,
                more_frags: false,
                frag_offset: 0,
            })
        });
    roce_frame(ip.boxed())
}

/// A valid RoCEv2 frame over IPv4 or IPv6, Ethernet header through ICRC, any ECN codepoint.
pub fn roce_v2_packet() -> impl Strategy<Value = Vec<u8>> {
    let v6 = (
        any::<([u8; 16], [u8; 16])>(),
        any::<u8>(),
        0u8..64,
        ecn(),
        0u32..1 << 20,
    )
        .prop_map(|((src_addr, dst_addr), hop_limit, dscp, ecn, flow_label)| {
            IpHeader::V6(ipv6::Repr {
                src_addr,
                dst_addr,
                next_header: ipv4::IpProtocol::Udp,
                payload_len: 0,
                hop_limit,
                dscp,
                ecn,
                flow_label,
            })
        });
    prop_oneof![roce_v4_packet(), roce_frame(v6.boxed())]
}

fn roce_frame(ip: BoxedStrategy<IpHeader>) -> impl Strategy<Value = Vec<u8>> {
    let mac = || any::<[u8; 6]>().prop_map(ethernet::MacAddr);
    (mac(), mac(), ip, any::<u16>(), transport_parts(PAYLOAD_MAX)).prop_map(
        |(src_addr, dst_addr, ip, udp_src_port, (bth, ext, payload))| {
            RocePacket {
                eth: ethernet::Repr {
                    src_addr,
                    dst_addr,
                    ethertype: ethernet::EtherType::Ipv4,
                },
                ip,
                udp_src_port,
                transport: Transport {
                    bth,
                    ext: ExtHeader::Raw(&ext),
                    payload: Payload::Bytes(&payload),
                },
            }
            .to_vec()
            .expect("a frame of at most 4 KiB of payload builds")
        },
    )
}

/// What is wrong with a malformed packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformation {
    /// One bit of the VCRC flipped: the link layer must reject the packet.
    BadVcrc {
        /// The bit, counted from the first VCRC byte's least significant bit.
        bit: u8,
    },
    /// One bit of the ICRC flipped and the VCRC regenerated: good on the link, bad end to end.
    BadIcrc {
        /// The bit, counted from the first ICRC byte's least significant bit.
        bit: u8,
    },
    /// One bit of the packet before its CRCs flipped, neither CRC regenerated (corruption on the wire).
    FlippedBit {
        /// The byte.
        byte: usize,
        /// The bit in it.
        bit: u8,
    },
    /// Cut short after this many bytes.
    Truncated {
        /// Bytes kept.
        len: usize,
    },
    /// IPv4 header checksum off by one bit (RoCEv2 over IPv4 only).
    BadIpChecksum {
        /// The bit of the checksum field flipped.
        bit: u8,
    },
}

/// A valid IB packet made malformed in one way, with the way.
pub fn malformed_ib_packet() -> impl Strategy<Value = (Vec<u8>, Malformation)> {
    (ib_packet_up_to(600), any::<u32>(), 0u8..16).prop_map(|(mut p, r, bit)| {
        let n = p.len();
        let body = n - VCRC_LEN - 4;
        let m = match r % 4 {
            0 => Malformation::BadVcrc { bit },
            1 => Malformation::BadIcrc { bit: bit % 32 },
            2 => Malformation::FlippedBit {
                byte: (r as usize / 4) % body,
                bit: bit % 8,
            },
            _ => Malformation::Truncated {
                len: (r as usize / 4) % (n - 1) + 1,
            },
        };
        match m {
            Malformation::BadVcrc { bit } => p[n - 2 + usize::from(bit / 8)] ^= 1 << (bit % 8),
            Malformation::BadIcrc { bit } => {
                p[n - 6 + usize::from(bit / 8)] ^= 1 << (bit % 8);
                fill_vcrc(&mut p);
            }
            Malformation::FlippedBit { byte, bit } => p[byte] ^= 1 << bit,
            Malformation::Truncated { len } => p.truncate(len),
            Malformation::BadIpChecksum { .. } => unreachable!("not drawn for IB"),
        }
        (p, m)
    })
}

/// A valid RoCEv2 frame over IPv4 made malformed in one way, with the way.
pub fn malformed_roce_v4_packet() -> impl Strategy<Value = (Vec<u8>, Malformation)> {
    (roce_v4_packet(), any::<u32>(), 0u8..32).prop_map(|(mut p, r, bit)| {
        let n = p.len();
        let ip = ethernet::HEADER_LEN;
        let m = match r % 4 {
            0 => Malformation::BadIpChecksum { bit: bit % 16 },
            1 => Malformation::BadIcrc { bit },
            2 => Malformation::FlippedBit {
                byte: ip + 20 + 8 + (r as usize / 4) % (n - ip - 20 - 8 - 4),
                bit: bit % 8,
            },
            _ => Malformation::Truncated {
                len: (r as usize / 4) % (n - 1) + 1,
            },
        };
        match m {
            Malformation::BadIpChecksum { bit } => {
                p[ip + 10 + usize::from(bit / 8)] ^= 1 << (bit % 8)
            }
            Malformation::BadIcrc { bit } => p[n - 4 + usize::from(bit / 8)] ^= 1 << (bit % 8),
            Malformation::FlippedBit { byte, bit } => p[byte] ^= 1 << bit,
            Malformation::Truncated { len } => p.truncate(len),
            Malformation::BadVcrc { .. } => unreachable!("RoCEv2 frames have no VCRC"),
        }
        (p, m)
    })
}

/// Recomputes both CRCs of a native IB packet after its bytes were changed on purpose (a helper for tests
/// that build their own variants: the ICRC over the masked fields, then the VCRC over everything).
pub fn refill_ib_crcs(pkt: &mut [u8]) -> crate::wire::Result<()> {
    let n = pkt.len();
    let kind = crate::crc::icrc::ib_kind(pkt)?;
    fill_icrc(kind, &mut pkt[..n - VCRC_LEN])?;
    fill_vcrc(pkt);
    Ok(())
}
