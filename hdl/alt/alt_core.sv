// alt_core: the switching core of the second switch implementation, shared by its InfiniBand top
// (hdl/alt/alt_switch.sv) and its RoCEv2 top (hdl/alt/alt_roce_switch.sv). Each top keeps its own link layer
// (header parse, input buffer credit or PFC, the egress rewrite, the link-control packets) and hands this
// core what it decided; the core does every job the two share, once. Like the tops it shares no module with
// hdl/ib_switch.sv or its leaf blocks, and is checked only through the tops' port maps by the
// transaction-level scoreboard, never cycle by cycle.
//
// What it does, and how it differs from ib_switch:
// - An input register stage for the byte stream (data, valid, sop; byte k of a beat in bits 8k+7:8k, or in
//   bits BW-8k-1:BW-8k-8 with MsbFirst); the beat, its index in its packet and its slot go to the top's
//   header parse, which answers with the events below.
// - Store-and-forward through per-output queues: a packet is written into a slot of its input's buffer
//   (NSlots slots of SlotBeats beats, the lowest free slot first), and when the top says its tail is in
//   (tail_v: the last beat, or the first when the top cuts through), its descriptor (input, input VL,
//   length, the top's XW bits, slot) joins the queue of its output VL (one FIFO per output VL shared by every
//   input, SlotMax entries; tails of one cycle join in descending input order). ib_switch is virtual
//   cut-through with a VoQ per (input, output, VL) and per-output-VL round robin over inputs.
// - Routing by its own LFT and SL2VL tables (written through ib_switch's table write port): the top asks
//   with the head's DLID and SL and gets the output and output VL.
// - Input buffer accounting per input VL: the blocks (64 bytes) held, added as the top says (IB: a packet's
//   blocks at its head; RoCEv2: the blocks each beat starts), released when a packet's last byte has left
//   at the output's pace. The top reads them (held_q), after this cycle's releases (held_rel) and after the
//   whole cycle (held_nx) for its credit or PFC decisions.
// - Per output and cycle one decision: a link-control packet when the top has one due (the lowest VL due
//   first; IB flow-control packets of CtlBytes 6, RoCEv2 pause frames of 64), else a packet by VL
//   arbitration over the output VLs with a packet whose head the top lets go (send_ok: credit, not paused).
//   VL arbitration by the configured high and low tables (weights in 64-byte blocks, a visit keeps the grant
//   while its budget is not spent and its VL still has a packet that may go; the overdraft of the last packet
//   is forgiven) and VLHighLimit (high blocks granted while a low packet waited, in 4 KB units; 255
//   unbounded). Another legal round-robin start and order than ib_switch's vl_arb: after reset, and after a
//   visit ends, the search starts at the entry AFTER the current one, so the first visit after reset is
//   entry 1's (vl_arb starts with entry 0); a visit's budget counts down from the weight instead of counting
//   up to it.
// - Output pacing at the port's link rate (rate_num/rate_den bytes a cycle), then OutDelay cycles between the
//   grant and the first beat out (a queue per output in grant order: packets, and with CtlQueued the
//   link-control packets, whose word leaves on ctl_out), and an output register stage; the bytes stream a
//   beat per cycle while out_ready takes them, the top rewriting each beat on its way (rd_data to wr_data).
// - Its own congestion detection and marking decision, taken at the grant: the blocks queued per (input,
//   output, VL), a packet counted from its last byte in (allin_v) until its grant (one granted before its
//   last byte is in is never counted), against the fill threshold that the configured Threshold selects from
//   the configured threshold table plus one MTU packet (a FIFO serving inputs in arrival order holds up to a
//   packet more per input than a round-robin switch at one load), compared per input, as a sum, or as a sum
//   per contributing input (compare_i); congested with credit (the top's avail >= root_min_credits) is a
//   root, without a victim that marks only under victim_mask. A top may replace that state per port by its
//   own (cong_sel/cong: RoCEv2's RCM-1b). Packets shorter than Packet_Size are not eligible; the top says
//   whether the granted packet may carry a mark at all (capable: RoCEv2's ECN-capable test). Marking_Rate:
//   in counter mode the LAST of each Marking_Rate + 1 eligible packets is marked (the golden switch marks
//   the first); in LFSR mode a 16-bit LFSR (its own, stepped once per eligible packet) compared with the
//   configured threshold.
// Limits: at most SlotBeats beats per packet, NSlots packets held per input and SlotMax queued per output VL
// (assertions stop the simulation beyond).
//
// Fault-injection variants (each needs IBCYCLE_FAULTS_ENABLE beside it; or every one built in with
// IBCYCLE_FAULTS_SELECT and the enable, and turned on at run time by the plusarg +IBCYCLE_FAULT_<NAME>):
//   IBCYCLE_FAULT_ALT_DUP        a packet held in a slot whose number ends in binary 011 streams out twice
//   IBCYCLE_FAULT_ALT_ARB        VL arbitration ignores the weights: the first entry of a table with a
//                                packet that may go always wins (strict priority by table order)
//   IBCYCLE_FAULT_ALT_MARK_RATE  Marking_Rate's counter is reloaded one short (to 1, not 0): in counter mode
//                                the last of each Marking_Rate eligible packets is marked, not of each
//                                Marking_Rate + 1 (no change at Marking_Rate 0)
`default_nettype none
`include "ibcycle_assertions.svh"

