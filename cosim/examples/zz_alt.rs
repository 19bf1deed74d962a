use cosim::portmap::PortMap;
use cosim::rtlcheck::{check, default_random_config, CheckOpts, CheckOutcome};
use cosim::scoreboard::bench::random_traffic;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let m = PortMap::load(std::path::Path::new("hdl/alt/alt_switch.map.toml")).unwrap();
    let cfg = default_random_config(m.ports.len());
    let n: usize = args.get(1).map_or(300, |x| x.parse().unwrap());
    let traffic = random_traffic(&cfg, n, 11, 10);
    let defines: Vec<String> = args.iter().skip(2).cloned().collect();
    let t0 = std::time::Instant::now();
    let opts = CheckOpts { defines, vcd: Some("/tmp/alt.vcd".into()), ..CheckOpts::default() };
    match check(&m, &cfg, traffic, &opts) {
        Ok(CheckOutcome::Passed(o)) => println!("PASS {o:?} {:?}", t0.elapsed()),
        Ok(CheckOutcome::Violation { v, vcd }) => println!("VIOLATION {v}\n{vcd:?} {:?}", t0.elapsed()),
        Err(e) => println!("ERROR {e}"),
    }
}
