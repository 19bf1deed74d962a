// alt_switch: a second InfiniBand switch implementation, for `ibcycle rtl-check` to prove itself on RTL that is
// not the Rust model's twin. It shares no module with hdl/ib_switch.sv or its leaf blocks (credit_rx,
// credit_tx, vl_arb, cong_detect, fecn_marker): every switching decision is taken by its own code, here and
// in its switching core hdl/alt/alt_core.sv (input slots, the descriptor FIFOs, routing, VL arbitration,
// pacing, the output queue and stream, the congestion and marking decision: see there), and it is checked
// only through a port map (hdl/alt/alt_switch.map.toml) by the transaction-level scoreboard, never cycle by
// cycle. What it shares with ib_switch is the configuration interface alone: the held configuration ports
// and the table write port have ib_switch's names, widths and encodings (a port map's `config =
// "ib_switch"`), so the harness loads it the same way. Its RoCEv2 mode (Ethernet frames, PFC pause frames,
// ECN CE) is hdl/alt/alt_roce_switch.sv: the same core with the IB link layer replaced.
//
// This file is the IB link layer around the core, and how it differs from ib_switch:
// - A byte-stream interface: per port a receive and a transmit stream of BeatBytes-byte beats (default 16;
//   byte k of a beat in bits 8k+7:8k, or in bits BW-8k-1:BW-8k-8 with MsbFirst) with valid, sop, eop and both
//   the count of valid bytes of the last beat and byte enables (in_keep/out_keep; the map picks one), a
//   transmit ready (out_ready: the stream holds its beat while it is low), packed per port into vectors, and
//   link flow-control packets as a 32-bit word per port (lfc_in, lfc_out: bytes 0 to 3 of the IBA
//   flow-control packet, byte 0 in bits 31:24). A tap out_fill gives each output VL's queued blocks, and
//   out_mark each output VL's marking state (the eligibility a grant on it would have), for the checker's
//   reports.
// - The LRH parse: DLID, SL, VL and PktLen from a packet's first beat; a packet the tables do not route stops
//   the simulation (an assertion): it takes routed IBA-local packets only. Store-and-forward through the
//   core's per-output-VL FIFOs, cut through (the descriptor joins its queue with the first beat) unless the
//   output link is faster than the input link. ib_switch is virtual cut-through with a VoQ per (input,
//   output, VL) and per-output-VL round robin over inputs.
// - Input buffer accounting and the flow-control packets it sends, per input VL: ABR counts the blocks (64
//   bytes) of every packet that came in (12 bits, modular; not reloaded from the partner's FCTBS, which a
//   lossless link keeps equal), the core holds a packet's blocks from its head until its last beat has
//   streamed out, and FCCL = ABR + min(free blocks, fccl_cap) mod 4096. A flow-control packet per VL of a
//   port every fc_interval cycles of that port (and when the FCCL changed, with fc_on_change), carrying the
//   FCTBS of the same port's transmit side (blocks granted on that VL, modular); it goes before waiting data
//   (6 bytes on the wire) and waits in the output queue behind the packets granted before it.
// - Transmit credit: a packet of b blocks may be granted when (FCCL - (FCTBS + b)) mod 4096 <= 2048, FCCL the
//   link partner's last (fccl_reset after reset); the credit left is the root/victim test's.
// - OutDelay cycles (default 24) between the grant and the first beat out.
// - Its own egress rewrite: the LRH VL and the BTH FECN bit (the core's marking decision; an incoming FECN
//   bit is kept) are written into the beats as they stream out and the VCRC is recomputed byte-serially over
//   the rewritten bytes (ib_switch rewrites no bytes).
// Configuration ports read for ib_switch's sake only (speedup, mark_enq: the decision is at the grant here;
// root_rule, stall_window: this switch classes root and victim by credit whatever the rule, its own design)
// are accepted and unused.
// Limits: IBA-local packets only (no GRH: the FECN bit must be in the first beat), at most SlotBeats beats
// per packet, at most NSlots packets held per input and SlotMax queued per output VL (assertions stop the
// simulation beyond).
//
// Fault-injection variants (each needs IBCYCLE_FAULTS_ENABLE beside it; or every one, the core's too, built in
// with IBCYCLE_FAULTS_SELECT and the enable, and turned on at run time by the plusarg +IBCYCLE_FAULT_<NAME>;
// the core's are in alt_core.sv):
//   IBCYCLE_FAULT_ALT_CREDIT_DROP  input 0 VL 0 counts its buffer a block smaller: a block of credit is never
//                                  advertised
//   IBCYCLE_FAULT_ALT_FECN_WRONG   the FECN written is the inverse of the marking decision
//   IBCYCLE_FAULT_ALT_VL_MIX       the LRH VL out is left as it came in (the input VL), not SL2VL's
//   IBCYCLE_FAULT_ALT_VCRC         the VCRC is written most significant byte first
`default_nettype none
`include "ibcycle_assertions.svh"

