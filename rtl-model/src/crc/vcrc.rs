//! VCRC, the per-hop 16-bit CRC at the end of every InfiniBand packet, and LPCRC, the CRC of a link
//! flow-control packet.
//!
//! VCRC covers the packet from the first byte of the LRH through the last byte of the ICRC (the reference marks
//! this coverage unverified; it is what "variant" means: every field, including the ones a switch rewrites).
//! A switch that changes VL or sets FECN must recompute it, so it is computed per hop; the ICRC is not.
//!
//! Algorithm: CRC-16, generator polynomial 0x100B, reflected in and out (table constant 0xD008, as in Endace's
//! `dagcrc_make_infiniband_vcrc_table_r`), initial register 0xFFFF, final XOR 0xFFFF. The `crc` crate expresses
//! it as [`VCRC_ALGORITHM`]: `width: 16, poly: 0x100B, init: 0xFFFF, refin: true, refout: true,
//! xorout: 0xFFFF, check: 0x0A3D, residue: 0x556F`. The crate computes with `width`, `poly`, `init`, `refin`,
//! `refout` and `xorout` only; `check` and `residue` are documentation, and the tests recompute both
//! ("123456789" gives 0x0A3D; a packet with its VCRC appended least significant byte first leaves 0x556F in the
//! register before the final XOR).
//!
//! # Byte order on the wire ([`VCRC_BYTE_ORDER`])
//! No public source found states it. Evidence weighed:
//! - Wireshark's `packet-infiniband.c` shows the VCRC (and the ICRC, and the flow-control LPCRC) with
//!   `ENC_BIG_ENDIAN` and never checks them, so its display says nothing about the wire: it shows the ICRC
//!   big-endian too, yet Linux rxe stores the ICRC least significant byte first (`*icrcp = ~crc` of
//!   `crc32_le`, on little-endian hosts) and interoperates with hardware RoCE NICs.
//! - Endace's `dagcrc.c` computes the VCRC the same way it computes the Ethernet FCS (reflected table, LSB of
//!   each byte first), and a reflected CRC's register is shifted out least significant bit first, which puts
//!   the low byte first, as Ethernet's FCS and IB's own ICRC do.
//!
//! The model therefore stores VCRC and LPCRC least significant byte first. The choice is one named constant;
//! [`CrcByteOrder::to_bytes`] / [`CrcByteOrder::from_bytes`] are the only places that apply it, and a test pins
//! the bytes of a whole CNP. Wireshark will display the two bytes swapped relative to [`vcrc`]'s value.
//!
//! LPCRC uses the same algorithm and byte order (the reference assumes so, unverified; Wireshark does not
//! check it). Both are named separately so either can change alone.

use crc::{Algorithm, Crc, Digest, Table};

/// Length in bytes of a VCRC or LPCRC field.
pub const VCRC_LEN: usize = 2;

/// The VCRC as a `crc` crate algorithm (see the module documentation for the meaning of every field).
pub const VCRC_ALGORITHM: Algorithm<u16> = Algorithm {
    width: 16,
    poly: 0x100B,
    init: 0xFFFF,
    refin: true,
    refout: true,
    xorout: 0xFFFF,
    check: 0x0A3D,
    residue: 0x556F,
};

/// The LPCRC algorithm: assumed equal to the VCRC (unverified in any public source).
pub const LPCRC_ALGORITHM: Algorithm<u16> = VCRC_ALGORITHM;

/// One table, built at compile time and shared; building a `Crc` per call would rebuild the table each time.
static VCRC_CRC: Crc<u16> = Crc::<u16>::new(&VCRC_ALGORITHM);
/// The same CRC, slice-by-16 (8 KB of tables): whole packets (the co-simulation's stimulus computes one per
/// packet) take a fraction of the byte-by-byte time. [`vcrc_digest`] keeps the byte table, as its type is
/// public.
static VCRC_CRC_WIDE: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&VCRC_ALGORITHM);
static LPCRC_CRC: Crc<u16> = Crc::<u16>::new(&LPCRC_ALGORITHM);

/// Order of the two bytes of a 16-bit link CRC in the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CrcByteOrder {
    /// Least significant byte at the lower address (first on the wire).
    LsbFirst,
    /// Most significant byte at the lower address.
    MsbFirst,
}

impl CrcByteOrder {
    /// The two wire bytes of `crc`.
    pub const fn to_bytes(self, crc: u16) -> [u8; 2] {
        match self {
            CrcByteOrder::LsbFirst => crc.to_le_bytes(),
            CrcByteOrder::MsbFirst => crc.to_be_bytes(),
        }
    }

    /// The CRC value held in two wire bytes.
    pub const fn from_bytes(self, bytes: [u8; 2]) -> u16 {
        match self {
            CrcByteOrder::LsbFirst => u16::from_le_bytes(bytes),
            CrcByteOrder::MsbFirst => u16::from_be_bytes(bytes),
        }
    }
}

/// Byte order of the VCRC on the wire (choice and evidence in the module documentation).
pub const VCRC_BYTE_ORDER: CrcByteOrder = CrcByteOrder::LsbFirst;

/// Byte order of the LPCRC on the wire: assumed to follow the VCRC.
pub const LPCRC_BYTE_ORDER: CrcByteOrder = VCRC_BYTE_ORDER;

/// VCRC of `bytes`, which run from the first byte of the LRH through the last byte of the ICRC.
pub fn vcrc(bytes: &[u8]) -> u16 {
    VCRC_CRC_WIDE.checksum(bytes)
}

/// A running VCRC, for callers that feed a packet in pieces (header bytes, then a generated payload) without
/// assembling it in one buffer. `finalize()` gives what [`vcrc`] gives over the concatenation.
pub fn vcrc_digest() -> Digest<'static, u16> {
    VCRC_CRC.digest()
}

