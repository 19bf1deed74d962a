// vl_arb_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust VlArb's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into vl_arb and compares every
// output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle, port, RTL and model
// values in hex. Run: vvp vl_arb_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module vl_arb_tb;
  localparam int TableMax = 64;

  logic                  clk = 1'b0, rst_ni;
  logic [TableMax*4-1:0] hi_vl, lo_vl;
  logic [TableMax*8-1:0] hi_weight, lo_weight;
  logic [6:0]            hi_n, lo_n;
  logic [7:0]            vl_high_limit;
  logic                  ready, hold;
  logic [15:0]           req, credit_ok;
  logic [16*7-1:0]       len;
  logic                  gnt_valid, gnt_high;
  logic [3:0]            gnt_vl;
  logic                  exp_valid, exp_high;
  logic [3:0]            exp_vl;
  logic [3:0]            cfg_err, exp_cfg_err;

  vl_arb #(.TableMax(TableMax)) dut (
    .clk_i(clk), .rst_ni(rst_ni),
    .hi_vl_i(hi_vl), .hi_weight_i(hi_weight), .hi_n_i(hi_n),
    .lo_vl_i(lo_vl), .lo_weight_i(lo_weight), .lo_n_i(lo_n), .vl_high_limit_i(vl_high_limit),
    .ready_i(ready), .req_i(req), .len_i(len), .credit_ok_i(credit_ok), .hold_i(hold),
    .gnt_valid_o(gnt_valid), .gnt_vl_o(gnt_vl), .gnt_high_o(gnt_high),
    .cfg_err_o(cfg_err)
  );

  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h", hi_vl, hi_weight, hi_n, lo_vl, lo_weight, lo_n, vl_high_limit);
      end else begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h %h %h %h", rst_ni, ready, req, len, credit_ok, hold, exp_valid,
                    exp_vl, exp_high, exp_cfg_err);
        expect_fields(r, 10);
        #1;
        check("gnt_valid_o", 64'(gnt_valid), 64'(exp_valid));
        check("gnt_vl_o", 64'(gnt_vl), 64'(exp_vl));
        check("gnt_high_o", 64'(gnt_high), 64'(exp_high));
        check("cfg_err_o", 64'(cfg_err), 64'(exp_cfg_err));
        clock_edge;
      end
    end
    checked;
  end
endmodule