module alt_core #(
  parameter int    NPorts    = 8,
  parameter int    BeatBytes = 16,
  parameter int    NSlots    = 256,
  parameter int    SlotBeats = 136,
  parameter int    OutDelay  = 24,
  parameter int    SlotMax   = 2048,
  parameter int    LftMax    = 1024,
  parameter int    NVl       = 2,
  parameter int    TableMax  = 64,
  parameter bit    MsbFirst  = 1'b0,
  // The top's own descriptor bits (at least one), and the bits it hands its output stage per packet.
  parameter int    XW        = 1,
  parameter int    MW        = 5,
  // A link-control packet's bytes on the wire, and whether it waits in the output queue in grant order.
  parameter int    CtlBytes  = 6,
  parameter bit    CtlQueued = 1'b1,
  parameter string Name      = "alt_core",
  parameter int    IdxW      = (TableMax > 1) ? $clog2(TableMax) : 1,
  parameter int    NbW       = $clog2(BeatBytes + 1),
  parameter int    KW        = $clog2(SlotBeats + 1),
  parameter int    SlW       = (NSlots > 1) ? $clog2(NSlots) : 1,
  // A queued descriptor: input, input VL, length in bytes, the top's bits, slot.
  parameter int    QW        = 8 + 4 + 13 + XW + 16
) (
  input  wire logic                              clk,
  input  wire logic                              rst_n,
  // The configuration the core reads (ib_switch's held ports of the same names).
  input  wire logic [5:0]                        nports_i,
  input  wire logic [6:0]                        mtu_blocks_i,
  input  wire logic [NPorts*17-1:0]              rate_num_i,
  input  wire logic [NPorts*17-1:0]              rate_den_i,
  input  wire logic [NPorts*4-1:0]               nvl_i,
  input  wire logic [NPorts*4-1:0]               threshold_i,
  input  wire logic [NPorts*NVl*256-1:0]         thr_table_i,
  input  wire logic [NPorts*2-1:0]               compare_i,
  input  wire logic [NPorts*12-1:0]              root_min_credits_i,
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
  // The receive streams, and what the input register stage holds this cycle.
  input  wire logic [NPorts*BeatBytes*8-1:0]     in_data,
  input  wire logic [NPorts-1:0]                 in_valid,
  input  wire logic [NPorts-1:0]                 in_sop,
  output logic [NPorts-1:0]                      beat_v,
  output logic [NPorts-1:0]                      beat_sop,
  output logic [NPorts*BeatBytes*8-1:0]          beat,      // byte k in bits 8k+7:8k
  output logic [NPorts*KW-1:0]                   beat_k,    // its index in its packet
  output logic [NPorts*16-1:0]                   beat_slot, // the slot it is written to
  // Routing: the head's DLID and SL per input, its output (8'hFF when the LFT has no entry) and output VL.
  input  wire logic [NPorts*16-1:0]              rt_dlid,
  input  wire logic [NPorts*4-1:0]               rt_sl,
  output logic [NPorts*8-1:0]                    rt_out,
  output logic [NPorts*4-1:0]                    rt_ovl,
  // The top's events per input this cycle: the descriptor joins its queue (tail_v); the packet's bytes are
  // all in (allin_v; both take the tail_* fields); blocks added to an input VL's buffer count (buf_v).
  input  wire logic [NPorts-1:0]                 tail_v,
  input  wire logic [NPorts-1:0]                 allin_v,
  input  wire logic [NPorts*8-1:0]               tail_out,
  input  wire logic [NPorts*4-1:0]               tail_ovl,
  input  wire logic [NPorts*4-1:0]               tail_ivl,
  input  wire logic [NPorts*13-1:0]              tail_len,
  input  wire logic [NPorts*XW-1:0]              tail_x,
  input  wire logic [NPorts-1:0]                 buf_v,
  input  wire logic [NPorts*4-1:0]               buf_ivl,
  input  wire logic [NPorts*7-1:0]               buf_blk,
  // Per input VL (lane p*NVl + vl): blocks held now, after this cycle's releases, after the whole cycle.
  output logic [NPorts*NVl*16-1:0]               held_q_o,
  output logic [NPorts*NVl*16-1:0]               held_rel,
  output logic [NPorts*NVl*16-1:0]               held_nx,
  // The link layer's word per output VL (lane o*NVl + vl): the head packet's length, whether it may go, the
  // credit available (root or victim), a link-control packet due; the replacement congestion state.
  output logic [NPorts*NVl*13-1:0]               head_len,
  input  wire logic [NPorts*NVl-1:0]             send_ok,
  input  wire logic [NPorts*NVl*12-1:0]          avail,
  input  wire logic [NPorts*NVl-1:0]             ctl_due,
  input  wire logic [NPorts-1:0]                 cong_sel,
  input  wire logic [NPorts*NVl-1:0]             cong,
  // Per output VL and input (bit (o*NVl + vl)*NPorts + p): the input has blocks counted in the fill.
  output logic [NPorts*NVl*NPorts-1:0]           contrib,
  // The decision of each output this cycle: a link-control packet (its VL), or a packet (its VL,
  // descriptor, eligibility and mark); the top answers whether it may carry a mark and what its output stage
  // needs (meta), and with CtlQueued the link-control packet's word.
  output logic [NPorts-1:0]                      g_ctl_o,
  output logic [NPorts*4-1:0]                    g_ctlvl_o,
  output logic [NPorts-1:0]                      g_pkt_o,
  output logic [NPorts*4-1:0]                    g_vl_o,
  output logic [NPorts*QW-1:0]                   g_desc_o,
  output logic [NPorts-1:0]                      g_elig_o,
  output logic [NPorts-1:0]                      g_mark_o,
  input  wire logic [NPorts-1:0]                 capable,
  input  wire logic [NPorts*MW-1:0]              g_meta,
  input  wire logic [NPorts*32-1:0]              ctl_word,
  // The output streams: the beat read from the buffer (rd_*) and the top's rewrite of it (wr_data).
  output logic [NPorts-1:0]                      rd_v,
  output logic [NPorts*BeatBytes*8-1:0]          rd_data,
  output logic [NPorts*KW-1:0]                   rd_k,
  output logic [NPorts*13-1:0]                   rd_len,
  output logic [NPorts*MW-1:0]                   rd_meta,
  input  wire logic [NPorts*BeatBytes*8-1:0]     wr_data,
  input  wire logic [NPorts-1:0]                 out_ready,
  output logic [NPorts*BeatBytes*8-1:0]          out_data,
  output logic [NPorts-1:0]                      out_valid,
  output logic [NPorts-1:0]                      out_sop,
  output logic [NPorts-1:0]                      out_eop,
  output logic [NPorts*NbW-1:0]                  out_nbytes,
  output logic [NPorts*BeatBytes-1:0]            out_keep,
  output logic [NPorts-1:0]                      ctl_out_valid,
  output logic [NPorts*32-1:0]                   ctl_out,
  // Taps: each output VL's fill (blocks, saturating) and marking state (the eligibility a grant would have).
  output logic [NPorts*NVl*16-1:0]               out_fill,
  output logic [NPorts*NVl-1:0]                  out_mark,
  output logic [31:0]                            now
);

