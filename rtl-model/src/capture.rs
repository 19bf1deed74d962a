//! Packet captures that Wireshark/tshark decode: InfiniBand in the format ibdump writes (pcap link type 197,
//! ERF record type 21), RoCEv2 as plain Ethernet.
