//! The InfiniBand congestion notification packet (CNP, BTH opcode 0x80), as Linux hfi1's `return_cnp` builds
//! it for a packet that arrived with FECN set and no GRH:
//!
//! ```text
//! byte 0-7   LRH  VL, LVer 0, SL, LNH IBA local, DLID, PktLen 6 words, SLID, reserved bits 0
//! byte 8-19  BTH  OpCode 0x80, SE/M/PadCnt/TVer 0, P_Key, FECN 0, BECN 1, resv6 0, DestQP, AckReq 0,
//!                 resv7 0, PSN 0
//! byte 20-23 ICRC
//! byte 24-25 VCRC (on the wire; not counted in PktLen)
//! ```
//!
//! [`Repr`] holds what varies between CNPs. [`Repr::parse`] checks every fixed bit (`BadField` names the first
//! field that differs), so `emit(parse(b))` reproduces the 20 header bytes of every `b` it accepts. It keeps
//! FECN because a switch on the way back may mark a CNP (hfi1 ignores FECN on CNPs, but the bit is on the
//! wire). A receiver that only needs to recognise a CNP should look at the BTH opcode, as hfi1 does
//! (`hfi1_cnp_rcv` reacts to the opcode, not to the BECN bit); this parse is for checking the format.
//! The ICRC and VCRC are not checked or written here: [`Repr::emit`] leaves bytes 20..26 for the CRC
//! modules (ICRC first, then [`crate::crc::vcrc::fill_vcrc`] over the 26 bytes).
//! A CNP answering a packet with a GRH carries a GRH too (LNH IBA global) in hfi1; that form is not modelled
//! here and parse rejects it.

use super::bth::{self, Opcode};
use super::lrh::{self, Lnh};
use super::{check_len, Error, Result};

const HEADER: &str = "IB CNP";

/// PktLen of a CNP in 4-byte words: LRH 8 + BTH 12 + ICRC 4 = 24 bytes.
pub const PKT_LEN_WORDS: u16 = 6;

/// Bytes of LRH and BTH, what [`Repr::emit`] writes.
pub const HEADERS_LEN: usize = lrh::HEADER_LEN + bth::HEADER_LEN;

/// Bytes from the LRH start through the ICRC (PktLen in bytes).
pub const PACKET_LEN: usize = 24;

/// Bytes on the wire: [`PACKET_LEN`] plus the 2-byte VCRC.
pub const WIRE_LEN: usize = PACKET_LEN + 2;

/// What varies between two IB CNPs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// LRH virtual lane (4 bits).
    pub vl: u8,
    /// LRH service level (4 bits).
    pub sl: u8,
    /// Destination LID: the LID of the sender of the FECN-marked packet.
    pub dlid: u16,
    /// Source LID: the LID of the port sending the CNP.
    pub slid: u16,
    /// P_Key copied from the marked packet.
    pub pkey: u16,
    /// Destination QP: the QP that sent the marked packet (24 bits).
    pub dest_qp: u32,
    /// FECN as found on the wire; 0 when the CNP is sent.
    pub fecn: bool,
}

fn bad(field: &'static str, value: u32) -> Error {
    Error::BadField {
        header: HEADER,
        field,
        value,
    }
}

fn require(field: &'static str, value: u32, expected: u32) -> Result<()> {
    if value == expected {
        Ok(())
    } else {
        Err(bad(field, value))
    }
}

impl Repr {
    /// The CNP hfi1's `return_cnp` sends in answer to a packet with FECN set and no GRH:
    /// - LRH: SL = the incoming SL (hfi1 maps the incoming SC back to its SL); VL = the incoming VL field
    ///   (hfi1 writes the incoming SC's low 4 bits there, the field a 9B LRH carries it in); DLID = the incoming SLID; SLID = `own_lid` (hfi1 copies
    ///   the incoming DLID, which is the receiver's own LID for the unicast packets it answers); LNH IBA
    ///   local; PktLen 6.
    /// - BTH: opcode 0x80, P_Key = the incoming P_Key, BECN set, DestQP = `src_qp` (the sender's QPN: the
    ///   DETH SrcQP for UD, the connected QP's remote QPN for RC/UC), PSN 0, everything else 0.
    ///
    /// When to send one is the caller's decision; hfi1's rule is: FECN set, not multicast, not itself a CNP,
    /// and (for RC) not an ACK; an RC request with FECN gets an immediate ACK with BECN instead of a CNP.
    pub fn reply_to(lrh: &lrh::Repr, bth: &bth::Repr, src_qp: u32, own_lid: u16) -> Repr {
        Repr {
            vl: lrh.vl & 0x0F,
            sl: lrh.sl & 0x0F,
            dlid: lrh.slid,
            slid: own_lid,
            pkey: bth.pkey,
            dest_qp: src_qp & 0x00FF_FFFF,
            fecn: false,
        }
    }

