// cong_detect_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust CongDetect's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into cong_detect and
// compares every output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle, port,
// RTL and model values in hex. Run: vvp cong_detect_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module cong_detect_tb;
  localparam int NIn = 64;

  logic              clk = 1'b0, rst_ni;
  logic [3:0]        threshold;
  logic [16*16-1:0]  thr_table;
  logic [1:0]        compare;
  logic [11:0]       root_min_credits, credit_avail;
  logic              victim_mask, root_rule, stall;
  logic [15:0]       stall_window;
  logic [NIn*16-1:0] voq_fill;
  logic [6:0]        voq_cnt;
  logic              cong, root, victim, mark_state;
  logic              exp_cong, exp_root, exp_victim, exp_mark_state, cfg_err, exp_cfg_err;

  cong_detect #(.NIn(NIn)) dut (
    .clk_i(clk), .rst_ni(rst_ni),
    .threshold_i(threshold), .thr_table_i(thr_table), .compare_i(compare),
    .root_min_credits_i(root_min_credits), .root_rule_i(root_rule), .stall_window_i(stall_window),
    .victim_mask_i(victim_mask),
    .voq_fill_i(voq_fill), .voq_cnt_i(voq_cnt), .credit_avail_i(credit_avail), .stall_i(stall),
    .cong_o(cong), .root_o(root), .victim_o(victim), .mark_state_o(mark_state),
    .cfg_err_o(cfg_err)
  );

  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h", threshold, thr_table, compare, root_min_credits, root_rule,
                    stall_window, victim_mask);
      end else begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h %h %h %h", rst_ni, voq_fill, voq_cnt, credit_avail, stall, exp_cong,
                    exp_root, exp_victim, exp_mark_state, exp_cfg_err);
        expect_fields(r, 10);
        #1;
        check("cong_o", 64'(cong), 64'(exp_cong));
        check("root_o", 64'(root), 64'(exp_root));
        check("victim_o", 64'(victim), 64'(exp_victim));
        check("mark_state_o", 64'(mark_state), 64'(exp_mark_state));
        check("cfg_err_o", 64'(cfg_err), 64'(exp_cfg_err));
        clock_edge;
      end
    end
    checked;
  end
endmodule