module alt_switch #(
  parameter int NPorts    = 8,
  parameter int BeatBytes = 16,
  parameter int NSlots    = 256,
  parameter int SlotBeats = 136,
  parameter int OutDelay  = 24,
  parameter int SlotMax   = 2048,
  parameter int LftMax    = 1024,
  parameter int NVl       = 2,
  parameter int TableMax  = 64,
  parameter bit MsbFirst  = 1'b0,
  parameter int IdxW      = (TableMax > 1) ? $clog2(TableMax) : 1,
  parameter int NbW       = $clog2(BeatBytes + 1)
) (
  input  wire logic                              clk,
  input  wire logic                              rst_n,
  input  wire logic [5:0]                        nports_i,
  input  wire logic [6:0]                        mtu_blocks_i,
  input  wire logic [NPorts*17-1:0]              rate_num_i,
  input  wire logic [NPorts*17-1:0]              rate_den_i,
  input  wire logic [NPorts*4-1:0]               nvl_i,
  input  wire logic [NPorts*7-1:0]               speedup_i,
  input  wire logic [NPorts-1:0]                 mark_enq_i,
  input  wire logic [NPorts*NVl*16-1:0]          buf_blocks_i,
  input  wire logic [NPorts*16-1:0]              fc_interval_i,
  input  wire logic                              fc_on_change_i,
  input  wire logic [11:0]                       fccl_cap_i,
  input  wire logic [11:0]                       fccl_reset_i,
  input  wire logic [NPorts*4-1:0]               threshold_i,
  input  wire logic [NPorts*NVl*256-1:0]         thr_table_i,
  input  wire logic [NPorts*2-1:0]               compare_i,
  input  wire logic [NPorts*12-1:0]              root_min_credits_i,
  input  wire logic [NPorts-1:0]                 root_rule_i,
  input  wire logic [NPorts*16-1:0]              stall_window_i,
  input  wire logic [NPorts-1:0]                 victim_mask_i,
  input  wire logic [NPorts*8-1:0]               packet_size_i,
  input  wire logic [NPorts*16-1:0]              marking_rate_i,
  input  wire logic [NPorts-1:0]                 mode_i,
  input  wire logic [NPorts*16-1:0]              lfsr_seed_i,
  input  wire logic [NPorts*17-1:0]              lfsr_thresh_i,
  input  wire logic [NPorts*TableMax*4-1:0]      hi_vl_i,
  input  wire logic [NPorts*TableMax*8-1:0]      hi_weight_i,
  input  wire logic [NPorts*(IdxW+1)-1:0]        hi_n_i,
  input  wire logic [NPorts*TableMax*4-1:0]      lo_vl_i,
  input  wire logic [NPorts*TableMax*8-1:0]      lo_weight_i,
  input  wire logic [NPorts*(IdxW+1)-1:0]        lo_n_i,
  input  wire logic [NPorts*8-1:0]               vl_high_limit_i,
  input  wire logic                              tbl_we_i,
  input  wire logic                              tbl_sel_i,
  input  wire logic [15:0]                       tbl_addr_i,
  input  wire logic [63:0]                       tbl_data_i,
  input  wire logic [NPorts*BeatBytes*8-1:0]     in_data,
  input  wire logic [NPorts-1:0]                 in_valid,
  input  wire logic [NPorts-1:0]                 in_sop,
  input  wire logic [NPorts-1:0]                 in_eop,
  input  wire logic [NPorts*NbW-1:0]             in_nbytes,
  input  wire logic [NPorts*BeatBytes-1:0]       in_keep,
  input  wire logic [NPorts-1:0]                 lfc_in_valid,
  input  wire logic [NPorts*32-1:0]              lfc_in,
  input  wire logic [NPorts-1:0]                 out_ready,
  output logic [NPorts*BeatBytes*8-1:0]          out_data,
  output logic [NPorts-1:0]                      out_valid,
  output logic [NPorts-1:0]                      out_sop,
  output logic [NPorts-1:0]                      out_eop,
  output logic [NPorts*NbW-1:0]                  out_nbytes,
  output logic [NPorts*BeatBytes-1:0]            out_keep,
  output logic [NPorts-1:0]                      lfc_out_valid,
  output logic [NPorts*32-1:0]                   lfc_out,
  output logic [NPorts*NVl*16-1:0]               out_fill,
  output logic [NPorts*NVl-1:0]                  out_mark,
  output logic [NPorts*NVl-1:0]                  overflow,
  output logic                                   cfg_err
);