    /// The LRH this CNP carries.
    pub fn lrh_repr(&self) -> lrh::Repr {
        lrh::Repr {
            vl: self.vl,
            lver: 0,
            sl: self.sl,
            resv2: 0,
            lnh: Lnh::IbaLocal,
            dlid: self.dlid,
            resv5: 0,
            pkt_len: PKT_LEN_WORDS,
            slid: self.slid,
        }
    }

    /// The BTH this CNP carries.
    pub fn bth_repr(&self) -> bth::Repr {
        bth::Repr::cnp(Opcode::IbCnp, self.pkey, self.dest_qp, self.fecn, true)
    }

    /// Reads a whole CNP (LRH through ICRC; trailing bytes such as the VCRC are ignored). `Truncated` below
    /// [`PACKET_LEN`] bytes; `BadField` if the opcode is not 0x80 ("OpCode"), LNH is not IBA local ("LNH"), or
    /// any other bit differs from what hfi1 sends (the field is named), FECN excepted.
    pub fn parse(bytes: &[u8]) -> Result<Repr> {
        check_len(HEADER, bytes, PACKET_LEN)?;
        let l = lrh::Repr::parse(&lrh::Packet::new_unchecked(bytes))?;
        let b = bth::Repr::parse(&bth::Packet::new_unchecked(&bytes[lrh::HEADER_LEN..]))?;
        require("OpCode", u32::from(u8::from(b.opcode)), 0x80)?;
        require(
            "LNH",
            u32::from(u8::from(l.lnh)),
            u32::from(u8::from(Lnh::IbaLocal)),
        )?;
        require("LVer", u32::from(l.lver), 0)?;
        require("LRH resv2", u32::from(l.resv2), 0)?;
        require("LRH resv5", u32::from(l.resv5), 0)?;
        require("PktLen", u32::from(l.pkt_len), u32::from(PKT_LEN_WORDS))?;
        require("SE", u32::from(b.se), 0)?;
        require("M", u32::from(b.migreq), 0)?;
        require("PadCnt", u32::from(b.pad_cnt), 0)?;
        require("TVer", u32::from(b.tver), 0)?;
        require("BECN", u32::from(b.becn), 1)?;
        require("BTH resv6", u32::from(b.resv6), 0)?;
        require("AckReq", u32::from(b.ack_req), 0)?;
        require("BTH resv7", u32::from(b.resv7), 0)?;
        require("PSN", b.psn, 0)?;
        Ok(Repr {
            vl: l.vl,
            sl: l.sl,
            dlid: l.dlid,
            slid: l.slid,
            pkey: b.pkey,
            dest_qp: b.dest_qp,
            fecn: b.fecn,
        })
    }

    /// Bytes from the LRH through the ICRC (24); the wire adds the 2-byte VCRC ([`WIRE_LEN`]).
    pub const fn buffer_len(&self) -> usize {
        PACKET_LEN
    }

