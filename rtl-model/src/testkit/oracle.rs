//! Oracles: whether a packet leaving a marking block is what the specification allows, given the packet
//! that came in. Each returns `Ok(())` or the first [`Violation`], named so that a failing property test
//! says what the block got wrong.
//!
//! They read the bytes only, with the header layouts of the IBA (LRH 8 bytes, GRH 40 when LNH = 3, FECN and
//! BECN bits 7 and 6 of BTH byte 4, VCRC the last two bytes, ICRC the four before) and of RoCEv2 over IPv4
//! (Ethernet 14 bytes, the TOS byte's two low bits the ECN field, the header checksum at IP bytes 10-11,
//! updated as RFC 1624 eqn. 3 gives), and check the CRCs with [`crate::crc`].

use std::fmt;

use crate::crc::icrc::{ib_covered, roce_covered, verify_icrc};
use crate::crc::vcrc::verify_vcrc;
use crate::wire::ethernet;

use super::packets::bth_offset;

/// What a marking block got wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// The packet left with another length.
    Length {
        /// Bytes in.
        before: usize,
        /// Bytes out.
        after: usize,
    },
    /// The input is not a packet the oracle applies to (say which); the test's generator is wrong.
    NotApplicable(&'static str),
    /// A byte the block may not change changed.
    Changed {
        /// Offset in the packet.
        at: usize,
        /// Byte in.
        before: u8,
        /// Byte out.
        after: u8,
    },
    /// The bit to set is clear.
    NotSet(&'static str),
    /// The VCRC does not verify over the bytes that left.
    VcrcNotRegenerated,
    /// The ICRC no longer verifies (it was good coming in).
    IcrcBroken,
    /// The IPv4 header checksum is not the incremental update of the old one.
    Checksum {
        /// What RFC 1624 eqn. 3 gives.
        expected: u16,
        /// What left.
        got: u16,
    },
    /// A packet that came with a wrong VCRC left with one that verifies.
    Laundered,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Length { before, after } => {
                write!(f, "length changed from {before} to {after} bytes")
            }
            Violation::NotApplicable(why) => write!(f, "input not applicable: {why}"),
            Violation::Changed { at, before, after } => write!(
                f,
                "byte {at} changed from {before:#04x} to {after:#04x}, which the block may not touch"
            ),
            Violation::NotSet(what) => write!(f, "{what} is not set"),
            Violation::VcrcNotRegenerated => {
                f.write_str("the VCRC does not verify over the rewritten bytes")
            }
            Violation::IcrcBroken => f.write_str("the ICRC no longer verifies"),
            Violation::Checksum { expected, got } => write!(
                f,
                "IPv4 header checksum {got:#06x}, the incremental update (RFC 1624 eqn. 3) is {expected:#06x}"
            ),
            Violation::Laundered => {
                f.write_str("a packet with a bad VCRC left with a VCRC that verifies")
            }
        }
    }
}

impl std::error::Error for Violation {}

/// Bytes of `before` and `after` differ only where `allowed(offset)` says they may.
fn only_changes(
    before: &[u8],
    after: &[u8],
    allowed: impl Fn(usize) -> u8,
) -> Result<(), Violation> {
    if before.len() != after.len() {
        return Err(Violation::Length {
            before: before.len(),
            after: after.len(),
        });
    }
    for (at, (&b, &a)) in before.iter().zip(after).enumerate() {
        if (b ^ a) & !allowed(at) != 0 {
            return Err(Violation::Changed {
                at,
                before: b,
                after: a,
            });
        }
    }
    Ok(())
}

