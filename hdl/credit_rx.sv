// credit_rx: receiver side of InfiniBand link-level flow control for one VL.
// Twin of rtl_model::blocks::credit_rx::CreditRx (same ports, widths, reset values, same-cycle order).
//
// Counts blocks received (ABR, 12 bits), tracks free buffer blocks, and advertises
// FCCL = (ABR + min(free, fccl_cap)) mod 4096. A flow-control packet from the transmitter loads ABR := FCTBS
// (plus the blocks received in the same cycle, which count after it).
//
// | port               | dir | width | meaning                                                            |
// |--------------------|-----|-------|--------------------------------------------------------------------|
// | clk_i              | in  | 1     | clock, rising edge                                                 |
// | rst_ni             | in  | 1     | synchronous reset, active low                                      |
// | buf_blocks_i       | in  | 16    | configuration (held): buffer size of this VL in blocks, >= 1       |
// | fc_interval_i      | in  | 16    | configuration (held): cycles between periodic FC packets, >= 1     |
// | fc_on_change_i     | in  | 1     | configuration (held): also send when FCCL differs from last sent   |
// | fccl_cap_i         | in  | 12    | configuration (held): largest credit advertised beyond ABR, <= 2048 |
// | blk_rx_i           | in  | 7     | data blocks received this cycle                                    |
// | fc_valid_i         | in  | 1     | a flow-control packet from the transmitter arrived                 |
// | fc_fctbs_i         | in  | 12    | its FCTBS                                                          |
// | blk_free_i         | in  | 7     | blocks drained from the buffer this cycle                          |
// | abr_o              | out | 12    | adjusted blocks received (abr_q)                                   |
// | free_o             | out | 16    | free buffer blocks (free_q)                                        |
// | fccl_o             | out | 12    | (abr_q + min(free_q, fccl_cap_i)) mod 4096                         |
// | fc_send_o          | out | 1     | a flow-control packet carrying fccl_o goes out this cycle          |
// | overflow_o         | out | 1     | blk_rx_i > free_q: more data than space                            |
// | drain_err_o        | out | 1     | blk_free_i above the blocks held after this cycle's arrivals       |
// | cfg_err_o          | out | 4     | configuration rules broken, a bit per rule (below)                 |
//
// State: abr_q (12), free_q (16), timer_q (16, cycles until the periodic packet; 0 after reset so the first
// packet leaves in the first cycle after reset), last_fccl_q (12, FCCL of the last packet sent).
// While rst_ni is low the value outputs show the reset values and the strobes are 0.
// The configuration is made of input ports, not parameters, so one Verilated model covers every configuration.
// cfg_err_o flags the held values the Rust Config::validate refuses (Config::cfg_err, the same bits), from the
// configuration ports alone (combinational, also during reset), and an assertion fails on any bit:
//   bit 0  buf_blocks_i == 0
//   bit 1  fc_interval_i == 0   (then the timer reloads with 0: a flow-control packet every cycle)
//   bit 2  fccl_cap_i == 0      (no credit is ever advertised beyond ABR)
//   bit 3  fccl_cap_i > 2048    (then the cap used is 2048: the transmitter's check stays unambiguous)
// The two substitutions keep a flagged configuration from breaking the link; they change nothing for a valid one.
//
// Fault-injection variants (build-time, for the co-simulation's self-test; never define them otherwise):
//   IBCYCLE_FAULT_FCCL_CAP   FCCL advertises all free blocks, without the 2048 cap (the transmitter's check goes ambiguous)
//   IBCYCLE_FAULT_ABR_LOAD   an FC packet loads ABR := FCTBS and drops the blocks received in the same cycle
//   IBCYCLE_FAULT_FC_TIMER   the periodic timer reloads with fc_interval instead of fc_interval - 1 (one cycle late)
//   IBCYCLE_FAULT_OVERFLOW_AT_FULL  overflow_o also when the blocks received exactly fill the buffer (>= for >)
//   IBCYCLE_FAULT_CAP_CHECK  cfg_err_o bit 3 also for a cap of exactly 2048 (>= for >), the default cap
// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module credit_rx (
  input  logic        clk_i,
  input  logic        rst_ni,
  // configuration, held constant
  input  logic [15:0] buf_blocks_i,
  input  logic [15:0] fc_interval_i,
  input  logic        fc_on_change_i,
  input  logic [11:0] fccl_cap_i,
  // data and flow-control packets from the transmitter
  input  logic [6:0]  blk_rx_i,
  input  logic        fc_valid_i,
  input  logic [11:0] fc_fctbs_i,
  // buffer drain
  input  logic [6:0]  blk_free_i,
  // credit state and flow-control packet out
  output logic [11:0] abr_o,
  output logic [15:0] free_o,
  output logic [11:0] fccl_o,
  output logic        fc_send_o,
  output logic        overflow_o,
  output logic        drain_err_o,
  // configuration check
  output logic [3:0]  cfg_err_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_ABR_LOAD
  $fatal(1, "IBCYCLE_FAULT_ABR_LOAD is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_FCCL_CAP
  $fatal(1, "IBCYCLE_FAULT_FCCL_CAP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_FC_TIMER
  $fatal(1, "IBCYCLE_FAULT_FC_TIMER is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_OVERFLOW_AT_FULL
  $fatal(1, "IBCYCLE_FAULT_OVERFLOW_AT_FULL is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_CAP_CHECK
  $fatal(1, "IBCYCLE_FAULT_CAP_CHECK is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Configuration rules (see the header), and the values used in their place when broken.
  logic        cap_above;
  // Unread only in the IBCYCLE_FAULT_FCCL_CAP variant, which drops the cap.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [11:0] cap;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [15:0] reload;
  always_comb begin
    cap_above = fccl_cap_i > 12'd2048;
    cap       = cap_above ? 12'd2048 : fccl_cap_i;
    reload    = (fc_interval_i == 16'd0) ? 16'd0 : fc_interval_i - 16'd1;
    cfg_err_o[0] = buf_blocks_i == 16'd0;
    cfg_err_o[1] = fc_interval_i == 16'd0;
    cfg_err_o[2] = fccl_cap_i == 12'd0;
`ifdef IBCYCLE_FAULT_CAP_CHECK
    cfg_err_o[3] = fccl_cap_i >= 12'd2048;
`else
    cfg_err_o[3] = cap_above;
`endif
  end

  logic [11:0] abr_q, abr_d;
  logic [15:0] free_q, free_d;
  // Blocks held, buf_blocks_i - free_q, kept as a register of its own (the Rust block has no such state):
  // the next free count then needs no subtraction from the buffer size first, which kept the path through
  // the drain within the depth budget.
  logic [15:0] held_q, held_d;
  logic [15:0] timer_q, timer_d;
  logic [11:0] last_fccl_q, last_fccl_d;

  // Credit advertised from the current state (and from the reset state while in reset).
  logic [15:0] free_cur;
  logic [11:0] abr_cur;
  logic [15:0] lead;
  logic [11:0] fccl;
  logic        send;
  // This cycle's arrivals beyond the free blocks (overflow), and the drain beyond the blocks then held
  // (free_q - blk_rx_i saturated at 0 from a buffer of buf_blocks_i: held_q + blk_rx_i, or the whole buffer
  // after an overflow). The held count is at least 128 (more than any drain) unless held_q is below 128,
  // so the drain compares 8-bit sums only.
  logic        over_rx, over_drain;
  // The next counts without a drain error, free_q - blk_rx_i + blk_free_i and held_q + blk_rx_i -
  // blk_free_i, by carry select: the low 7 bits of the count plus the one 7-bit count less the other (9
  // bits, -127..254: three rows reduced to two by one row of full adders, the complement's + 1 in the
  // carries' free low bit, then one 9-bit carry chain), and the high 9 bits less 1, as they are or plus 1
  // (from the registers, beside it) selected by that sum's top bits: no 16-bit carry chain after the
  // inputs. The held sum's sign is also the drain's compare (the drain above the held low bits plus the
  // arrivals).
  logic [8:0]  dr_a, dr_b, dr_c, dr_s, fl_a, fl_b, fl_c, fl_s;
  // The top carries have no bit to go to (the sums fit in 9 bits).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [8:0]  dr_y, fl_y;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [15:0] free_next, held_next;
  // Unread only in the IBCYCLE_FAULT_ABR_LOAD variant, which loads ABR without the same-cycle blocks.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [11:0] abr_base;
  /* verilator lint_on UNUSEDSIGNAL */
  // FCCL is mod 4096, so the lead's bits above 11 drop out of the sum by design.
  logic        unused_lead_hi;
  assign unused_lead_hi = ^lead[15:12];

  always_comb begin
    abr_d       = abr_q;
    free_d      = free_q;
    held_d      = held_q;
    timer_d     = timer_q;
    last_fccl_d = last_fccl_q;
    abr_cur     = rst_ni ? abr_q : 12'd0;
    free_cur    = rst_ni ? free_q : buf_blocks_i;
`ifdef IBCYCLE_FAULT_FCCL_CAP
    lead        = free_cur;
`else
    lead        = (free_cur < 16'(cap)) ? free_cur : 16'(cap);
`endif
    fccl        = abr_cur + lead[11:0];
    send        = (timer_q == 16'd0) || (fc_on_change_i && (fccl != last_fccl_q));
    over_rx     = 16'(blk_rx_i) > free_q;
    dr_a        = {2'b00, held_q[6:0]};
    dr_b        = {2'b00, blk_rx_i};
    dr_c        = ~{2'b00, blk_free_i};
    dr_y        = (dr_a & dr_b) | (dr_a & dr_c) | (dr_b & dr_c);
    dr_s        = (dr_a ^ dr_b ^ dr_c) + {dr_y[7:0], 1'b1};
    over_drain  = over_rx ? (16'(blk_free_i) > buf_blocks_i)
                          : (held_q[15:7] == 9'd0 && dr_s[8]);
    fl_a        = {2'b00, free_q[6:0]};
    fl_b        = {2'b00, blk_free_i};
    fl_c        = ~{2'b00, blk_rx_i};
    fl_y        = (fl_a & fl_b) | (fl_a & fl_c) | (fl_b & fl_c);
    fl_s        = (fl_a ^ fl_b ^ fl_c) + {fl_y[7:0], 1'b1};
    free_next   = {fl_s[8] ? free_q[15:7] - 9'd1 : fl_s[7] ? free_q[15:7] + 9'd1 : free_q[15:7], fl_s[6:0]};
    held_next   = {dr_s[8] ? held_q[15:7] - 9'd1 : dr_s[7] ? held_q[15:7] + 9'd1 : held_q[15:7], dr_s[6:0]};
    abr_base    = fc_valid_i ? fc_fctbs_i : abr_q;

    abr_o       = abr_cur;
    free_o      = free_cur;
    fccl_o      = fccl;
    fc_send_o   = 1'b0;
    overflow_o  = 1'b0;
    drain_err_o = 1'b0;

    if (rst_ni) begin
      fc_send_o   = send;
`ifdef IBCYCLE_FAULT_OVERFLOW_AT_FULL
      overflow_o  = 16'(blk_rx_i) >= free_q;
`else
      overflow_o  = 16'(blk_rx_i) > free_q;
`endif
      drain_err_o = over_drain;
`ifdef IBCYCLE_FAULT_ABR_LOAD
      abr_d       = fc_valid_i ? fc_fctbs_i : abr_q + 12'(blk_rx_i);
`else
      abr_d       = abr_base + 12'(blk_rx_i);
`endif
      // A drain error frees the whole buffer (the drain is cut to the blocks held); after an overflow the
      // arrivals filled it, so what is free is what drained.
      if (over_drain) begin
        free_d = buf_blocks_i;
        held_d = 16'd0;
      end else if (over_rx) begin
        free_d = 16'(blk_free_i);
        held_d = buf_blocks_i - 16'(blk_free_i);
      end else begin
        free_d = free_next;
        held_d = held_next;
      end
      if (send) begin
`ifdef IBCYCLE_FAULT_FC_TIMER
        timer_d     = reload + 16'd1;
`else
        timer_d     = reload;
`endif
        last_fccl_d = fccl;
      end else if (timer_q != 16'd0) begin
        timer_d = timer_q - 16'd1;
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      abr_q       <= 12'd0;
      free_q      <= buf_blocks_i;
      held_q      <= 16'd0;
      timer_q     <= 16'd0;
      last_fccl_q <= 12'd0;
    end else begin
      abr_q       <= abr_d;
      free_q      <= free_d;
      held_q      <= held_d;
      timer_q     <= timer_d;
      last_fccl_q <= last_fccl_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // IBA FCCL: (ABR + min(free, cap)) mod 4096, with the cap at most 2048; free never above the buffer.
  logic [11:0] a_lead;
  always_comb a_lead = (free_o < 16'(fccl_cap_i)) ? free_o[11:0] : fccl_cap_i;
  // Each property is evaluated on this cycle's settled values and registered; the registered bits are
  // asserted, so the check does not depend on how a simulator orders clocked blocks (reported a cycle late).
  // The configuration properties are the rules themselves, not cfg_err_o, so a wrong flag cannot hide one.
  // The carry-save sums are the difference forms they replace: the 9-bit net of arrivals and drain, then
  // one 16-bit sum each; the drain above the held low bits plus the arrivals, compared after their sum.
  logic [8:0]  a_net;
  logic [7:0]  a_held_lo;
  always_comb begin
    a_net = {2'b00, blk_rx_i} - {2'b00, blk_free_i};
    a_held_lo = {1'b0, held_q[6:0]} + {1'b0, blk_rx_i};
  end
  logic [5:0] a_ok, a_ok_q;
  always_comb begin
    a_ok[5] = !rst_ni || (free_next == free_q - {{7{a_net[8]}}, a_net}
                          && held_next == held_q + {{7{a_net[8]}}, a_net}
                          && dr_s[8] == ({1'b0, blk_free_i} > a_held_lo));
    a_ok[4] = !rst_ni || held_q + free_q == buf_blocks_i;
    a_ok[0] = !rst_ni || (buf_blocks_i != 16'd0 && fc_interval_i != 16'd0 && cfg_err_o == 4'd0);
    a_ok[1] = !rst_ni || (fccl_cap_i != 12'd0 && fccl_cap_i <= 12'd2048);
    a_ok[2] = !rst_ni || (free_o <= buf_blocks_i);
    a_ok[3] = !rst_ni || (fccl_o == abr_o + a_lead);
  end
  always_ff @(posedge clk_i) a_ok_q <= a_ok;
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);
    assert (a_ok_q[1]);
    assert (a_ok_q[2]);
    assert (a_ok_q[3]);
    assert (a_ok_q[4]);  // the held count is the buffer less the free count
    assert (a_ok_q[5]);
  end
`endif

endmodule

`default_nettype wire
