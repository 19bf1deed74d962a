// fecn_marker_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust FecnMarker's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into fecn_marker and
// compares the output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle, port, RTL
// and model values in hex. Run: vvp fecn_marker_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module fecn_marker_tb;
  logic        clk = 1'b0, rst_ni;
  logic [7:0]  packet_size;
  logic [15:0] marking_rate, lfsr_seed;
  logic        mode;
  logic [16:0] lfsr_thresh;
  logic        pkt_valid, mark_state;
  logic [12:0] pkt_bytes;
  logic        mark, exp_mark, cfg_err, exp_cfg_err;

  fecn_marker dut (
    .clk_i(clk), .rst_ni(rst_ni),
    .packet_size_i(packet_size), .marking_rate_i(marking_rate), .mode_i(mode), .lfsr_seed_i(lfsr_seed),
    .lfsr_thresh_i(lfsr_thresh),
    .pkt_valid_i(pkt_valid), .pkt_bytes_i(pkt_bytes), .mark_state_i(mark_state),
    .mark_o(mark), .cfg_err_o(cfg_err)
  );

  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h %h %h %h %h", packet_size, marking_rate, mode, lfsr_seed, lfsr_thresh);
      end else begin
        r = $fscanf(fd, "%h %h %h %h %h %h", rst_ni, pkt_valid, pkt_bytes, mark_state, exp_mark, exp_cfg_err);
        expect_fields(r, 6);
        #1;
        check("mark_o", 64'(mark), 64'(exp_mark));
        check("cfg_err_o", 64'(cfg_err), 64'(exp_cfg_err));
        clock_edge;
      end
    end
    checked;
  end
endmodule
