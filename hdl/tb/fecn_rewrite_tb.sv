// fecn_rewrite_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust FecnRewrite's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into fecn_rewrite
// and compares every output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle,
// port, RTL and model values in hex. The beat width is this testbench's parameter, passed on to the DUT; the
// trace's configuration line names the width it was made for, and a trace of another width is an error.
// Build: iverilog -g2012 -P fecn_rewrite_tb.BeatBytes=8 ...; run: vvp fecn_rewrite_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module fecn_rewrite_tb #(
  parameter int BeatBytes = 16
);
  localparam int NW = $clog2(BeatBytes + 1);

  logic                   clk = 1'b0, rst_ni;
  logic                   valid, sop, eop, mark;
  logic [NW-1:0]          bytes;
  logic [8*BeatBytes-1:0] data;
  logic                   valid_o, sop_o, eop_o, exp_valid, exp_sop, exp_eop;
  logic [NW-1:0]          bytes_o, exp_bytes;
  logic [8*BeatBytes-1:0] data_o, exp_data;
  logic [7:0]             beat;
  logic                   ebp_o, exp_ebp;
  logic [15:0]            errs_o, exp_errs;

  fecn_rewrite #(.BeatBytes(BeatBytes)) dut (
    .clk_i(clk), .rst_ni(rst_ni),
    .valid_i(valid), .sop_i(sop), .eop_i(eop), .bytes_i(bytes), .data_i(data), .mark_i(mark),
    .valid_o(valid_o), .sop_o(sop_o), .eop_o(eop_o), .bytes_o(bytes_o), .data_o(data_o),
    .ebp_o(ebp_o), .vcrc_errs_o(errs_o)
  );

`define TB_CHECK_BITS (8 * BeatBytes)
  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h", beat);
        if (r != 1 || 32'(beat) != BeatBytes) begin
          $display("ERROR: trace made for %0d-byte beats, testbench built for %0d", beat, BeatBytes);
          $finish;
        end
      end else begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h %h %h %h %h %h %h %h", rst_ni, valid, sop, eop, bytes, data,
                    mark, exp_valid, exp_sop, exp_eop, exp_bytes, exp_data, exp_ebp, exp_errs);
        expect_fields(r, 14);
        #1;
        check("valid_o", (8*BeatBytes)'(valid_o), (8*BeatBytes)'(exp_valid));
        check("sop_o", (8*BeatBytes)'(sop_o), (8*BeatBytes)'(exp_sop));
        check("eop_o", (8*BeatBytes)'(eop_o), (8*BeatBytes)'(exp_eop));
        check("bytes_o", (8*BeatBytes)'(bytes_o), (8*BeatBytes)'(exp_bytes));
        check("data_o", data_o, exp_data);
        check("ebp_o", (8*BeatBytes)'(ebp_o), (8*BeatBytes)'(exp_ebp));
        check("vcrc_errs_o", (8*BeatBytes)'(errs_o), (8*BeatBytes)'(exp_errs));
        clock_edge;
      end
    end
    checked;
  end
endmodule
