//! RC ACKs (`[settings] acks`): a destination acknowledges each message's last packet or every data packet
//! (coalesced while one waits), the ACKs go back ahead of data on the flow's SL and take their share of the
//! reverse link, and the integrity check counts them as control packets.

use std::path::Path;

use ibcycle::fabric::Fabric;
use ibcycle::scenario::{self, Scenario};

/// One switch, H0 and H1; flow A from H0 to H1 for 150 us (messages of four 256-byte packets), and with
/// `reverse` flow B from H1 to H0 (4,096-byte packets).
fn pair(acks: &str, reverse: bool) -> Scenario {
    let mut text = format!(
        "duration_us = 160\n[settings]\nacks = \"{acks}\"\n[chain]\nswitches = 1\nhosts_per_switch = 2\n\
         host_rate = \"4xDDR\"\ntrunk_rate = \"4xDDR\"\n[[flow]]\nid = \"A\"\nsrc = \"H0\"\ndst = \"H1\"\n\
         mtu = 256\nmessage_bytes = 1024\nstop_us = 150\n"
    );
    if reverse {
        text += "[[flow]]\nid = \"B\"\nsrc = \"H1\"\ndst = \"H0\"\nmtu = 4096\nmessage_bytes = 16384\nstop_us = 150\n";
    }
    scenario::parse(Path::new("acks.toml"), &text).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `sc` for its duration and then until nothing is in flight.
fn run(sc: &Scenario) -> Fabric {
    let mut f = Fabric::new(sc).unwrap_or_else(|e| panic!("{e}"));
    f.run_until(sc.duration_us * f.cycles_per_us);
    while !f.quiet() {
        f.step();
    }
    assert_eq!(f.violations(), 0);
    assert_eq!(f.sink_errors(), Default::default());
    f
}

#[test]
fn one_ack_per_message_reaches_the_source() {
    let f = run(&pair("message", false));
    let (h0, h1) = (&f.hcas[0], &f.hcas[1]);
    let packets = h1.per_flow[0].rx.packets;
    assert!(packets > 500, "{packets} packets");
    // Four packets a message; the stop may cut the last message short.
    assert_eq!(h1.per_flow[0].acks_sent, packets / 4);
    assert_eq!(h0.per_flow[0].acks_rx, packets / 4);
    assert_eq!(h0.ctl_delivered, h1.ctl_injected);
    // No ACKs, no control packets.
    let off = run(&pair("none", false));
    assert_eq!(
        (off.hcas[1].per_flow[0].acks_sent, off.hcas[1].ctl_injected),
        (0, 0)
    );
    // The ACKs on H1's link delay its flow-control packets by up to an ACK's 15 cycles now and then:
    // A's delivered packets change by well under 1%.
    let off_packets = off.hcas[1].per_flow[0].rx.packets;
    assert!(
        off_packets.abs_diff(packets) * 100 < packets,
        "{off_packets} packets without ACKs, {packets} with"
    );
}

#[test]
fn acks_per_packet_are_coalesced_and_take_reverse_bandwidth() {
    let alone = run(&pair("packet", false));
    let packets = alone.hcas[1].per_flow[0].rx.packets;
    // The reverse link is idle: every packet's ACK leaves before the next packet is in.
    assert_eq!(alone.hcas[0].per_flow[0].acks_rx, packets);
    // With flow B on H1's link, A's ACKs wait behind B's packets on the wire (never behind B's queue: they
    // go first) and one ACK acknowledges the packets that came meanwhile. About 15 of A's 282-byte
    // packets arrive in the time of one of B's 4,122-byte ones; B also waits for credit (two of its
    // packets fill H0's 128-block buffer), and an ACK goes in each such wait, so about 3 ACKs per B
    // packet, 5 of A's packets per ACK.
    let busy = run(&pair("packet", true));
    let acks = busy.hcas[0].per_flow[0].acks_rx;
    let a_packets = busy.hcas[1].per_flow[0].rx.packets;
    assert!(
        acks > 0 && acks < a_packets,
        "{acks} ACKs for {a_packets} packets"
    );
    assert!(acks * 3 < a_packets, "{acks} ACKs for {a_packets} packets");
    // B gives up the wire time of A's ACKs (30 bytes each; B's packets carry 4,096 bytes in 4,122).
    let none = run(&pair("none", true));
    let (b_acked, b_none) = (
        busy.hcas[0].per_flow[1].rx.payload_bytes,
        none.hcas[0].per_flow[1].rx.payload_bytes,
    );
    assert!(
        b_acked < b_none,
        "B {b_acked} bytes with A's ACKs, {b_none} without"
    );
    let lost = (b_none - b_acked) as f64 / 4096.0 * 4122.0;
    let ack_bytes = acks as f64 * 30.0;
    assert!(
        (0.5 * ack_bytes..=2.0 * ack_bytes + 4122.0).contains(&lost),
        "B lost {lost} wire bytes, A's ACKs took {ack_bytes}"
    );
}

#[test]
fn a_bad_acks_value_names_its_key() {
    let e = scenario::parse(
        Path::new("a.toml"),
        "duration_us = 1\n[settings]\nacks = \"sometimes\"\n[chain]\nswitches = 1\nhosts_per_switch = 2\nhost_rate = \"4xDDR\"\ntrunk_rate = \"4xDDR\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("a.toml:3:") && e.contains("sometimes"), "{e}");
}
