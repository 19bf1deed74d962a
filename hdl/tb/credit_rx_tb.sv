// credit_rx_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust CreditRx's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into credit_rx
// and compares every output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle,
// port, RTL and model values in hex. Run: vvp credit_rx_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module credit_rx_tb;
  logic        clk = 1'b0, rst_ni;
  logic [15:0] buf_blocks, fc_interval;
  logic        fc_on_change;
  logic [11:0] fccl_cap;
  logic [6:0]  blk_rx, blk_free;
  logic        fc_valid;
  logic [11:0] fc_fctbs;
  logic [11:0] abr, fccl, exp_abr, exp_fccl;
  logic [15:0] free, exp_free;
  logic        fc_send, overflow, drain_err, exp_fc_send, exp_overflow, exp_drain_err;
  logic [3:0]  cfg_err, exp_cfg_err;

  credit_rx dut (
    .clk_i(clk), .rst_ni(rst_ni),
    .buf_blocks_i(buf_blocks), .fc_interval_i(fc_interval), .fc_on_change_i(fc_on_change),
    .fccl_cap_i(fccl_cap),
    .blk_rx_i(blk_rx), .fc_valid_i(fc_valid), .fc_fctbs_i(fc_fctbs), .blk_free_i(blk_free),
    .abr_o(abr), .free_o(free), .fccl_o(fccl), .fc_send_o(fc_send), .overflow_o(overflow),
    .drain_err_o(drain_err), .cfg_err_o(cfg_err)
  );

  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h %h %h %h", buf_blocks, fc_interval, fc_on_change, fccl_cap);
      end else begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h %h %h %h %h %h", rst_ni, blk_rx, fc_valid, fc_fctbs, blk_free,
                    exp_abr, exp_free, exp_fccl, exp_fc_send, exp_overflow, exp_drain_err,
                    exp_cfg_err);
        expect_fields(r, 12);
        #1;
        check("abr_o", 64'(abr), 64'(exp_abr));
        check("free_o", 64'(free), 64'(exp_free));
        check("fccl_o", 64'(fccl), 64'(exp_fccl));
        check("fc_send_o", 64'(fc_send), 64'(exp_fc_send));
        check("overflow_o", 64'(overflow), 64'(exp_overflow));
        check("drain_err_o", 64'(drain_err), 64'(exp_drain_err));
        check("cfg_err_o", 64'(cfg_err), 64'(exp_cfg_err));
        clock_edge;
      end
    end
    checked;
  end
endmodule
