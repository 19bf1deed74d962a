// ib_switch_lossless_tb: a bench of ib_switch's own, checking it against the InfiniBand spec rather than against
// its Rust twin. Four link partners, one per port, each with both directions of its link:
// - a sender into the switch: per VL a packet waits until the credit rule lets it go, a packet of b blocks only
//   while (FCCL - (FCTBS + b)) mod 4096 <= 2048, FCCL being the last one the switch advertised on tx_fc_* for
//   that port and VL; random DLID (routed by the LFT the bench loads), SL, input VL and wire length (26 bytes
//   to the MTU, a quarter at the MTU), often towards one hot output (several inputs congest one output). The
//   wire is modelled in ticks at the port's rate (num/den bytes per cycle): a head starts no earlier than the
//   last byte of what went before, at its offset within the cycle. Flow-control packets (6 bytes) go when the
//   wire is idle at a cycle's start, carrying the sender's FCTBS (every block sent, all arrived) and the
//   receiver's FCCL for one VL.
// - a receiver behind the switch's output: per VL a buffer of PartnerBuf blocks, drained at random, advertising
//   FCCL = ABR + free blocks; in long random stretches it drains nothing and sends no flow-control packet
//   (back-pressure: the switch's buffers fill to the credit limit), then releases.
// The switch is configured through its held ports and its table write port (LFT and SL2VL, asymmetric: the
// (input, output) and (output, input) tables differ), at mixed link rates (cut-through and store-and-forward)
// and speed-ups, with its own assertions on. Checked every cycle: no drop_o, overflow_o or cfg_err_o; every
// packet leaves once, at the port the LFT names for its DLID, on the VL SL2VL names for (input, output, SL),
// with its length, FECN never cleared, in order per (input, output, output VL); the switch never sends beyond
// the credit its partner advertised (nor beyond the partner's buffer), never overlaps two transmissions on a
// wire, and its FCTBS equals the blocks the partner received (IBA: ABR := FCTBS on a lossless link). At the
// end, after a drain with every receiver releasing: every packet delivered, and every (port, VL) advertises
// its whole buffer again (no credit lost).
// Prints "ib_switch lossless: N packets, ... no loss" or "FAIL: ..." with the first error.
// Build and run: hdl/tb/lossless.sh (Verilator --binary, assertions on); its header lists the fault variants.
`timescale 1ns / 1ps
`default_nettype none
module ib_switch_lossless_tb;
  // Four ports, or IB_SWITCH_TB_PORTS defined (lossless.sh --ports N: the fabrics' 18 and 36); past four, the
  // ports repeat the first four's rates and speed-ups and the LFT has four DLIDs a port.
`ifdef IB_SWITCH_TB_PORTS
  localparam int NPorts = `IB_SWITCH_TB_PORTS;
`else
  localparam int NPorts = 4;
`endif
  localparam int NVl = 2, SlotMax = 128, TableMax = 4;
  localparam int LftMax = (NPorts <= 4) ? 16 : 4 * NPorts;
  localparam int PW = (NPorts > 2) ? $clog2(NPorts) : 1;
  localparam int IdxW = 2;
  localparam int BufBlocks = 64;                 // the switch's buffer per input VL (SlotMax = their sum)
  localparam int PartnerBuf = 64;                // each receiver's buffer per VL
  localparam int MtuBlocks = 34;                 // 2,048-byte MTU plus headers
  localparam int MaxLen = MtuBlocks * 64;
  // Cycles of traffic: 400,000, or IB_SWITCH_TB_CYCLES defined (lossless.sh --faults), or the run-time
  // argument +cycles=N (lossless.sh --icarus runs the same number under Icarus and Verilator and compares
  // their counts). Then the drain: every receiver releases and no packet is offered, until every packet
  // sent has been delivered, every receiver is empty and every sender's credit is back at the switch's
  // buffer, then DrainSettle cycles more (a packet the switch still sends fails the per-cycle checks there; a
  // credit that moves again restarts the count); at most Drain cycles, after which the checks below name
  // what did not come back.
`ifdef IB_SWITCH_TB_CYCLES
  int cycles = `IB_SWITCH_TB_CYCLES;
