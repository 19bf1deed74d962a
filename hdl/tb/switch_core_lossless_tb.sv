// switch_core_lossless_tb: a bench of switch_core's own, checking it against the IBA rather than against its
// Rust twin. Four link partners send packets (1 to 4,224 bytes, random output and VL) keeping to the credit
// rule: a packet of b blocks goes only while (FCCL - (FCTBS + b)) mod 4096 <= 2048, FCCL being the last one
// the core advertised on that port and VL; each sender sends its FCTBS now and then. The four far ends
// return credit for what they received (a 256-block buffer each, drained at once) while their links stall at
// random; phases hold outputs not-ready for long stretches, so buffers fill to the credit limit. Checked
// every cycle: no drop, no credit overrun, no send without credit (and the core's own assertions); at the
// end, after a drain, every packet delivered once, with its length, to its output and VL, in order per
// (input, output, VL). Prints "switch_core lossless: N packets, no loss" or "FAIL: ..." and the first error.
// Build and run: hdl/tb/lossless.sh (Verilator --binary; Icarus 11 cannot run switch_core, see README).
`timescale 1ns / 1ps
`default_nettype none
module switch_core_lossless_tb;
  localparam int NPorts = 4, NVl = 2, PW = 2, VlW = 1;
  localparam int Cycles = 200000, Drain = 20000;

  logic clk = 1'b0, rst_ni = 1'b0;
  logic [NPorts-1:0]        pkt_valid, fc_valid, out_ready;
  logic [NPorts*VlW-1:0]    pkt_vl, fc_vl;
  logic [NPorts*13-1:0]     pkt_bytes;
  logic [NPorts*PW-1:0]     pkt_dst;
  logic [NPorts*12-1:0]     fc_fctbs, fc_fccl;
  logic [NPorts-1:0]        out_valid, out_fecn, drop;
  logic [NPorts*VlW-1:0]    out_vl;
  logic [NPorts*PW-1:0]     out_src;
  logic [NPorts*13-1:0]     out_bytes;
  logic [NPorts*NVl-1:0]    fc_send, mark_state, tx_err, overflow;
  logic [NPorts*NVl*12-1:0] fccl, avail;

  switch_core u_dut (
    .clk_i(clk), .rst_ni,
    .buf_blocks_i(16'd128), .fc_interval_i(16'd64), .fc_on_change_i(1'b1), .fccl_cap_i(12'd2048),
    .fccl_reset_i(12'd0),
    .hi_vl_i(16'd0), .hi_weight_i(32'd0), .hi_n_i(3'd0),
    .lo_vl_i(16'h0010), .lo_weight_i(32'h0000_1010), .lo_n_i(3'd2), .vl_high_limit_i(8'd0),
    .threshold_i(4'd8), .thr_table_i({16{16'd100}}), .compare_i(2'd1), .root_min_credits_i(12'd0),
    .victim_mask_i(1'b0), .packet_size_i(8'd0), .marking_rate_i(16'd0), .mode_i(1'b0),
    .lfsr_seed_i(16'hACE1), .lfsr_thresh_i(17'd0),
    .pkt_valid_i(pkt_valid), .pkt_vl_i(pkt_vl), .pkt_bytes_i(pkt_bytes), .pkt_dst_i(pkt_dst),
    .fc_valid_i(fc_valid), .fc_vl_i(fc_vl), .fc_fctbs_i(fc_fctbs), .fc_fccl_i(fc_fccl),
    .out_ready_i(out_ready),
    .out_valid_o(out_valid), .out_vl_o(out_vl), .out_src_o(out_src), .out_bytes_o(out_bytes),
    .out_fecn_o(out_fecn), .fc_send_o(fc_send), .fccl_o(fccl), .avail_o(avail),
    .mark_state_o(mark_state), .tx_err_o(tx_err), .overflow_o(overflow), .drop_o(drop)
  );

  // Senders: credit state per (input, VL), the link busy for a packet's blocks.
  logic [11:0] s_fccl [NPorts][NVl];
  logic [11:0] s_fctbs [NPorts][NVl];
  int          s_busy [NPorts];
  // Far ends: blocks received per (output, VL); the credit they return is 256 blocks beyond that.
  logic [11:0] r_abr [NPorts][NVl];
  // Scoreboard: packets sent per (input, output, VL) and received, as sequence numbers and lengths.
  int          sent_n [NPorts][NPorts][NVl];
  int          recv_n [NPorts][NPorts][NVl];
  logic [12:0] lens [NPorts][NPorts][NVl][$];
  int          total_sent = 0, total_recv = 0, errors = 0, hold = 0;
  int unsigned seed = 32'd20261127;

  function automatic int unsigned rnd(input int unsigned n);
    seed = seed * 32'd1664525 + 32'd1013904223;
    return (seed >> 8) % n;
  endfunction

  function automatic int blocks_of(input int bytes);
    return (bytes + 63) / 64;
  endfunction

  task automatic fail(input string what);
    if (errors == 0) $display("FAIL: %s", what);
    errors++;
  endtask

  initial begin
    for (int p = 0; p < NPorts; p++) begin
      s_busy[p] = 0;
      for (int v = 0; v < NVl; v++) begin
        s_fccl[p][v] = 12'd0;
        s_fctbs[p][v] = 12'd0;
        r_abr[p][v] = 12'd0;
        for (int o = 0; o < NPorts; o++) begin
          sent_n[p][o][v] = 0;
          recv_n[p][o][v] = 0;
        end
      end
    end
    {pkt_valid, fc_valid, out_ready, pkt_vl, fc_vl, pkt_bytes, pkt_dst, fc_fctbs, fc_fccl} = '0;
    #1 clk = 1'b1; #1 clk = 1'b0;
    rst_ni = 1'b1;
    for (int c = 0; c < Cycles + Drain; c++) begin
      // Inputs of this cycle, from the state the last edge left.
      pkt_valid = '0;
      fc_valid = '0;
      if (hold == 0 && rnd(2000) == 0) hold = 200 + rnd(3000);
      for (int p = 0; p < NPorts; p++) begin
        int v, o, bytes, b;
        v = rnd(NVl);
        o = rnd(NPorts);
        bytes = (rnd(4) == 0) ? 4224 - rnd(64) : 26 + rnd(2200);
        b = blocks_of(bytes);
        // A flow-control packet now and then: the sender's FCTBS (the blocks it sent before this cycle) for
        // input p, the far end's FCCL for output p, on one VL (a link carries both directions' packets).
        if (rnd(16) == 0) begin
          int fv;
          fv = rnd(NVl);
          fc_valid[p] = 1'b1;
          fc_vl[VlW*p +: VlW] = VlW'(fv);
          fc_fctbs[12*p +: 12] = s_fctbs[p][fv];
          fc_fccl[12*p +: 12] = r_abr[p][fv] + 12'd256;
        end
        if (s_busy[p] > 0) s_busy[p]--;
        if (c < Cycles && s_busy[p] == 0 && rnd(3) != 0
            && 12'(s_fccl[p][v] - (s_fctbs[p][v] + 12'(b))) <= 12'd2048) begin
          pkt_valid[p] = 1'b1;
          pkt_vl[VlW*p +: VlW] = VlW'(v);
          pkt_dst[PW*p +: PW] = PW'(o);
          pkt_bytes[13*p +: 13] = 13'(bytes);
          s_fctbs[p][v] = s_fctbs[p][v] + 12'(b);
          s_busy[p] = b;
          lens[p][o][v].push_back(13'(bytes));
          sent_n[p][o][v]++;
          total_sent++;
        end
        out_ready[p] = (hold > 0 && p < 2) ? 1'b0 : (rnd(10) != 0);
      end
      if (hold > 0) hold--;
      #1 clk = 1'b1;
      // Outputs of the edge: checks, deliveries, advertised credit.
      if (drop != '0) fail($sformatf("cycle %0d: drop_o %b", c, drop));
      if (overflow != '0) fail($sformatf("cycle %0d: overflow_o %b", c, overflow));
      if (tx_err != '0) fail($sformatf("cycle %0d: tx_err_o %b", c, tx_err));
      for (int p = 0; p < NPorts; p++) begin
        for (int v = 0; v < NVl; v++) begin
          if (fc_send[p*NVl + v]) s_fccl[p][v] = fccl[12*(p*NVl + v) +: 12];
        end
        if (out_valid[p]) begin
          int i, v;
          logic [12:0] want;
          i = int'(out_src[PW*p +: PW]);
          v = int'(out_vl[VlW*p +: VlW]);
          if (lens[i][p][v].size() == 0) begin
            fail($sformatf("cycle %0d: output %0d VL %0d sent a packet from input %0d never sent there", c, p, v, i));
          end else begin
            want = lens[i][p][v].pop_front();
            if (out_bytes[13*p +: 13] != want)
              fail($sformatf("cycle %0d: output %0d VL %0d from %0d: %0d bytes, expected %0d (order)", c, p, v, i,
                             out_bytes[13*p +: 13], want));
          end
          r_abr[p][v] = r_abr[p][v] + 12'(blocks_of(int'(out_bytes[13*p +: 13])));
          recv_n[i][p][v]++;
          total_recv++;
        end
      end
      #1 clk = 1'b0;
    end
    for (int i = 0; i < NPorts; i++)
      for (int o = 0; o < NPorts; o++)
        for (int v = 0; v < NVl; v++)
          if (recv_n[i][o][v] != sent_n[i][o][v])
            fail($sformatf("input %0d output %0d VL %0d: %0d sent, %0d delivered", i, o, v, sent_n[i][o][v],
                           recv_n[i][o][v]));
    if (total_sent < 20000) fail($sformatf("only %0d packets sent", total_sent));
    if (errors == 0) $display("switch_core lossless: %0d packets, no loss", total_sent);
    else $display("FAIL: %0d errors", errors);
    $finish;
  end
endmodule
`default_nettype wire
