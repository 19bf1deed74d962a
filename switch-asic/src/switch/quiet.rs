//! Quiet fast-forward of a [`Switch`] (see [`rtl_model::link::quiet`]): with no packet anywhere in the switch, the only
//! activity is each port's periodic flow-control packet, whose timing [`rtl_model::link::quiet::fc_plan`] gives in
//! closed form, so `n` cycles cost O(ports) instead of O(n / fc_interval * ports).

use super::*;
use rtl_model::link::quiet::{fc_plan, FcPlan, FcSync};

impl Switch {
    /// Flow-control state of `port`, VL 0, when the port has exactly one data VL and runs IB credits.
    pub fn fc_sync(&self, port: usize) -> Option<FcSync> {
        if port >= self.n || self.nvl[port] != 1 || self.pfc_on[port] {
            return None;
        }
        if self.fire_at.get(port) < self.now {
            // Timer fires not applied yet: as the next step would apply them (a repeat whose cycle has passed
            // is sent already, `set_fc_repeats_off`), on a copy.
            let mut c = self.clone();
            c.catch_up(port, self.now);
            return c.fc_sync(port);
        }
        let k = port * self.v;
        let pending = (self.fc_pending[port] & 1 != 0).then_some(self.fc_fccl[k]);
        // Blocks in by now that a sleeping port has not counted yet (see `Arrival::wake`), as a step would.
        let mut crx = self.crx[k].clone();
        if let Some(mut a) = self.arriving[port].map(|a| a.a) {
            a.absorb_before(self.rate[port], self.now, &mut crx);
        }
        Some(FcSync::of(&crx, &self.ctx[k], pending))
    }

    /// The plan of every port for `n` quiet cycles, or `None` when the switch is not quiet (a packet held or
    /// arriving or leaving, a hand-in, PFC, more than one VL, a release pending) or a port's stretch is not
    /// regular.
    fn quiet_port_plan(&self, p: usize, end: u64) -> Option<(FcPlan, CreditRx)> {
        let k = p * self.v;
        if self.arriving[p].is_some()
            || self.fire_at.get(p) < self.now
            || self.inflight[p].is_some()
            || self.pfc_on[p]
            || self.pfc_pending[p] != 0
            || self.free_pending[k] != 0
            || self.nvl[p] != 1
            || self.fc_pending[p] > 1
        {
            return None;
        }
        let t0 = self.now;
        let mut crx = self.crx[k].clone();
        crx.skip(t0 - self.crx_next[k]);
        let first = crx.next_event().map_or(u64::MAX, |e| t0 + e);
        let interval = u64::from(crx.config().fc_interval);
        let plan = fc_plan(
            self.rate[p],
            interval,
            t0,
            end,
            self.ser[p],
            self.fc_pending[p] != 0,
            first,
        )?;
        Some((plan, crx))
    }

    /// Whether [`Switch::quiet_jump`] of `n` cycles would apply.
    pub fn can_quiet_jump(&self, n: u64) -> bool {
        let end = self.now + n;
        !self.eager
            && self.handed_in() == 0
            && self.packets_held() == 0
            && self.dirty_list.0.is_empty()
            && (0..self.n).all(|p| self.quiet_port_plan(p, end).is_some())
    }

    /// Advances `n` cycles of a quiet switch at once (see [`Switch::can_quiet_jump`]); returns false and
    /// changes nothing when it does not apply. The flow-control packets of those cycles are not produced: the
    /// caller skips only packets that would change nothing at the far end ([`FcSync::steady_towards`]).
    pub fn quiet_jump(&mut self, n: u64) -> bool {
        if n == 0 {
            return true;
        }
        if !self.can_quiet_jump(n) {
            return false;
        }
        let end = self.now + n;
        for p in 0..self.n {
            let k = p * self.v;
            let Some((plan, mut crx)) = self.quiet_port_plan(p, end) else {
                unreachable!("checked by can_quiet_jump");
            };
            // Every fire latches the same FCCL: nothing arrives or leaves while quiet.
            let fccl = FcSync::of(&crx, &self.ctx[k], None).fccl;
            let fctbs = self.ctx[k].fctbs_q;
            self.fc_last[k].after_quiet(&plan, self.ser[p], fctbs, fccl, self.fc_fccl[k]);
            if plan.fired {
                self.fc_fccl[k] = fccl;
            }
            crx.skip(end - self.now);
            self.crx_due[k] = crx.next_event().map_or(NEVER, |e| end + e);
            self.crx[k] = crx;
            self.crx_next[k] = end;
            self.in_wake.set(p, self.crx_due[k]);
            self.fire_at.set(p, NEVER);
            self.ser[p] = plan.ser;
            self.fc_pending[p] = u16::from(plan.pending);
            self.eg_wake
                .set(p, if plan.pending { plan.send_at } else { NEVER });
        }
        self.now = end;
        self.next_any = self.eg_wake.min().min(self.in_wake.min());
        true
    }
}
