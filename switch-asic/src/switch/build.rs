//! Building a [`Switch`] from its configuration: every block is made (and validates its settings).

use super::*;

impl Switch {
    /// Validates `cfg` and builds the switch in its reset state.
    pub fn new(cfg: SwitchConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = cfg.ports.len();
        let v = cfg
            .ports
            .iter()
            .map(|p| usize::from(p.data_vls))
            .max()
            .unwrap_or(1);
        let nv = n * v;
        let mut crx = Vec::with_capacity(nv);
        let mut ctx = Vec::with_capacity(nv);
        let mut cong = Vec::with_capacity(nv);
        let mut mark = Vec::with_capacity(nv);
        let mut arb = Vec::with_capacity(n);
        let mut slots = 0usize;
        for (p, pc) in cfg.ports.iter().enumerate() {
            for vl in 0..v {
                let buf = pc.vl_buf_blocks.get(vl).copied().unwrap_or(1);
                if vl < usize::from(pc.data_vls) {
                    slots += usize::from(buf);
                }
                // A PFC port uses credit_rx only as its buffer model: its packets are never sent, so its timer
                // is set as slow as it goes.
                let (policy, interval) = match pc.pfc {
                    None => (cfg.fc_policy, pc.fc_interval),
                    Some(_) => (credit_rx::FcPolicy::Periodic, u16::MAX),
                };
                crx.push(
                    CreditRx::new(credit_rx::Config {
                        policy,
                        ..credit_rx::Config::new(buf, interval)
                    })
                    .map_err(block_err(format!("ports[{p}].vl_buf_blocks[{vl}]")))?,
                );
                ctx.push(
                    CreditTx::new(credit_tx::Config::default())
                        .map_err(block_err(format!("ports[{p}]")))?,
                );
                let mut dc = pc.cc.detect_config(buf, mtu_packet_blocks(cfg.mtu));
                if pc.pfc.is_some() {
                    // RCM-1a defines its root rule: a paused priority is a victim (seed 001, section
                    // IV.1), which the credit rule reads from a paused priority's zero credit. The stall
                    // window would keep a priority a victim for a window after its pause ends.
                    dc.root_rule = cong_detect::RootRule::Credit;
                }
                cong.push(CongDetect::new(dc).map_err(block_err(format!("ports[{p}].cc")))?);
                mark.push(
                    FecnMarker::new(pc.cc.marker_config())
                        .map_err(block_err(format!("ports[{p}].cc")))?,
                );
            }
            // Ports with one table share one copy of it (`VlArb::sharing`).
            let table = vl_arb::Config::from_table(&pc.vlarb);
            let same = arb.iter().find(|a: &&VlArb| *a.config() == table);
            arb.push(match same {
                Some(a) => a.sharing(),
                None => VlArb::new(table).map_err(block_err(format!("ports[{p}].vlarb")))?,
            });
        }
        let mut lft = vec![NO_ROUTE; cfg.lft.len()];
        for (d, e) in cfg.lft.iter().enumerate() {
            if let Some(p) = e {
                lft[d] = *p;
            }
        }
        let mut sl2vl: Vec<[u8; 16]> = Vec::new();
        let mut sl2vl_of = Vec::with_capacity(n * n);
        let mut store_forward = vec![0u64; n];
        for (i, sf) in store_forward.iter_mut().enumerate() {
            for o in 0..n {
                let t = cfg.sl2vl_of(i, o).vl;
                let k = sl2vl.iter().position(|x| *x == t).unwrap_or_else(|| {
                    sl2vl.push(t);
                    sl2vl.len() - 1
                });
                sl2vl_of.push(k as u16);
                if !cfg.ports[o].rate.le(cfg.ports[i].rate) {
                    *sf |= 1 << o;
                }
            }
        }
        if sl2vl.len() == 1 {
            // One table for every pair (the usual case): no per-pair index to read per packet.
            sl2vl_of.clear();
        }
        let slab_cap = slots + n;
        let mtu_blocks = mtu_packet_blocks(cfg.mtu);
        let mut wm = Vec::with_capacity(nv);
        for (p, pc) in cfg.ports.iter().enumerate() {
            for vl in 0..v {
                let buf = pc.vl_buf_blocks.get(vl).copied().unwrap_or(1);
                wm.push(match (&pc.pfc, vl < usize::from(pc.data_vls)) {
                    (Some(c), true) => {
                        c.watermarks(buf, pc.rate, mtu_blocks, &format!("ports[{p}].pfc"))?
                    }
                    _ => Watermarks {
                        xoff: u16::MAX,
                        xon: 0,
                    },
                });
            }
        }
        let ports = cfg
            .ports
            .iter()
            .zip(&store_forward)
            .map(|(pc, &sf)| PortRegs {
                rate: pc.rate,
                store_forward: sf,
                ser: Serializer::default(),
                nvl: pc.data_vls,
                speedup: pc.speedup,
                reads: 0,
                fc_pending: 0,
                pfc_on: pc.pfc.is_some(),
                pfc_pending: 0,
                arriving: None,
                inflight: None,
                rx_pkt: None,
                rx_fc: None,
                rx_pause: None,
                roce_detect: pc.cc.roce_detect,
                pfc_quanta: pc.pfc.map_or(0, |c| c.pause_quanta),
                pfc_half: pc
                    .pfc
                    .map_or(0, |c| pfc::pause_cycles(pc.rate, c.pause_quanta) / 2),
                victim_hold: pc.pfc.map_or(0, |c| u64::from(c.victim_hold)),
            })
            .collect();
        let lanes = crx
            .into_iter()
            .zip(ctx)
            .zip(cong)
            .zip(mark)
            .zip(wm)
            .map(|((((crx, ctx), cong), mark), wm)| Lane {
                crx_due: 0,
                crx_next: 0,
                voq_mask: 0,
                fill_sum: 0,
                crx,
                ctx,
                fc_fccl: 0,
                fc_last: FcLast::default(),
                rr: 0,
                cong_dirty: false,
                pause_seen: false,
                free_pending: 0,
                stall_rule: cong.config().root_rule == cong_detect::RootRule::StallWindow,
                cong,
                cong_prev: cong_detect::Out::default(),
                cong_from: 0,
                mark,
                wait: LazyCycles::default(),
                cong_time: LazyCycles::default(),
                last_start: (NEVER, false),
                counters: PortVlCounters::default(),
                last_desc: None,
                paused_until: 0,
                pfc_rx: PfcRx::default(),
                wm,
                pfc_out_quanta: 0,
            })
            .collect();
        // The look-ahead allocator's per-port registers exist only when it is configured.
        let la_n = if cfg.allocator == Allocator::Lookahead {
            n
        } else {
            0
        };
        let sw = Switch {
            n,
            v,
            ports,
            lanes,
            now: 0,
            mtu_blocks: mtu_packet_blocks(cfg.mtu),
            lft,
            sl2vl,
            sl2vl_of,
            arb,
            rx_pkt_mask: 0,
            rx_fc_mask: 0,
            rx_pause_mask: 0,
            next_in: handin::NextHandIns::new(n),
            saturated: 0,
            slab: PreVec(Vec::with_capacity(slab_cap)),
            free_slots: PreVec(Vec::with_capacity(slab_cap)),
            voq_ends: vec![
                VoqEnds {
                    head: NONE,
                    tail: NONE
                };
                n * nv
            ],
            voq_fill: vec![0; n * nv],
            fc_repeat_off: 0,
            eg_wake: WakeSet::new(n, NEVER),
            in_wake: WakeSet::new(n, 0),
            fire_at: vec![NEVER; n],
            next_any: 0,
            dirty_list: PreVec(Vec::with_capacity(nv)),
            events: PreVec(Vec::with_capacity(2 * n)),
            rx_errors: 0,
            work_cycles: 0,
            eager: false,
            mark_at_enqueue: cfg
                .ports
                .iter()
                .enumerate()
                .filter(|(_, p)| p.pfc.is_none() && p.cc.mark_point == MarkPoint::Enqueue)
                .fold(0, |m, (i, _)| m | bit(i)),
            la: vec![LaRegs::default(); la_n],
            la_prop: vec![[0; 2]; la_n],
            la_prop_any: [0; 2],
            la_acc_ptr: vec![0; la_n],
            la_accepted: 0,
            la_transfer: 0,
            la_sat_start: 0,
            la_rewake: 0,
            cfg,
        };
        Ok(sw)
    }
}
