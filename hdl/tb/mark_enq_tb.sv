// mark_enq_tb: random stimulus for mark_enq (hdl/mark_enq.sv) against the chain of marker steps it replaces,
// which the module's own assertion computes every cycle (Icarus prints an "ERROR:" line per failed cycle).
// Each cycle: both modes; Marking_Rate near 0..3, around NEv, anywhere, or near 65,535; states within
// Marking_Rate (every reachable counter state), anywhere (not reachable: the module is exact there too), at
// Marking_Rate or 0; events enabled at random with lengths around Packet_Size (0..2), the module's size input
// the compare of each length with Packet_Size (as ib_switch registers it).
// Not part of scripts/test (ib_switch's replay and lossless bench exercise the module in the switch):
//   iverilog -g2012 -Ihdl -Pmark_enq_tb.NEv=8 -o /tmp/mark_enq_tb.vvp hdl/tb/mark_enq_tb.sv hdl/mark_enq.sv
//   vvp -n /tmp/mark_enq_tb.vvp     (prints the mark count; passes when no ERROR line precedes it)
`default_nettype none
`timescale 1ns/1ps
module mark_enq_tb;
  parameter int NEv = 8;
  parameter int Cycles = 200000;
  logic clk = 1'b0, rst_n = 1'b0;
  logic [7:0] ps;
  logic [15:0] mr;
  logic mode;
  logic [16:0] th;
  logic [15:0] s;
  logic ms;
  logic [NEv-1:0] ev;
  logic [NEv*13-1:0] len;
  logic [NEv-1:0] size_ok;
  logic [NEv-1:0] mk;
  logic [15:0] so;
  mark_enq #(.NEv(NEv)) dut (
    .clk_i(clk), .rst_ni(rst_n), .marking_rate_i(mr), .mode_i(mode),
    .lfsr_thresh_i(th), .s_i(s), .mstate_i(ms), .ev_i(ev), .size_ok_i(size_ok), .mark_o(mk), .s_o(so)
  );
  integer nm;
  initial begin
    nm = 0;
    ps = '0; mr = '0; mode = 1'b0; th = '0; s = '0; ms = 1'b0; ev = '0; len = '0; size_ok = '0;
    #1 clk = 1'b1; #1 clk = 1'b0; rst_n = 1'b1;
    for (int i = 0; i < Cycles; i++) begin
      mode = 1'($urandom % 2);
      case ($urandom % 4)
        0: mr = 16'($urandom % 4);
        1: mr = 16'($urandom % (NEv + 3));
        2: mr = 16'($urandom);
        default: mr = 16'hFFFF - 16'($urandom % 3);
      endcase
      th = 17'(65536 / (32'(mr) + 1));
      case ($urandom % 4)
        0: s = 16'($urandom % (32'(mr) + 1));
        1: s = 16'($urandom);
        2: s = mr;
        default: s = '0;
      endcase
      ms = ($urandom % 8) != 0;
      ps = 8'($urandom % 3);
      for (int n = 0; n < NEv; n++) begin
        ev[n] = ($urandom % 3) != 0;
        len[13*n +: 13] = 13'($urandom % 200);
        size_ok[n] = {1'b0, len[13*n +: 13]} >= {ps, 6'b000000};
      end
      #1 clk = 1'b1; #1 clk = 1'b0;
      nm = nm + $countones(mk);
    end
    $display("mark_enq_tb: %0d cycles at %0d events, %0d marks", Cycles, NEv, nm);
    $finish;
  end
endmodule
`default_nettype wire
