//! RoCEv2 mode: Priority Flow Control instead of credits (seed 001, section III), and the helpers that mark
//! ECN CE on real frame bytes.
//!
//! A PFC port keeps the same per-VL input buffer model as an IB port (`credit_rx` counts its blocks; its
//! flow-control packets are not sent), with priority = VL (at most 8). When a priority's buffer use reaches
//! XOFF the port sends a pause frame with a large quanta; when it falls to XON it sends a pause of 0 (resume),
//! as in the seed's model. The upstream transmitter starts no packet of a paused priority until the pause
//! expires or is lifted; a packet already started finishes.
//!
//! Designer choices, named:
//! - XOFF = buffer - headroom. The headroom is configured, or computed from the link rate and the one-way
//!   link delay ([`headroom_blocks`]): after the buffer reaches XOFF, data keeps arriving while the pause frame
//!   waits for the wire (up to one MTU packet) and is sent (64 bytes), travels (`delay`), takes effect (one
//!   cycle), while the bytes already on the wire arrive (`delay`), and the packet the sender had just started
//!   completes (one MTU packet): `2 MTU + 64 + (2 delay + 2) x rate` bytes, plus one block for rounding.
//! - Pause frames occupy the wire (64 bytes), start on a cycle boundary and go before waiting data; one per
//!   cycle per port. At the transmitter an XOFF stops packet starts from the cycle it arrives; a resume frees
//!   them from the next cycle. A packet already started finishes.
//! - An XOFF is refreshed when half its duration has passed and the buffer is still above XON.
//! - RCM-1a root/victim: a priority counts as without credit while it is paused and for
//!   [`PfcConfig::victim_hold`] cycles after ([`PfcConfig::victim_hold`] documents why).

use crate::wire::pfc;
use serde::{Deserialize, Serialize};

use super::rate::LinkRate;
use super::ConfigError;

/// Bytes of a pause frame on the wire (a minimum Ethernet frame).
pub const PAUSE_FRAME_BYTES: u64 = 64;
/// Most priorities (VLs) of a PFC port.
pub const PRIORITIES: u8 = 8;
/// Bytes per pause quantum (512 bit times).
pub const QUANTUM_BYTES: u64 = 64;

/// PFC settings of a port (the same for each of its priorities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PfcConfig {
    /// One-way delay of the attached link in cycles, for the computed headroom.
    pub link_delay: u32,
    /// Headroom in blocks; `None` computes it from `link_delay` ([`headroom_blocks`]).
    pub headroom_blocks: Option<u16>,
    /// XON (resume) level in blocks used; `None` is half of XOFF.
    pub xon_blocks: Option<u16>,
    /// Quanta of an XOFF frame.
    pub pause_quanta: u16,
    /// RCM-1a: cycles after a pause ends during which the priority still counts as without credit (a
    /// victim). A paused priority sends nothing, so with 0 a victim never has a packet to mark; the hold
    /// stands for the credit a PFC port does not know, as the downstream buffer stays near XOFF.
    pub victim_hold: u32,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            link_delay: 20,
            headroom_blocks: None,
            xon_blocks: None,
            pause_quanta: 0xFFFF,
            victim_hold: 0,
        }
    }
}

/// XOFF / XON levels of one priority's buffer, in blocks used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watermarks {
    /// Pause when the buffer use reaches this.
    pub xoff: u16,
    /// Resume when it falls to this.
    pub xon: u16,
}

/// Headroom in blocks for a link of `rate` and one-way `delay` cycles with packets of up to `mtu_blocks`.
pub fn headroom_blocks(rate: LinkRate, delay: u32, mtu_blocks: u16) -> u64 {
    let in_flight =
        ((2 * u64::from(delay) + 2) * u64::from(rate.num)).div_ceil(u64::from(rate.den));
    let bytes = 2 * u64::from(mtu_blocks) * 64 + PAUSE_FRAME_BYTES + in_flight;
    bytes.div_ceil(64) + 1
}