    /// Writes the LRH and BTH into `buf[..20]`. `buf` must hold at least [`HEADERS_LEN`] bytes (the caller
    /// sizes it with [`Repr::buffer_len`] or [`WIRE_LEN`]; a shorter one is a programming error and panics, as
    /// every `emit` into an unchecked view does). The ICRC (bytes 20..24) and VCRC (24..26) are left as they
    /// are, for the CRC modules to fill.
    pub fn emit(&self, buf: &mut [u8]) {
        let (lrh_bytes, rest) = buf.split_at_mut(lrh::HEADER_LEN);
        self.lrh_repr()
            .emit(&mut lrh::Packet::new_unchecked(lrh_bytes));
        self.bth_repr().emit(&mut bth::Packet::new_unchecked(
            &mut rest[..bth::HEADER_LEN],
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc::vcrc::{fill_vcrc, verify_vcrc};
    use proptest::prelude::*;

    /// CNP from LID 5 to LID 9, VL 1, SL 3, P_Key 0x8001, DestQP 0x000102; ICRC computed by an independent
    /// script with the reference's local-packet rule, VCRC over bytes 0..24 stored LSB first.
    static PACKET_BYTES: [u8; 26] = [
        0x10, 0x32, 0x00, 0x09, 0x00, 0x06, 0x00, 0x05, // LRH
        0x80, 0x00, 0x80, 0x01, 0x40, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, // BTH
        0xcb, 0xdc, 0x99, 0xb2, // ICRC
        0xf7, 0x63, // VCRC 0x63f7, LSB first
    ];

    fn packet_repr() -> Repr {
        Repr {
            vl: 1,
            sl: 3,
            dlid: 0x0009,
            slid: 0x0005,
            pkey: 0x8001,
            dest_qp: 0x000102,
            fecn: false,
        }
    }

    #[test]
    fn deconstruct() {
        let l = lrh::Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!((l.vl(), l.sl(), l.lnh()), (1, 3, Lnh::IbaLocal));
        assert_eq!((l.dlid(), l.slid(), l.pkt_len()), (9, 5, 6));
        assert_eq!(l.pkt_len_bytes(), PACKET_LEN);
        let b = bth::Packet::new_checked(&PACKET_BYTES[8..]).unwrap();
        assert_eq!(b.opcode(), Opcode::IbCnp);
        assert_eq!(b.pkey(), 0x8001);
        assert!(b.becn() && !b.fecn());
        assert_eq!((b.dest_qp(), b.psn()), (0x102, 0));
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 26];
        let mut l = lrh::Packet::new_unchecked(&mut buf[..8]);
        l.set_vl(1);
        l.set_lver(0);
        l.set_sl(3);
        l.set_resv2(0);
        l.set_lnh(Lnh::IbaLocal);
        l.set_dlid(9);
        l.set_resv5(0);
        l.set_pkt_len(PKT_LEN_WORDS);
        l.set_slid(5);
        let mut b = bth::Packet::new_unchecked(&mut buf[8..20]);
        b.set_opcode(Opcode::IbCnp);
        b.set_se(false);
        b.set_migreq(false);
        b.set_pad_cnt(0);
        b.set_tver(0);
        b.set_pkey(0x8001);
        b.set_fecn(false);
        b.set_becn(true);
        b.set_resv6(0);
        b.set_dest_qp(0x102);
        b.set_ack_req(false);
        b.set_resv7(0);
        b.set_psn(0);
        assert_eq!(buf[..20], PACKET_BYTES[..20]);
        assert_eq!(buf[20..], [0xa5; 6]);
    }

    #[test]
    fn parse() {
        assert_eq!(Repr::parse(&PACKET_BYTES), Ok(packet_repr()));
        assert_eq!(Repr::parse(&PACKET_BYTES[..24]), Ok(packet_repr()));
    }

    #[test]
    fn emit() {
        let repr = packet_repr();
        assert_eq!(repr.buffer_len(), 24);
        let mut buf = [0xa5u8; WIRE_LEN];
        repr.emit(&mut buf);
        assert_eq!(buf[..20], PACKET_BYTES[..20]);
        assert_eq!(buf[20..], [0xa5; 6], "ICRC and VCRC are left alone");
        // With the ICRC in place, the VCRC module completes the packet.
        buf[20..24].copy_from_slice(&PACKET_BYTES[20..24]);
        fill_vcrc(&mut buf);
        assert_eq!(buf, PACKET_BYTES);
        assert!(verify_vcrc(&buf));
    }

    #[test]
    fn reply_to_ud_send() {
        // UD SEND Only with FECN from LID 9 (QP 0x102, per its DETH) to LID 5 (QP 0xabcd), SL 3, VL 1.
        let in_lrh = lrh::Repr {
            vl: 1,
            lver: 0,
            sl: 3,
            resv2: 0,
            lnh: Lnh::IbaLocal,
            dlid: 5,
            resv5: 0,
            pkt_len: 300,
            slid: 9,
        };
        let in_bth = bth::Repr {
            opcode: Opcode::UdSendOnly,
            se: false,
            migreq: false,
            pad_cnt: 1,
            tver: 0,
            pkey: 0x8001,
            fecn: true,
            becn: false,
            resv6: 0,
            dest_qp: 0xabcd,
            ack_req: false,
            resv7: 0,
            psn: 77,
        };
        let cnp = Repr::reply_to(&in_lrh, &in_bth, 0x102, 5);
        assert_eq!(cnp, packet_repr());
        let mut buf = [0u8; 24];
        cnp.emit(&mut buf);
        assert_eq!(buf[..20], PACKET_BYTES[..20]);
    }

    fn with_byte(index: usize, value: u8) -> [u8; 26] {
        let mut b = PACKET_BYTES;
        b[index] = value;
        b
    }

    fn bad_field(field: &'static str, value: u32) -> Result<Repr> {
        Err(Error::BadField {
            header: "IB CNP",
            field,
            value,
        })
    }

    #[test]
    fn rejects() {
        assert_eq!(
            Repr::parse(&PACKET_BYTES[..23]),
            Err(Error::Truncated {
                header: "IB CNP",
                need: 24,
                have: 23
            })
        );
        assert_eq!(Repr::parse(&with_byte(8, 0x81)), bad_field("OpCode", 0x81));
        assert_eq!(Repr::parse(&with_byte(1, 0x33)), bad_field("LNH", 3));
        assert_eq!(Repr::parse(&with_byte(0, 0x11)), bad_field("LVer", 1));
        assert_eq!(Repr::parse(&with_byte(1, 0x36)), bad_field("LRH resv2", 1));
        assert_eq!(Repr::parse(&with_byte(4, 0x08)), bad_field("LRH resv5", 1));
        assert_eq!(Repr::parse(&with_byte(5, 0x07)), bad_field("PktLen", 7));
        assert_eq!(Repr::parse(&with_byte(9, 0x80)), bad_field("SE", 1));
        assert_eq!(Repr::parse(&with_byte(9, 0x40)), bad_field("M", 1));
        assert_eq!(Repr::parse(&with_byte(9, 0x10)), bad_field("PadCnt", 1));
        assert_eq!(Repr::parse(&with_byte(9, 0x01)), bad_field("TVer", 1));
        assert_eq!(Repr::parse(&with_byte(12, 0x00)), bad_field("BECN", 0));
        assert_eq!(Repr::parse(&with_byte(12, 0x41)), bad_field("BTH resv6", 1));
        assert_eq!(Repr::parse(&with_byte(16, 0x80)), bad_field("AckReq", 1));
        assert_eq!(Repr::parse(&with_byte(16, 0x01)), bad_field("BTH resv7", 1));
        assert_eq!(Repr::parse(&with_byte(19, 0x01)), bad_field("PSN", 1));
        // A FECN mark on the way back is accepted and kept.
        let marked = Repr::parse(&with_byte(12, 0xc0)).unwrap();
        assert!(marked.fecn);
    }

    fn arb_repr() -> impl Strategy<Value = Repr> {
        (
            0u8..16,
            0u8..16,
            any::<u16>(),
            any::<u16>(),
            any::<u16>(),
            0u32..0x0100_0000,
            any::<bool>(),
        )
            .prop_map(|(vl, sl, dlid, slid, pkey, dest_qp, fecn)| Repr {
                vl,
                sl,
                dlid,
                slid,
                pkey,
                dest_qp,
                fecn,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn parse_emit_round_trip(repr in arb_repr(), crcs in any::<[u8; 6]>()) {
            let mut buf = [0u8; WIRE_LEN];
            buf[20..].copy_from_slice(&crcs);
            repr.emit(&mut buf);
            prop_assert_eq!(&buf[20..], &crcs[..]);
            let parsed = Repr::parse(&buf).unwrap();
            prop_assert_eq!(parsed, repr);
            let mut again = [0xa5u8; WIRE_LEN];
            again[20..].copy_from_slice(&crcs);
            parsed.emit(&mut again);
            prop_assert_eq!(again, buf);
        }

        #[test]
        fn emit_parse_on_arbitrary_bytes(bytes in any::<[u8; 24]>()) {
            match Repr::parse(&bytes) {
                Ok(repr) => {
                    let mut out = bytes;
                    out[..20].fill(0xa5);
                    repr.emit(&mut out);
                    prop_assert_eq!(out, bytes);
                }
                Err(Error::BadField { header, .. }) => prop_assert_eq!(header, "IB CNP"),
                Err(e) => prop_assert!(false, "unexpected {:?}", e),
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            match Repr::parse(&bytes) {
                Ok(_) => prop_assert!(bytes.len() >= PACKET_LEN),
                Err(Error::Truncated { header, need, have }) => {
                    prop_assert_eq!((header, need, have), ("IB CNP", PACKET_LEN, bytes.len()));
                }
                Err(Error::BadField { header, .. }) => prop_assert_eq!(header, "IB CNP"),
            }
        }
    }
}
