// cct_shaper_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust CctShaper's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into cct_shaper and
// compares every output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle, port,
// RTL and model values in hex. Run: vvp cct_shaper_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module cct_shaper_tb;
  localparam int CctEntries = 128;

  logic                   clk = 1'b0, rst_ni;
  logic [CctEntries*16-1:0] cct;
  logic [6:0]             ccti_limit, ccti_min;
  logic [7:0]             ccti_increase, trigger_threshold;
  logic [15:0]            ccti_timer, t_pkt;
  logic                   becn, tick, sent;
  logic [6:0]             ccti, exp_ccti;
  logic [23:0]            ird, exp_ird;
  logic                   ready, trigger, exp_ready, exp_trigger;
  logic [1:0]             cfg_err, exp_cfg_err;

  cct_shaper #(.CctEntries(CctEntries)) dut (
    .clk_i(clk), .rst_ni(rst_ni),
    .cct_i(cct), .ccti_limit_i(ccti_limit), .ccti_min_i(ccti_min), .ccti_increase_i(ccti_increase),
    .ccti_timer_i(ccti_timer), .trigger_threshold_i(trigger_threshold), .t_pkt_i(t_pkt),
    .becn_i(becn), .tick_i(tick), .sent_i(sent),
    .ccti_o(ccti), .ird_o(ird), .ready_o(ready), .trigger_o(trigger),
    .cfg_err_o(cfg_err)
  );

  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h", cct, ccti_limit, ccti_min, ccti_increase, ccti_timer,
                    trigger_threshold, t_pkt);
      end else begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h %h %h", rst_ni, becn, tick, sent, exp_ccti, exp_ird, exp_ready,
                    exp_trigger, exp_cfg_err);
        expect_fields(r, 9);
        #1;
        check("ccti_o", 64'(ccti), 64'(exp_ccti));
        check("ird_o", 64'(ird), 64'(exp_ird));
        check("ready_o", 64'(ready), 64'(exp_ready));
        check("trigger_o", 64'(trigger), 64'(exp_trigger));
        check("cfg_err_o", 64'(cfg_err), 64'(exp_cfg_err));
        clock_edge;
      end
    end
    checked;
  end
endmodule
