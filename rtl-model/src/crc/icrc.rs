//! The Invariant CRC (ICRC): a CRC-32 over the parts of an IB or RoCEv2 packet that no switch or router may
//! change, placed after the payload and pad.
//!
//! The CRC is the Ethernet one (reflected, polynomial 0x04C11DB7, init 0xFFFFFFFF, final complement: the `crc`
//! crate's `CRC_32_ISO_HDLC`). It runs over a copy of the covered bytes in which the fields that may change in
//! flight are replaced by ones:
//!
//! - `IbLocal` (covers LRH, BTH, extension headers, payload, pad): the LRH's VL (B0\[7:4\]); BTH byte 4
//!   (FECN, BECN, resv6).
//! - `IbGlobal` (LRH, GRH, BTH, ...): the whole LRH; the GRH's TClass and FlowLabel (B0\[3:0\] through B3)
//!   and HopLmt (B7), which routers may rewrite; BTH byte 4.
//! - `RoceV4` (IPv4, UDP, BTH, ...): 8 bytes of ones fed first, standing for the LRH; IPv4 TOS (DSCP+ECN), TTL
//!   and header checksum; the UDP checksum; BTH byte 4.
//! - `RoceV6` (IPv6, UDP, BTH, ...): 8 bytes of ones first; IPv6 Traffic Class, Flow Label and Hop Limit; the
//!   UDP checksum; BTH byte 4.
//!
//! The 4 ICRC bytes end `covered` and are not part of the computation. On the wire the ICRC goes least
//! significant byte first: [`icrc`] returns the CRC value (e.g. `0x2a00fd82`), the packet carries
//! `82 fd 00 2a`. Wireshark and scapy display the field as those bytes read big-endian (`0x82fd002a`).
//!
//! Sources, and where they differ from the layout reference: Linux `drivers/infiniband/sw/rxe/rxe_icrc.c`
//! masks exactly the RoCEv2 fields above (IPv4 `tos`, `ttl`, `check`; IPv6 `priority` nibble, the three
//! `flow_lbl` bytes, `hop_limit`; `udph->check`; BTH byte 4 via `qpn |= ~BTH_QPN_MASK`) and, instead of
//! feeding 8 bytes of ones, seeds `crc32_le` with 0xDEBB20E3, the register after those 8 bytes (a test
//! below checks the two agree). rxe copies a fixed 20-byte IPv4 header, so it never covers IPv4 options;
//! scapy `contrib/roce.py` masks the same fields on a copy of the whole IP header. Here IPv4 options (IHL > 5)
//! are covered unmasked, as scapy does; no public source shows a RoCEv2 sender that uses them. scapy writes
//! the ICRC as `struct.pack("!I", crc)[::-1]`, least significant byte first, like rxe on a little-endian host.
//! The IB-native masks (VL only for a local packet, the whole LRH for a global one) come from the IBA text as
//! quoted in the reference. The global rule is confirmed by two RoCE v1 packets captured from Mellanox
//! adapters (a GRH right after Ethernet, the ICRC computed with an all-ones LRH and the GRH masks above); no
//! public vector exists for the local rule, whose test vector is hand-built.
//!
//! No allocation: the masked headers (at most 80 bytes: IPv4 with 40 bytes of options, UDP, BTH) are copied to
//! a stack buffer and fed to a [`crc::Digest`] with the unmasked rest. Truncated input is `Error::Truncated`.

use core::ops::Range;

use crc::{Crc, CRC_32_ISO_HDLC};

use crate::wire::{check_len, Error, Result};

/// The ICRC's CRC-32.
const CRC32: Crc<u32> = Crc::<u32>::new(&CRC_32_ISO_HDLC);

/// The same CRC with slice-by-16 tables: every packet a fabric moves is sealed and checked with it
/// ([`crate::link::PacketDesc::invariant_crc`]), and over its 20 bytes it takes well under the
/// byte-at-a-time table's instructions.
const CRC32_SLICED: Crc<u32, crc::Table<16>> = Crc::<u32, crc::Table<16>>::new(&CRC_32_ISO_HDLC);

/// CRC-32 of `bytes` with the ICRC's polynomial and conventions (no masking: see [`icrc`] for packets).
pub fn crc32(bytes: &[u8]) -> u32 {
    CRC32_SLICED.checksum(bytes)
}

/// Bytes of the ICRC field.
pub const ICRC_LEN: usize = 4;

