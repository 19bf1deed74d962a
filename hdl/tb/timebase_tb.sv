// timebase_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust Timebase's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into timebase and compares
// every output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle, port, RTL and
// model values in hex. Run: vvp timebase_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module timebase_tb;
  logic        clk = 1'b0, rst_ni;
  logic [31:0] inc, modulus;
  logic        tick, exp_tick;
  logic [31:0] ts, exp_ts;
  logic [1:0]  cfg_err, exp_cfg_err;

  timebase dut (
    .clk_i(clk), .rst_ni(rst_ni),
    .inc_i(inc), .modulus_i(modulus),
    .tick_o(tick), .ts_o(ts), .cfg_err_o(cfg_err)
  );

  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h %h", inc, modulus);
      end else begin
        r = $fscanf(fd, "%h %h %h %h", rst_ni, exp_tick, exp_ts, exp_cfg_err);
        expect_fields(r, 4);
        #1;
        check("tick_o", 64'(tick), 64'(exp_tick));
        check("ts_o", 64'(ts), 64'(exp_ts));
        check("cfg_err_o", 64'(cfg_err), 64'(exp_cfg_err));
        clock_edge;
      end
    end
    checked;
  end
endmodule