/// Writes the VCRC into the last [`VCRC_LEN`] bytes of a whole IB packet (LRH .. ICRC, then VCRC), computed over
/// everything before them. A buffer shorter than [`VCRC_LEN`] has no VCRC field and is left unchanged.
pub fn fill_vcrc(packet: &mut [u8]) {
    let Some(body_len) = packet.len().checked_sub(VCRC_LEN) else {
        return;
    };
    let (body, field) = packet.split_at_mut(body_len);
    field.copy_from_slice(&VCRC_BYTE_ORDER.to_bytes(vcrc(body)));
}

/// Whether the last [`VCRC_LEN`] bytes of a whole IB packet hold the VCRC of everything before them. A buffer
/// shorter than [`VCRC_LEN`] has no VCRC and does not verify.
pub fn verify_vcrc(packet: &[u8]) -> bool {
    match packet.len().checked_sub(VCRC_LEN) {
        Some(body_len) => {
            let (body, field) = packet.split_at(body_len);
            VCRC_BYTE_ORDER.from_bytes([field[0], field[1]]) == vcrc(body)
        }
        None => false,
    }
}

/// LPCRC of `bytes`, the first four bytes of a link flow-control packet (Op, FCTBS, VL, FCCL).
pub fn lpcrc(bytes: &[u8]) -> u16 {
    LPCRC_CRC.checksum(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bit-serial reference written from the definition (reflected register, feedback 0xD008 = 0x100B
    /// bit-reversed), independent of the `crc` crate's tables.
    fn bitwise(data: &[u8], xorout: u16) -> u16 {
        let mut reg: u16 = 0xFFFF;
        for &byte in data {
            for bit in 0..8 {
                let feedback = (reg ^ u16::from(byte >> bit)) & 1;
                reg >>= 1;
                if feedback == 1 {
                    reg ^= 0xD008;
                }
            }
        }
        reg ^ xorout
    }

    /// An IB CNP (hfi1 layout) with ICRC computed by the reference rule, then its VCRC, least significant
    /// byte first. Worked out by an independent script from the layout in reference/ib-wire-and-cc.md.
    static CNP_WITH_VCRC: [u8; 26] = [
        0x10, 0x32, 0x00, 0x09, 0x00, 0x06, 0x00, 0x05, // LRH
        0x80, 0x00, 0x80, 0x01, 0x40, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, // BTH
        0xcb, 0xdc, 0x99, 0xb2, // ICRC
        0xf7, 0x63, // VCRC 0x63f7, LSB first
    ];

    #[test]
    fn check_value() {
        assert_eq!(vcrc(b"123456789"), 0x0A3D);
        assert_eq!(bitwise(b"123456789", 0xFFFF), 0x0A3D);
        assert_eq!(lpcrc(b"123456789"), 0x0A3D);
    }

    #[test]
    fn residue_matches_lsb_first_storage() {
        // Running the register over a packet and its LSB-first VCRC, without the final XOR, ends in the
        // algorithm's residue: LSB-first storage is the one consistent with a reflected CRC.
        assert_eq!(bitwise(&CNP_WITH_VCRC, 0), VCRC_ALGORITHM.residue);
    }

    #[test]
    fn fixed_cnp_vector() {
        assert_eq!(vcrc(&CNP_WITH_VCRC[..24]), 0x63f7);
        assert!(verify_vcrc(&CNP_WITH_VCRC));
        let mut buf = CNP_WITH_VCRC;
        buf[24] = 0xa5;
        buf[25] = 0xa5;
        fill_vcrc(&mut buf);
        assert_eq!(buf, CNP_WITH_VCRC);
    }

    #[test]
    fn byte_order_helpers() {
        assert_eq!(CrcByteOrder::LsbFirst.to_bytes(0x1234), [0x34, 0x12]);
        assert_eq!(CrcByteOrder::MsbFirst.to_bytes(0x1234), [0x12, 0x34]);
        assert_eq!(CrcByteOrder::LsbFirst.from_bytes([0x34, 0x12]), 0x1234);
        assert_eq!(CrcByteOrder::MsbFirst.from_bytes([0x12, 0x34]), 0x1234);
    }

    #[test]
    fn digest_equals_one_shot() {
        let mut d = vcrc_digest();
        d.update(&CNP_WITH_VCRC[..10]);
        d.update(&CNP_WITH_VCRC[10..24]);
        assert_eq!(d.finalize(), 0x63f7);
    }

    #[test]
    fn short_buffers() {
        assert!(!verify_vcrc(&[]));
        assert!(!verify_vcrc(&[0x00]));
        let mut one = [0x5a];
        fill_vcrc(&mut one);
        assert_eq!(one, [0x5a]);
        // Two bytes: the VCRC of nothing is 0xFFFF ^ 0xFFFF = 0.
        let mut two = [0xa5, 0xa5];
        fill_vcrc(&mut two);
        assert_eq!(two, [0x00, 0x00]);
        assert!(verify_vcrc(&two));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn table_matches_bitwise(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            prop_assert_eq!(vcrc(&data), bitwise(&data, 0xFFFF));
        }

        #[test]
        fn fill_then_verify_and_single_bit_flip(
            data in proptest::collection::vec(any::<u8>(), 2..300),
            flip in any::<prop::sample::Index>(),
        ) {
            let mut pkt = data.clone();
            fill_vcrc(&mut pkt);
            prop_assert!(verify_vcrc(&pkt));
            let bit = flip.index(pkt.len() * 8);
            pkt[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(!verify_vcrc(&pkt));
        }
    }
}
