//! Flow arrival patterns through the fabric (one flow H0 -> H1 across two switches; host links 4x DDR at
//! 1 GHz, 2 bytes per cycle; 4 KiB messages, two 2048-byte packets of 2074 wire bytes: 2.074 us of host link
//! per message) and the message latency statistics of summary.json.

use std::path::Path;

use ibcycle::run::{run, RunResult};
use ibcycle::scenario::parse;

fn run_flow(keys: &str, duration_us: u64) -> RunResult {
    let text = format!(
        "duration_us = {duration_us}\nseed = 5\n[chain]\nswitches = 2\nhosts_per_switch = 1\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\nlatency_ns = 100\n[settings]\nmax_queued_messages = 64\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H1\"\nmessage_bytes = 4096\n{keys}\n"
    );
    let sc = parse(Path::new("traffic.toml"), &text).expect("valid scenario");
    let r = run(&sc, false).expect("fabric builds");
    assert_eq!(r.summary.invariants.broken(), None);
    r
}

/// Service time of one message on the host link, microseconds.
const MSG_US: f64 = 2.0 * 2074.0 / 2.0 / 1000.0;

#[test]
fn constant_rate_delivers_the_offered_load_at_the_unloaded_latency() {
    let r = run_flow("pattern = \"constant\"\nrate = \"4Gbps\"", 1000);
    let f = &r.summary.flows[0];
    let lat = f.msg_latency_us.as_ref().expect("messages complete");
    eprintln!("constant: {} Gbit/s, latency {lat:?}", f.avg_gbps);
    // One 4 KiB message every 8.192 us: 122 in 1000 us; the last may still be on its way.
    assert!((121..=123).contains(&lat.messages), "{}", lat.messages);
    assert!((f.avg_gbps - 4.0).abs() < 0.05, "{}", f.avg_gbps);
    // No contention: every message sees the same path. Its latency is at least the two packets on the
    // host link plus three 100 ns wires. The spread (measured: 0.10 us, on one message) comes from waiting
    // for credit information, which flow-control packets bring every 256 cycles: at most one such period.
    assert!(lat.p50 >= MSG_US + 0.3, "{}", lat.p50);
    assert!(lat.max - lat.p50 <= 0.256, "{lat:?}");
    assert_eq!(f.messages_refused, 0);
}

#[test]
fn poisson_queues_like_md1_and_ge_queues_more() {
    let base = run_flow("pattern = \"constant\"\nrate = \"1Gbps\"", 200);
    let unloaded = base.summary.flows[0].msg_latency_us.as_ref().unwrap().p50;
    let p = run_flow("pattern = \"poisson\"\nrate = \"12Gbps\"", 3000);
    let g = run_flow("pattern = \"ge\"\nrate = \"12Gbps\"\nscv = 5", 3000);
    let (pf, gf) = (&p.summary.flows[0], &g.summary.flows[0]);
    let (pl, gl) = (pf.msg_latency_us.as_ref().unwrap(), gl_of(gf));
    // Offered: 12 Gbit/s of 4 KiB messages = 366 per ms, 1099 in 3 ms. The count is Poisson (SD 3%) and
    // bursty GE counts vary C^2 = 5 times more (SD 7%): 15% is over 2 SD for GE and 5 for Poisson.
    for (name, f) in [("poisson", pf), ("ge", gf)] {
        assert!(
            (f.avg_gbps - 12.0).abs() < 0.15 * 12.0,
            "{name} {}",
            f.avg_gbps
        );
    }
    // M/D/1 at the source port: utilisation rho = 12/16 * 2074/2048; mean wait rho S / (2 (1 - rho)).
    let rho = 12.0 / 16.0 * 2074.0 / 2048.0;
    let md1 = unloaded + rho * MSG_US / (2.0 * (1.0 - rho));
    eprintln!(
        "unloaded {unloaded}, poisson mean {} (M/D/1 {md1:.3}), ge mean {}",
        pl.mean, gl.mean
    );
    // The mean of about 1100 correlated waits: its relative error is about 10% at this load (batch means
    // on a similar run); 20% is two of those.
    assert!((pl.mean - md1).abs() < 0.2 * md1, "{} vs {md1}", pl.mean);
    // GE with C^2 = 5 queues far more (Kingman: the wait scales with (C_a^2 + C_s^2) / 2 = 2.5 x).
    assert!(gl.mean > 1.5 * pl.mean, "{} vs {}", gl.mean, pl.mean);
    assert!(gl.p99 > pl.p99);
}

fn gl_of(f: &ibcycle::run::FlowSummary) -> &ibcycle::fabric::traffic::LatencyStats {
    f.msg_latency_us.as_ref().expect("messages complete")
}

#[test]
fn an_overload_fills_the_send_queue_and_refuses_arrivals() {
    let r = run_flow("pattern = \"constant\"\nrate = \"20Gbps\"", 300);
    let f = &r.summary.flows[0];
    // 20 Gbit/s offered is 610 messages per ms, about 15.8 Gbit/s = 482 per ms is carried: the queue grows
    // by 128 per ms and reaches its 64 messages after 0.5 ms. After 300 us nothing is refused yet, but the
    // last messages wait behind about 38 others (38 x 2.074 us); 30 leaves room for the ramp.
    assert_eq!(f.messages_refused, 0);
    let lat = gl_of(f);
    assert!(lat.max > 30.0 * MSG_US, "{lat:?}");
    // Over 1.5 ms about 128 arrivals are refused; the carried rate is the link's payload rate (2048 of
    // 2074 bytes of 16 Gbit/s = 15.80), less the flow-control packets' share.
    let r = run_flow("pattern = \"constant\"\nrate = \"20Gbps\"", 1500);
    let f = &r.summary.flows[0];
    assert!(f.messages_refused > 0, "{}", f.messages_refused);
    assert!((f.avg_gbps - 15.8).abs() < 0.3, "{}", f.avg_gbps);
}

/// Seeded per flow from the scenario seed: the same file gives the same arrivals, another seed others.
#[test]
fn patterns_are_deterministic_per_seed() {
    let keys = "pattern = \"poisson\"\nrate = \"8Gbps\"";
    let (a, b) = (run_flow(keys, 200), run_flow(keys, 200));
    assert_eq!(a.summary, b.summary);
    let text = format!(
        "duration_us = 200\nseed = 6\n[chain]\nswitches = 2\nhosts_per_switch = 1\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xQDR\"\nlatency_ns = 100\n[settings]\nmax_queued_messages = 64\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H1\"\nmessage_bytes = 4096\n{keys}\n"
    );
    let c = run(&parse(Path::new("t.toml"), &text).unwrap(), false).unwrap();
    assert_ne!(
        a.summary.flows[0].msg_latency_us,
        c.summary.flows[0].msg_latency_us
    );
}
