//! The reaction point a flow's source consults: one of the controllers behind one type, so that an
//! HCA holds its flows' controllers inline (no allocation, `Clone`) whichever mode the scenario runs.

use super::cct::CctController;
use super::dcqcn::DcqcnController;
use super::rcm::RcmController;
use super::rrcc::RrccSender;
use super::{Feedback, RateController, Sent};
use crate::units::{Bps, Cycle};

/// A flow's reaction point.
#[derive(Debug, Clone)]
pub enum FlowCc {
    /// IB CC: the CCT reaction point (`[hca_cc]`).
    Cct(CctController),
    /// RoCEv2 RCM reaction of Liu et al. (`[roce] reaction = "rcm"`).
    Rcm(RcmController),
    /// DCQCN (`[roce] reaction = "dcqcn"`).
    Dcqcn(DcqcnController),
    /// Receiver-driven CC's sender (`[hca_cc] algorithm = "rrcc"`).
    Rrcc(RrccSender),
}

impl FlowCc {
    fn inner(&mut self) -> &mut dyn RateController {
        match self {
            FlowCc::Cct(c) => c,
            FlowCc::Rcm(c) => c,
            FlowCc::Dcqcn(c) => c,
            FlowCc::Rrcc(c) => c,
        }
    }

    /// The first cycle a flow refused at `next_send` (what [`RateController::next_send`] just gave) must ask
    /// again; until then it may sleep. Exact because [`RateController::advance`] gives the same state
    /// whenever it is called, feedback reaches the controller only in a step of its HCA, and between sends
    /// the send time moves only:
    /// - CCT: never (`cct_shaper`'s injection delay `ipd_q` is loaded on a send and counts down one per cycle;
    ///   BECNs and CCTI timer ticks change the CCTI, not the running delay);
    /// - DCQCN and RR-CC: never (their pacer is set on a send; rate changes apply to the next spacing);
    /// - RCM: at a recovery deadline ([`RateController::next_timer`]), which lowers the level.
    pub fn wake_for_send(&self, next_send: u64) -> u64 {
        match self {
            FlowCc::Cct(_) | FlowCc::Dcqcn(_) | FlowCc::Rrcc(_) => next_send,
            FlowCc::Rcm(c) => next_send.min(c.next_timer().unwrap_or(u64::MAX)),
        }
    }

    /// The first cycle a flow must be asked again after sending `sent`, if the reaction point knows it
    /// before it is told of the send at `sent.end` ([`CctController::send_after`]; the other reaction points:
    /// `None`, ask at `sent.end`). Exact while no feedback arrives before `sent.end`.
    pub fn send_after(&self, sent: &Sent) -> Option<u64> {
        match self {
            FlowCc::Cct(c) => c.send_after(sent).map(|at| self.wake_for_send(at)),
            _ => None,
        }
    }

    fn inner_ref(&self) -> &dyn RateController {
        match self {
            FlowCc::Cct(c) => c,
            FlowCc::Rcm(c) => c,
            FlowCc::Dcqcn(c) => c,
            FlowCc::Rrcc(c) => c,
        }
    }
}

impl From<CctController> for FlowCc {
    fn from(c: CctController) -> Self {
        FlowCc::Cct(c)
    }
}

impl From<RrccSender> for FlowCc {
    fn from(c: RrccSender) -> Self {
        FlowCc::Rrcc(c)
    }
}

impl RateController for FlowCc {
    fn on_feedback(&mut self, now: Cycle, fb: Feedback) {
        self.inner().on_feedback(now, fb);
    }

    fn on_sent(&mut self, sent: Sent) {
        self.inner().on_sent(sent);
    }

    fn advance(&mut self, now: Cycle) {
        self.inner().advance(now);
    }

    fn next_send(&mut self) -> Cycle {
        self.inner().next_send()
    }

    fn next_timer(&self) -> Option<Cycle> {
        self.inner_ref().next_timer()
    }

    fn rate_bps(&self) -> Bps {
        self.inner_ref().rate_bps()
    }
}
