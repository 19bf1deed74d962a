// credit_tx: transmitter side of InfiniBand link-level flow control for one VL.
// Twin of rtl_model::blocks::credit_tx::CreditTx (same ports, widths, reset values, same-cycle order).
//
// A packet of b 64-byte blocks may go when (FCCL - (FCTBS + b)) mod 4096 <= 2048: a modular distance of at
// most half the 12-bit counter range means "FCCL is at or ahead of FCTBS + b".
//
// | port           | dir | width | meaning                                                              |
// |----------------|-----|-------|----------------------------------------------------------------------|
// | clk_i          | in  | 1     | clock, rising edge                                                   |
// | rst_ni         | in  | 1     | synchronous reset, active low                                        |
// | fccl_reset_i   | in  | 12    | configuration (held constant): FCCL after reset                     |
// | fc_valid_i     | in  | 1     | a flow-control packet for this VL arrived this cycle                 |
// | fc_fccl_i      | in  | 12    | its FCCL                                                             |
// | req_valid_i    | in  | 1     | a packet asks to be sent                                             |
// | req_blocks_i   | in  | 7     | its length in 64-byte blocks (at most 66 at a 4096-byte MTU)         |
// | take_i         | in  | 1     | the sender commits: the requested blocks are consumed                |
// | fctbs_o        | out | 12    | total blocks sent, mod 4096 (fctbs_q)                                |
// | fccl_o         | out | 12    | last FCCL received (fccl_q)                                          |
// | avail_o        | out | 12    | d = (fccl_q - fctbs_q) mod 4096 if d <= 2048, else 0: credit left    |
// | send_ok_o      | out | 1     | req_valid_i and the packet fits the credit held before this cycle    |
// | err_o          | out | 1     | take_i without send_ok_o: a lossless-flow-control violation          |
//
// avail_o reads a trailing FCCL (the receiver's limit behind the blocks already sent: d above the 2048 window,
// legal while blocks are in flight) as no credit, not as about 4,000 blocks, so cong_detect never takes a port
// without credit for a root.
// While rst_ni is low the value outputs show the reset values and the strobes are 0.
// The configuration is an input port, not a parameter, so one Verilated model covers every configuration.
//
// Fault-injection variants (build-time, for the co-simulation's self-test; never define them otherwise):
//   IBCYCLE_FAULT_CREDIT_WRAP  the send check compares FCTBS + b <= FCCL as plain 13-bit numbers, no modular distance
//   IBCYCLE_FAULT_FC_ORDER     a flow-control packet arriving this cycle is applied before the send check
// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module credit_tx (
  input  logic        clk_i,
  input  logic        rst_ni,
  // configuration, held constant
  input  logic [11:0] fccl_reset_i,
  // flow-control packet from the receiver
  input  logic        fc_valid_i,
  input  logic [11:0] fc_fccl_i,
  // sender request and commit
  input  logic        req_valid_i,
  input  logic [6:0]  req_blocks_i,
  input  logic        take_i,
  // credit state and decision
  output logic [11:0] fctbs_o,
  output logic [11:0] fccl_o,
  output logic [11:0] avail_o,
  output logic        send_ok_o,
  output logic        err_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_CREDIT_WRAP
  $fatal(1, "IBCYCLE_FAULT_CREDIT_WRAP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_FC_ORDER
  $fatal(1, "IBCYCLE_FAULT_FC_ORDER is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Largest modular distance that still reads as "FCCL at or ahead of FCTBS + b".
  // The IBCYCLE_FAULT_CREDIT_WRAP variant bypasses the modular check, leaving distance unread there.
  localparam logic [11:0] CreditWindow = 12'd2048;

  logic [11:0] fctbs_q, fctbs_d;
  logic [11:0] fccl_q, fccl_d;

  // FCTBS after this request, mod 4096, and the distance from it to the FCCL the check uses.
  logic [11:0] need;
  logic [11:0] fccl_chk;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [11:0] distance;
  /* verilator lint_on UNUSEDSIGNAL */
  logic        fits;
  // (fccl_q - fctbs_q) mod 4096, before the window check of avail_o.
  logic [11:0] credit;

  // Every variable is assigned once per evaluation (no default then override): an event-driven simulator
  // sees each intermediate value as a change, and ib_switch closes a loop (its grant, this block's
  // send_ok_o, vl_arb's grant) through this block, so glitches re-run the loop.
  `IBCYCLE_COMB begin
    fccl_chk  = fccl_q;
`ifdef IBCYCLE_FAULT_FC_ORDER
    if (fc_valid_i) fccl_chk = fc_fccl_i;
`endif
    need      = fctbs_q + 12'(req_blocks_i);
    distance  = fccl_chk - need;
`ifdef IBCYCLE_FAULT_CREDIT_WRAP
    fits      = ({1'b0, fctbs_q} + 13'(req_blocks_i)) <= {1'b0, fccl_chk};
`else
    fits      = distance <= CreditWindow;
`endif
    credit    = fccl_q - fctbs_q;
    fctbs_o   = rst_ni ? fctbs_q : 12'd0;
    fccl_o    = rst_ni ? fccl_q : fccl_reset_i;
    avail_o   = rst_ni ? ((credit <= CreditWindow) ? credit : 12'd0)
                       : ((fccl_reset_i <= CreditWindow) ? fccl_reset_i : 12'd0);
    send_ok_o = rst_ni && req_valid_i && fits;
    // An erroneous take still advances FCTBS: the blocks did leave.
    err_o     = rst_ni && take_i && !(req_valid_i && fits);
    fctbs_d   = (rst_ni && take_i) ? need : fctbs_q;
    fccl_d    = (rst_ni && fc_valid_i) ? fc_fccl_i : fccl_q;
  end

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      fctbs_q <= 12'd0;
      fccl_q  <= fccl_reset_i;
    end else begin
      fctbs_q <= fctbs_d;
      fccl_q  <= fccl_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // IBA credit rule: a packet may go exactly when (FCCL - (FCTBS + blocks)) mod 4096 <= 2048; avail_o is the
  // credit left in that window (0 when FCCL trails FCTBS); a take without send_ok is an error.
  logic [11:0] a_dist, a_credit;
  `IBCYCLE_COMB begin
    a_dist = fccl_o - fctbs_o - 12'(req_blocks_i);
    a_credit = fccl_o - fctbs_o;
  end
  // Each property is evaluated on this cycle's settled values and registered; the registered bits are
  // asserted, so the check does not depend on how a simulator orders clocked blocks (reported a cycle late).
  logic [2:0] a_ok, a_ok_q;
  `IBCYCLE_COMB begin
    a_ok[0] = !rst_ni || (send_ok_o == (req_valid_i && a_dist <= 12'd2048));
    a_ok[1] = !rst_ni || (avail_o == ((a_credit <= 12'd2048) ? a_credit : 12'd0));
    a_ok[2] = !rst_ni || (err_o == (take_i && !send_ok_o));
  end
  always_ff @(posedge clk_i) a_ok_q <= a_ok;
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);
    assert (a_ok_q[1]);
    assert (a_ok_q[2]);
  end
`endif

endmodule

`default_nettype wire