/// The check every rewrite of a good native IB packet shares: only the LRH VL field (when `vl` is given:
/// now that VL), the BTH bits of `set` (now set; named `name`) and the VCRC differ; the VCRC verifies over the
/// new bytes; an ICRC that verified still does (VL, FECN and BECN are masked in it).
fn ib_rewritten(
    before: &[u8],
    after: &[u8],
    vl: Option<u8>,
    set: u8,
    name: &'static str,
) -> Result<(), Violation> {
    let bth =
        bth_offset(before).ok_or(Violation::NotApplicable("not an IBA packet (LNH 2 or 3)"))?;
    if before.len() < bth + 12 + 6 || !verify_vcrc(before) {
        return Err(Violation::NotApplicable(
            "not a whole IB packet with a good VCRC",
        ));
    }
    let n = before.len();
    only_changes(before, after, |at| {
        if at == 0 && vl.is_some() {
            0xF0
        } else if at == bth + 4 {
            set
        } else if at >= n - 2 {
            0xFF
        } else {
            0
        }
    })?;
    if vl.is_some_and(|v| after[0] >> 4 != v & 0x0F) {
        return Err(Violation::NotSet("LRH VL (the output VL)"));
    }
    if after[bth + 4] & set != set {
        return Err(Violation::NotSet(name));
    }
    if !verify_vcrc(after) {
        return Err(Violation::VcrcNotRegenerated);
    }
    let icrc = |p: &[u8]| ib_covered(p).is_ok_and(|(k, c)| verify_icrc(k, c).unwrap_or(false));
    if icrc(before) && !icrc(after) {
        return Err(Violation::IcrcBroken);
    }
    Ok(())
}

/// A native IB packet with a good VCRC left FECN-marked: only BTH FECN differs (now set; it may have been
/// set already), the VCRC is regenerated, and an ICRC that verified still does (FECN is masked in it).
pub fn fecn_marked(before: &[u8], after: &[u8]) -> Result<(), Violation> {
    ib_rewritten(before, after, None, 0x80, "BTH FECN")
}

/// As [`fecn_marked`], for BTH BECN (a CNP's mark on the way back).
pub fn becn_marked(before: &[u8], after: &[u8]) -> Result<(), Violation> {
    ib_rewritten(before, after, None, 0x40, "BTH BECN")
}

/// A native IB packet with a good VCRC forwarded by a switch onto output VL `out_vl`, FECN-marked there if
/// `fecn`: only the LRH VL field (now `out_vl`), BTH FECN (set if `fecn`, as it came otherwise) and the VCRC
/// differ; the VCRC verifies; an ICRC that verified still does (the VL and FECN are masked in it).
pub fn switched(before: &[u8], after: &[u8], out_vl: u8, fecn: bool) -> Result<(), Violation> {
    ib_rewritten(
        before,
        after,
        Some(out_vl),
        if fecn { 0x80 } else { 0 },
        "BTH FECN",
    )
}

/// The packet left byte for byte as it came.
pub fn passed_unchanged(before: &[u8], after: &[u8]) -> Result<(), Violation> {
    only_changes(before, after, |_| 0)
}

/// A native IB packet that came with a VCRC that fails left with one that fails too, every other byte
/// (FECN aside) as it came: the block neither dropped it silently in the stream nor made it look good.
pub fn ended_bad(before: &[u8], after: &[u8]) -> Result<(), Violation> {
    let n = before.len();
    let fecn_at = bth_offset(before).map(|b| b + 4);
    only_changes(before, after, |at| {
        if Some(at) == fecn_at {
            0x80
        } else if at + 2 >= n {
            0xFF
        } else {
            0
        }
    })?;
    if verify_vcrc(after) {
        return Err(Violation::Laundered);
    }
    Ok(())
}

/// RFC 1624 eqn. 3: the new header checksum `~(~HC + ~m + m')` in one's-complement arithmetic.
fn incremental(hc: u16, old: u16, new: u16) -> u16 {
    let add = |a: u16, b: u16| {
        let s = u32::from(a) + u32::from(b);
        ((s & 0xFFFF) + (s >> 16)) as u16
    };
    !add(add(!hc, !old), new)
}

