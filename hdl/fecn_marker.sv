// fecn_marker: whether the packet starting on one (output port, VL) gets its FECN bit set.
//
// RTL twin of rtl-model/src/blocks/fecn_marker.rs (`FecnMarker`); every output and next state is bit-for-bit
// the Rust `step`. A packet is eligible when the port-VL is in the marking state (`cong_detect`
// `mark_state_o`) and the packet is at least Packet_Size 64-byte units long (0 = all sizes). Marking_Rate, the
// mean number of unmarked packets between marks, is applied by a counter or by an LFSR (`mode_i`).
//
// | port             | dir | width | meaning                                                                 |
// |------------------|-----|-------|-------------------------------------------------------------------------|
// | `clk_i`          | in  | 1     | clock                                                                   |
// | `rst_ni`         | in  | 1     | synchronous reset, active low                                           |
// | configuration (held constant; the Rust `Config` plus the precomputed threshold)                          |
// | `packet_size_i`  | in  | 8     | Packet_Size in 64-byte units; shorter packets are never marked          |
// | `marking_rate_i` | in  | 16    | Marking_Rate                                                            |
// | `mode_i`         | in  | 1     | MarkMode: 0 Counter, 1 Lfsr (encoding defined here)                     |
// | `lfsr_seed_i`    | in  | 16    | LFSR reset value (nonzero; 0 is flagged and replaced by 0xACE1)         |
// | `lfsr_thresh_i`  | in  | 17    | floor(65536 / (marking_rate + 1)), the Rust `FecnMarker::lfsr_thresh()` |
// | per-cycle inputs                                                                                         |
// | `pkt_valid_i`    | in  | 1     | a packet starts on this port-VL this cycle                              |
// | `pkt_bytes_i`    | in  | 13    | its length in bytes                                                     |
// | `mark_state_i`   | in  | 1     | the port-VL is in the marking state                                     |
// | output (combinational from `_q` and this cycle's inputs)                                                 |
// | `mark_o`         | out | 1     | set FECN on this packet                                                 |
// | `cfg_err_o`      | out | 1     | configuration rule broken: bit 0 `lfsr_seed_i` is 0 (combinational     |
// |                  |     |       | from the held ports, also in reset; the Rust `Config::cfg_err`)         |
//
// A seed of 0 would stick the LFSR at 0 and, in LFSR mode, mark every eligible packet: it is flagged (and
// asserted against) and the LFSR resets to the Rust default seed 0xACE1 instead, so the state is never 0
// whatever the configuration. `lfsr_thresh_i` is derived from `marking_rate_i`; its consistency is asserted
// in LFSR mode, where it is read (in simulation and formal runs), not flagged in hardware, which would take a
// multiplier.
//
// State: `cnt_q` (16 bits, reset 0), `lfsr_q` (16 bits, reset `lfsr_seed_i`, never 0). Only eligible packets
// move either; the mode not in use holds its register.
//
// Designer choices (of the Rust block, kept here):
// - Counter mode: eligible packets are counted modulo marking_rate + 1 and the first of each cycle is marked:
//   `mark = (cnt_q == 0)`, then `cnt_q = (cnt_q >= marking_rate) ? 0 : cnt_q + 1`.
// - Lfsr mode: 16-bit Galois LFSR x^16 + x^14 + x^13 + x^11 + 1 (right shift, toggle mask 0xB400). Compare
//   before advance: `mark = lfsr_q < lfsr_thresh`, then the LFSR leaps 16 shifts (one XOR network here).
// - Size check: `pkt_bytes >= 64 * packet_size` (a 14-bit product; no division anywhere).
//
// Fault-injection variants (build with +define+IBCYCLE_FAULTS_ENABLE+IBCYCLE_FAULT_<NAME> /
// -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_<NAME>; a variant defined without the enable stops elaboration):
// - IBCYCLE_FAULT_COUNTER_RELOAD: the counter reloads to 1 instead of 0 after the last packet of a cycle (the designer
//   "counts the current packet"), so after the first mark no packet is ever marked again.
// - IBCYCLE_FAULT_PACKET_SIZE: the size is compared in blocks rounded up, `ceil(bytes / 64) >= packet_size`, which
//   accepts packets up to one block (63 bytes) shorter than Packet_Size.
// - IBCYCLE_FAULT_LFSR_STALL: the LFSR advances only on a marked packet, not at every marking decision.

// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module fecn_marker (
  input  logic        clk_i,
  input  logic        rst_ni,

  // Configuration (held constant)
  input  logic [7:0]  packet_size_i,
  input  logic [15:0] marking_rate_i,
  input  logic        mode_i,
  input  logic [15:0] lfsr_seed_i,
  input  logic [16:0] lfsr_thresh_i,

  // Packet start
  input  logic        pkt_valid_i,
  input  logic [12:0] pkt_bytes_i,
  input  logic        mark_state_i,

  // Decision
  output logic        mark_o,
  // Configuration check
  output logic        cfg_err_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_COUNTER_RELOAD
  $fatal(1, "IBCYCLE_FAULT_COUNTER_RELOAD is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_PACKET_SIZE
  $fatal(1, "IBCYCLE_FAULT_PACKET_SIZE is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_LFSR_STALL
  $fatal(1, "IBCYCLE_FAULT_LFSR_STALL is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  localparam logic        ModeLfsr  = 1'b1;
  localparam logic [15:0] LfsrTaps  = 16'hB400;
  localparam int          LfsrLeap  = 16;
  localparam logic [15:0] SeedSafe  = 16'hACE1;

  logic [15:0] seed;
  always_comb begin
    cfg_err_o = lfsr_seed_i == 16'd0;
    seed      = cfg_err_o ? SeedSafe : lfsr_seed_i;
  end

  // Registered state and next state
  logic [15:0] cnt_q, cnt_d, lfsr_q, lfsr_d;

  // The per-packet advance: LfsrLeap Galois shifts, unrolled into one XOR network.
  function automatic logic [15:0] lfsr_leap(input logic [15:0] s);
    logic [15:0] x;
    x = s;
    for (int k = 0; k < LfsrLeap; k++) begin
      x = x[0] ? ((x >> 1) ^ LfsrTaps) : (x >> 1);
    end
    lfsr_leap = x;
  endfunction

  logic size_ok, eligible;

  always_comb begin
`ifdef IBCYCLE_FAULT_PACKET_SIZE
    size_ok = ({1'b0, pkt_bytes_i} + 14'd63) >> 6 >= 14'(packet_size_i);
`else
    size_ok = {1'b0, pkt_bytes_i} >= {packet_size_i, 6'b000000};
`endif
    eligible = rst_ni && pkt_valid_i && mark_state_i && size_ok;
  end

  always_comb begin
    cnt_d  = cnt_q;
    lfsr_d = lfsr_q;
    mark_o = 1'b0;
    if (eligible) begin
      if (mode_i == ModeLfsr) begin
        mark_o = {1'b0, lfsr_q} < lfsr_thresh_i;
`ifdef IBCYCLE_FAULT_LFSR_STALL
        if (mark_o) lfsr_d = lfsr_leap(lfsr_q);
`else
        lfsr_d = lfsr_leap(lfsr_q);
`endif
      end else begin
        mark_o = cnt_q == 16'd0;
`ifdef IBCYCLE_FAULT_COUNTER_RELOAD
        cnt_d  = (cnt_q >= marking_rate_i) ? 16'd1 : cnt_q + 16'd1;
`else
        cnt_d  = (cnt_q >= marking_rate_i) ? 16'd0 : cnt_q + 16'd1;
`endif
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      cnt_q  <= '0;
      lfsr_q <= seed;
    end else begin
      cnt_q  <= cnt_d;
      lfsr_q <= lfsr_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // Marks only an eligible packet (valid, congested port VL, at least Packet_Size * 64 bytes); an LFSR seed
  // is never 0 (the LFSR would stick); in counter mode, while Marking_Rate R stays the same, exactly one of
  // every R + 1 eligible packets is marked: the one after R unmarked since the last mark. The last property
  // is the counter's state against the count since the last mark (what makes the formal proof inductive).
  logic        a_seen_q, a_elig, a_cnt_mode;
  logic [16:0] a_gap_q, a_rate17;
  logic [15:0] a_rate_q;
  always_comb begin
    a_elig = pkt_valid_i && mark_state_i && ({1'b0, pkt_bytes_i} >= {packet_size_i, 6'b000000});
    a_cnt_mode = mode_i != ModeLfsr;
    a_rate17 = 17'(marking_rate_i);
  end
  // lfsr_thresh_i = floor(65536 / (R + 1)): thresh * (R + 1) <= 65536 < (thresh + 1) * (R + 1).
  logic [16:0] a_r1;
  logic [33:0] a_lo, a_hi;
  always_comb begin
    a_r1 = a_rate17 + 17'd1;
    a_lo = 34'(lfsr_thresh_i) * 34'(a_r1);
    a_hi = a_lo + 34'(a_r1);
  end
  logic [5:0] a_ok, a_ok_q;
  always_comb begin
    a_ok[0] = !rst_ni || !mark_o || a_elig;
    a_ok[1] = !rst_ni || (lfsr_seed_i != 16'd0 && !cfg_err_o);
    a_ok[2] = !rst_ni || !a_cnt_mode || !a_seen_q || a_rate_q != marking_rate_i || !a_elig
              || mark_o == (a_gap_q == a_rate17);
    a_ok[3] = !rst_ni || !a_cnt_mode || !a_seen_q || a_rate_q != marking_rate_i
              || (a_gap_q <= a_rate17 && 17'(cnt_q) == ((a_gap_q == a_rate17) ? 17'd0 : a_gap_q + 17'd1));
    a_ok[4] = !rst_ni || lfsr_q != 16'd0;
    // Read in LFSR mode only (a counter-mode user may leave it 0).
    a_ok[5] = !rst_ni || a_cnt_mode || (a_lo <= 34'd65536 && a_hi > 34'd65536);
  end
  // The properties are registered and the registers asserted (a cycle late), so the check does not depend
  // on how a simulator orders clocked blocks.
  always_ff @(posedge clk_i) begin
    a_ok_q <= a_ok;
    if (!rst_ni || !a_cnt_mode || (a_seen_q && a_rate_q != marking_rate_i)) begin
      // Out of counter mode, or R changed: the count restarts at the next mark.
      a_seen_q <= 1'b0;
      a_gap_q  <= '0;
    end else if (a_elig) begin
      if (mark_o) begin
        a_seen_q <= 1'b1;
        a_gap_q  <= '0;
        a_rate_q <= marking_rate_i;
      end else if (a_gap_q != 17'h1FFFF) begin
        a_gap_q  <= a_gap_q + 17'd1;
      end
    end
  end
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);  // marks only an eligible packet
    assert (a_ok_q[1]);  // LFSR seed non-zero
    assert (a_ok_q[2]);  // one of every Marking_Rate + 1 eligible packets
    assert (a_ok_q[3]);  // the counter agrees with the count since the last mark
    assert (a_ok_q[4]);  // the LFSR is never 0
    assert (a_ok_q[5]);  // in LFSR mode, lfsr_thresh_i is floor(65536 / (Marking_Rate + 1))
  end
`endif

endmodule

`default_nettype wire
