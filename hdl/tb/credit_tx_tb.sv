// credit_tx_tb: replays a testbench trace (the co-simulation's seeded stimulus and the Rust CreditTx's outputs,
// written by cosim's tbtrace: cosim/src/tb_trace.rs) into credit_tx
// and compares every output every cycle. Ends with "Checked N cycles" or at the first mismatch with cycle,
// port, RTL and model values in hex. Run: vvp credit_tx_tb.vvp +trace=FILE
`timescale 1ns / 1ps
module credit_tx_tb;
  logic        clk = 1'b0, rst_ni;
  logic [11:0] fccl_reset, fc_fccl;
  logic        fc_valid, req_valid, take;
  logic [6:0]  req_blocks;
  logic [11:0] fctbs, fccl, avail, exp_fctbs, exp_fccl, exp_avail;
  logic        send_ok, err, exp_send_ok, exp_err;

  credit_tx dut (
    .clk_i(clk), .rst_ni(rst_ni), .fccl_reset_i(fccl_reset),
    .fc_valid_i(fc_valid), .fc_fccl_i(fc_fccl), .req_valid_i(req_valid), .req_blocks_i(req_blocks),
    .take_i(take),
    .fctbs_o(fctbs), .fccl_o(fccl), .avail_o(avail), .send_ok_o(send_ok), .err_o(err)
  );

  `include "trace_replay.svh"

  initial begin
    open_trace();
    while ($fscanf(fd, "%d", kind) == 1) begin
      if (kind == 0) begin
        r = $fscanf(fd, "%h", fccl_reset);
      end else begin
        r = $fscanf(fd, "%h %h %h %h %h %h %h %h %h %h %h", rst_ni, fc_valid, fc_fccl, req_valid, req_blocks,
                    take, exp_fctbs, exp_fccl, exp_avail, exp_send_ok, exp_err);
        expect_fields(r, 11);
        #1;
        check("fctbs_o", 64'(fctbs), 64'(exp_fctbs));
        check("fccl_o", 64'(fccl), 64'(exp_fccl));
        check("avail_o", 64'(avail), 64'(exp_avail));
        check("send_ok_o", 64'(send_ok), 64'(exp_send_ok));
        check("err_o", 64'(err), 64'(exp_err));
        clock_edge;
      end
    end
    checked;
  end
endmodule
