fn main() {
    for f in std::env::args().skip(1) {
        let sc = ibcycle::scenario::load(std::path::Path::new(&f)).unwrap();
        if sc.roce.is_some() { println!("{f}: roce"); continue; }
        let all: Vec<usize> = (0..sc.topology.switches.len()).collect();
        let ts = ibcycle::run::port_trace::traces_of(&sc, &all, 30_000).unwrap();
        let (k, (t, rec)) = ts.into_iter().enumerate().max_by_key(|(_, (_, r))| r.packets).unwrap();
        let c = &t.config;
        let p = &c.ports[0];
        println!("{f}: sw {} ports {} mtu {} rate {}/{} vls {} buf {:?} pk {} fc {} lft {} sl2vl {}",
            sc.topology.switches[k].name, c.ports.len(), c.mtu, p.rate.num, p.rate.den, p.data_vls, p.vl_buf_blocks, rec.packets, p.fc_interval, c.lft.len(), c.sl2vl.len());
    }
}
