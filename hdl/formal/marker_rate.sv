// marker_rate: a formal harness for fecn_marker. Every input is the solver's, cycle by cycle (packets,
// sizes, congestion state, Packet_Size, Marking_Rate, even the mode), except reset in the first cycle, a
// non-zero LFSR seed and the threshold derived from Marking_Rate (as the Rust model computes it). Proved: the block's own assertions hold: it marks only eligible packets, and in
// counter mode at least Marking_Rate eligible packets go unmarked between two marks. Run by
// hdl/formal/run.sh with Yosys's SAT solver.
`default_nettype none
module marker_rate (
  input wire        clk_i,
  input wire        rst_ni,
  input wire [7:0]  packet_size_i,
  input wire [15:0] marking_rate_i,
  input wire        mode_i,
  input wire [15:0] lfsr_seed_i,
  input wire [16:0] lfsr_thresh_i,
  input wire        pkt_valid_i,
  input wire [12:0] pkt_bytes_i,
  input wire        mark_state_i
);
  logic mark, cfg_err;
  fecn_marker u_fm (
    .clk_i, .rst_ni, .packet_size_i, .marking_rate_i, .mode_i, .lfsr_seed_i, .lfsr_thresh_i,
    .pkt_valid_i, .pkt_bytes_i, .mark_state_i, .mark_o(mark), .cfg_err_o(cfg_err)
  );
  logic init_q = 1'b1;
  always_ff @(posedge clk_i) init_q <= 1'b0;
  always @(*) begin
    assume (rst_ni == !init_q);
    assume (lfsr_seed_i != 16'd0);
    // lfsr_thresh_i is derived from Marking_Rate, as the Rust FecnMarker::lfsr_thresh computes it.
    assume (34'(lfsr_thresh_i) * 34'(17'(marking_rate_i) + 17'd1) <= 34'd65536);
    assume (34'(lfsr_thresh_i + 17'd1) * 34'(17'(marking_rate_i) + 17'd1) > 34'd65536);
  end
  logic unused;
  assign unused = mark ^ cfg_err;
endmodule
`default_nettype wire