const LRH_LEN: usize = 8;
const GRH_LEN: usize = 40;
const BTH_LEN: usize = 12;
const UDP_LEN: usize = 8;
const IPV4_MIN_LEN: usize = 20;
const IPV6_LEN: usize = 40;
/// BTH byte 4: FECN, BECN, resv6 (IBA "Resv8a").
const BTH_RESV8A: usize = 4;
/// The longest masked prefix: IPv4 with options (60) + UDP (8) + BTH (12).
const MAX_MASKED: usize = 60 + UDP_LEN + BTH_LEN;
/// The 8 bytes of ones that stand for the LRH in a RoCEv2 ICRC.
const PSEUDO_LRH: [u8; LRH_LEN] = [0xff; LRH_LEN];

/// Which masking rule applies; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IcrcKind {
    /// Native IB without GRH (LRH LNH = 2).
    IbLocal,
    /// Native IB with GRH (LRH LNH = 3).
    IbGlobal,
    /// RoCEv2 over IPv4.
    RoceV4,
    /// RoCEv2 over IPv6.
    RoceV6,
}

fn ones(buf: &mut [u8], range: Range<usize>) {
    buf[range].fill(0xff);
}

/// Length of the masked prefix of `covered` (everything up to the end of the BTH), checking that it and the
/// ICRC are present.
fn masked_len(kind: IcrcKind, covered: &[u8]) -> Result<usize> {
    let len = match kind {
        IcrcKind::IbLocal => LRH_LEN + BTH_LEN,
        IcrcKind::IbGlobal => LRH_LEN + GRH_LEN + BTH_LEN,
        IcrcKind::RoceV6 => IPV6_LEN + UDP_LEN + BTH_LEN,
        IcrcKind::RoceV4 => {
            check_len("icrc", covered, IPV4_MIN_LEN + UDP_LEN + BTH_LEN + ICRC_LEN)?;
            let ihl = covered[0] & 0x0f;
            if ihl < 5 {
                return Err(Error::BadField {
                    header: "ipv4",
                    field: "ihl",
                    value: u32::from(ihl),
                });
            }
            usize::from(ihl) * 4 + UDP_LEN + BTH_LEN
        }
    };
    check_len("icrc", covered, len + ICRC_LEN)?;
    Ok(len)
}

/// Replaces the variant fields of the prefix `buf` (which ends with the BTH) by ones.
fn apply_mask(kind: IcrcKind, buf: &mut [u8]) {
    let bth = buf.len() - BTH_LEN;
    match kind {
        IcrcKind::IbLocal => buf[0] |= 0xf0,
        IcrcKind::IbGlobal => {
            ones(buf, 0..LRH_LEN);
            let g = LRH_LEN;
            buf[g] |= 0x0f;
            ones(buf, g + 1..g + 4);
            buf[g + 7] = 0xff;
        }
        IcrcKind::RoceV4 => {
            buf[1] = 0xff;
            buf[8] = 0xff;
            ones(buf, 10..12);
        }
        IcrcKind::RoceV6 => {
            buf[0] |= 0x0f;
            ones(buf, 1..4);
            buf[7] = 0xff;
        }
    }
    if matches!(kind, IcrcKind::RoceV4 | IcrcKind::RoceV6) {
        let udp = bth - UDP_LEN;
        ones(buf, udp + 6..udp + 8);
    }
    buf[bth + BTH_RESV8A] = 0xff;
}

/// Computes the ICRC of `covered`: for IB, the bytes from the LRH through the ICRC field (PktLen * 4 bytes);
/// for RoCEv2, from the IP header through the ICRC field (no Ethernet header, no FCS). The last 4 bytes (the
/// ICRC field) are not part of the computation. `Truncated` when the headers and ICRC do not fit; `BadField`
/// for an IPv4 IHL below 5.
pub fn icrc(kind: IcrcKind, covered: &[u8]) -> Result<u32> {
    let len = masked_len(kind, covered)?;
    let mut buf = [0u8; MAX_MASKED];
    let prefix = &mut buf[..len];
    prefix.copy_from_slice(&covered[..len]);
    apply_mask(kind, prefix);
    let mut digest = CRC32.digest();
    if matches!(kind, IcrcKind::RoceV4 | IcrcKind::RoceV6) {
        digest.update(&PSEUDO_LRH);
    }
    digest.update(prefix);
    digest.update(&covered[len..covered.len() - ICRC_LEN]);
    Ok(digest.finalize())
}

/// Computes the ICRC and writes it into the last 4 bytes of `covered`, least significant byte first.
pub fn fill_icrc(kind: IcrcKind, covered: &mut [u8]) -> Result<()> {
    let value = icrc(kind, covered)?;
    let at = covered.len() - ICRC_LEN;
    covered[at..].copy_from_slice(&value.to_le_bytes());
    Ok(())
}