`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_ALT_CREDIT_DROP
  $fatal(1, "IBCYCLE_FAULT_ALT_CREDIT_DROP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_FECN_WRONG
  $fatal(1, "IBCYCLE_FAULT_ALT_FECN_WRONG is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_VL_MIX
  $fatal(1, "IBCYCLE_FAULT_ALT_VL_MIX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_VCRC
  $fatal(1, "IBCYCLE_FAULT_ALT_VCRC is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Each fault's flag: a constant (1 only in its variant, so a clean build folds the fault away), or with
  // IBCYCLE_FAULTS_SELECT read from its plusarg at time zero (one build serves every fault hunt).
`ifdef IBCYCLE_FAULTS_SELECT
`ifndef IBCYCLE_FAULTS_ENABLE
  $fatal(1, "IBCYCLE_FAULTS_SELECT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
  logic FltCreditDrop, FltFecnWrong, FltVlMix, FltVcrc;
  initial begin
    FltCreditDrop = $test$plusargs("IBCYCLE_FAULT_ALT_CREDIT_DROP") != 0;
    FltFecnWrong = $test$plusargs("IBCYCLE_FAULT_ALT_FECN_WRONG") != 0;
    FltVlMix = $test$plusargs("IBCYCLE_FAULT_ALT_VL_MIX") != 0;
    FltVcrc = $test$plusargs("IBCYCLE_FAULT_ALT_VCRC") != 0;
  end
`else
`ifdef IBCYCLE_FAULT_ALT_CREDIT_DROP
  localparam bit FltCreditDrop = 1'b1;
`else
  localparam bit FltCreditDrop = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_FECN_WRONG
  localparam bit FltFecnWrong = 1'b1;
`else
  localparam bit FltFecnWrong = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_VL_MIX
  localparam bit FltVlMix = 1'b1;
`else
  localparam bit FltVlMix = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_VCRC
  localparam bit FltVcrc = 1'b1;
