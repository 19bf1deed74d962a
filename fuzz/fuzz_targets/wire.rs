//! Every `wire` parser on arbitrary bytes: the first byte chooses the header, the rest is the buffer. No
//! input may panic; a header that parses must emit back to bytes that parse to the same header.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rtl_model::wire::{
    aeth, bth, deth, ethernet, flow_ctl, grh, ib_cnp, ipv4, ipv6, lrh, pfc, roce_cnp, udp,
};

macro_rules! round_trip {
    ($m:ident, $data:expr) => {{
        let data: &[u8] = $data;
        if let Ok(p) = $m::Packet::new_checked(data) {
            if let Ok(r) = $m::Repr::parse(&p) {
                // Emitted over a copy of the input, so bytes the header does not cover stay as they were.
                let mut buf = data.to_vec();
                if buf.len() < r.buffer_len() {
                    buf.resize(r.buffer_len(), 0);
                }
                r.emit(&mut $m::Packet::new_unchecked(&mut buf[..]));
                let q = $m::Packet::new_checked(&buf[..]).expect("an emitted header checks");
                let back = $m::Repr::parse(&q).expect("an emitted header parses");
                assert_eq!(back, r, "{} round trip", stringify!($m));
            }
        }
    }};
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 13 {
        0 => round_trip!(lrh, rest),
        1 => round_trip!(grh, rest),
        2 => round_trip!(bth, rest),
        3 => round_trip!(deth, rest),
        4 => round_trip!(aeth, rest),
        5 => round_trip!(flow_ctl, rest),
        6 => round_trip!(ethernet, rest),
        7 => round_trip!(ipv4, rest),
        8 => round_trip!(ipv6, rest),
        9 => round_trip!(udp, rest),
        10 => round_trip!(pfc, rest),
        11 => round_trip!(roce_cnp, rest),
        _ => {
            let _ = ib_cnp::Repr::parse(rest);
        }
    }
});