/// True when the last 4 bytes of `covered` hold the right ICRC.
pub fn verify_icrc(kind: IcrcKind, covered: &[u8]) -> Result<bool> {
    let value = icrc(kind, covered)?;
    let at = covered.len() - ICRC_LEN;
    let carried = u32::from_le_bytes([
        covered[at],
        covered[at + 1],
        covered[at + 2],
        covered[at + 3],
    ]);
    Ok(value == carried)
}

/// The kind of a native IB packet from its LRH's LNH (B1\[1:0\]): 2 local (BTH next), 3 global (GRH next).
/// `BadField` for 0 (raw) and 1 (IP non-IBA), which carry no ICRC; `Truncated` below 2 bytes.
pub fn ib_kind(lrh_first_bytes: &[u8]) -> Result<IcrcKind> {
    check_len("lrh", lrh_first_bytes, 2)?;
    match lrh_first_bytes[1] & 0x03 {
        2 => Ok(IcrcKind::IbLocal),
        3 => Ok(IcrcKind::IbGlobal),
        lnh => Err(Error::BadField {
            header: "lrh",
            field: "lnh",
            value: u32::from(lnh),
        }),
    }
}

/// The kind and ICRC coverage of a native IB packet (LRH first): PktLen (B4\[2:0\], B5) 4-byte words from the
/// LRH start, which ends with the ICRC and leaves out the VCRC.
pub fn ib_covered(packet: &[u8]) -> Result<(IcrcKind, &[u8])> {
    let kind = ib_kind(packet)?;
    let len = crate::wire::lrh::Packet::new_checked(packet)?.pkt_len_bytes();
    check_len("lrh", packet, len)?;
    Ok((kind, &packet[..len]))
}

/// The kind of a RoCEv2 Ethernet frame and the offset of its IP header. Accepts one 802.1Q tag (RoCE often
/// runs tagged, the PCP selecting the PFC priority). Checks that the frame is RoCEv2: IPv4 (version 4) or
/// IPv6 (version 6, UDP as Next Header, no extension headers), UDP to port 4791, lengths consistent;
/// `BadField` or `Truncated` otherwise.
pub fn roce_kind_of_ethernet_frame(frame: &[u8]) -> Result<(IcrcKind, usize)> {
    roce_parts(frame).map(|(kind, offset, _)| (kind, offset))
}

/// The kind and ICRC coverage of a RoCEv2 Ethernet frame: from the IP header to the end given by the IP length
/// fields, so Ethernet padding of short frames (and any FCS) is left out. Same checks as
/// [`roce_kind_of_ethernet_frame`].
pub fn roce_covered(frame: &[u8]) -> Result<(IcrcKind, &[u8])> {
    let (kind, offset, len) = roce_parts(frame)?;
    Ok((kind, &frame[offset..offset + len]))
}

