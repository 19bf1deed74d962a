//! The rate-controller interface the HCA calls per flow, and the controllers behind it.
//!
//! Contract:
//! - Calls come in non-decreasing time. `advance(now)` applies every timer expiry due at or before `now`;
//!   events at `now` ([`RateController::on_feedback`], [`RateController::on_sent`]) are applied after the
//!   expiries due at `now` (an expiry was due first; the CCT shaper block orders them the same way).
//! - [`RateController::next_send`] is the earliest cycle at which the flow may *start* its next packet. The
//!   rate-based controllers and the CCT fix it when a packet is reported sent (a rate change applies from the
//!   next packet on, as a hardware rate limiter loads its delay counter once per packet); RCM evaluates its
//!   level when asked (the paper: "after receiving a CNP, the subsequent data packet won't be scheduled
//!   until..."), so the HCA asks again after delivering feedback or timer expiries. The HCA's port still
//!   serialises at the link rate and obeys credits; the controller only gates.
//! - Nothing here panics on any input sequence; configuration errors are [`crate::CcError`]s.
//!
//! Units: see [`crate::units`]. Controllers with a rate report it in bit/s through
//! [`RateController::rate_bps`]; the CCT and RCM controllers are delay-based and report the rate their current
//! delay leaves for full-MTU packets.

pub mod cct;
pub mod dcqcn;

pub mod fixed;
pub mod flow;
pub mod pacer;
pub mod rcm;
pub mod rrcc;

use crate::units::{Bps, Cycle};

/// Congestion feedback that reached the sender of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// A congestion notification: an IB CNP (0x80), a RoCEv2 CNP (0x81), or a receiver-driven CNP with or
    /// without BECN. (The HCA sends no ACKs, so no BECN arrives on one.)
    Cnp(CnpInfo),
}

/// What a CNP carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CnpInfo {
    /// BECN set. IB CNPs and RoCEv2 CNPs always have it; the receiver-driven CC also sends CNPs without it.
    pub becn: bool,
    /// The receive rate a receiver-driven CNP piggybacks (bit/s); `None` for every other CNP.
    pub receive_rate: Option<Bps>,
}

impl CnpInfo {
    /// A plain CNP (BECN set, no rate): what IB and RoCEv2 notification points send.
    pub const BECN: CnpInfo = CnpInfo {
        becn: true,
        receive_rate: None,
    };
}

/// A packet of the flow that went out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// The cycle its first byte was on the wire.
    pub start: Cycle,
    /// The last cycle it occupied the wire (inclusive): `start + wire cycles - 1`.
    pub end: Cycle,
    /// Bytes on the wire (headers, payload, CRCs).
    pub bytes: u32,
}

/// The per-flow congestion-control state machine the HCA consults.
pub trait RateController {
    /// Feedback for this flow arrived at `now`.
    fn on_feedback(&mut self, now: Cycle, fb: Feedback);
    /// A packet of this flow was sent; reported at (or after) `sent.end`, before any later event.
    fn on_sent(&mut self, sent: Sent);
    /// Time moved on to `now`: apply the timer expiries due at or before it.
    fn advance(&mut self, now: Cycle);
    /// The earliest cycle at which the next packet may start.
    fn next_send(&mut self) -> Cycle;
    /// The next cycle at which a timer of the controller expires, or `None` when no timer runs (lets the
    /// HCA skip idle time).
    fn next_timer(&self) -> Option<Cycle>;
    /// The current rate limit in bit/s (for statistics; the gate is [`RateController::next_send`]).
    fn rate_bps(&self) -> Bps;
    /// The first cycle a flow refused at `next_send` (what [`RateController::next_send`] just gave) must ask
    /// again; until then it may sleep. Exact because [`RateController::advance`] gives the same state
    /// whenever it is called, feedback reaches the controller only in a step of its HCA, and between sends
    /// the send time moves only where a controller says so here. By default it never moves (the CCT's
    /// injection delay is loaded on a send and counts down one per cycle, BECNs and CCTI timer ticks change
    /// the CCTI, not the running delay; DCQCN's and RR-CC's pacers are set on a send and rate changes apply
    /// to the next spacing).
    fn wake_for_send(&self, next_send: Cycle) -> Cycle {
        next_send
    }
    /// The cycle [`RateController::next_send`] will give once `sent`, the packet just sent, has been
    /// reported ([`RateController::on_sent`] at `sent.end`) with no feedback before, if that is known now
    /// without changing the state (then already through [`RateController::wake_for_send`]); `None` when it
    /// is not (the default: ask at `sent.end`). Lets an HCA sleep from one send to the next instead of waking
    /// at the send's end only to report it.
    fn send_after(&self, _sent: &Sent) -> Option<Cycle> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::cct::{CctController, CctParams, CctSettings};
    use super::dcqcn::{DcqcnConfig, DcqcnController};
    use super::rcm::{RcmConfig, RcmController, RecoveryCombine};
    use super::rrcc::{RrccSender, RrccSenderConfig};
    use super::*;
    use crate::units::{CoreClock, LinkRate, Mtu};
    use proptest::prelude::*;
    use rtl_model::mad::ca_cong::CaCongestionEntry;
    use rtl_model::mad::cct::{Cct, CctEntry};