impl PfcConfig {
    /// The watermarks for a buffer of `buf_blocks`; errors name `setting`.
    pub fn watermarks(
        &self,
        buf_blocks: u16,
        rate: LinkRate,
        mtu_blocks: u16,
        setting: &str,
    ) -> Result<Watermarks, ConfigError> {
        let head = self.headroom_blocks.map_or_else(
            || headroom_blocks(rate, self.link_delay, mtu_blocks),
            u64::from,
        );
        if head >= u64::from(buf_blocks) {
            return Err(ConfigError::new(
                format!("{setting}.headroom_blocks"),
                head,
                format!(
                    "the headroom leaves no room below XOFF in the {buf_blocks}-block VL buffer{}",
                    if self.headroom_blocks.is_none() {
                        format!(" (computed for a link delay of {} cycles)", self.link_delay)
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        let xoff = buf_blocks - head as u16;
        let xon = self.xon_blocks.unwrap_or(xoff / 2);
        if xon >= xoff {
            return Err(ConfigError::new(
                format!("{setting}.xon_blocks"),
                xon,
                format!("XON must be below XOFF ({xoff} blocks)"),
            ));
        }
        if self.pause_quanta == 0 {
            return Err(ConfigError::new(
                format!("{setting}.pause_quanta"),
                0,
                "an XOFF of 0 quanta pauses nothing",
            ));
        }
        Ok(Watermarks { xoff, xon })
    }
}

/// Cycles a pause of `quanta` lasts on a link of `rate` (rounded up).
pub fn pause_cycles(rate: LinkRate, quanta: u16) -> u64 {
    (u64::from(quanta) * QUANTUM_BYTES * u64::from(rate.den)).div_ceil(u64::from(rate.num))
}

/// A pause frame for one priority.
pub fn frame(priority: u8, quanta: u16) -> pfc::Repr {
    let mut q = [0u16; 8];
    q[usize::from(priority & 7)] = quanta;
    pfc::Repr {
        class_enable: 1 << (priority & 7),
        quanta: q,
    }
}

/// The receiver side of one priority: decides when to send XOFF, refreshes and XON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PfcRx {
    /// An XOFF is in force (sent and not lifted).
    pub paused: bool,
    /// Cycle at which a standing XOFF is refreshed.
    pub refresh_at: u64,
}

impl PfcRx {
    /// Given the buffer use after cycle `t`, the quanta of a frame to send, if any.
    pub fn update(
        &mut self,
        used: u16,
        wm: Watermarks,
        quanta: u16,
        half: u64,
        t: u64,
    ) -> Option<u16> {
        if !self.paused && used >= wm.xoff {
            self.paused = true;
            self.refresh_at = t + half.max(1);
            Some(quanta)
        } else if self.paused && used <= wm.xon {
            self.paused = false;
            Some(0)
        } else if self.paused && t >= self.refresh_at {
            self.refresh_at = t + half.max(1);
            Some(quanta)
        } else {
            None
        }
    }

    /// Next cycle at which [`PfcRx::update`] can act with the buffer unchanged.
    pub fn next_event(&self) -> Option<u64> {
        self.paused.then_some(self.refresh_at)
    }
}

/// Marks a RoCEv2-over-IPv4 frame (Ethernet header first) Congestion Experienced if its ECN field is ECT,
/// updating the IPv4 header checksum (the ICRC masks both). Returns whether it marked. Frames that are not
/// IPv4, or not ECN-capable, are left alone.
pub fn mark_ce_ipv4(frame: &mut [u8]) -> crate::wire::Result<bool> {
    use crate::wire::{ethernet, ipv4};
    let eth = ethernet::Packet::new_checked(&*frame)?;
    if eth.ethertype() != ethernet::EtherType::Ipv4 {
        return Ok(false);
    }
    let mut ip = ipv4::Packet::new_checked(&mut frame[ethernet::HEADER_LEN..])?;
    if !ip.ecn().is_ect() {
        return Ok(false);
    }
    ip.set_ecn_ce();
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crc::icrc::{roce_covered, verify_icrc};
    use crate::wire::builder::{ExtHeader, IpHeader, Payload, RocePacket, Transport};
    use crate::wire::{bth, ethernet, ipv4};

    #[test]
    fn headroom_and_watermarks() {
        let r = LinkRate::new(8, 1).unwrap();
        // 2 x 66 x 64 + 64 + (2 x 50 + 2) x 8 = 8448 + 64 + 816 = 9328 bytes: 146 blocks, plus 1.
        assert_eq!(headroom_blocks(r, 50, 66), 147);
        let c = PfcConfig {
            link_delay: 50,
            ..PfcConfig::default()
        };
        assert_eq!(
            c.watermarks(300, r, 66, "p").unwrap(),
            Watermarks { xoff: 153, xon: 76 }
        );
        let e = c
            .watermarks(147, r, 66, "ports[2].pfc")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("ports[2].pfc.headroom_blocks = 147: the headroom leaves no room"),
            "{e}"
        );
        let c = PfcConfig {
            headroom_blocks: Some(100),
            xon_blocks: Some(100),
            ..PfcConfig::default()
        };
        assert!(c
            .watermarks(200, r, 66, "p")
            .unwrap_err()
            .to_string()
            .starts_with("p.xon_blocks = 100"));
        assert_eq!(pause_cycles(r, 0xFFFF), 0xFFFF * 8);
        assert_eq!(pause_cycles(LinkRate::new(3, 1).unwrap(), 1), 22);
    }

    #[test]
    fn rx_hysteresis_and_refresh() {
        let wm = Watermarks { xoff: 10, xon: 4 };
        let mut rx = PfcRx::default();
        assert_eq!(rx.update(9, wm, 500, 100, 0), None);
        assert_eq!(rx.update(10, wm, 500, 100, 1), Some(500));
        assert_eq!(rx.update(12, wm, 500, 100, 2), None);
        assert_eq!(
            rx.update(5, wm, 500, 100, 3),
            None,
            "between XON and XOFF: stays paused"
        );
        assert_eq!(rx.next_event(), Some(101));
        assert_eq!(rx.update(7, wm, 500, 100, 101), Some(500), "refresh");
        assert_eq!(rx.update(4, wm, 500, 100, 102), Some(0));
        assert_eq!(rx.next_event(), None);
    }

    #[test]
    fn ce_marking_updates_the_checksum_and_keeps_the_icrc() {
        let ip = ipv4::Repr {
            src_addr: [10, 0, 0, 1],
            dst_addr: [10, 0, 0, 2],
            protocol: ipv4::IpProtocol::Udp,
            payload_len: 0,
            ttl: 64,
            dscp: 26,
            ecn: ipv4::Ecn::Ect0,
            ident: 7,
            dont_frag: true,
            more_frags: false,
            frag_offset: 0,
        };
        let pkt = RocePacket {
            eth: ethernet::Repr {
                src_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 1]),
                dst_addr: ethernet::MacAddr([2, 0, 0, 0, 0, 2]),
                ethertype: ethernet::EtherType::Ipv4,
            },
            ip: IpHeader::V4(ip),
            udp_src_port: 0xC000,
            transport: Transport {
                bth: bth::Repr {
                    opcode: bth::Opcode::RcSendOnly,
                    se: false,
                    migreq: false,
                    pad_cnt: 0,
                    tver: 0,
                    pkey: 0xFFFF,
                    fecn: false,
                    becn: false,
                    resv6: 0,
                    dest_qp: 5,
                    ack_req: false,
                    resv7: 0,
                    psn: 1,
                },
                ext: ExtHeader::None,
                payload: Payload::Pattern { len: 100, seed: 3 },
            },
        };
        let mut f = pkt.to_vec().unwrap();
        assert!(mark_ce_ipv4(&mut f).unwrap());
        let v = ipv4::Packet::new_checked(&f[ethernet::HEADER_LEN..]).unwrap();
        assert_eq!(v.ecn(), ipv4::Ecn::Ce);
        assert!(v.verify_checksum());
        let (kind, covered) = roce_covered(&f).unwrap();
        assert!(verify_icrc(kind, covered).unwrap());
        // Not ECN-capable: untouched.
        let mut ip2 = ip;
        ip2.ecn = ipv4::Ecn::NotEct;
        let mut g = RocePacket {
            ip: IpHeader::V4(ip2),
            ..pkt
        }
        .to_vec()
        .unwrap();
        let before = g.clone();
        assert!(!mark_ce_ipv4(&mut g).unwrap());
        assert_eq!(g, before);
    }
}