/// (kind, IP header offset, IP packet length) of a RoCEv2 frame.
fn roce_parts(frame: &[u8]) -> Result<(IcrcKind, usize, usize)> {
    use crate::wire::{ethernet, ipv4, ipv6, udp};

    let eth = ethernet::Packet::new_checked(frame)?;
    let mut offset = ethernet::HEADER_LEN;
    let mut ethertype = eth.ethertype();
    if ethertype == ethernet::EtherType::Vlan {
        check_len("vlan", frame, offset + 4)?;
        ethertype = u16::from_be_bytes([frame[offset + 2], frame[offset + 3]]).into();
        offset += 4;
    }
    let ip = &frame[offset..];
    let (kind, ip_len, udp_bytes) = match ethertype {
        ethernet::EtherType::Ipv4 => {
            let p = ipv4::Packet::new_checked(ip)?;
            if p.version() != 4 {
                return Err(Error::BadField {
                    header: "ipv4",
                    field: "version",
                    value: u32::from(p.version()),
                });
            }
            if p.protocol() != ipv4::IpProtocol::Udp {
                return Err(Error::BadField {
                    header: "ipv4",
                    field: "protocol",
                    value: u32::from(u8::from(p.protocol())),
                });
            }
            (IcrcKind::RoceV4, usize::from(p.total_len()), p.payload())
        }
        ethernet::EtherType::Ipv6 => {
            let p = ipv6::Packet::new_checked(ip)?;
            if p.version() != 6 {
                return Err(Error::BadField {
                    header: "ipv6",
                    field: "version",
                    value: u32::from(p.version()),
                });
            }
            if p.next_header() != ipv4::IpProtocol::Udp {
                return Err(Error::BadField {
                    header: "ipv6",
                    field: "next_header",
                    value: u32::from(u8::from(p.next_header())),
                });
            }
            let len = ipv6::HEADER_LEN + usize::from(p.payload_len());
            (IcrcKind::RoceV6, len, p.payload())
        }
        other => {
            return Err(Error::BadField {
                header: "ethernet",
                field: "ethertype",
                value: u32::from(u16::from(other)),
            })
        }
    };
    let u = udp::Packet::new_checked(udp_bytes)?;
    if u.dst_port() != udp::ROCEV2_PORT {
        return Err(Error::BadField {
            header: "udp",
            field: "dst_port",
            value: u32::from(u.dst_port()),
        });
    }
    Ok((kind, offset, ip_len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        let digits: Vec<u8> = s
            .bytes()
            .filter(u8::is_ascii_hexdigit)
            .map(|c| (c as char).to_digit(16).unwrap() as u8)
            .collect();
        digits.chunks(2).map(|d| d[0] << 4 | d[1]).collect()
    }

    /// RoCEv2 CNP over IPv4 captured on a ConnectX-4 Lx: secdev/scapy test/contrib/roce.uts, "RoCE CNP
    /// captured on ConnectX-4 Lx" (scapy asserts icrc == 0x82fd002a, its big-endian reading of the bytes).
    fn cx4_cnp_frame() -> Vec<u8> {
        hex("e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2
             003c 718c 4000 4011 9161 0a00 1101 0a00
             1201 0000 12b7 0028 0000 8100 ffff 4000
             0118 0000 0000 0000 0000 0000 0000 0000
             0000 0000 0000 82fd 002a")
    }

    /// scapy's UC SEND_ONLY example over IPv4 (secdev/scapy test/contrib/roce.uts, "RoCE layer"), bytes worked
    /// out from its fields: tos 0x1, len 64, id 1144, DF, ttl 64, 192.168.0.7 -> 192.168.0.7; UDP 49152 ->
    /// 4791, len 44; BTH opcode 0x24, migreq 1, padcount 2, pkey 0xffff, dqpn 211, psn 13571856 (0xcf1710);
    /// 20 payload bytes. scapy asserts IP chksum 0xb4d5, UDP chksum 0xaca2 and icrc 0x78f353f3.
    fn scapy_uc_v4_frame() -> Vec<u8> {
        hex("248a 07a8 fa22 248a 07a8 fa22 0800
             4501 0040 0478 4000 4011 b4d5 c0a8 0007 c0a8 0007
             c000 12b7 002c aca2
             2460 ffff 0000 00d3 00cf 1710
             4630 818b e289 35d9 0e9a 9550 5401 be88 5e50 0000
             78f3 53f3")
    }

    /// scapy's UC example over IPv6 (polybassa/scapy-1, a fork of secdev/scapy, test/contrib/roce.uts at
    /// 10a61b8b64621b9590933ccdccca6139c9dd26a5, "RoCE over IPv6"): tc 226, fl 0x1face, plen 44, hlim 255,
    /// 2022::1023 -> 2023::1024, the same UDP ports, BTH and payload; scapy asserts UDP chksum 0xe7c5 and
    /// icrc 0x3e5b743b.
    fn scapy_uc_v6_frame() -> Vec<u8> {
        hex("248a 07a8 fa22 248a 07a8 fa22 86dd
             6e21 face 002c 11ff
             2022 0000 0000 0000 0000 0000 0000 1023
             2023 0000 0000 0000 0000 0000 0000 1024
             c000 12b7 002c e7c5
             2460 ffff 0000 00d3 00cf 1710
             4630 818b e289 35d9 0e9a 9550 5401 be88 5e50 0000
             3e5b 743b")
    }

    /// Two RoCE v1 packets (Ethernet, EtherType 0x8915, GRH, BTH, ...) captured from Mellanox adapters
    /// (polybassa/scapy-1 test/contrib/roce.uts, "RoCE v1 RC RDMA WRITE ONLY" and "RoCE v1 RC ACKNOWLEDGE";
    /// scapy asserts icrc 0xe3d856bb and 0x25f0c038). RoCE v1 computes the ICRC by the IB global rule, the LRH
    /// being all ones; these return the bytes from the GRH on.
    fn rocev1_grh_packets() -> [Vec<u8>; 2] {
        let write_only = hex("7c fe 90 75 3c d8 7c fe 90 75 3c d8 89 15 60 20
             00 00 00 28 1b 40 00 00 00 00 00 00 00 00 00 00
             ff ff 0f 00 00 02 00 00 00 00 00 00 00 00 00 00
             ff ff 0f 00 00 02 0a 70 ff ff 00 00 01 0a 80 a7
             88 bc 00 00 55 d4 c0 72 60 00 00 00 47 b3 00 00
             00 05 00 00 00 00 01 00 00 00 e3 d8 56 bb");
        let ack = hex("7c fe 90 75 3c d8 7c fe 90 75 3c d8 89 15 60 20
             00 00 00 14 1b 40 00 00 00 00 00 00 00 00 00 00
             ff ff 0f 00 00 02 00 00 00 00 00 00 00 00 00 00
             ff ff 0f 00 00 02 11 40 ff ff 00 00 01 09 00 a7
             88 c0 00 00 00 05 25 f0 c0 38");
        [write_only[14..].to_vec(), ack[14..].to_vec()]
    }

    /// An IB global packet: an LRH (VL 2, SL 0, LNH 3, DLID 2, PktLen from the length, SLID 1) before the
    /// RoCE v1 bytes; since the whole LRH is masked, the ICRC must be the one the adapter computed.
    fn ib_global_from_rocev1(grh_on: &[u8]) -> Vec<u8> {
        let words = (LRH_LEN + grh_on.len()) / 4;
        let mut v = vec![
            0x20,
            0x03,
            0x00,
            0x02,
            (words >> 8) as u8,
            words as u8,
            0x00,
            0x01,
        ];
        v.extend_from_slice(grh_on);
        v
    }

    /// Hand-built IB local packet (no public IB-native vector with an ICRC was found): LRH VL 3, LNH 2,
    /// DLID 4, PktLen 7, SLID 1; BTH RC SEND_ONLY, P_Key 0xffff, DestQP 0x12, AckReq, PSN 1; payload "ibcy".
    /// Expected ICRC 0x1db91a51, computed separately with Python's zlib.crc32 over the same bytes with
    /// byte 0 set to 0xf0 | 0x00 and BTH byte 4 set to 0xff.
    static IB_LOCAL: [u8; 28] = [
        0x30, 0x02, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01, // LRH
        0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x80, 0x00, 0x00, 0x01, // BTH
        0x69, 0x62, 0x63, 0x79, // payload
        0x51, 0x1a, 0xb9, 0x1d, // ICRC, LSB first
    ];

    #[test]
    fn connectx4_cnp_over_ipv4() {
        let frame = cx4_cnp_frame();
        assert_eq!(
            roce_kind_of_ethernet_frame(&frame),
            Ok((IcrcKind::RoceV4, 14))
        );
        let (kind, covered) = roce_covered(&frame).unwrap();
        assert_eq!(kind, IcrcKind::RoceV4);
        assert_eq!(covered.len(), 60);
        assert_eq!(icrc(kind, covered), Ok(0x2a00_fd82));
        assert_eq!(verify_icrc(kind, covered), Ok(true));
    }

    #[test]
    fn scapy_uc_over_ipv4() {
        let frame = scapy_uc_v4_frame();
        let (kind, covered) = roce_covered(&frame).unwrap();
        assert_eq!((kind, covered.len()), (IcrcKind::RoceV4, 64));
        assert_eq!(icrc(kind, covered), Ok(0xf353_f378));
        let mut copy = covered.to_vec();
        copy[60..].fill(0);
        fill_icrc(kind, &mut copy).unwrap();
        assert_eq!(&copy[60..], &[0x78, 0xf3, 0x53, 0xf3]);
    }

    #[test]
    fn scapy_uc_over_ipv6() {
        let frame = scapy_uc_v6_frame();
        assert_eq!(
            roce_kind_of_ethernet_frame(&frame),
            Ok((IcrcKind::RoceV6, 14))
        );
        let (kind, covered) = roce_covered(&frame).unwrap();
        assert_eq!(covered.len(), 84);
        assert_eq!(icrc(kind, covered), Ok(0x3b74_5b3e));
        assert_eq!(verify_icrc(kind, covered), Ok(true));
    }

    #[test]
    fn rocev1_captures_as_ib_global() {
        let expected = [0xbb56_d8e3u32, 0x38c0_f025];
        for (grh_on, want) in rocev1_grh_packets().iter().zip(expected) {
            let pkt = ib_global_from_rocev1(grh_on);
            let (kind, covered) = ib_covered(&pkt).unwrap();
            assert_eq!(kind, IcrcKind::IbGlobal);
            assert_eq!(covered.len(), pkt.len());
            assert_eq!(icrc(kind, covered), Ok(want));
            assert_eq!(verify_icrc(kind, covered), Ok(true));
        }
    }

    #[test]
    fn hand_built_ib_local() {
        assert_eq!(ib_kind(&IB_LOCAL), Ok(IcrcKind::IbLocal));
        let (kind, covered) = ib_covered(&IB_LOCAL).unwrap();
        assert_eq!(covered.len(), 28);
        assert_eq!(icrc(kind, covered), Ok(0x1db9_1a51));
        assert_eq!(verify_icrc(kind, covered), Ok(true));
        // The same packet read as global would mask other bytes: the rules are not interchangeable.
        assert!(matches!(
            icrc(IcrcKind::IbGlobal, covered),
            Err(Error::Truncated { .. })
        ));
    }

    /// rxe seeds crc32_le with 0xDEBB20E3 instead of feeding 8 bytes of ones: the CRC register (reflected)
    /// after those bytes. Starting the plain CRC-32 there over the masked IP..payload bytes must give the same
    /// ICRC.
    #[test]
    fn rxe_seed_equals_eight_ones() {
        let frame = cx4_cnp_frame();
        let covered = &frame[14..];
        let mut masked = covered[..covered.len() - ICRC_LEN].to_vec();
        masked[1] = 0xff; // TOS
        masked[8] = 0xff; // TTL
        masked[10..12].fill(0xff); // checksum
        masked[26..28].fill(0xff); // UDP checksum
        masked[32] = 0xff; // BTH byte 4
        let mut d = CRC32.digest_with_initial(0xdebb_20e3u32.reverse_bits());
        d.update(&masked);
        assert_eq!(d.finalize(), 0x2a00_fd82);
    }

    /// Marking CE at a switch changes TOS and the IPv4 checksum, neither of which the ICRC covers.
    #[test]
    fn ecn_marking_keeps_icrc() {
        use crate::wire::ipv4;
        let mut frame = cx4_cnp_frame();
        let mut ip = ipv4::Packet::new_checked(&mut frame[14..]).unwrap();
        ip.set_ecn_ce();
        assert!(ip.verify_checksum());
        let (kind, covered) = roce_covered(&frame).unwrap();
        assert_eq!(verify_icrc(kind, covered), Ok(true));
        assert_eq!(covered[1], 0xc3);
    }

    #[test]
    fn vlan_tagged_frame() {
        let plain = scapy_uc_v4_frame();
        let mut tagged = plain[..12].to_vec();
        tagged.extend_from_slice(&[0x81, 0x00, 0x60, 0x05]); // PCP 3, VID 5
        tagged.extend_from_slice(&plain[12..]);
        assert_eq!(
            roce_kind_of_ethernet_frame(&tagged),
            Ok((IcrcKind::RoceV4, 18))
        );
        let (kind, covered) = roce_covered(&tagged).unwrap();
        assert_eq!(verify_icrc(kind, covered), Ok(true));
    }

    #[test]
    fn padding_is_not_covered() {
        let mut frame = cx4_cnp_frame();
        frame.extend_from_slice(&[0xee; 6]); // trailing bytes after the IP packet (pad, FCS)
        let (kind, covered) = roce_covered(&frame).unwrap();
        assert_eq!(covered.len(), 60);
        assert_eq!(verify_icrc(kind, covered), Ok(true));
    }

    #[test]
    fn errors() {
        assert!(matches!(
            icrc(IcrcKind::IbLocal, &IB_LOCAL[..23]),
            Err(Error::Truncated {
                need: 24,
                have: 23,
                ..
            })
        ));
        assert!(matches!(
            icrc(IcrcKind::IbGlobal, &[0u8; 63]),
            Err(Error::Truncated { need: 64, .. })
        ));
        assert!(matches!(
            icrc(IcrcKind::RoceV6, &[0u8; 63]),
            Err(Error::Truncated { need: 64, .. })
        ));
        assert!(matches!(
            icrc(IcrcKind::RoceV4, &[]),
            Err(Error::Truncated {
                need: 44,
                have: 0,
                ..
            })
        ));
        let mut v4 = vec![0u8; 50];
        v4[0] = 0x46; // IHL 6: 24 + 8 + 12 + 4 = 48 needed
        assert!(icrc(IcrcKind::RoceV4, &v4[..47]).is_err());
        assert!(icrc(IcrcKind::RoceV4, &v4[..48]).is_ok());
        v4[0] = 0x44;
        assert_eq!(
            icrc(IcrcKind::RoceV4, &v4),
            Err(Error::BadField {
                header: "ipv4",
                field: "ihl",
                value: 4
            })
        );
        assert!(matches!(
            fill_icrc(IcrcKind::IbLocal, &mut [0u8; 3]),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(ib_kind(&[0x00]), Err(Error::Truncated { .. })));
        for lnh in 0..2u8 {
            assert_eq!(
                ib_kind(&[0x00, lnh]),
                Err(Error::BadField {
                    header: "lrh",
                    field: "lnh",
                    value: u32::from(lnh)
                })
            );
        }
        let mut frame = cx4_cnp_frame();
        frame[36..38].copy_from_slice(&4792u16.to_be_bytes());
        assert!(matches!(
            roce_kind_of_ethernet_frame(&frame),
            Err(Error::BadField {
                field: "dst_port",
                ..
            })
        ));
        let mut frame = cx4_cnp_frame();
        frame[12..14].copy_from_slice(&[0x89, 0x15]);
        assert!(matches!(
            roce_kind_of_ethernet_frame(&frame),
            Err(Error::BadField {
                field: "ethertype",
                value: 0x8915,
                ..
            })
        ));
        let frame = cx4_cnp_frame();
        assert!(matches!(
            roce_covered(&frame[..73]),
            Err(Error::Truncated { .. })
        ));
    }

    // ---- properties ----

    /// The bits of `covered` that the ICRC must ignore, as (byte, mask), written out from the table in the
    /// module documentation (not from `apply_mask`), ICRC field excluded.
    fn masked_bits(kind: IcrcKind, covered: &[u8]) -> Vec<(usize, u8)> {
        let mut m = Vec::new();
        let whole = |m: &mut Vec<(usize, u8)>, r: Range<usize>| m.extend(r.map(|i| (i, 0xff)));
        let bth = match kind {
            IcrcKind::IbLocal => {
                m.push((0, 0xf0)); // VL
                8
            }
            IcrcKind::IbGlobal => {
                whole(&mut m, 0..8); // LRH
                m.push((8, 0x0f)); // TClass[7:4]
                whole(&mut m, 9..12); // TClass[3:0], FlowLabel
                m.push((15, 0xff)); // HopLmt
                48
            }
            IcrcKind::RoceV4 => {
                let hl = usize::from(covered[0] & 0x0f) * 4;
                m.push((1, 0xff)); // TOS
                m.push((8, 0xff)); // TTL
                whole(&mut m, 10..12); // header checksum
                whole(&mut m, hl + 6..hl + 8); // UDP checksum
                hl + 8
            }
            IcrcKind::RoceV6 => {
                m.push((0, 0x0f)); // TC[7:4]
                whole(&mut m, 1..4); // TC[3:0], Flow Label
                m.push((7, 0xff)); // Hop Limit
                whole(&mut m, 46..48); // UDP checksum
                48
            }
        };
        m.push((bth + 4, 0xff)); // FECN, BECN, resv6
        m
    }

    fn is_masked(masked: &[(usize, u8)], byte: usize, bit: u8) -> bool {
        masked.iter().any(|&(b, mask)| b == byte && mask & bit != 0)
    }

    /// A random packet of `kind` (random header bytes, payload of 0..64 bytes, random ICRC field). IPv4 gets
    /// version 4 and IHL 5..=7 (options covered unmasked).
    fn packet(kind: IcrcKind) -> impl Strategy<Value = Vec<u8>> {
        let fixed = match kind {
            IcrcKind::IbLocal => LRH_LEN + BTH_LEN,
            IcrcKind::IbGlobal => LRH_LEN + GRH_LEN + BTH_LEN,
            IcrcKind::RoceV4 => 60 + UDP_LEN + BTH_LEN,
            IcrcKind::RoceV6 => IPV6_LEN + UDP_LEN + BTH_LEN,
        };
        (
            proptest::collection::vec(any::<u8>(), fixed + ICRC_LEN..fixed + ICRC_LEN + 64),
            5u8..=7,
        )
            .prop_map(move |(mut v, ihl)| {
                if kind == IcrcKind::RoceV4 {
                    // Drop the option bytes this IHL does not use.
                    v.drain(usize::from(ihl) * 4..60);
                    v[0] = 0x40 | ihl;
                }
                v
            })
    }

    fn kinds() -> impl Strategy<Value = IcrcKind> {
        prop_oneof![
            Just(IcrcKind::IbLocal),
            Just(IcrcKind::IbGlobal),
            Just(IcrcKind::RoceV4),
            Just(IcrcKind::RoceV6),
        ]
    }

    fn kind_and_packet() -> impl Strategy<Value = (IcrcKind, Vec<u8>)> {
        kinds().prop_flat_map(|k| (Just(k), packet(k)))
    }

    /// A copy of `v` with the bits of `mask` in byte `byte` flipped.
    fn flipped(v: &[u8], byte: usize, mask: u8) -> Vec<u8> {
        let mut w = v.to_vec();
        w[byte] ^= mask;
        w
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Any change confined to masked fields (one masked bit; a random pattern over all of them at once)
        /// leaves the ICRC alone, and so does a change to the ICRC field itself.
        #[test]
        fn masked_changes_keep_icrc(
            (kind, pkt) in kind_and_packet(),
            noise in any::<[u8; 32]>(),
            sel in any::<usize>(),
        ) {
            let want = icrc(kind, &pkt).unwrap();
            let masked = masked_bits(kind, &pkt);
            // One masked bit.
            let (byte, mask) = masked[sel % masked.len()];
            let one = 1u8 << (sel / masked.len() % 8);
            let bit = if mask & one != 0 { one } else { mask & mask.wrapping_neg() };
            prop_assert_eq!(icrc(kind, &flipped(&pkt, byte, bit)), Ok(want));
            // All masked fields at once.
            let mut all = pkt.clone();
            for (i, &(byte, mask)) in masked.iter().enumerate() {
                all[byte] ^= noise[i % noise.len()] & mask;
            }
            prop_assert_eq!(icrc(kind, &all), Ok(want));
            // The ICRC field.
            let last = pkt.len() - 1 - sel % ICRC_LEN;
            prop_assert_eq!(icrc(kind, &flipped(&pkt, last, 0x01)), Ok(want));
        }

        /// Flipping any one bit outside the masked fields and the ICRC field changes the ICRC (CRC-32 catches
        /// every single-bit error; for the IPv4 IHL nibble, which moves the masks, the result differs or is an
        /// error).
        #[test]
        fn unmasked_flip_changes_icrc((kind, pkt) in kind_and_packet(), sel in any::<usize>()) {
            let want = icrc(kind, &pkt).unwrap();
            let masked = masked_bits(kind, &pkt);
            let candidates: Vec<(usize, u8)> = (0..pkt.len() - ICRC_LEN)
                .flat_map(|byte| (0..8).map(move |b| (byte, 0x80u8 >> b)))
                .filter(|&(byte, bit)| !is_masked(&masked, byte, bit))
                .collect();
            let (byte, bit) = candidates[sel % candidates.len()];
            prop_assert_ne!(icrc(kind, &flipped(&pkt, byte, bit)), Ok(want), "byte {} bit {:#x}", byte, bit);
        }

        /// fill then verify passes; a flipped unmasked bit after filling fails verification.
        #[test]
        fn fill_then_verify((kind, pkt) in kind_and_packet(), sel in any::<usize>()) {
            let mut p = pkt;
            fill_icrc(kind, &mut p).unwrap();
            prop_assert_eq!(verify_icrc(kind, &p), Ok(true));
            // Payload bytes (after the BTH) are never masked.
            let start = match kind {
                IcrcKind::IbLocal => LRH_LEN + BTH_LEN,
                IcrcKind::IbGlobal | IcrcKind::RoceV6 => 60,
                IcrcKind::RoceV4 => usize::from(p[0] & 0x0f) * 4 + UDP_LEN + BTH_LEN,
            };
            if p.len() - ICRC_LEN > start {
                let byte = start + sel % (p.len() - ICRC_LEN - start);
                prop_assert_eq!(verify_icrc(kind, &flipped(&p, byte, 0x10)), Ok(false));
            }
        }

        /// No input makes any entry point panic; errors are typed.
        #[test]
        fn never_panics(
            b in proptest::collection::vec(any::<u8>(), 0..96),
            kind in kinds(),
            shape in 0u8..3,
        ) {
            let mut b = b;
            // Sometimes give the frame a plausible Ethernet/IP start so the deeper checks are reached.
            if b.len() > 14 {
                match shape {
                    1 => { b[12] = 0x08; b[13] = 0x00; b[14] = 0x45; }
                    2 => { b[12] = 0x86; b[13] = 0xdd; b[14] = 0x60; }
                    _ => {}
                }
            }
            let _ = icrc(kind, &b);
            let _ = verify_icrc(kind, &b);
            let _ = fill_icrc(kind, &mut b.clone());
            let _ = ib_kind(&b);
            let _ = ib_covered(&b);
            let _ = roce_kind_of_ethernet_frame(&b);
            let _ = roce_covered(&b);
        }
    }
}