`else
  int cycles = 400000;
`endif
  localparam int Drain = 20000;
  localparam int DrainSettle = 1000;
  localparam int NTags = 1 << 17;

  // Link rates, bytes per cycle num/den: 25, 16, 8 and 22.5 (an input slower than an output stores and
  // forwards). Below 26 bytes per cycle, the shortest packet (26 bytes) never starts and ends in one cycle.
  // Fast links (the run-time argument +fast_links, or IB_SWITCH_TB_FAST_LINKS defined): 32, 32, 16 and 22.5,
  // where a short packet can leave within its start cycle (such a packet was once never released, its input
  // blocks and speed-up read lost, in the RTL and the Rust Switch alike: see hdl/README.md). The fabric's
  // links carry at most a few bytes per cycle, so no shipped scenario reaches it; RATE_MAX_BYTES_PER_CYCLE
  // allows 64. A run-time argument, so that one build runs both speeds.
  // (Functions rather than array parameters, which Icarus 11 does not take.)
  bit fast_links = 1'b0;
  function automatic int rate_num(input int p);
    if (fast_links) return (p % 4 == 0) ? 32 : (p % 4 == 1) ? 32 : (p % 4 == 2) ? 16 : 45;
    return (p % 4 == 0) ? 25 : (p % 4 == 1) ? 16 : (p % 4 == 2) ? 8 : 45;
  endfunction
  function automatic int rate_den(input int p);
    return (p % 4 == 3) ? 2 : 1;
  endfunction
  function automatic int speedup_of(input int p);
    return (p % 4 == 0) ? 2 : (p % 4 == 1) ? 1 : (p % 4 == 2) ? 4 : 2;
  endfunction

  logic clk = 1'b0, rst_ni = 1'b0;

  // Configuration.
  logic [NPorts*17-1:0]        rate_num_v, rate_den_v;
  logic [NPorts*4-1:0]         nvl;
  logic [NPorts*7-1:0]         speedup;
  logic [NPorts-1:0]           mark_enq;
  logic [NPorts*NVl*16-1:0]    buf_blocks;
  logic [NPorts*16-1:0]        fc_interval;
  logic [NPorts*4-1:0]         threshold;
  logic [NPorts*NVl*256-1:0]   thr_table;
  logic [NPorts*2-1:0]         compare;
  logic [NPorts*12-1:0]        root_min;
  logic [NPorts-1:0]           root_rule;
  logic [NPorts*16-1:0]        stall_window;
  logic [NPorts*8-1:0]         packet_size;
  logic [NPorts*16-1:0]        marking_rate, lfsr_seed;
  logic [NPorts*17-1:0]        lfsr_thresh;
  logic [NPorts*TableMax*4-1:0] hi_vl, lo_vl;
  logic [NPorts*TableMax*8-1:0] hi_weight, lo_weight;
  logic [NPorts*(IdxW+1)-1:0]  hi_n, lo_n;
  logic [NPorts*8-1:0]         high_limit;
  logic                        tbl_we = 1'b0, tbl_sel = 1'b0;
  logic [15:0]                 tbl_addr = '0;
  logic [63:0]                 tbl_data = '0;
  // Per-cycle hand-ins and outputs.
  logic [NPorts-1:0]    rx_pkt, rx_fecn, rx_fc;
  logic [NPorts*16-1:0] rx_dlid;
  logic [NPorts*4-1:0]  rx_sl, rx_vl, rx_fc_vl;
  logic [NPorts*13-1:0] rx_len;
  logic [NPorts*17-1:0] rx_off;
  logic [NPorts*32-1:0] rx_tag;
  logic [NPorts*12-1:0] rx_fc_fctbs, rx_fc_fccl;
  logic [NPorts-1:0]    tx_pkt, tx_fecn, tx_fc, drop;
  logic [NPorts*4-1:0]  tx_vl, tx_fc_vl;
  logic [NPorts*13-1:0] tx_len;
  logic [NPorts*17-1:0] tx_off;
  logic [NPorts*32-1:0] tx_tag;
  logic [NPorts*12-1:0] tx_fc_fctbs, tx_fc_fccl;
  logic [NPorts*NVl-1:0] overflow;
  logic                 cfg_err;

  ib_switch #(.NPorts(NPorts), .NVl(NVl), .SlotMax(SlotMax), .LftMax(LftMax), .TableMax(TableMax), .PW(PW)) u_dut (
    .clk_i(clk), .rst_ni,
    .nports_i(6'(NPorts)), .mtu_blocks_i(7'(MtuBlocks)), .rate_num_i(rate_num_v), .rate_den_i(rate_den_v),
    .nvl_i(nvl), .speedup_i(speedup), .mark_enq_i(mark_enq), .buf_blocks_i(buf_blocks),
    .fc_interval_i(fc_interval), .fc_on_change_i(1'b1), .fccl_cap_i(12'd2048), .fccl_reset_i(12'd0),
    .threshold_i(threshold), .thr_table_i(thr_table), .compare_i(compare), .root_min_credits_i(root_min),
    .root_rule_i(root_rule), .stall_window_i(stall_window),
    .victim_mask_i({NPorts{1'b0}}), .packet_size_i(packet_size), .marking_rate_i(marking_rate), .mode_i({NPorts{1'b0}}),
    .lfsr_seed_i(lfsr_seed), .lfsr_thresh_i(lfsr_thresh),
    .hi_vl_i(hi_vl), .hi_weight_i(hi_weight), .hi_n_i(hi_n), .lo_vl_i(lo_vl), .lo_weight_i(lo_weight),
    .lo_n_i(lo_n), .vl_high_limit_i(high_limit),
    .tbl_we_i(tbl_we), .tbl_sel_i(tbl_sel), .tbl_addr_i(tbl_addr), .tbl_data_i(tbl_data),
    .rx_pkt_i(rx_pkt), .rx_dlid_i(rx_dlid), .rx_sl_i(rx_sl), .rx_vl_i(rx_vl), .rx_len_i(rx_len),
    .rx_fecn_i(rx_fecn), .rx_off_i(rx_off), .rx_tag_i(rx_tag),
    .rx_fc_i(rx_fc), .rx_fc_vl_i(rx_fc_vl), .rx_fc_fctbs_i(rx_fc_fctbs), .rx_fc_fccl_i(rx_fc_fccl),
    .tx_pkt_o(tx_pkt), .tx_vl_o(tx_vl), .tx_fecn_o(tx_fecn), .tx_len_o(tx_len), .tx_off_o(tx_off),
    .tx_tag_o(tx_tag), .tx_fc_o(tx_fc), .tx_fc_vl_o(tx_fc_vl), .tx_fc_fctbs_o(tx_fc_fctbs),
    .tx_fc_fccl_o(tx_fc_fccl), .drop_o(drop), .overflow_o(overflow), .cfg_err_o(cfg_err)
  );

  // The tables the bench loads: the LFT (DLID -> port; the last two DLIDs unrouted, never used) and SL2VL.
  // The DLIDs spread over every port by a stride prime to the port count (3 at four ports).
  localparam int LftStride = (NPorts % 3 != 0) ? 3 : (NPorts % 5 != 0) ? 5 : 7;
  function automatic int lft(input int dlid);
    return (dlid < LftMax - 2) ? (dlid * LftStride + 1) % NPorts : 255;
  endfunction
  function automatic int sl2vl(input int in, input int out, input int sl);
    return ((sl * 7 + in * 5 + out * 2) >> 1) % NVl;
  endfunction

  // Senders: credit state per (port, VL), the wire (ticks: cycle * num + offset), a packet waiting per VL.
  logic [11:0] s_fccl [NPorts][NVl];
  logic [11:0] s_fctbs [NPorts][NVl];
  longint      s_wire [NPorts];
  bit          w_v [NPorts][NVl];
  int          w_dlid [NPorts][NVl], w_sl [NPorts][NVl], w_len [NPorts][NVl];
  bit          w_fecn [NPorts][NVl];
  // Receivers: blocks received (ABR), held, the FCCL last handed to the switch, the output wire.
  logic [11:0] r_abr [NPorts][NVl];
  int          r_held [NPorts][NVl];
  logic [11:0] r_adv [NPorts][NVl];
  longint      r_wire [NPorts];
  int          r_hold [NPorts];
  int          r_drain [NPorts];     // drain one block per VL with probability 1/r_drain per cycle
  // Scoreboard, by tag: input, expected output and VL, length, FECN in, sequence per (input, output, VL).
  int          t_in [NTags], t_out [NTags], t_ovl [NTags], t_len [NTags], t_seq [NTags];
  bit          t_fecn [NTags], t_done [NTags];
  int          seq_sent [NPorts][NPorts][NVl];
  int          seq_recv [NPorts][NPorts][NVl];
  int          total_sent = 0, errors = 0, hot = 0, marked = 0, fc_in = 0, fc_out = 0;
  int          delivered = 0;  // distinct packets delivered
  int          ran = 0;        // cycles run, traffic and drain
  int          settled = 0;    // drain cycles since everything came back
  int          stalled = 0;   // port-cycles a receiver withheld credit
  int          starved = 0;   // port-cycles a sender had a packet waiting on each VL, neither with credit
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

  // A random packet for sender p: its output often the hot one, never p itself (a switch does not send a
  // packet back out of the port it came in on), any DLID the LFT routes there.
  task automatic new_packet(input int p, input int v);
    int o, d, len, pick;
    // One draw a statement: Verilator 5 evaluated the operand of `? :` before its condition, when both drew.
    pick = rnd(2);
    o = hot;
    if (pick != 0 || hot == p) o = rnd(NPorts);
    if (o == p) o = (o + 1 + rnd(NPorts - 1)) % NPorts;
    do d = rnd(LftMax - 2); while (lft(d) != o);
    pick = rnd(4);  // (Verilator 5 drew again for each case item when the draw was the case expression)
    case (pick)
      0: len = MaxLen - rnd(64);
      1: len = 26 + rnd(40);
      default: len = 26 + rnd(MaxLen - 25);
    endcase
    w_v[p][v] = 1'b1;
    w_dlid[p][v] = d;
    w_sl[p][v] = rnd(16);
    w_len[p][v] = len;
    w_fecn[p][v] = rnd(8) == 0;
  endtask

  initial begin