    /// One call on the interface.
    #[derive(Debug, Clone)]
    enum Call {
        Fb(Cycle, Feedback),
        Sent(Cycle, u64, u32),
        Advance(Cycle),
        Next,
    }

    fn calls() -> impl Strategy<Value = Vec<Call>> {
        let t = prop_oneof![0u64..1_000_000, any::<u64>()];
        proptest::collection::vec(
            (t, 0u8..8, any::<u64>(), any::<u32>()).prop_map(|(t, k, x, b)| match k {
                0 => Call::Fb(t, Feedback::Cnp(CnpInfo::BECN)),
                1 => Call::Fb(
                    t,
                    Feedback::Cnp(CnpInfo {
                        becn: x % 2 == 0,
                        receive_rate: Some(x),
                    }),
                ),
                3 | 4 => Call::Sent(t, x % 100_000, b),
                5 => Call::Advance(t),
                _ => Call::Next,
            }),
            0..80,
        )
    }

    fn controllers(clock: CoreClock) -> Vec<Box<dyn RateController>> {
        // 12.5 bytes per cycle whatever the clock (a link rate's parts are bounded, so not a fixed Mbit/s).
        let link = LinkRate::new(25, 2).unwrap();
        let line = link.bps(clock.hz());
        vec![
            Box::new(
                CctController::new(&CctParams {
                    settings: CctSettings {
                        entry: CaCongestionEntry {
                            ccti_timer: 2,
                            ccti_increase: 3,
                            trigger_threshold: 1,
                            ccti_min: 1,
                        },
                        cct: Cct {
                            ccti_limit: 127,
                            entries: (0..128u16)
                                .map(|i| CctEntry::from_raw(i.wrapping_mul(517)))
                                .collect(),
                        },
                    },
                    mtu: Mtu::new(4096).unwrap(),
                    packet_overhead: 26,
                    link,
                    clock,
                })
                .unwrap(),
            ),
            Box::new(
                RcmController::new(RcmConfig {
                    mtu: Mtu::new(256).unwrap(),
                    packet_overhead: 62,
                    link,
                    recovery_cycles: Some(1),
                    recovery_bytes: Some(1),
                    combine: RecoveryCombine::Both,
                    max_level: u32::MAX,
                    clock,
                })
                .unwrap(),
            ),
            Box::new(
                DcqcnController::new(DcqcnConfig {
                    alpha_period: 1,
                    increase_period: 1,
                    byte_counter: 1,
                    min_rate: 1,
                    ..DcqcnConfig::ns3_defaults(clock, line)
                })
                .unwrap(),
            ),
            Box::new(
                RrccSender::new(RrccSenderConfig {
                    clock,
                    max_rate: line,
                    min_rate: 1,
                    d_q10: 1024,
                    rate_ai: u64::MAX,
                    consecutive: 1,
                })
                .unwrap(),
            ),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// No controller panics or hangs on any call sequence, times out of order and near u64::MAX
        /// included, and none reports a rate above the line rate.
        #[test]
        fn no_panic_on_any_calls(seq in calls(), khz in 1000u32..5_000_000) {
            let clock = CoreClock::from_khz(khz).unwrap();
            let line = LinkRate::new(25, 2).unwrap().bps(clock.hz());
            for mut c in controllers(clock) {
                for call in &seq {
                    match *call {
                        Call::Fb(t, fb) => c.on_feedback(t, fb),
                        Call::Sent(t, d, b) => c.on_sent(Sent { start: t, end: t.saturating_add(d), bytes: b }),
                        Call::Advance(t) => c.advance(t),
                        Call::Next => { c.next_send(); }
                    }
                    prop_assert!(c.rate_bps() <= line);
                    let _ = c.next_timer();
                }
            }
        }
    }
}