`else
  localparam bit FltVcrc = 1'b0;
`endif
`endif

  localparam int BW = BeatBytes * 8;
  localparam int KW = $clog2(SlotBeats + 1);
  localparam int NK = NPorts * NVl;
  localparam int VlW = (NVl > 1) ? $clog2(NVl) : 1;
  localparam int XW = 1;        // no descriptor bits of its own
  localparam int MW = 5;        // per granted packet: its output VL and FECN
  localparam int QW = 8 + 4 + 13 + XW + 16;

  function automatic logic [15:0] crc_byte(input logic [15:0] c, input logic [7:0] x);
    logic [15:0] r;
    r = c ^ {8'd0, x};
    for (int i = 0; i < 8; i++) r = r[0] ? ((r >> 1) ^ 16'hD008) : (r >> 1);
    return r;
  endfunction

  function automatic logic [6:0] blocks_of(input logic [12:0] len);
    return 7'((len + 13'd63) >> 6);
  endfunction

  // The core's side of the link layer.
  logic [NPorts-1:0]        beat_v, beat_sop;
  logic [NPorts*BW-1:0]     beat;
  logic [NPorts*KW-1:0]     beat_k;
  logic [NPorts*16-1:0]     rt_dlid;
  logic [NPorts*4-1:0]      rt_sl;
  logic [NPorts*8-1:0]      rt_out;
  logic [NPorts*4-1:0]      rt_ovl;
  logic [NPorts-1:0]        tail_v, allin_v, buf_v;
  logic [NPorts*8-1:0]      tail_out;
  logic [NPorts*4-1:0]      tail_ovl, tail_ivl, buf_ivl;
  logic [NPorts*13-1:0]     tail_len;
  logic [NPorts*7-1:0]      buf_blk;
  logic [NK*16-1:0]         held_q, held_rel;
  logic [NK*13-1:0]         head_len;
  logic [NK-1:0]            send_ok;
  logic [NK*12-1:0]         avail;
  logic [NK-1:0]            ctl_due;
  logic [NPorts-1:0]        g_ctl, g_pkt, g_mark;
  logic [NPorts*4-1:0]      g_ctlvl, g_vl;
  logic [NPorts*QW-1:0]     g_desc;
  logic [NPorts*MW-1:0]     g_meta;
  logic [NPorts*32-1:0]     ctl_word;
  logic [NPorts-1:0]        rd_v;
  logic [NPorts*BW-1:0]     rd_data, wr_data;
  logic [NPorts*KW-1:0]     rd_k;
  logic [NPorts*13-1:0]     rd_len;
  logic [NPorts*MW-1:0]     rd_meta;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NPorts*16-1:0]     beat_slot;
  logic [NK*16-1:0]         held_nx;   // the PFC top's
  logic [NK*NPorts-1:0]     contrib;   // the PFC top's
  logic [NPorts-1:0]        g_elig;
  logic [31:0]              now;
  /* verilator lint_on UNUSEDSIGNAL */

  alt_core #(
    .NPorts(NPorts), .BeatBytes(BeatBytes), .NSlots(NSlots), .SlotBeats(SlotBeats), .OutDelay(OutDelay),
    .SlotMax(SlotMax), .LftMax(LftMax), .NVl(NVl), .TableMax(TableMax), .MsbFirst(MsbFirst), .XW(XW), .MW(MW),
    .CtlBytes(6), .CtlQueued(1'b1), .Name("alt_switch")
  ) u_core (
    .clk, .rst_n, .nports_i, .mtu_blocks_i, .rate_num_i, .rate_den_i, .nvl_i, .threshold_i, .thr_table_i,
    .compare_i, .root_min_credits_i, .victim_mask_i, .packet_size_i, .marking_rate_i, .mode_i, .lfsr_seed_i,
    .lfsr_thresh_i, .hi_vl_i, .hi_weight_i, .hi_n_i, .lo_vl_i, .lo_weight_i, .lo_n_i, .vl_high_limit_i,
    .tbl_we_i, .tbl_sel_i, .tbl_addr_i, .tbl_data_i,
    .in_data, .in_valid, .in_sop, .beat_v, .beat_sop, .beat, .beat_k, .beat_slot,
    .rt_dlid, .rt_sl, .rt_out, .rt_ovl,
    .tail_v, .allin_v, .tail_out, .tail_ovl, .tail_ivl, .tail_len, .tail_x('0), .buf_v, .buf_ivl, .buf_blk,
    .held_q_o(held_q), .held_rel, .held_nx,
    .head_len, .send_ok, .avail, .ctl_due, .cong_sel('0), .cong('0), .contrib,
    .g_ctl_o(g_ctl), .g_ctlvl_o(g_ctlvl), .g_pkt_o(g_pkt), .g_vl_o(g_vl), .g_desc_o(g_desc),
    .g_elig_o(g_elig), .g_mark_o(g_mark), .capable('1), .g_meta, .ctl_word,
    .rd_v, .rd_data, .rd_k, .rd_len, .rd_meta, .wr_data,
    .out_ready, .out_data, .out_valid, .out_sop, .out_eop, .out_nbytes, .out_keep,
    .ctl_out_valid(lfc_out_valid), .ctl_out(lfc_out), .out_fill, .out_mark, .now
  );

  // Per input, this cycle: a packet's head (its blocks, input VL, output and output VL) and a flow-control
  // packet from the link partner.
  logic [NPorts-1:0]     h_v, f_v;
  logic [3:0]            h_ivl [NPorts];
  logic [6:0]            h_blk [NPorts];
  logic [3:0]            f_vl [NPorts];
  logic [11:0]           f_fccl [NPorts];

  // ---------------------------------------------------------------- per input: register stage of the
  // flow-control packets, the LRH parse, whether the packet cuts through
  for (genvar p = 0; p < NPorts; p++) begin : g_in
    logic             fcv1_q;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0]      fc1_q;  // Op (bits 31:28): only normal flow-control packets come in; FCTBS unused
    /* verilator lint_on UNUSEDSIGNAL */
    logic [KW-1:0]    beats_q, k, nbeats;
    logic [7:0]       out_q, out;
    logic [3:0]       ovl_q, ovl, ivl_q;
    logic             ct, saf_q, v1, sop1;
    logic [12:0]      len_q, len;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [BW-1:0]    d1;     // the LRH's fields
    /* verilator lint_on UNUSEDSIGNAL */

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        fcv1_q <= 1'b0; fc1_q <= '0;
      end else begin
        fcv1_q <= lfc_in_valid[p]; fc1_q <= lfc_in[p*32 +: 32];
      end
    end

    // The head's LRH: DLID (bytes 2-3), SL (byte 1 high), VL (byte 0 high), PktLen (bytes 4-5, 11 bits of
    // 4-byte words from the LRH through the ICRC; the VCRC adds 2).
    assign d1 = beat[p*BW +: BW];
    assign rt_dlid[16*p +: 16] = {d1[23:16], d1[31:24]};
    assign rt_sl[4*p +: 4] = d1[15:12];
    always_comb begin
      v1 = beat_v[p];
      sop1 = beat_sop[p];
      k = beat_k[KW*p +: KW];
      out = rt_out[8*p +: 8];
      ovl = rt_ovl[4*p +: 4];
      len = {d1[34:32], d1[47:40], 2'b00} + 13'd2;
      nbeats = KW'((32'(len) + BeatBytes - 1) / BeatBytes);
      // Cut-through unless the output link is faster than the input link: then the descriptor joins its
      // queue with the last beat (store-and-forward), so that the stream out never waits for a beat.
      ct = 32'(out) >= NPorts || 64'(rate_num_i[17*32'(out) +: 17]) * 64'(rate_den_i[17*p +: 17])
                                 <= 64'(rate_num_i[17*p +: 17]) * 64'(rate_den_i[17*32'(out) +: 17]);
      h_v[p] = v1 && sop1;
      h_ivl[p] = d1[7:4];
      h_blk[p] = blocks_of(len);
      buf_v[p] = h_v[p] && 32'(out) < NPorts && 32'(ovl) < NVl;
      buf_ivl[4*p +: 4] = d1[7:4];
      buf_blk[7*p +: 7] = blocks_of(len);
      tail_v[p] = v1 && (sop1 ? (ct || nbeats == 1) : (saf_q && k + 1'b1 == beats_q));
      // The packet's last beat (its bytes all in).
      allin_v[p] = v1 && (sop1 ? nbeats == 1 : k + 1'b1 == beats_q);
      tail_out[8*p +: 8] = sop1 ? out : out_q;
      tail_ovl[4*p +: 4] = sop1 ? ovl : ovl_q;
      tail_ivl[4*p +: 4] = sop1 ? d1[7:4] : ivl_q;
      tail_len[13*p +: 13] = sop1 ? len : len_q;
      f_v[p] = fcv1_q;
      f_vl[p] = fc1_q[12 +: 4];
      f_fccl[p] = fc1_q[0 +: 12];
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        beats_q <= '0;
        out_q <= '0;
        ovl_q <= '0;
        ivl_q <= '0;
        len_q <= '0;
        saf_q <= 1'b0;
      end else if (h_v[p]) begin
        beats_q <= nbeats;
        out_q <= out;
        ovl_q <= ovl;
        ivl_q <= d1[7:4];
        len_q <= len;
        saf_q <= !ct && nbeats != 1;
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && h_v[p] && (32'(out) >= NPorts || 32'(ovl) >= NVl || d1[7:4] == 4'd15))
        $fatal(1, "alt_switch: input %0d: a packet to DLID %0d that the tables do not route", p,
               rt_dlid[16*p +: 16]);
    end
`endif
  end

  // The unused inputs of the stream: a packet's end is its PktLen, and a beat's valid bytes follow from it.
  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_in;
  assign unused_in = ^{in_eop, in_nbytes, in_keep, speedup_i, mark_enq_i, root_rule_i, stall_window_i};
  /* verilator lint_on UNUSEDSIGNAL */

  // ---------------------------------------------------------------- credit state
  logic [11:0]  abr_q [NK];             // per input VL: blocks received, mod 4096
  logic [11:0]  fccl_q [NK];            // per output VL: the link partner's FCCL
  logic [11:0]  fctbs_q [NK];           // per output VL: blocks granted, mod 4096
  logic [11:0]  lastfc_q [NK];          // per input VL: the FCCL last sent
  logic [NVl-1:0] fcp_q [NPorts];       // per port: VLs whose flow-control packet is due
  logic [15:0]  timer_q [NPorts];
  logic [NK-1:0] ovf_q;

  // This cycle's credit advertised per input VL.
  logic [11:0]  fccl_now [NK];
  always_comb begin
    for (int k = 0; k < NK; k++) begin
      logic [15:0] b, fr, cap;
      b = buf_blocks_i[16*k +: 16];
      if (FltCreditDrop && k == 0) b = b - 16'd1;
      fr = (held_q[16*k +: 16] >= b) ? 16'd0 : b - held_q[16*k +: 16];
      cap = (fccl_cap_i > 12'd2048) ? 16'd2048 : 16'(fccl_cap_i);
      fccl_now[k] = abr_q[k] + 12'((fr < cap) ? fr : cap);
    end
  end

  // Per output VL, what the core's decision takes from the credit: whether the head packet fits the
  // partner's credit, and the credit left (root or victim); the flow-control packets due; per output, what
  // a granted packet's output stage writes (its VL and FECN) and a granted flow-control packet's word.
  always_comb begin
    for (int o = 0; o < NPorts; o++) begin
      for (int v = 0; v < NVl; v++) begin
        logic [11:0] room, a;
        room = fccl_q[o*NVl + v] - (fctbs_q[o*NVl + v] + 12'(blocks_of(head_len[13*(o*NVl + v) +: 13])));
        send_ok[o*NVl + v] = room <= 12'd2048;
        a = fccl_q[o*NVl + v] - fctbs_q[o*NVl + v];
        avail[12*(o*NVl + v) +: 12] = (a <= 12'd2048) ? a : 12'd0;
        ctl_due[o*NVl + v] = fcp_q[o][v];
      end
    end
  end
  always_comb begin
    for (int o = 0; o < NPorts; o++) begin
      logic [3:0] fv;
      // (The fault: the marking decision inverted.)
      g_meta[MW*o +: MW] = {g_vl[4*o +: 4], g_mark[o] ^ FltFecnWrong};
      // Op 0 (normal), FCTBS, VL, FCCL.
      fv = g_ctlvl[4*o +: 4];
      ctl_word[32*o +: 32] = {4'd0, fctbs_q[o*NVl + 32'(fv)], fv, fccl_now[o*NVl + 32'(fv)]};
    end
  end

  // ---------------------------------------------------------------- credit update
  always_ff @(posedge clk) begin : update
    logic [11:0]  abr_n [NK];
    logic [11:0]  fccl_n [NK];
    logic [11:0]  fctbs_n [NK];
    logic [11:0]  lastfc_n [NK];
    logic [NVl-1:0] fcp_n [NPorts];
    logic [15:0]  timer_n [NPorts];
    logic [NK-1:0] ovf_n;
    int k;
    for (int i = 0; i < NK; i++) begin
      abr_n[i] = abr_q[i];
      fccl_n[i] = fccl_q[i];
      fctbs_n[i] = fctbs_q[i];
      lastfc_n[i] = lastfc_q[i];
    end
    for (int i = 0; i < NPorts; i++) begin
      fcp_n[i] = fcp_q[i];
      timer_n[i] = timer_q[i];
    end
    ovf_n = '0;
    if (!rst_n) begin
      for (int i = 0; i < NK; i++) begin
        abr_n[i] = '0;
        fccl_n[i] = fccl_reset_i;
        fctbs_n[i] = '0;
        lastfc_n[i] = '0;
      end
      for (int i = 0; i < NPorts; i++) begin
        fcp_n[i] = '0;
        timer_n[i] = '0;
      end
    end else begin
      // Outputs: flow-control packets and packets granted.
      for (int o = 0; o < NPorts; o++) begin
        if (g_ctl[o]) begin
          k = o*NVl + 32'(g_ctlvl[4*o +: 4]);
          fcp_n[o][g_ctlvl[4*o +: VlW]] = 1'b0;
          lastfc_n[k] = fccl_now[k];
        end
        if (g_pkt[o]) begin
          k = o*NVl + 32'(g_vl[4*o +: 4]);
          fctbs_n[k] = fctbs_n[k] + 12'(blocks_of(g_desc[QW*o + XW + 16 +: 13]));
        end
      end
      // Inputs: heads (blocks received, an overrun of the buffer), flow-control packets in.
      for (int p = 0; p < NPorts; p++) begin
        if (buf_v[p] && 32'(h_ivl[p]) < NVl) begin
          k = p*NVl + 32'(h_ivl[p]);
          if (32'(held_rel[16*k +: 16]) + 32'(h_blk[p]) > 32'(buf_blocks_i[16*k +: 16])) ovf_n[k] = 1'b1;
          abr_n[k] = abr_n[k] + 12'(h_blk[p]);
        end
        if (f_v[p] && 32'(f_vl[p]) < NVl) fccl_n[p*NVl + 32'(f_vl[p])] = f_fccl[p];
      end
      // Flow-control packets due: periodically, and on a changed FCCL when asked.
      for (int p = 0; p < NPorts; p++) begin
        if (timer_n[p] == '0) begin
          timer_n[p] = fc_interval_i[16*p +: 16] - 16'd1;
          for (int v = 0; v < NVl; v++) if (v < 32'(nvl_i[4*p +: 4])) fcp_n[p][v] = 1'b1;
        end else begin
          timer_n[p] = timer_n[p] - 16'd1;
        end
        for (int v = 0; v < NVl; v++) begin
          if (fc_on_change_i && v < 32'(nvl_i[4*p +: 4]) && fccl_now[p*NVl + v] != lastfc_n[p*NVl + v])
            fcp_n[p][v] = 1'b1;
        end
      end
    end
    abr_q <= abr_n;
    fccl_q <= fccl_n;
    fctbs_q <= fctbs_n;
    lastfc_q <= lastfc_n;
    fcp_q <= fcp_n;
    timer_q <= timer_n;
    ovf_q <= ovf_n;
  end : update

  assign overflow = ovf_q;

  always_comb begin
    cfg_err = nports_i == '0 || 32'(nports_i) > NPorts;
    for (int p = 0; p < NPorts; p++) begin
      if (p < 32'(nports_i) && (rate_num_i[17*p +: 17] == '0 || rate_den_i[17*p +: 17] == '0
          || nvl_i[4*p +: 4] == '0 || 32'(nvl_i[4*p +: 4]) > NVl || fc_interval_i[16*p +: 16] == '0))
        cfg_err = 1'b1;
    end
  end

  // ---------------------------------------------------------------- per output: the egress rewrite of each
  // beat the core streams out: the VL and FECN written into the first beat, the VCRC recomputed over the
  // bytes out (a packet's first beat starts it afresh).
  for (genvar o = 0; o < NPorts; o++) begin : g_out
    logic [15:0]      crc_q;
    logic [BW-1:0]    b;
    logic [15:0]      c, fin;
    logic [12:0]      base, len;
    logic [KW-1:0]    k;
    logic             last;
    logic [3:0]       vl;
    logic             fecn;

    always_comb begin
      b = rd_data[o*BW +: BW];
      k = rd_k[KW*o +: KW];
      len = rd_len[13*o +: 13];
      {vl, fecn} = rd_meta[MW*o +: MW];
      base = 13'(int'(k) * BeatBytes);
      last = (base + 13'(BeatBytes)) >= len;
      if (k == 0) begin
        if (!FltVlMix) b[7:4] = vl;
        if (fecn) b[12*8 + 7] = 1'b1;
      end
      c = (k == 0) ? 16'hFFFF : crc_q;
      for (int i = 0; i < BeatBytes; i++) begin
        if (base + 13'(i) + 13'd2 < len) c = crc_byte(c, b[i*8 +: 8]);
      end
      fin = ~c;
      if (last) begin
        for (int i = 0; i < BeatBytes; i++) begin
          // (The fault: the VCRC's bytes swapped, most significant first.)
          if (base + 13'(i) + 13'd2 == len) b[i*8 +: 8] = FltVcrc ? fin[15:8] : fin[7:0];
          if (base + 13'(i) + 13'd1 == len) b[i*8 +: 8] = FltVcrc ? fin[7:0] : fin[15:8];
        end
      end
      wr_data[o*BW +: BW] = b;
    end

    always_ff @(posedge clk) begin
      if (!rst_n) crc_q <= 16'hFFFF;
      else if (rd_v[o]) crc_q <= c;
    end
  end
endmodule
