//! The reaction point a flow's source consults: one of hca-model's controllers behind one type, so that an
//! HCA holds its flows' controllers inline (no allocation, `Clone`) whichever mode the scenario runs.

use hca_model::rate::cct::CctController;
use hca_model::rate::dcqcn::DcqcnController;
use hca_model::rate::rcm::RcmController;
use hca_model::rate::rrcc::RrccSender;
use hca_model::rate::{Feedback, RateController, Sent};
use hca_model::units::{Bps, Cycle};

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

    /// Whether the cycle [`RateController::next_send`] gives stays right until the flow's next send, whatever
    /// arrives meanwhile, and asking later gives the same state ([`RateController::advance`] is exact
    /// whenever called): then an HCA waiting on it may sleep until that cycle instead of asking every cycle.
    /// True for the CCT reaction point: its injection delay (`cct_shaper`'s `ipd_q`) is loaded only on a
    /// send and counts down one per cycle; BECNs and CCTI timer ticks change the CCTI, not the running delay.
    pub fn send_time_is_stable(&self) -> bool {
        matches!(self, FlowCc::Cct(_))
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
