use cosim::rtlcheck::default_random_config;
use cosim::scoreboard::bench::{random_traffic, run, BenchConfig, SwitchDut};
use cosim::scoreboard::Bounds;
fn main() {
    let cfg = default_random_config(4);
    for seed in [11u64, 1, 2, 3] {
        let traffic = random_traffic(&cfg, 1500, seed, 10);
        let mut dut = SwitchDut::new(&cfg).unwrap();
        match run(&mut dut, &cfg, traffic, BenchConfig::default(), Bounds::default()) {
            Ok(o) => println!("PASS {o:?}"),
            Err(e) => println!("ERR {e}"),
        }
    }
}
