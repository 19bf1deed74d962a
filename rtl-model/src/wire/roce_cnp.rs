//! The RoCEv2 Congestion Notification Packet (CNP) as carried in the UDP payload: a BTH with opcode 0x81,
//! 16 reserved zero bytes, then the ICRC.
//!
//! ```text
//! byte 0       OpCode = 0x81 (CNP)
//! byte 1       SE [7], M [6], PadCnt [5:4], TVer [3:0]     all 0 in a CNP
//! bytes 2-3    P_Key                                        (of the flow being notified)
//! byte 4       FECN [7], BECN [6] = 1, resv6 [5:0] = 0      (masked in the ICRC)
//! bytes 5-7    DestQP                                       (the flow sender's QP)
//! byte 8       AckReq [7], resv7 [6:0]                      all 0
//! bytes 9-11   PSN                                          0
//! bytes 12-27  reserved                                     all 0
//! bytes 28-31  ICRC                                         not part of this view: see crate::crc::icrc
//! ```
//!
//! The IP header of a CNP carries a Total Length of 60 (IPv4) and the UDP header a Length of 40
//! ([`UDP_PAYLOAD_LEN`] + 8).
//!
//! Parsing is strict: every bit outside P_Key, FECN, BECN and DestQP must be zero, as CNPs are sent, and a
//! nonzero one is `BadField`. That way `emit(parse(b)) == b` for every accepted `b`, without the `Repr`
//! carrying reserved bytes; a model that wants to accept sloppy CNPs can read the view's getters instead.

use super::bth::{self, Opcode};
use super::{check_len, Error, Result};

/// BTH opcode of a RoCEv2 CNP.
pub const OPCODE_CNP: u8 = 0x81;

/// Bytes of the ICRC that follows the view.
pub const ICRC_LEN: usize = 4;

/// Byte range of the 16 reserved bytes after the BTH.
const RESERVED: core::ops::Range<usize> = bth::HEADER_LEN..bth::HEADER_LEN + 16;

/// Length of the view: BTH (12) and the reserved bytes (16), without the ICRC.
pub const HEADER_LEN: usize = RESERVED.end;

/// Bytes of a CNP after the UDP header, ICRC included.
pub const UDP_PAYLOAD_LEN: usize = HEADER_LEN + ICRC_LEN;

/// A read/write view of a RoCEv2 CNP, from the BTH through the reserved bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without any check; for buffers sized with [`Repr::buffer_len`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after checking that it holds the 28 bytes of BTH and reserved bytes.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the 28 bytes are present; after `Ok` no accessor panics.
    pub fn check_len(&self) -> Result<()> {
        check_len("roce_cnp", self.buffer.as_ref(), HEADER_LEN)
    }

    /// Gives back the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The BTH part of the view.
    pub fn bth(&self) -> bth::Packet<&[u8]> {
        bth::Packet::new_unchecked(&self.buffer.as_ref()[..bth::HEADER_LEN])
    }

    /// The 16 reserved bytes after the BTH.
    pub fn reserved(&self) -> &[u8] {
        &self.buffer.as_ref()[RESERVED]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// The BTH part of the view, writable (FECN/BECN setters touch exactly one bit).
    pub fn bth_mut(&mut self) -> bth::Packet<&mut [u8]> {
        bth::Packet::new_unchecked(&mut self.buffer.as_mut()[..bth::HEADER_LEN])
    }

    /// Zeroes the 16 reserved bytes.
    pub fn clear_reserved(&mut self) {
        self.buffer.as_mut()[RESERVED].fill(0);
    }
}

/// The meaningful fields of a RoCEv2 CNP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// P_Key of the flow (0xffff, the default partition, in practice).
    pub pkey: u16,
    /// The flow sender's QP (24 bits; upper bits are dropped by `emit`).
    pub dest_qp: u32,
    /// FECN: 0 as sent; kept because a switch could set it (it is masked in the ICRC).
    pub fecn: bool,
    /// BECN: 1 as sent by every CNP generator; kept, not enforced, since a 0 is harmless to the ICRC and the
    /// receiver's reaction is the CC algorithm's business.
    pub becn: bool,
}