`ifdef IB_SWITCH_TB_FAST_LINKS
    fast_links = 1'b1;
`else
    fast_links = $test$plusargs("fast_links") != 0;
`endif
    if ($value$plusargs("cycles=%d", cycles)) begin
      if (cycles < 100) $fatal(1, "+cycles=%0d: at least 100", cycles);
    end
    for (int p = 0; p < NPorts; p++) begin
      rate_num_v[17*p +: 17] = 17'(rate_num(p));
      rate_den_v[17*p +: 17] = 17'(rate_den(p));
      nvl[4*p +: 4] = 4'(NVl);
      speedup[7*p +: 7] = 7'(speedup_of(p));
      mark_enq[p] = p[0];
      fc_interval[16*p +: 16] = 16'd64;
      threshold[4*p +: 4] = 4'd8;
      compare[2*p +: 2] = 2'd1;
      root_min[12*p +: 12] = 12'd0;
      // Odd ports class root and victim by the stall window (the detectors' stall input in use).
      root_rule[p] = p[0];
      stall_window[16*p +: 16] = 16'd300;
      packet_size[8*p +: 8] = 8'd0;
      marking_rate[16*p +: 16] = 16'd3;
      lfsr_seed[16*p +: 16] = 16'hACE1;
      lfsr_thresh[17*p +: 17] = 17'd0;
      // VL arbitration: VL1 high (weight 4, VL_High_Limit 1), both VLs low (weight 16 each).
      hi_vl[p*TableMax*4 +: TableMax*4] = '0;
      hi_vl[p*TableMax*4 +: 4] = 4'd1;
      hi_weight[p*TableMax*8 +: TableMax*8] = '0;
      hi_weight[p*TableMax*8 +: 8] = 8'd4;
      hi_n[p*(IdxW+1) +: IdxW+1] = 3'd1;
      lo_vl[p*TableMax*4 +: TableMax*4] = '0;
      lo_vl[p*TableMax*4 + 4 +: 4] = 4'd1;
      lo_weight[p*TableMax*8 +: TableMax*8] = '0;
      lo_weight[p*TableMax*8 +: 16] = 16'h1010;
      lo_n[p*(IdxW+1) +: IdxW+1] = 3'd2;
      high_limit[8*p +: 8] = 8'd1;
      for (int v = 0; v < NVl; v++) begin
        buf_blocks[16*(p*NVl + v) +: 16] = 16'(BufBlocks);
        for (int t = 0; t < 16; t++) thr_table[256*(p*NVl + v) + 16*t +: 16] = 16'd40;
        s_fccl[p][v] = 12'd0;
        s_fctbs[p][v] = 12'd0;
        w_v[p][v] = 1'b0;
        r_abr[p][v] = 12'd0;
        r_held[p][v] = 0;
        r_adv[p][v] = 12'd0;
        for (int o = 0; o < NPorts; o++) begin
          seq_sent[p][o][v] = 0;
          seq_recv[p][o][v] = 0;
        end
      end
      s_wire[p] = 0;
      r_wire[p] = 0;
      r_hold[p] = 0;
      r_drain[p] = 2;
    end
    {rx_pkt, rx_fecn, rx_fc, rx_dlid, rx_sl, rx_vl, rx_len, rx_off, rx_tag, rx_fc_vl, rx_fc_fctbs, rx_fc_fccl} = '0;
    // The subnet manager's writes, in reset: the LFT, then SL2VL per (input, output) pair.
    for (int e = 0; e < LftMax + NPorts * NPorts; e++) begin
      tbl_we = 1'b1;
      if (e < LftMax) begin
        tbl_sel = 1'b0;
        tbl_addr = 16'(e);
        tbl_data = 64'(lft(e));
      end else begin
        tbl_sel = 1'b1;
        tbl_addr = 16'(e - LftMax);
        tbl_data = '0;
        for (int sl = 0; sl < 16; sl++)
          tbl_data[4*sl +: 4] = 4'(sl2vl((e - LftMax) / NPorts, (e - LftMax) % NPorts, sl));
      end
      #1 clk = 1'b1; #1 clk = 1'b0;
    end
    tbl_we = 1'b0;
    rst_ni = 1'b1;
    for (int c = 0; c < cycles + Drain && settled <= DrainSettle; c++) begin
      longint cs;
      cs = 0;
      // Inputs of this cycle, from the state the last edge left.
      rx_pkt = '0;
      rx_fc = '0;
      if (rnd(4000) == 0) hot = rnd(NPorts);
      for (int p = 0; p < NPorts; p++) begin
        longint start, num, den;
        int v;
        bit fc_now, send;
        num = longint'(rate_num(p));
        den = longint'(rate_den(p));
        cs = longint'(c) * num;
        // (Icarus 11 evaluates both operands of && and || even when the left one decides, and Verilator 5
        // may evaluate an expression's operands out of order: no random draw shares an expression with
        // another or is the right operand of one; each is nested in an if, so both draw one sequence.)
        // The receiver: withholding for a stretch now and then (not in the drain), else draining at random.
        if (c < cycles && r_hold[p] == 0) begin
          if (rnd(5000) == 0) begin
            r_hold[p] = 300 + rnd(3000);
            r_drain[p] = 1 + rnd(8);
          end
        end
        if (r_hold[p] > 0) begin
          r_hold[p]--;
          stalled++;
        end else begin
          for (int u = 0; u < NVl; u++)
            if (r_held[p][u] > 0) begin
              if (c >= cycles) r_held[p][u]--;
              else if (rnd(r_drain[p]) == 0) r_held[p][u]--;
            end
        end
        // A flow-control packet when the wire is idle at the cycle's start: every block sent has arrived.
        start = (s_wire[p] > cs) ? s_wire[p] : cs;
        fc_now = 1'b0;
        if (start == cs && r_hold[p] == 0) fc_now = rnd(12) == 0;
        if (fc_now) begin
          int fv;
          fv = rnd(NVl);
          rx_fc[p] = 1'b1;
          rx_fc_vl[4*p +: 4] = 4'(fv);
          rx_fc_fctbs[12*p +: 12] = s_fctbs[p][fv];
          r_adv[p][fv] = r_abr[p][fv] + 12'(PartnerBuf - r_held[p][fv]);
          rx_fc_fccl[12*p +: 12] = r_adv[p][fv];
          start = cs + 6 * den;
          s_wire[p] = start;
          fc_in++;
        end
        // A data packet: a waiting one with credit (either VL), starting where the wire is free.
        for (int u = 0; u < NVl; u++)
          if (c < cycles && !w_v[p][u]) begin
            if (rnd(2) == 0) new_packet(p, u);
          end
        if (w_v[p][0] && w_v[p][1]
            && 12'(s_fccl[p][0] - (s_fctbs[p][0] + 12'(blocks_of(w_len[p][0])))) > 12'd2048
            && 12'(s_fccl[p][1] - (s_fctbs[p][1] + 12'(blocks_of(w_len[p][1])))) > 12'd2048) starved++;
        v = rnd(NVl);
        if (!(w_v[p][v] && 12'(s_fccl[p][v] - (s_fctbs[p][v] + 12'(blocks_of(w_len[p][v])))) <= 12'd2048))
          v = 1 - v;
        send = 1'b0;
        if (start < cs + num) send = rnd(4) != 0;
        if (send && w_v[p][v]
            && 12'(s_fccl[p][v] - (s_fctbs[p][v] + 12'(blocks_of(w_len[p][v])))) <= 12'd2048) begin
          int o, tag;
          tag = total_sent;
          if (tag >= NTags) $fatal(1, "ib_switch_lossless_tb: more than %0d packets", NTags);
          o = lft(w_dlid[p][v]);
          t_in[tag] = p;
          t_out[tag] = o;
          t_ovl[tag] = sl2vl(p, o, w_sl[p][v]);
          t_len[tag] = w_len[p][v];
          t_fecn[tag] = w_fecn[p][v];
          t_seq[tag] = seq_sent[p][o][t_ovl[tag]];
          seq_sent[p][o][t_ovl[tag]] += 1;
          t_done[tag] = 1'b0;
          rx_pkt[p] = 1'b1;
          rx_dlid[16*p +: 16] = 16'(w_dlid[p][v]);
          rx_sl[4*p +: 4] = 4'(w_sl[p][v]);
          rx_vl[4*p +: 4] = 4'(v);
          rx_len[13*p +: 13] = 13'(w_len[p][v]);
          rx_fecn[p] = w_fecn[p][v];
          rx_off[17*p +: 17] = 17'(start - cs);
          rx_tag[32*p +: 32] = 32'(tag);
          s_fctbs[p][v] = s_fctbs[p][v] + 12'(blocks_of(w_len[p][v]));
          s_wire[p] = start + longint'(w_len[p][v]) * den;
          w_v[p][v] = 1'b0;
          total_sent++;
        end
      end
      #1;
      // Outputs of the cycle: checks, deliveries, advertised credit.
      if (drop != '0) fail($sformatf("cycle %0d: drop_o %b", c, drop));
      if (overflow != '0) fail($sformatf("cycle %0d: overflow_o %b", c, overflow));
      if (cfg_err) fail($sformatf("cycle %0d: cfg_err_o", c));
      for (int p = 0; p < NPorts; p++) begin
        longint num, den;
        num = longint'(rate_num(p));
        den = longint'(rate_den(p));
        cs = longint'(c) * num;
        if (tx_fc[p]) begin
          int v;
          v = int'(tx_fc_vl[4*p +: 4]);
          fc_out++;
          if (v >= NVl) begin
            fail($sformatf("cycle %0d: port %0d sent a flow-control packet for VL %0d", c, p, v));
          end else begin
            s_fccl[p][v] = tx_fc_fccl[12*p +: 12];
            if (tx_fc_fctbs[12*p +: 12] != r_abr[p][v])
              fail($sformatf("cycle %0d: port %0d VL %0d FCTBS %0d, its receiver counted %0d blocks", c, p, v,
                             tx_fc_fctbs[12*p +: 12], r_abr[p][v]));
          end
          if (cs < r_wire[p]) fail($sformatf("cycle %0d: port %0d flow-control packet over a packet", c, p));
          r_wire[p] = cs + 6 * den;
        end
        if (tx_pkt[p]) begin
          int tag, v, b, i, len;
          longint start;
          tag = int'(tx_tag[32*p +: 32]);
          v = int'(tx_vl[4*p +: 4]);
          len = int'(tx_len[13*p +: 13]);
          b = blocks_of(len);
          start = cs + longint'(tx_off[17*p +: 17]);
          if (start < r_wire[p]) fail($sformatf("cycle %0d: port %0d starts a packet before the last one ended", c, p));
          r_wire[p] = start + longint'(len) * den;
          if (tag >= total_sent) begin
            fail($sformatf("cycle %0d: port %0d sent tag %0d, never sent to the switch", c, p, tag));
          end else begin
            i = t_in[tag];
            if (t_done[tag]) fail($sformatf("cycle %0d: port %0d sent packet %0d (from %0d) again", c, p, tag, i));
            if (t_out[tag] != p)
              fail($sformatf("cycle %0d: packet %0d from %0d left at port %0d, the LFT says %0d", c, tag, i, p,
                             t_out[tag]));
            if (t_ovl[tag] != v)
              fail($sformatf("cycle %0d: packet %0d from %0d left port %0d on VL %0d, SL2VL says %0d", c, tag, i, p,
                             v, t_ovl[tag]));
            if (t_len[tag] != len)
              fail($sformatf("cycle %0d: packet %0d: %0d bytes, sent with %0d", c, tag, len, t_len[tag]));
            if (t_fecn[tag] && !tx_fecn[p]) fail($sformatf("cycle %0d: packet %0d lost its FECN", c, tag));
            if (t_out[tag] == p && t_ovl[tag] == v && !t_done[tag]) begin
              if (t_seq[tag] != seq_recv[i][p][v])
                fail($sformatf("cycle %0d: port %0d VL %0d from %0d: packet %0d of the flow, expected %0d (order)", c,
                               p, v, i, t_seq[tag], seq_recv[i][p][v]));
              seq_recv[i][p][v]++;
            end
            if (!t_done[tag]) delivered++;
            t_done[tag] = 1'b1;
          end
          if (tx_fecn[p]) marked++;
          if (v >= NVl) begin
            fail($sformatf("cycle %0d: port %0d sent on VL %0d", c, p, v));
          end else begin
            if (12'(r_adv[p][v] - (r_abr[p][v] + 12'(b))) > 12'd2048)
              fail($sformatf("cycle %0d: port %0d VL %0d sent %0d blocks beyond the credit advertised (ABR %0d, FCCL %0d)",
                             c, p, v, b, r_abr[p][v], r_adv[p][v]));
            if (r_held[p][v] + b > PartnerBuf)
              fail($sformatf("cycle %0d: port %0d VL %0d overran its receiver's buffer", c, p, v));
            r_abr[p][v] = r_abr[p][v] + 12'(b);
            r_held[p][v] += b;
          end
        end
      end
      #1 clk = 1'b1;
      #1 clk = 1'b0;
      ran = c + 1;
      // The drain is done when every packet sent has been delivered, every receiver is empty and every
      // sender's credit is back at the switch's buffer. (Inline: Icarus 11 crashed on it as a function.)
      if (c >= cycles) begin
        bit done;
        done = delivered == total_sent;
        for (int p = 0; p < NPorts; p++)
          for (int v = 0; v < NVl; v++)
            if (r_held[p][v] != 0 || 12'(s_fccl[p][v] - s_fctbs[p][v]) != 12'(BufBlocks)) done = 1'b0;
        settled = done ? settled + 1 : 0;
      end
    end
    for (int t = 0; t < total_sent; t++)
      if (!t_done[t])
        fail($sformatf("packet %0d (input %0d to output %0d VL %0d) never delivered", t, t_in[t], t_out[t], t_ovl[t]));
    for (int p = 0; p < NPorts; p++)
      for (int v = 0; v < NVl; v++)
        if (12'(s_fccl[p][v] - s_fctbs[p][v]) != 12'(BufBlocks))
          fail($sformatf("port %0d VL %0d: credit after the drain %0d blocks, its buffer is %0d", p, v,
                         12'(s_fccl[p][v] - s_fctbs[p][v]), BufBlocks));
    if (total_sent < cycles / 100) fail($sformatf("only %0d packets sent", total_sent));
    if (errors == 0)
      $display("ib_switch lossless: %0d cycles, %0d packets (%0d FECN-marked), %0d and %0d flow-control packets in and out, credit withheld %0d port-cycles, senders without credit %0d port-cycles, no loss",
               ran, total_sent, marked, fc_in, fc_out, stalled, starved);
    else begin
      $display("FAIL: %0d errors", errors);
      for (int p = 0; p < NPorts; p++)
        for (int v = 0; v < NVl; v++)
          $display("- port %0d VL %0d: sender FCCL %0d FCTBS %0d waiting %0d; receiver ABR %0d FCCL %0d held %0d",
                   p, v, s_fccl[p][v], s_fctbs[p][v], w_v[p][v], r_abr[p][v], r_adv[p][v], r_held[p][v]);
    end
    $finish;
  end
endmodule
`default_nettype wire