`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_ALT_DUP
  $fatal(1, "IBCYCLE_FAULT_ALT_DUP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_ARB
  $fatal(1, "IBCYCLE_FAULT_ALT_ARB is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_MARK_RATE
  $fatal(1, "IBCYCLE_FAULT_ALT_MARK_RATE is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Each fault's flag: a constant (1 only in its variant, so a clean build folds the fault away), or with
  // IBCYCLE_FAULTS_SELECT read from its plusarg at time zero (one build serves every fault hunt).
`ifdef IBCYCLE_FAULTS_SELECT
`ifndef IBCYCLE_FAULTS_ENABLE
  $fatal(1, "IBCYCLE_FAULTS_SELECT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
  logic FltDup, FltArb, FltMarkRate;
  initial begin
    FltDup = $test$plusargs("IBCYCLE_FAULT_ALT_DUP") != 0;
    FltArb = $test$plusargs("IBCYCLE_FAULT_ALT_ARB") != 0;
    FltMarkRate = $test$plusargs("IBCYCLE_FAULT_ALT_MARK_RATE") != 0;
  end
`else
`ifdef IBCYCLE_FAULT_ALT_DUP
  localparam bit FltDup = 1'b1;
`else
  localparam bit FltDup = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_ARB
  localparam bit FltArb = 1'b1;
`else
  localparam bit FltArb = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_MARK_RATE
  localparam bit FltMarkRate = 1'b1;
`else
  localparam bit FltMarkRate = 1'b0;