impl Repr {
    /// Reads a CNP from the bytes starting at its BTH. `BadField` if the OpCode is not 0x81, or if any bit
    /// that a CNP holds as zero is set (field names: `se_m_pad_tver`, `resv6`, `ackreq_resv7`, `psn`,
    /// `reserved`; for `reserved` the value is the first nonzero byte).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&T>) -> Result<Repr> {
        packet.check_len()?;
        let bad = |field, value: u32| Error::BadField {
            header: "roce_cnp",
            field,
            value,
        };
        let b = bth::Repr::parse(&packet.bth())?;
        if b.opcode != Opcode::RoceCnp {
            return Err(bad("opcode", u32::from(u8::from(b.opcode))));
        }
        let byte1 = packet.bth().into_inner()[1];
        if byte1 != 0 {
            return Err(bad("se_m_pad_tver", u32::from(byte1)));
        }
        if b.resv6 != 0 {
            return Err(bad("resv6", u32::from(b.resv6)));
        }
        let byte8 = packet.bth().into_inner()[8];
        if byte8 != 0 {
            return Err(bad("ackreq_resv7", u32::from(byte8)));
        }
        if b.psn != 0 {
            return Err(bad("psn", b.psn));
        }
        if let Some(&r) = packet.reserved().iter().find(|&&r| r != 0) {
            return Err(bad("reserved", u32::from(r)));
        }
        Ok(Repr {
            pkey: b.pkey,
            dest_qp: b.dest_qp,
            fecn: b.fecn,
            becn: b.becn,
        })
    }

    /// The BTH of this CNP: opcode 0x81, everything a CNP holds as zero zero.
    pub fn bth_repr(&self) -> bth::Repr {
        bth::Repr::cnp(
            Opcode::RoceCnp,
            self.pkey,
            self.dest_qp,
            self.fecn,
            self.becn,
        )
    }

    /// Bytes the view takes (28); the 4-byte ICRC follows and is written by `crate::crc::icrc::fill_icrc`
    /// once the IP and UDP headers are in place (it covers them).
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the BTH and the 16 zero bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        self.bth_repr().emit(&mut packet.bth_mut());
        packet.clear_reserved();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // The UDP payload of a RoCEv2 CNP captured on a ConnectX-4 Lx (secdev/scapy test/contrib/roce.uts, "RoCE
    // CNP captured on ConnectX-4 Lx"): BTH 81 00 ffff 40 000118 00 000000, 16 zero bytes, ICRC 82 fd 00 2a.
    static CNP_BYTES: [u8; 32] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, // BTH
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // reserved
        0x82, 0xfd, 0x00, 0x2a, // ICRC
    ];

    // The CNP of NVIDIA/Mellanox's "RoCEv2 CNP Packet Format Example" knowledge article (as copied at
    // https://cnblogs.com/ztguang/p/15201924.html): "81 00 ff ff 40 00 00 d2" then zeros, ICRC e4 2d ad 81.
    static ARTICLE_BYTES: [u8; 32] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x00, 0xd2, 0x00, 0x00, 0x00, 0x00, //
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, //
        0xe4, 0x2d, 0xad, 0x81,
    ];

    fn repr() -> Repr {
        Repr {
            pkey: 0xffff,
            dest_qp: 0x118,
            fecn: false,
            becn: true,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&CNP_BYTES[..]).unwrap();
        let b = p.bth();
        assert_eq!(u8::from(b.opcode()), OPCODE_CNP);
        assert!(!b.se() && !b.migreq() && b.pad_cnt() == 0 && b.tver() == 0);
        assert_eq!(b.pkey(), 0xffff);
        assert!(!b.fecn());
        assert!(b.becn());
        assert_eq!(b.resv6(), 0);
        assert_eq!(b.dest_qp(), 0x118);
        assert!(!b.ack_req());
        assert_eq!(b.resv7(), 0);
        assert_eq!(b.psn(), 0);
        assert_eq!(p.reserved(), &[0u8; 16]);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 28];
        let mut p = Packet::new_unchecked(&mut buf[..]);
        p.clear_reserved();
        let mut b = p.bth_mut();
        b.set_opcode(Opcode::RoceCnp);
        b.set_se(false);
        b.set_migreq(false);
        b.set_pad_cnt(0);
        b.set_tver(0);
        b.set_pkey(0xffff);
        b.set_fecn(false);
        b.set_becn(true);
        b.set_resv6(0);
        b.set_dest_qp(0x118);
        b.set_ack_req(false);
        b.set_resv7(0);
        b.set_psn(0);
        assert_eq!(buf, CNP_BYTES[..28]);
    }

    #[test]
    fn parse() {
        let p = Packet::new_checked(&CNP_BYTES[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), repr());
        let p = Packet::new_checked(&ARTICLE_BYTES[..]).unwrap();
        assert_eq!(
            Repr::parse(&p).unwrap(),
            Repr {
                dest_qp: 0xd2,
                ..repr()
            }
        );
    }

    #[test]
    fn emit() {
        let mut buf = [0xa5u8; 32];
        repr().emit(&mut Packet::new_unchecked(&mut buf[..]));
        assert_eq!(buf[..28], CNP_BYTES[..28]);
        assert_eq!(buf[28..], [0xa5; 4], "the ICRC is not written by emit");
    }

    #[test]
    fn strict_fields() {
        let cases: [(usize, u8, &str); 8] = [
            (0, 0x80, "opcode"),
            (1, 0x01, "se_m_pad_tver"),
            (1, 0x30, "se_m_pad_tver"),
            (4, 0x41, "resv6"),
            (8, 0x80, "ackreq_resv7"),
            (11, 0x01, "psn"),
            (12, 0x07, "reserved"),
            (27, 0x01, "reserved"),
        ];
        for (at, value, name) in cases {
            let mut b = CNP_BYTES;
            b[at] = value;
            let err = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap_err();
            assert!(
                matches!(err, Error::BadField { header: "roce_cnp", field, .. } if field == name),
                "byte {at} = {value:#x}: {err:?}"
            );
        }
        assert!(matches!(
            Packet::new_checked(&CNP_BYTES[..27]),
            Err(Error::Truncated { need: 28, .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// Round trip over every valid CNP: random P_Key, DestQP, FECN, BECN; everything else as a CNP holds it.
        #[test]
        fn emit_parse_round_trip(b in proptest::array::uniform28(any::<u8>())) {
            let mut b = b;
            b[0] = OPCODE_CNP;
            b[1] = 0;
            b[4] &= 0xc0;
            b[8..].fill(0);
            let r = Repr::parse(&Packet::new_checked(&b[..]).unwrap()).unwrap();
            let mut out = [0xa5u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut out[..]));
            prop_assert_eq!(out, b);
        }

        /// Any bytes: no panic, a typed error, and whatever is accepted round-trips.
        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..96), valid_start in any::<bool>()) {
            let mut b = b;
            if valid_start && !b.is_empty() {
                b[0] = OPCODE_CNP;
            }
            match Packet::new_checked(&b[..]) {
                Ok(p) => match Repr::parse(&p) {
                    Ok(r) => {
                        let mut out = [0xa5u8; HEADER_LEN];
                        r.emit(&mut Packet::new_unchecked(&mut out[..]));
                        prop_assert_eq!(&out[..], &b[..HEADER_LEN]);
                    }
                    Err(e) => prop_assert!(matches!(e, Error::BadField { .. }), "{:?}", e),
                },
                Err(e) => prop_assert!(matches!(e, Error::Truncated { .. }) && b.len() < HEADER_LEN, "{:?}", e),
            }
        }
    }
}
