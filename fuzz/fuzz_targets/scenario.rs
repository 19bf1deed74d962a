//! The scenario and queueing-file parsers on arbitrary text: no input may panic, and an accepted scenario
//! must be one the rest of the run can take without panicking: its memory estimate, and, when that is
//! small, building its fabric and taking a few steps.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.toml");
    let _ = ibcycle::queueing::parse(path, text);
    let Ok(sc) = ibcycle::scenario::parse(path, text) else {
        return;
    };
    let e = ibcycle::run::memory::estimate(&sc);
    if e.bytes < 64 << 20 && sc.topology.switches.len() <= 8 {
        if let Ok(mut fab) = ibcycle::fabric::Fabric::new(&sc) {
            for _ in 0..64 {
                fab.step();
            }
        }
    }
});
