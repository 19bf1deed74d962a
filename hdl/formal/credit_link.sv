// credit_link: a formal harness for the credit loop of one VL. A sender's credit_tx and a receiver's
// credit_rx, joined by a link of zero latency, with everything else left to the solver: when the sender
// has a packet and of what size (1..66 blocks), when it sends a flow-control packet (carrying its FCTBS),
// and how many blocks the receiver frees (never more than it holds). Proved: the sender, taking only when
// credit_tx says send_ok_o, never overruns the receiver's buffer (credit_rx overflow_o stays 0) and never
// takes without credit (err_o), for every buffer size and cap (the solver picks them); and every assertion
// inside the two blocks holds. Run by hdl/formal/run.sh with Yosys's SAT solver.
`default_nettype none
module credit_link (
  input  wire       clk_i,
  input  wire [15:0] buf_i,      // buffer size, taken in the reset cycle and held (any, 1..65535)
  input  wire [11:0] cap_i,      // FCCL cap, taken in the reset cycle and held (any, 1..2048)
  input  wire       rst_ni,
  input  wire       want_i,      // the sender has a packet
  input  wire [6:0] blocks_i,    // its size in blocks
  input  wire       tx_fc_i,     // the sender sends a flow-control packet this cycle
  input  wire [6:0] free_req_i   // blocks the receiver would like to free
);
  logic [11:0] fctbs, tx_fccl, avail, abr, rx_fccl;
  logic [15:0] free;
  logic        send_ok, err, fc_send, overflow, drain_err, take;
  logic [3:0]  cfg_err;
  logic [6:0]  blk_rx, blk_free, held7;
  logic [15:0] held;
  logic [15:0] BufBlocks;
  logic [11:0] FcclCap;

  always_comb begin
    take = want_i && send_ok;
    blk_rx = take ? blocks_i : 7'd0;
    held = BufBlocks - free;
    held7 = (held > 16'd127) ? 7'd127 : held[6:0];
    blk_free = (free_req_i > held7) ? held7 : free_req_i;
  end

  credit_tx u_tx (
    .clk_i, .rst_ni, .fccl_reset_i(12'd0),
    .fc_valid_i(fc_send), .fc_fccl_i(rx_fccl),
    .req_valid_i(want_i), .req_blocks_i(blocks_i), .take_i(take),
    .fctbs_o(fctbs), .fccl_o(tx_fccl), .avail_o(avail), .send_ok_o(send_ok), .err_o(err)
  );

  credit_rx u_rx (
    .clk_i, .rst_ni, .buf_blocks_i(BufBlocks), .fc_interval_i(16'd5), .fc_on_change_i(1'b1),
    .fccl_cap_i(FcclCap),
    .blk_rx_i(blk_rx), .fc_valid_i(tx_fc_i), .fc_fctbs_i(fctbs), .blk_free_i(blk_free),
    .abr_o(abr), .free_o(free), .fccl_o(rx_fccl), .fc_send_o(fc_send), .overflow_o(overflow),
    .drain_err_o(drain_err), .cfg_err_o(cfg_err)
  );

  // Reset in the first cycle, then never again; the configuration is held from then on.
  logic init_q = 1'b1;
  logic [15:0] buf_q;
  logic [11:0] cap_q;
  always_ff @(posedge clk_i) begin
    init_q <= 1'b0;
    if (init_q) begin
      buf_q <= buf_i;
      cap_q <= cap_i;
    end
  end
  always_comb begin
    BufBlocks = init_q ? buf_i : buf_q;
    FcclCap = init_q ? cap_i : cap_q;
  end
  always @(*) begin
    assume (rst_ni == !init_q);
    assume (BufBlocks != 16'd0 && FcclCap != 12'd0 && FcclCap <= 12'd2048);
    assume (blocks_i >= 7'd1 && blocks_i <= 7'd66);
  end
  // The invariants that make the proof inductive, each a property of the loop in its own right: the
  // receiver's ABR tracks the sender's FCTBS (a zero-latency link delivers every block at once), and the
  // sender's credit never exceeds the receiver's free buffer nor the cap.
  logic [11:0] credit;
  always_comb credit = tx_fccl - fctbs;
  always @(*) if (!init_q) begin
    assert (!overflow);
    assert (!err);
    assert (!drain_err);
    assert (cfg_err == 4'd0);
    assert (abr == fctbs);
    assert (16'(credit) <= free && credit <= FcclCap);
    assert (free <= BufBlocks);
  end

  logic unused;
  assign unused = ^{avail};
endmodule