/// A RoCEv2 frame over IPv4 with an ECN-capable codepoint left CE-marked: only the ECN field (now 0b11) and
/// the header checksum differ, the checksum is the incremental update of the old one, and the ICRC still
/// verifies (the TOS byte and the checksum are masked in it).
pub fn ecn_ce_marked(before: &[u8], after: &[u8]) -> Result<(), Violation> {
    let ip = ethernet::HEADER_LEN;
    if before.len() < ip + 20 || before[12..14] != [0x08, 0x00] || before[ip] >> 4 != 4 {
        return Err(Violation::NotApplicable("not an IPv4 frame"));
    }
    if before[ip + 1] & 3 == 0 {
        return Err(Violation::NotApplicable(
            "not ECN-capable (ECN 0b00): it must not be marked",
        ));
    }
    only_changes(before, after, |at| match at.checked_sub(ip) {
        Some(1) => 0x03,
        Some(10 | 11) => 0xFF,
        _ => 0,
    })?;
    if after[ip + 1] & 3 != 3 {
        return Err(Violation::NotSet("IP ECN CE"));
    }
    let word = |b: &[u8], k: usize| u16::from_be_bytes([b[ip + k], b[ip + k + 1]]);
    let expected = incremental(word(before, 10), word(before, 0), word(after, 0));
    let got = word(after, 10);
    if got != expected {
        return Err(Violation::Checksum { expected, got });
    }
    let good = |f: &[u8]| roce_covered(f).is_ok_and(|(k, c)| verify_icrc(k, c).unwrap_or(false));
    if good(before) && !good(after) {
        return Err(Violation::IcrcBroken);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::packets::{ib_packet, malformed_ib_packet, roce_v4_packet, Malformation};
    use super::*;
    use crate::crc::vcrc::fill_vcrc;
    use crate::wire::ipv4;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// The project's own marking operations pass the oracles.
        #[test]
        fn the_models_marking_passes(p in ib_packet()) {
            let bth = bth_offset(&p).unwrap();
            for (bit, oracle) in [(0x80u8, fecn_marked as fn(&[u8], &[u8]) -> Result<(), Violation>), (0x40, becn_marked)] {
                let mut m = p.clone();
                m[bth + 4] |= bit;
                fill_vcrc(&mut m);
                prop_assert_eq!(oracle(&p, &m), Ok(()));
            }
            prop_assert_eq!(passed_unchanged(&p, &p), Ok(()));
        }

        /// And the oracles kill the mutants of marking: a VCRC left stale, another bit set, the ICRC
        /// recomputed over the changed bytes, a byte dropped.
        #[test]
        fn the_oracles_kill_wrong_marking(p in ib_packet(), k in any::<usize>()) {
            let bth = bth_offset(&p).unwrap();
            let mut stale = p.clone();
            stale[bth + 4] |= 0x80;
            if stale != p {
                prop_assert_eq!(fecn_marked(&p, &stale), Err(Violation::VcrcNotRegenerated));
            }
            let mut other = p.clone();
            let at = k % (p.len() - 2);
            other[at] ^= if at == bth + 4 { 0x01 } else { 0x80 };
            other[bth + 4] |= 0x80;
            fill_vcrc(&mut other);
            let r = fecn_marked(&p, &other);
            prop_assert!(matches!(r, Err(Violation::Changed { .. })), "{:?}", r);
            let mut short = p.clone();
            short.pop();
            let r = fecn_marked(&p, &short);
            prop_assert!(matches!(r, Err(Violation::Length { .. })), "{:?}", r);
        }

        /// CE marking by the wire module's incremental update passes; a full recomputation passes too
        /// (they agree on every header whose checksum is not the 0x0000/0xFFFF pair), a stale checksum
        /// does not.
        #[test]
        fn ce_marking_is_checked(f in roce_v4_packet()) {
            let ip = ethernet::HEADER_LEN;
            let mut m = f.clone();
            let capable = f[ip + 1] & 3 != 0;
            ipv4::Packet::new_unchecked(&mut m[ip..]).set_ecn_ce();
            if capable {
                prop_assert_eq!(ecn_ce_marked(&f, &m), Ok(()));
                let mut stale = f.clone();
                stale[ip + 1] |= 3;
                if stale != f {
                    let r = ecn_ce_marked(&f, &stale);
            prop_assert!(matches!(r, Err(Violation::Checksum { .. })), "{:?}", r);
                }
            } else {
                let r = ecn_ce_marked(&f, &m);
            prop_assert!(matches!(r, Err(Violation::NotApplicable(_))), "{:?}", r);
            }
        }

        /// A packet with a bad VCRC passed through unchanged keeps failing; one given a fresh VCRC is laundered.
        #[test]
        fn laundering_is_caught((p, m) in malformed_ib_packet()) {
            if let Malformation::BadVcrc { .. } = m {
                prop_assert_eq!(ended_bad(&p, &p), Ok(()));
                let mut washed = p.clone();
                fill_vcrc(&mut washed);
                prop_assert_eq!(ended_bad(&p, &washed), Err(Violation::Laundered));
            }
        }
    }
}