`endif
`endif

  localparam int BW = BeatBytes * 8;
  localparam int NK = NPorts * NVl;
  localparam int VlW = (NVl > 1) ? $clog2(NVl) : 1;
  localparam int QA = (SlotMax > 1) ? $clog2(SlotMax) : 1;
  localparam int QLEN = XW + 16;  // the descriptor's length field
  // Per output, what was granted waits OutDelay cycles in a queue in grant order: is-control, tag (input,
  // input VL, slot; a control packet's word), the top's bits, length, due cycle. An IB flow-control packet's
  // FCTBS counts the blocks of the packets granted before it, so it must not overtake them on the way out.
  localparam int DQ = 32;
  localparam int DW = 1 + 32 + MW + 13 + 32;
  localparam logic [15:0] LfsrTaps = 16'hB400;

  // Byte k of a beat at bits 8k+7:8k inside; the byte order at the ports.
  function automatic logic [BW-1:0] order_bytes(input logic [BW-1:0] x);
    logic [BW-1:0] y;
    for (int i = 0; i < BeatBytes; i++) y[i*8 +: 8] = MsbFirst ? x[(BeatBytes-1-i)*8 +: 8] : x[i*8 +: 8];
    return y;
  endfunction
  function automatic logic [BeatBytes-1:0] order_keep(input logic [BeatBytes-1:0] x);
    logic [BeatBytes-1:0] y;
    for (int i = 0; i < BeatBytes; i++) y[i] = MsbFirst ? x[BeatBytes-1-i] : x[i];
    return y;
  endfunction

  function automatic logic [6:0] blocks_of(input logic [12:0] len);
    return 7'((len + 13'd63) >> 6);
  endfunction

  // Packet buffer: per input NSlots slots of SlotBeats beats, and how many beats of each slot are written.
  logic [BW-1:0]         mem_q [NPorts][NSlots*SlotBeats];
  logic [KW-1:0]         written_q [NPorts][NSlots];
  // Slots in use, per input (a bit per slot); packets that finished streaming out in the last cycle.
  logic [NSlots-1:0]     used_q [NPorts];
  logic                  ret_v_q [NPorts];
  logic [7:0]            ret_in_q [NPorts];
  logic [3:0]            ret_ivl_q [NPorts];
  logic [12:0]           ret_len_q [NPorts];
  logic [SlW-1:0]        ret_slot_q [NPorts];
  logic [31:0]           now_q;

  always_ff @(posedge clk) begin
    if (!rst_n) now_q <= '0;
    else now_q <= now_q + 1;
  end
  assign now = now_q;

  // ---------------------------------------------------------------- tables (not reset)
  logic [7:0]  lft_q   [LftMax];
  logic [63:0] sl2vl_q [NPorts*NPorts];
  always_ff @(posedge clk) begin
    if (tbl_we_i) begin
      if (!tbl_sel_i) begin
        if (32'(tbl_addr_i) < LftMax) lft_q[32'(tbl_addr_i)] <= tbl_data_i[7:0];
      end else if (32'(tbl_addr_i) < NPorts * NPorts) begin
        sl2vl_q[32'(tbl_addr_i)] <= tbl_data_i;
      end
    end
  end

  // ---------------------------------------------------------------- per input: register stage, route lookup,
  // slot allocation, beat store
  for (genvar p = 0; p < NPorts; p++) begin : g_in
    logic [BW-1:0]    d1_q;
    logic             v1_q, sop1_q;
    logic [SlW-1:0]   cur_q, free_slot, s;
    logic [KW-1:0]    wbeat_q, k;
    logic             none_free;
    logic [NSlots-1:0] ret_mask;
    logic [7:0]       out;
    logic [63:0]      t;
    logic [15:0]      dlid;

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        v1_q <= 1'b0; sop1_q <= 1'b0; d1_q <= '0;
      end else begin
        v1_q <= in_valid[p]; sop1_q <= in_sop[p]; d1_q <= order_bytes(in_data[p*BW +: BW]);
      end
    end

    // The lowest free slot; slots whose packet finished streaming out.
    always_comb begin
      free_slot = '0;
      none_free = 1'b1;
      for (int i = NSlots - 1; i >= 0; i--) begin
        if (!used_q[p][i]) begin
          free_slot = SlW'(i);
          none_free = 1'b0;
        end
      end
      ret_mask = '0;
      for (int o = 0; o < NPorts; o++) begin
        if (ret_v_q[o] && int'(ret_in_q[o]) == p) ret_mask[ret_slot_q[o]] = 1'b1;
      end
    end

    always_comb begin
      k = sop1_q ? '0 : wbeat_q;
      s = sop1_q ? free_slot : cur_q;
      dlid = rt_dlid[16*p +: 16];
      out = (32'(dlid) < LftMax) ? lft_q[32'(dlid)] : 8'hFF;
      t = (32'(out) < NPorts) ? sl2vl_q[p*NPorts + 32'(out)] : 64'hFFFF_FFFF_FFFF_FFFF;
      rt_out[8*p +: 8] = out;
      rt_ovl[4*p +: 4] = t[4*32'(rt_sl[4*p +: 4]) +: 4];
      beat_v[p] = v1_q;
      beat_sop[p] = sop1_q;
      beat[p*BW +: BW] = d1_q;
      beat_k[KW*p +: KW] = k;
      beat_slot[16*p +: 16] = 16'(s);
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        used_q[p] <= '0;
        cur_q <= '0;
        wbeat_q <= '0;
      end else begin
        if (v1_q) begin
          if (int'(k) < SlotBeats) mem_q[p][int'(s) * SlotBeats + int'(k)] <= d1_q;
          written_q[p][s] <= k + 1'b1;
          cur_q <= s;
          wbeat_q <= k + 1'b1;
        end
        used_q[p] <= (used_q[p] & ~ret_mask) | ((v1_q && sop1_q) ? (NSlots'(1) << free_slot) : '0);
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && v1_q && sop1_q && none_free) $fatal(1, "%s: input %0d has no free packet slot", Name, p);
      if (rst_n && v1_q && !sop1_q && int'(wbeat_q) >= SlotBeats)
        $fatal(1, "%s: input %0d: a packet beyond %0d beats", Name, p, SlotBeats);
    end
`endif
  end

  // ---------------------------------------------------------------- switching state
  logic [15:0]  held_q [NK];            // per input VL: blocks in the buffer
  logic [15:0]  fill_q [NPorts*NPorts*NVl];  // (input, output, VL): blocks queued, all in to grant
  logic         allin_q [NPorts][NSlots];    // the packet in the slot has all its bytes in
  logic         early_q [NPorts][NSlots];    // and was granted before that (cut-through): never in the fill
  logic [QW-1:0] qmem_q [NK][SlotMax];  // per output VL: the descriptor queue
  logic [QA-1:0] qhd_q [NK];
  logic [QA:0]  qn_q [NK];
  logic [31:0]  ser_q [NPorts];         // per output: wire ticks still busy
  logic [IdxW:0] hidx_q [NPorts], lidx_q [NPorts];
  logic [15:0]  hrem_q [NPorts], lrem_q [NPorts];
  logic [15:0]  hcnt_q [NPorts];
  logic [15:0]  mk_q [NK];              // per output VL: marking counter or LFSR

  // The input buffer count: releases of packets that finished streaming out, then the top's additions.
  always_comb begin
    logic [15:0] h [NK];
    /* verilator lint_off UNUSEDSIGNAL */
    int k;
    /* verilator lint_on UNUSEDSIGNAL */
    k = 0;
    for (int i = 0; i < NK; i++) h[i] = held_q[i];
    for (int o = 0; o < NPorts; o++) begin
      if (ret_v_q[o]) begin
        k = 32'(ret_in_q[o])*NVl + 32'(ret_ivl_q[o]);
        h[k] = h[k] - 16'(blocks_of(ret_len_q[o]));
      end
    end
    for (int i = 0; i < NK; i++) held_rel[16*i +: 16] = h[i];
    for (int p = 0; p < NPorts; p++) begin
      if (buf_v[p] && 32'(buf_ivl[4*p +: 4]) < NVl) begin
        k = p*NVl + 32'(buf_ivl[4*p +: 4]);
        h[k] = h[k] + 16'(buf_blk[7*p +: 7]);
      end
    end
    for (int i = 0; i < NK; i++) begin
      held_nx[16*i +: 16] = h[i];
      held_q_o[16*i +: 16] = held_q[i];
    end
  end

  always_ff @(posedge clk) begin
    for (int i = 0; i < NK; i++) held_q[i] <= rst_n ? held_nx[16*i +: 16] : '0;
  end

  // Which inputs have blocks counted in each output VL's fill.
  always_comb begin
    for (int o = 0; o < NPorts; o++)
      for (int v = 0; v < NVl; v++)
        for (int p = 0; p < NPorts; p++)
          contrib[(o*NVl + v)*NPorts + p] = p < 32'(nports_i) && fill_q[(p*NPorts + o)*NVl + v] != '0;
  end

  // ---------------------------------------------------------------- per output: the decision of the cycle
  // (a link-control packet, or a packet by VL arbitration), and the marking decision of a granted packet.
  logic          g_ctl [NPorts];
  logic [3:0]    g_ctlvl [NPorts];
  logic          g_pkt [NPorts];
  logic [3:0]    g_vl [NPorts];
  logic          g_high [NPorts];
  logic [IdxW:0] g_idx [NPorts];
  logic          g_new [NPorts];
  logic          g_lo_any [NPorts];
  logic [QW-1:0] g_desc [NPorts];
  logic          g_mark [NPorts];
  logic          g_elig [NPorts];
  logic [15:0]   g_mk [NPorts];

  // Each output VL's head packet's length, for the top's credit rule.
  always_comb begin
    for (int k = 0; k < NK; k++) begin
      /* verilator lint_off UNUSEDSIGNAL */
      logic [QW-1:0] d;
      /* verilator lint_on UNUSEDSIGNAL */
      d = qmem_q[k][qhd_q[k]];
      head_len[13*k +: 13] = d[QLEN +: 13];
    end
  end

  for (genvar o = 0; o < NPorts; o++) begin : g_dec
    logic [15:0]   cand;  // a bit per VL, 0 beyond NVl
    logic          hi_any, lo_any, limit;
    logic          hfound, lfound, hkeep, lkeep;
    logic [IdxW:0] hsel, lsel, hn, ln, hcur, lcur, e;
    logic [31:0]   num;

    always_comb begin
      num = 32'(rate_num_i[17*o +: 17]);
      cand = '0;
      for (int v = 0; v < NVl; v++) begin
        cand[v] = qn_q[o*NVl + v] != '0 && v < 32'(nvl_i[4*o +: 4]) && send_ok[o*NVl + v];
      end
      // The tables: a visit in progress keeps the grant while its budget lasts and its VL is a candidate;
      // otherwise the first entry with weight and a candidate VL after the current one, wrapping.
      hn = (32'(hi_n_i[(IdxW+1)*o +: IdxW+1]) > TableMax) ? (IdxW+1)'(TableMax) : hi_n_i[(IdxW+1)*o +: IdxW+1];
      ln = (32'(lo_n_i[(IdxW+1)*o +: IdxW+1]) > TableMax) ? (IdxW+1)'(TableMax) : lo_n_i[(IdxW+1)*o +: IdxW+1];
      hcur = (hidx_q[o] >= hn) ? '0 : hidx_q[o];
      lcur = (lidx_q[o] >= ln) ? '0 : lidx_q[o];
      hkeep = hn != '0 && hrem_q[o] != '0 && hi_weight_i[8*(o*TableMax + 32'(hcur)) +: 8] != '0
              && 32'(hi_vl_i[4*(o*TableMax + 32'(hcur)) +: 4]) < NVl && cand[hi_vl_i[4*(o*TableMax + 32'(hcur)) +: 4]];
      lkeep = ln != '0 && lrem_q[o] != '0 && lo_weight_i[8*(o*TableMax + 32'(lcur)) +: 8] != '0
              && 32'(lo_vl_i[4*(o*TableMax + 32'(lcur)) +: 4]) < NVl && cand[lo_vl_i[4*(o*TableMax + 32'(lcur)) +: 4]];
      hfound = 1'b0;
      hsel = hcur;
      lfound = 1'b0;
      lsel = lcur;
      for (int j = 1; j <= TableMax; j++) begin
        if (FltArb) begin
          e = (IdxW+1)'(j - 1);
        end else begin
          e = hcur + (IdxW+1)'(j);
          if (e >= hn) e = e - hn;
        end
        if (j <= 32'(hn) && !hfound && hi_weight_i[8*(o*TableMax + 32'(e)) +: 8] != '0
            && 32'(hi_vl_i[4*(o*TableMax + 32'(e)) +: 4]) < NVl && cand[hi_vl_i[4*(o*TableMax + 32'(e)) +: 4]]) begin
          hfound = 1'b1;
          hsel = e;
        end
        if (FltArb) begin
          e = (IdxW+1)'(j - 1);
        end else begin
          e = lcur + (IdxW+1)'(j);
          if (e >= ln) e = e - ln;
        end
        if (j <= 32'(ln) && !lfound && lo_weight_i[8*(o*TableMax + 32'(e)) +: 8] != '0
            && 32'(lo_vl_i[4*(o*TableMax + 32'(e)) +: 4]) < NVl && cand[lo_vl_i[4*(o*TableMax + 32'(e)) +: 4]]) begin
          lfound = 1'b1;
          lsel = e;
        end
      end
      if (FltArb) begin
        hkeep = 1'b0;
        lkeep = 1'b0;
      end
      hi_any = hkeep || hfound;
      lo_any = lkeep || lfound;
      limit = vl_high_limit_i[8*o +: 8] != 8'd255 && hcnt_q[o] != '0
              && 32'(hcnt_q[o]) >= 64 * 32'(vl_high_limit_i[8*o +: 8]);

      g_ctl[o] = 1'b0;
      g_ctlvl[o] = '0;
      g_pkt[o] = 1'b0;
      g_vl[o] = '0;
      g_high[o] = 1'b0;
      g_idx[o] = '0;
      g_new[o] = 1'b0;
      g_lo_any[o] = lo_any;
      if (rst_n && ser_q[o] < num) begin
        // Link-control packets first, the lowest VL due.
        for (int v = NVl - 1; v >= 0; v--) begin
          if (ctl_due[o*NVl + v]) begin
            g_ctl[o] = 1'b1;
            g_ctlvl[o] = 4'(v);
          end
        end
        if (!g_ctl[o] && (hi_any || lo_any)) begin
          g_pkt[o] = 1'b1;
          g_high[o] = hi_any && !(limit && lo_any);
          if (g_high[o]) begin
            g_idx[o] = hkeep ? hcur : hsel;
            g_new[o] = !hkeep;
            g_vl[o] = hi_vl_i[4*(o*TableMax + 32'(g_idx[o])) +: 4];
          end else begin
            g_idx[o] = lkeep ? lcur : lsel;
            g_new[o] = !lkeep;
            g_vl[o] = lo_vl_i[4*(o*TableMax + 32'(g_idx[o])) +: 4];
          end
        end
      end
      g_desc[o] = qmem_q[o*NVl + 32'(g_vl[o])][qhd_q[o*NVl + 32'(g_vl[o])]];
    end

    // Each VL's marking state: congested, and a root (credit at least root_min_credits) or under
    // victim_mask; or the top's own state where it chose it. The granted VL's decides the grant's
    // eligibility; all of them are the out_mark tap.
    logic [NVl-1:0] mst;
    always_comb begin
      logic [15:0] thr, lane, mx;
      logic [31:0] sum, n;
      logic over;
      logic [3:0] th;
      logic [1:0] cmp;
      th = threshold_i[4*o +: 4];
      cmp = compare_i[2*o +: 2];
      for (int v = 0; v < NVl; v++) begin
        // One MTU packet above the configured threshold: the FIFO serves inputs in arrival order, so one
        // input's lane holds up to a packet more than a round-robin switch's at the same load.
        thr = thr_table_i[256*(o*NVl + v) + 16*32'(th) +: 16] + 16'(mtu_blocks_i);
        sum = '0;
        n = '0;
        mx = '0;
        for (int p = 0; p < NPorts; p++) begin
          lane = (p < 32'(nports_i)) ? fill_q[(p*NPorts + o)*NVl + v] : 16'd0;
          sum = sum + 32'(lane);
          if (lane != '0) n = n + 1;
          if (lane > mx) mx = lane;
        end
        case (cmp)
          2'd1: over = sum > 32'(thr);
          2'd2: over = n != 0 && n * sum > 32'(thr);
          default: over = mx > thr;
        endcase
        if (th == '0) over = 1'b0;
        mst[v] = cong_sel[o] ? cong[o*NVl + v]
                 : over && (32'(avail[12*(o*NVl + v) +: 12]) >= 32'(root_min_credits_i[12*o +: 12]) || victim_mask_i[o]);
      end
    end
    assign out_mark[o*NVl +: NVl] = mst;

    // The marking decision of the grant: eligible (the marking state, Packet_Size), markable (the top's
    // word), and Marking_Rate's counter or LFSR, which steps on every eligible packet.
    always_comb begin
      logic [12:0] len;
      logic [15:0] s;
      len = g_desc[o][QLEN +: 13];
      g_elig[o] = mst[g_vl[o][VlW-1:0]] && {1'b0, len} >= {packet_size_i[8*o +: 8], 6'b0};
      s = mk_q[o*NVl + 32'(g_vl[o])];
      if (mode_i[o]) begin
        g_mark[o] = g_elig[o] && capable[o] && {1'b0, s} < lfsr_thresh_i[17*o +: 17];
        g_mk[o] = s[0] ? ((s >> 1) ^ LfsrTaps) : (s >> 1);
      end else begin
        g_mark[o] = g_elig[o] && capable[o] && s >= marking_rate_i[16*o +: 16];
        g_mk[o] = (s >= marking_rate_i[16*o +: 16]) ? 16'(FltMarkRate) : s + 16'd1;
      end
    end

    always_comb begin
      g_ctl_o[o] = g_ctl[o];
      g_ctlvl_o[4*o +: 4] = g_ctlvl[o];
      g_pkt_o[o] = g_pkt[o];
      g_vl_o[4*o +: 4] = g_vl[o];
      g_desc_o[QW*o +: QW] = g_desc[o];
      g_elig_o[o] = g_elig[o];
      g_mark_o[o] = g_mark[o];
    end
  end

  // ---------------------------------------------------------------- state update
  always_ff @(posedge clk) begin : update
    logic [15:0]  fill_n [NPorts*NPorts*NVl];
    logic [QA-1:0] qhd_n [NK];
    logic [QA:0]  qn_n [NK];
    logic [31:0]  ser_n [NPorts];
    logic [IdxW:0] hidx_n [NPorts], lidx_n [NPorts];
    logic [15:0]  hrem_n [NPorts], lrem_n [NPorts];
    logic [15:0]  hcnt_n [NPorts];
    logic [15:0]  mk_n [NK];
    /* verilator lint_off UNUSEDSIGNAL */
    int k, j, q;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [6:0] b;
    logic [15:0] w;
    logic [31:0] r;
    logic [SlW-1:0] sl;
    for (int i = 0; i < NK; i++) begin
      qhd_n[i] = qhd_q[i];
      qn_n[i] = qn_q[i];
      mk_n[i] = mk_q[i];
    end
    for (int i = 0; i < NPorts*NPorts*NVl; i++) fill_n[i] = fill_q[i];
    for (int i = 0; i < NPorts; i++) begin
      ser_n[i] = ser_q[i];
      hidx_n[i] = hidx_q[i];
      lidx_n[i] = lidx_q[i];
      hrem_n[i] = hrem_q[i];
      lrem_n[i] = lrem_q[i];
      hcnt_n[i] = hcnt_q[i];
    end
    if (!rst_n) begin
      for (int i = 0; i < NK; i++) begin
        qhd_n[i] = '0;
        qn_n[i] = '0;
        mk_n[i] = mode_i[i / NVl] ? ((lfsr_seed_i[16*(i / NVl) +: 16] == '0) ? 16'hACE1 : lfsr_seed_i[16*(i / NVl) +: 16]) : 16'd0;
      end
      for (int i = 0; i < NPorts*NPorts*NVl; i++) fill_n[i] = '0;
      for (int i = 0; i < NPorts; i++) begin
        ser_n[i] = '0;
        hidx_n[i] = '0;
        lidx_n[i] = '0;
        hrem_n[i] = '0;
        lrem_n[i] = '0;
        hcnt_n[i] = '0;
      end
    end else begin
      // Outputs: grants (dequeue, fill, arbitration and marking state), link-control packets, the wire.
      for (int o = 0; o < NPorts; o++) begin
        r = ser_n[o];
        if (g_ctl[o]) r = r + 32'(CtlBytes) * 32'(rate_den_i[17*o +: 17]);
        if (g_pkt[o]) begin
          k = o*NVl + 32'(g_vl[o]);
          b = blocks_of(g_desc[o][QLEN +: 13]);
          qhd_n[k] = (32'(qhd_n[k]) + 1 >= SlotMax) ? '0 : qhd_n[k] + 1'b1;
          qn_n[k] = qn_n[k] - 1'b1;
          j = (32'(g_desc[o][QW-1 -: 8])*NPorts + o)*NVl + 32'(g_vl[o]);
          if (allin_q[int'(g_desc[o][QW-1 -: 8])][SlW'(g_desc[o][15:0])]) fill_n[j] = fill_n[j] - 16'(b);
          else early_q[int'(g_desc[o][QW-1 -: 8])][SlW'(g_desc[o][15:0])] <= 1'b1;
          if (g_elig[o]) mk_n[k] = g_mk[o];
          r = r + 32'(g_desc[o][QLEN +: 13]) * 32'(rate_den_i[17*o +: 17]);
          if (g_high[o]) begin
            w = 16'(hi_weight_i[8*(o*TableMax + 32'(g_idx[o])) +: 8]);
            if (g_new[o]) hrem_n[o] = w;
            hrem_n[o] = (hrem_n[o] > 16'(b)) ? hrem_n[o] - 16'(b) : 16'd0;
            hidx_n[o] = g_idx[o];
            if (g_lo_any[o]) hcnt_n[o] = (hcnt_n[o] > 16'hFFFF - 16'(b)) ? 16'hFFFF : hcnt_n[o] + 16'(b);
          end else begin
            w = 16'(lo_weight_i[8*(o*TableMax + 32'(g_idx[o])) +: 8]);
            if (g_new[o]) lrem_n[o] = w;
            lrem_n[o] = (lrem_n[o] > 16'(b)) ? lrem_n[o] - 16'(b) : 16'd0;
            lidx_n[o] = g_idx[o];
            hcnt_n[o] = '0;
          end
        end
        ser_n[o] = (r > 32'(rate_num_i[17*o +: 17])) ? r - 32'(rate_num_i[17*o +: 17]) : 32'd0;
      end
      // Inputs: a head clears its slot's marks; a packet counts in its queue's fill once its bytes are all
      // in (the fill is the congestion detection's: a store-and-forward view), unless it was granted before;
      // then tails join their output VL's queue, the highest input first.
      for (int p = 0; p < NPorts; p++) begin
        sl = SlW'(beat_slot[16*p +: 16]);
        if (beat_v[p] && beat_sop[p]) begin
          allin_q[p][sl] <= 1'b0;
          early_q[p][sl] <= 1'b0;
        end
        if (allin_v[p] && 32'(tail_out[8*p +: 8]) < NPorts && 32'(tail_ovl[4*p +: 4]) < NVl) begin
          logic gone;
          gone = !(beat_v[p] && beat_sop[p]) && early_q[p][sl];
          for (int o = 0; o < NPorts; o++) begin
            if (g_pkt[o] && 32'(g_desc[o][QW-1 -: 8]) == p && g_desc[o][15:0] == beat_slot[16*p +: 16]) gone = 1'b1;
          end
          allin_q[p][sl] <= 1'b1;
          if (!gone) begin
            j = (p*NPorts + 32'(tail_out[8*p +: 8]))*NVl + 32'(tail_ovl[4*p +: 4]);
            fill_n[j] = fill_n[j] + 16'(blocks_of(tail_len[13*p +: 13]));
          end
        end
      end
      for (int p = NPorts - 1; p >= 0; p--) begin
        if (tail_v[p] && 32'(tail_out[8*p +: 8]) < NPorts && 32'(tail_ovl[4*p +: 4]) < NVl) begin
          k = 32'(tail_out[8*p +: 8])*NVl + 32'(tail_ovl[4*p +: 4]);
          q = 32'(qhd_n[k]) + 32'(qn_n[k]);
          if (q >= SlotMax) q = q - SlotMax;
          qmem_q[k][q] <= {8'(p), tail_ivl[4*p +: 4], tail_len[13*p +: 13], tail_x[XW*p +: XW], beat_slot[16*p +: 16]};
          qn_n[k] = qn_n[k] + 1'b1;
        end
      end
    end
    fill_q <= fill_n;
    qhd_q <= qhd_n;
    qn_q <= qn_n;
    ser_q <= ser_n;
    hidx_q <= hidx_n;
    lidx_q <= lidx_n;
    hrem_q <= hrem_n;
    lrem_q <= lrem_n;
    hcnt_q <= hcnt_n;
    mk_q <= mk_n;
  end : update

  // The fill of each output VL (lane o*NVl + vl, 16 bits, in 64-byte blocks): its queued blocks summed over
  // the inputs, as the congestion detection sums them (a packet counts from its last byte in to its grant),
  // without the MTU packet its threshold adds; saturating. A tap for the checker's reports only.
  always_comb begin
    logic [31:0] sum;
    for (int o = 0; o < NPorts; o++) begin
      for (int v = 0; v < NVl; v++) begin
        sum = '0;
        for (int p = 0; p < NPorts; p++)
          if (p < 32'(nports_i)) sum = sum + 32'(fill_q[(p*NPorts + o)*NVl + v]);
        out_fill[16*(o*NVl + v) +: 16] = (sum > 32'hffff) ? 16'hffff : sum[15:0];
      end
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  always @(posedge clk) begin
    for (int k = 0; k < NK; k++) begin
      if (rst_n && 32'(qn_q[k]) > SlotMax) $fatal(1, "%s: output VL %0d: descriptor queue overflow", Name, k);
    end
  end
`endif

  // ---------------------------------------------------------------- per output: descriptors wait OutDelay
  // cycles, then the packet streams out a beat per cycle (when written, and while out_ready takes the beat
  // held), rewritten by the top, through an output register stage.
  for (genvar o = 0; o < NPorts; o++) begin : g_out
    logic [DQ-1:0][DW-1:0] dq_q;
    logic [5:0]       dn_q;
    logic             busy_q, dup_q, fin_q;
    logic [31:0]      due_q, el;  // the cycle the packet was due out, and the cycles since
    logic             paced, wire_done;
    logic [7:0]       in_q;
    logic [3:0]       ivl_q;
    logic [SlW-1:0]   slot_q;
    logic [KW-1:0]    k_q;
    logic [12:0]      len_q;
    logic [MW-1:0]    meta_q;

    /* verilator lint_off UNUSEDSIGNAL */
    logic [DW-1:0]    head;   // the tag's bits 19:16 are 0
    /* verilator lint_on UNUSEDSIGNAL */
    logic [DW-1:0]    incoming, ctl_in;
    logic             start, beat_ok, head_ctl, adv;
    logic [12:0]      base;
    logic             last;

    assign head = dq_q[0];
    assign head_ctl = head[DW-1];
    assign start = !busy_q && dn_q != 0 && now_q >= head[31:0];
    // Tag: input, input VL, slot.
    assign incoming = {1'b0, g_desc[o][QW-1 -: 8], g_desc[o][QW-9 -: 4], 4'd0, g_desc[o][15:0],
                       g_meta[MW*o +: MW], g_desc[o][QLEN +: 13], now_q + 32'(OutDelay)};
    assign ctl_in = {1'b1, ctl_word[32*o +: 32], MW'(0), 13'd0, now_q + 32'(OutDelay)};
    // The output register takes a new beat when the last one was taken (or there was none).
    assign adv = out_ready[o] || !out_valid[o];
    // Beats go at the link's pace (beat k not before k * BeatBytes bytes' time), and the packet holds the
    // stream, and its input buffer blocks, until its last byte has left at that pace.
    assign el = now_q - due_q;
    assign paced = 64'(el) * 64'(rate_num_i[17*o +: 17]) >= 64'(k_q) * 64'(BeatBytes) * 64'(rate_den_i[17*o +: 17]);
    assign beat_ok = busy_q && !fin_q && adv && paced && written_q[int'(in_q)][slot_q] > k_q;
    assign wire_done = busy_q && fin_q
                       && 64'(el) * 64'(rate_num_i[17*o +: 17]) >= 64'(len_q) * 64'(rate_den_i[17*o +: 17]);
    assign base = 13'(int'(k_q) * BeatBytes);
    assign last = (base + 13'(BeatBytes)) >= len_q;

    always_comb begin
      rd_v[o] = beat_ok;
      rd_data[o*BW +: BW] = mem_q[int'(in_q)][int'(slot_q) * SlotBeats + int'(k_q)];
      rd_k[KW*o +: KW] = k_q;
      rd_len[13*o +: 13] = len_q;
      rd_meta[MW*o +: MW] = meta_q;
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        dq_q <= '0;
        dn_q <= '0;
        busy_q <= 1'b0;
        dup_q <= 1'b0;
        fin_q <= 1'b0;
        due_q <= '0;
        in_q <= '0;
        ivl_q <= '0;
        slot_q <= '0;
        k_q <= '0;
        len_q <= '0;
        meta_q <= '0;
        out_valid[o] <= 1'b0;
        out_sop[o] <= 1'b0;
        out_eop[o] <= 1'b0;
        out_nbytes[o*NbW +: NbW] <= '0;
        out_keep[o*BeatBytes +: BeatBytes] <= '0;
        out_data[o*BW +: BW] <= '0;
        ctl_out_valid[o] <= 1'b0;
        ctl_out[o*32 +: 32] <= '0;
        ret_v_q[o] <= 1'b0;
        ret_in_q[o] <= '0;
        ret_ivl_q[o] <= '0;
        ret_len_q[o] <= '0;
        ret_slot_q[o] <= '0;
      end else begin
        logic [5:0] n;
        logic [DQ-1:0][DW-1:0] q;
        n = dn_q;
        q = dq_q;
        ctl_out_valid[o] <= 1'b0;
        if (start && head_ctl) begin
          ctl_out_valid[o] <= 1'b1;
          ctl_out[o*32 +: 32] <= head[DW-2 -: 32];
          q = q >> DW;
          n = n - 1'b1;
        end else if (start) begin
          busy_q <= 1'b1;
          due_q <= head[31:0];
          in_q <= head[DW-2 -: 8];
          ivl_q <= head[DW-10 -: 4];
          slot_q <= SlW'(head[DW-18 -: 16]);
          k_q <= '0;
          meta_q <= head[45 +: MW];
          len_q <= head[44:32];
          q = q >> DW;
          n = n - 1'b1;
        end
        // At most one of the two is granted on a port in a cycle.
        if (CtlQueued && g_ctl[o]) begin
          q[n[4:0]] = ctl_in;
          n = n + 1'b1;
        end
        if (g_pkt[o]) begin
          q[n[4:0]] = incoming;
          n = n + 1'b1;
        end
        dq_q <= q;
        dn_q <= n;

        if (adv) begin
          out_valid[o] <= beat_ok;
          out_sop[o] <= beat_ok && k_q == 0;
          out_eop[o] <= beat_ok && last;
          out_nbytes[o*NbW +: NbW] <= (beat_ok && last) ? NbW'(len_q - base) : '0;
          out_keep[o*BeatBytes +: BeatBytes] <= order_keep(!beat_ok ? '0
              : last ? BeatBytes'((BeatBytes + 1)'(1) << (len_q - base)) - BeatBytes'(1) : '1);
          if (beat_ok) out_data[o*BW +: BW] <= order_bytes(wr_data[o*BW +: BW]);
        end
        ret_v_q[o] <= 1'b0;
        if (beat_ok) begin
          k_q <= k_q + 1'b1;
          if (last) begin
            if (FltDup && !dup_q && slot_q[2:0] == 3'b011) begin
              dup_q <= 1'b1;
              k_q <= '0;
              due_q <= now_q + 1;
            end else begin
              dup_q <= 1'b0;
              fin_q <= 1'b1;
            end
          end
        end
        if (wire_done) begin
          busy_q <= 1'b0;
          fin_q <= 1'b0;
          ret_v_q[o] <= 1'b1;
          ret_in_q[o] <= in_q;
          ret_ivl_q[o] <= ivl_q;
          ret_len_q[o] <= len_q;
          ret_slot_q[o] <= slot_q;
        end
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && 32'(dn_q) + 32'(g_pkt[o]) + 32'(CtlQueued && g_ctl[o]) > DQ + 32'(start))
        $fatal(1, "%s: output %0d: queue full", Name, o);
    end
`endif
  end
endmodule
