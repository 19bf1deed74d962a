// alt_switch: a second InfiniBand switch implementation, for `ibcycle rtl-check` to prove itself on RTL that is
// not the Rust model's twin. It shares no module with hdl/ib_switch.sv or its leaf blocks (credit_rx,
// credit_tx, vl_arb, cong_detect, fecn_marker): every switching decision is taken by its own code below, and
// it is checked only through a port map (hdl/alt/alt_switch.map.toml) by the transaction-level scoreboard,
// never cycle by cycle. What it shares with ib_switch is the configuration interface alone: the held
// configuration ports and the table write port have ib_switch's names, widths and encodings (a port map's
// `config = "ib_switch"`), so the harness loads it the same way. Its RoCEv2 mode (Ethernet frames, PFC pause
// frames, ECN CE) is hdl/alt/alt_roce_switch.sv: the same organisation with the IB link layer replaced.
//
// Its organisation, and how it differs from ib_switch:
// - A byte-stream interface: per port a receive and a transmit stream of BeatBytes-byte beats (default 16;
//   byte k of a beat in bits 8k+7:8k, or in bits BW-8k-1:BW-8k-8 with MsbFirst) with valid, sop, eop and both
//   the count of valid bytes of the last beat and byte enables (in_keep/out_keep; the map picks one), a
//   transmit ready (out_ready: the stream holds its beat while it is low), packed per port into vectors, and
//   link flow-control packets as a 32-bit word per port (lfc_in, lfc_out: bytes 0 to 3 of the IBA
//   flow-control packet, byte 0 in bits 31:24). A tap out_fill gives each output VL's queued blocks, and
//   out_mark each output VL's marking state (the eligibility a grant on it would have), for the checker's
//   reports.
// - Store-and-forward through per-output queues: a packet is written into a slot of its input's buffer (NSlots
//   slots of SlotBeats beats, the lowest free slot first), and when its last beat is in, its descriptor joins
//   the queue of its output VL (one FIFO per output VL shared by every input, SlotMax entries; tails of one
//   cycle join in descending input order). ib_switch is virtual cut-through with a VoQ per (input, output,
//   VL) and per-output-VL round robin over inputs.
// - Routing by its own LFT and SL2VL tables (written through the table write port); a packet the tables do
//   not route stops the simulation (an assertion): it takes routed IBA-local packets only.
// - Input buffer accounting and the flow-control packets it sends, per input VL: ABR counts the blocks (64
//   bytes) of every packet that came in (12 bits, modular; not reloaded from the partner's FCTBS, which a
//   lossless link keeps equal), the blocks held are released when a packet's last beat has streamed out, and
//   FCCL = ABR + min(free blocks, fccl_cap) mod 4096. A flow-control packet per VL of a port every
//   fc_interval cycles of that port (and when the FCCL changed, with fc_on_change), carrying the FCTBS of
//   the same port's transmit side (blocks granted on that VL, modular); it goes before waiting data.
// - Transmit credit: a packet of b blocks may be granted when (FCCL - (FCTBS + b)) mod 4096 <= 2048, FCCL the
//   link partner's last (fccl_reset after reset).
// - VL arbitration by the configured high and low tables (weights in 64-byte blocks, a visit keeps the grant
//   while its budget is not spent and its VL still has a packet with credit; the overdraft of the last packet
//   is forgiven) and VLHighLimit (high blocks granted while a low packet waited, in 4 KB units; 255
//   unbounded). Another legal round-robin start and order than ib_switch's vl_arb: after reset, and after a
//   visit ends, the search starts at the entry AFTER the current one, so the first visit after reset is
//   entry 1's (vl_arb starts with entry 0); a visit's budget counts down from the weight instead of counting
//   up to it.
// - Output pacing at the port's link rate (rate_num/rate_den bytes a cycle; a flow-control packet is 6 bytes
//   on the wire), then OutDelay cycles between the grant and the first beat out, and an output register
//   stage; the bytes stream a beat per cycle.
// - Its own congestion detection and FECN decision, taken at the grant: the blocks queued per (input,
//   output, VL), a packet counted from its last byte in until its grant (one granted before its last byte
//   is in is never counted), against the fill threshold that the
//   configured Threshold selects from the configured threshold table plus one MTU packet (a FIFO serving
//   inputs in arrival order holds up to a packet more per input than a round-robin switch at one load), compared per input, as a sum, or as a
//   sum per contributing input (compare_i); congested with credit (>= root_min_credits) is a root, without a
//   victim that marks only under victim_mask. Packets shorter than Packet_Size are not marked. Marking_Rate:
//   in counter mode the LAST of each Marking_Rate + 1 eligible packets is marked (the golden switch marks
//   the first); in LFSR mode a 16-bit LFSR (its own, stepped once per eligible packet) compared with the
//   configured threshold. An incoming FECN bit is kept.
// - Its own egress rewrite: the LRH VL and the BTH FECN bit are written into the beats as they stream out and
//   the VCRC is recomputed byte-serially over the rewritten bytes (ib_switch rewrites no bytes).
// Configuration ports read for ib_switch's sake only (speedup, mark_enq: the decision is at the grant here;
// root_rule, stall_window: this switch classes root and victim by credit whatever the rule, its own design)
// are accepted and unused.
// Limits: IBA-local packets only (no GRH: the FECN bit must be in the first beat), at most SlotBeats beats
// per packet, at most NSlots packets held per input and SlotMax queued per output VL (assertions stop the
// simulation beyond).
//
// Fault-injection variants (each needs IBCYCLE_FAULTS_ENABLE beside it):
//   IBCYCLE_FAULT_ALT_CREDIT_DROP  input 0 VL 0 counts its buffer a block smaller: a block of credit is never
//                                  advertised
//   IBCYCLE_FAULT_ALT_FECN_WRONG   the FECN written is the inverse of the marking decision
//   IBCYCLE_FAULT_ALT_DUP          a packet held in a slot whose number ends in binary 011 streams out twice
//   IBCYCLE_FAULT_ALT_VL_MIX       the LRH VL out is left as it came in (the input VL), not SL2VL's
//   IBCYCLE_FAULT_ALT_VCRC         the VCRC is written most significant byte first
//   IBCYCLE_FAULT_ALT_ARB          VL arbitration ignores the weights: the first entry of a table with a
//                                  packet and credit always wins (strict priority by table order)
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
`ifdef IBCYCLE_FAULT_ALT_DUP
  $fatal(1, "IBCYCLE_FAULT_ALT_DUP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_VL_MIX
  $fatal(1, "IBCYCLE_FAULT_ALT_VL_MIX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_VCRC
  $fatal(1, "IBCYCLE_FAULT_ALT_VCRC is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_ARB
  $fatal(1, "IBCYCLE_FAULT_ALT_ARB is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  localparam int BW = BeatBytes * 8;
  localparam int SlW = (NSlots > 1) ? $clog2(NSlots) : 1;
  localparam int KW = $clog2(SlotBeats + 1);
  localparam int NK = NPorts * NVl;
  localparam int VlW = (NVl > 1) ? $clog2(NVl) : 1;
  localparam int QA = (SlotMax > 1) ? $clog2(SlotMax) : 1;
  // A queued descriptor: input, input VL, length in bytes (LRH through VCRC), slot.
  localparam int QW = 8 + 4 + 13 + 16;
  // Per output, what was granted waits OutDelay cycles in a queue, packets and flow-control packets in
  // grant order: a flow-control packet's FCTBS counts the blocks of the packets granted before it, so it
  // must not overtake them on the way out.
  localparam int DQ = 32;
  localparam int DW = 1 + 32 + 4 + 1 + 13 + 32;  // is-FC, tag (FC: its word), VL, FECN, length, due cycle
  localparam logic [15:0] LfsrTaps = 16'hB400;

  function automatic logic [15:0] crc_byte(input logic [15:0] c, input logic [7:0] x);
    logic [15:0] r;
    r = c ^ {8'd0, x};
    for (int i = 0; i < 8; i++) r = r[0] ? ((r >> 1) ^ 16'hD008) : (r >> 1);
    return r;
  endfunction

  // Byte k of a beat at bits 8k+7:8k inside; the map's byte order at the ports.
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

  // What the switching logic hands the output stages, per output, in a cycle: a packet or a flow-control
  // packet (at most one of the two).
  logic [NPorts-1:0]     tx_pkt, tx_fecn, tx_fc;
  logic [NPorts*4-1:0]   tx_vl, tx_fc_vl;
  logic [NPorts*13-1:0]  tx_len;
  logic [NPorts*32-1:0]  tx_tag;
  logic [NPorts*12-1:0]  tx_fc_fctbs, tx_fc_fccl;

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

  // Per input, this cycle (from the input register stage): a packet's head (its blocks, input VL, output
  // and output VL), its tail (its descriptor joins a queue) and a flow-control packet from the link partner.
  logic [NPorts-1:0]     h_v, t_v, f_v, e_v;
  logic [15:0]           e_slot [NPorts];
  logic [3:0]            h_ivl [NPorts];
  logic [6:0]            h_blk [NPorts];
  logic [7:0]            h_out [NPorts];
  logic [3:0]            h_ovl [NPorts];
  logic [7:0]            t_out [NPorts];
  logic [3:0]            t_ovl [NPorts];
  logic [QW-1:0]         t_desc [NPorts];
  logic [3:0]            f_vl [NPorts];
  logic [11:0]           f_fccl [NPorts];

  // ---------------------------------------------------------------- per input: register stage, header
  // parse and route, slot allocation, beat store
  for (genvar p = 0; p < NPorts; p++) begin : g_in
    logic [BW-1:0]    d1_q;
    logic             v1_q, sop1_q, fcv1_q;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0]      fc1_q;  // Op (bits 31:28): only normal flow-control packets come in; FCTBS unused
    /* verilator lint_on UNUSEDSIGNAL */
    logic [SlW-1:0]   cur_q, free_slot;
    logic [KW-1:0]    wbeat_q, beats_q, k, nbeats;
    logic             none_free;
    logic [NSlots-1:0] ret_mask;
    logic [7:0]       out_q, out;
    logic [3:0]       ovl_q, ovl, ivl_q;
    logic             ct, saf_q;
    logic [12:0]      len_q, len;
    logic [15:0]      dlid;
    logic [63:0]      t;

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        v1_q <= 1'b0; sop1_q <= 1'b0; fcv1_q <= 1'b0; d1_q <= '0; fc1_q <= '0;
      end else begin
        v1_q <= in_valid[p]; sop1_q <= in_sop[p]; d1_q <= order_bytes(in_data[p*BW +: BW]);
        fcv1_q <= lfc_in_valid[p]; fc1_q <= lfc_in[p*32 +: 32];
      end
    end

    // The lowest free slot.
    always_comb begin
      free_slot = '0;
      none_free = 1'b1;
      for (int s = NSlots - 1; s >= 0; s--) begin
        if (!used_q[p][s]) begin
          free_slot = SlW'(s);
          none_free = 1'b0;
        end
      end
      ret_mask = '0;
      for (int o = 0; o < NPorts; o++) begin
        if (ret_v_q[o] && int'(ret_in_q[o]) == p) ret_mask[ret_slot_q[o]] = 1'b1;
      end
    end

    // The head's LRH: DLID (bytes 2-3), SL (byte 1 high), VL (byte 0 high), PktLen (bytes 4-5, 11 bits of
    // 4-byte words from the LRH through the ICRC; the VCRC adds 2).
    always_comb begin
      dlid = {d1_q[23:16], d1_q[31:24]};
      len = {d1_q[34:32], d1_q[47:40], 2'b00} + 13'd2;
      out = (32'(dlid) < LftMax) ? lft_q[32'(dlid)] : 8'hFF;
      t = (32'(out) < NPorts) ? sl2vl_q[p*NPorts + 32'(out)] : 64'hFFFF_FFFF_FFFF_FFFF;
      ovl = t[4*32'(d1_q[15:12]) +: 4];
      nbeats = KW'((32'(len) + BeatBytes - 1) / BeatBytes);
      k = sop1_q ? '0 : wbeat_q;
      // Cut-through unless the output link is faster than the input link: then the descriptor joins its
      // queue with the last beat (store-and-forward), so that the stream out never waits for a beat.
      ct = 32'(out) >= NPorts || 64'(rate_num_i[17*32'(out) +: 17]) * 64'(rate_den_i[17*p +: 17])
                                 <= 64'(rate_num_i[17*p +: 17]) * 64'(rate_den_i[17*32'(out) +: 17]);
      h_v[p] = v1_q && sop1_q;
      h_ivl[p] = d1_q[7:4];
      h_blk[p] = blocks_of(len);
      h_out[p] = out;
      h_ovl[p] = ovl;
      t_v[p] = v1_q && (sop1_q ? (ct || nbeats == 1) : (saf_q && k + 1'b1 == beats_q));
      // The packet's last beat (its bytes all in).
      e_v[p] = v1_q && (sop1_q ? nbeats == 1 : k + 1'b1 == beats_q);
      e_slot[p] = sop1_q ? 16'(free_slot) : 16'(cur_q);
      t_out[p] = sop1_q ? out : out_q;
      t_ovl[p] = sop1_q ? ovl : ovl_q;
      t_desc[p] = {8'(p), sop1_q ? d1_q[7:4] : ivl_q, sop1_q ? len : len_q, sop1_q ? 16'(free_slot) : 16'(cur_q)};
      f_v[p] = fcv1_q;
      f_vl[p] = fc1_q[12 +: 4];
      f_fccl[p] = fc1_q[0 +: 12];
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        used_q[p] <= '0;
        cur_q <= '0;
        wbeat_q <= '0;
        beats_q <= '0;
        out_q <= '0;
        ovl_q <= '0;
        ivl_q <= '0;
        len_q <= '0;
        saf_q <= 1'b0;
      end else begin
        if (v1_q) begin
          logic [SlW-1:0] s;
          s = sop1_q ? free_slot : cur_q;
          if (int'(k) < SlotBeats) mem_q[p][int'(s) * SlotBeats + int'(k)] <= d1_q;
          written_q[p][s] <= k + 1'b1;
          cur_q <= s;
          wbeat_q <= k + 1'b1;
        end
        if (h_v[p]) begin
          beats_q <= nbeats;
          out_q <= out;
          ovl_q <= ovl;
          ivl_q <= d1_q[7:4];
          len_q <= len;
          saf_q <= !ct && nbeats != 1;
        end
        used_q[p] <= (used_q[p] & ~ret_mask) | (h_v[p] ? (NSlots'(1) << free_slot) : '0);
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && h_v[p] && none_free) $fatal(1, "alt_switch: input %0d has no free packet slot", p);
      if (rst_n && v1_q && !sop1_q && int'(wbeat_q) >= SlotBeats)
        $fatal(1, "alt_switch: input %0d: a packet beyond %0d beats", p, SlotBeats);
      if (rst_n && h_v[p] && (32'(out) >= NPorts || 32'(ovl) >= NVl || d1_q[7:4] == 4'd15))
        $fatal(1, "alt_switch: input %0d: a packet to DLID %0d that the tables do not route", p, dlid);
    end
`endif
  end

  // The unused inputs of the stream: a packet's end is its PktLen, and a beat's valid bytes follow from it.
  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_in;
  assign unused_in = ^{in_eop, in_nbytes, in_keep, speedup_i, mark_enq_i, root_rule_i, stall_window_i};
  /* verilator lint_on UNUSEDSIGNAL */

  // ---------------------------------------------------------------- switching state
  logic [11:0]  abr_q [NK];             // per input VL: blocks received, mod 4096
  logic [15:0]  held_q [NK];            // per input VL: blocks in the buffer
  logic [15:0]  fill_q [NPorts*NPorts*NVl];  // (input, output, VL): blocks queued, all in to grant
  logic         allin_q [NPorts][NSlots];    // the packet in the slot has all its bytes in
  logic         early_q [NPorts][NSlots];    // and was granted before that (cut-through): never in the fill
  logic [QW-1:0] qmem_q [NK][SlotMax];  // per output VL: the descriptor queue
  logic [QA-1:0] qhd_q [NK];
  logic [QA:0]  qn_q [NK];
  logic [11:0]  fccl_q [NK];            // per output VL: the link partner's FCCL
  logic [11:0]  fctbs_q [NK];           // per output VL: blocks granted, mod 4096
  logic [11:0]  lastfc_q [NK];          // per input VL: the FCCL last sent
  logic [NVl-1:0] fcp_q [NPorts];       // per port: VLs whose flow-control packet is due
  logic [15:0]  timer_q [NPorts];
  logic [31:0]  ser_q [NPorts];         // per output: wire ticks still busy
  logic [IdxW:0] hidx_q [NPorts], lidx_q [NPorts];
  logic [15:0]  hrem_q [NPorts], lrem_q [NPorts];
  logic [15:0]  hcnt_q [NPorts];
  logic [15:0]  mk_q [NK];              // per output VL: marking counter or LFSR
  logic [NK-1:0] ovf_q;

  // This cycle's credit advertised per input VL.
  logic [11:0]  fccl_now [NK];
  always_comb begin
    for (int k = 0; k < NK; k++) begin
      logic [15:0] b, fr, cap;
      b = buf_blocks_i[16*k +: 16];
`ifdef IBCYCLE_FAULT_ALT_CREDIT_DROP
      if (k == 0) b = b - 16'd1;
`endif
      fr = (held_q[k] >= b) ? 16'd0 : b - held_q[k];
      cap = (fccl_cap_i > 12'd2048) ? 16'd2048 : 16'(fccl_cap_i);
      fccl_now[k] = abr_q[k] + 12'((fr < cap) ? fr : cap);
    end
  end

  // ---------------------------------------------------------------- per output: the decision of the cycle
  // (a flow-control packet, or a packet by VL arbitration), and the marking decision of a granted packet.
  logic          g_fc [NPorts];
  logic [3:0]    g_fcvl [NPorts];
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

  for (genvar o = 0; o < NPorts; o++) begin : g_dec
    logic [15:0]   cand;  // a bit per VL, 0 beyond NVl
    logic [11:0]   avail [NVl];
    logic          hi_any, lo_any, limit;
    logic          hfound, lfound, hkeep, lkeep;
    logic [IdxW:0] hsel, lsel, hn, ln, hcur, lcur, e;
    logic [31:0]   num;

    always_comb begin
      num = 32'(rate_num_i[17*o +: 17]);
      cand = '0;
      for (int v = 0; v < NVl; v++) begin
        /* verilator lint_off UNUSEDSIGNAL */
        logic [QW-1:0] d;
        /* verilator lint_on UNUSEDSIGNAL */
        logic [11:0] room, a;
        d = qmem_q[o*NVl + v][qhd_q[o*NVl + v]];
        room = fccl_q[o*NVl + v] - (fctbs_q[o*NVl + v] + 12'(blocks_of(d[16 +: 13])));
        cand[v] = qn_q[o*NVl + v] != '0 && v < 32'(nvl_i[4*o +: 4]) && room <= 12'd2048;
        a = fccl_q[o*NVl + v] - fctbs_q[o*NVl + v];
        avail[v] = (a <= 12'd2048) ? a : 12'd0;
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
`ifdef IBCYCLE_FAULT_ALT_ARB
        e = (IdxW+1)'(j - 1);
`else
        e = hcur + (IdxW+1)'(j);
        if (e >= hn) e = e - hn;
`endif
        if (j <= 32'(hn) && !hfound && hi_weight_i[8*(o*TableMax + 32'(e)) +: 8] != '0
            && 32'(hi_vl_i[4*(o*TableMax + 32'(e)) +: 4]) < NVl && cand[hi_vl_i[4*(o*TableMax + 32'(e)) +: 4]]) begin
          hfound = 1'b1;
          hsel = e;
        end
`ifdef IBCYCLE_FAULT_ALT_ARB
        e = (IdxW+1)'(j - 1);
`else
        e = lcur + (IdxW+1)'(j);
        if (e >= ln) e = e - ln;
`endif
        if (j <= 32'(ln) && !lfound && lo_weight_i[8*(o*TableMax + 32'(e)) +: 8] != '0
            && 32'(lo_vl_i[4*(o*TableMax + 32'(e)) +: 4]) < NVl && cand[lo_vl_i[4*(o*TableMax + 32'(e)) +: 4]]) begin
          lfound = 1'b1;
          lsel = e;
        end
      end
`ifdef IBCYCLE_FAULT_ALT_ARB
      hkeep = 1'b0;
      lkeep = 1'b0;
`endif
      hi_any = hkeep || hfound;
      lo_any = lkeep || lfound;
      limit = vl_high_limit_i[8*o +: 8] != 8'd255 && hcnt_q[o] != '0
              && 32'(hcnt_q[o]) >= 64 * 32'(vl_high_limit_i[8*o +: 8]);

      g_fc[o] = 1'b0;
      g_fcvl[o] = '0;
      g_pkt[o] = 1'b0;
      g_vl[o] = '0;
      g_high[o] = 1'b0;
      g_idx[o] = '0;
      g_new[o] = 1'b0;
      g_lo_any[o] = lo_any;
      if (rst_n && ser_q[o] < num) begin
        // Flow-control packets first, the lowest VL due.
        for (int v = NVl - 1; v >= 0; v--) begin
          if (fcp_q[o][v]) begin
            g_fc[o] = 1'b1;
            g_fcvl[o] = 4'(v);
          end
        end
        if (!g_fc[o] && (hi_any || lo_any)) begin
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
    // victim_mask. The granted VL's decides the grant's eligibility; all of them are the out_mark tap.
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
        mst[v] = over && (32'(avail[v]) >= 32'(root_min_credits_i[12*o +: 12]) || victim_mask_i[o]);
      end
    end
    assign out_mark[o*NVl +: NVl] = mst;

    // The marking decision of the grant.
    always_comb begin
      logic [12:0] len;
      logic [15:0] s;
      len = g_desc[o][16 +: 13];
      g_elig[o] = mst[g_vl[o][VlW-1:0]] && {1'b0, len} >= {packet_size_i[8*o +: 8], 6'b0};
      s = mk_q[o*NVl + 32'(g_vl[o])];
      if (mode_i[o]) begin
        g_mark[o] = g_elig[o] && {1'b0, s} < lfsr_thresh_i[17*o +: 17];
        g_mk[o] = s[0] ? ((s >> 1) ^ LfsrTaps) : (s >> 1);
      end else begin
        g_mark[o] = g_elig[o] && s >= marking_rate_i[16*o +: 16];
        g_mk[o] = (s >= marking_rate_i[16*o +: 16]) ? 16'd0 : s + 16'd1;
      end
    end

    always_comb begin
      tx_pkt[o] = g_pkt[o];
      tx_vl[o*4 +: 4] = g_vl[o];
      tx_fecn[o] = g_mark[o];
      tx_len[o*13 +: 13] = g_desc[o][16 +: 13];
      // Tag: input, input VL, slot.
      tx_tag[o*32 +: 32] = {g_desc[o][QW-1 -: 8], g_desc[o][QW-9 -: 4], 4'd0, g_desc[o][15:0]};
      tx_fc[o] = g_fc[o];
      tx_fc_vl[o*4 +: 4] = g_fcvl[o];
      tx_fc_fctbs[o*12 +: 12] = fctbs_q[o*NVl + 32'(g_fcvl[o])];
      tx_fc_fccl[o*12 +: 12] = fccl_now[o*NVl + 32'(g_fcvl[o])];
    end
  end

  // ---------------------------------------------------------------- state update
  always_ff @(posedge clk) begin : update
    logic [11:0]  abr_n [NK];
    logic [15:0]  held_n [NK];
    logic [15:0]  fill_n [NPorts*NPorts*NVl];
    logic [QA-1:0] qhd_n [NK];
    logic [QA:0]  qn_n [NK];
    logic [11:0]  fccl_n [NK];
    logic [11:0]  fctbs_n [NK];
    logic [11:0]  lastfc_n [NK];
    logic [NVl-1:0] fcp_n [NPorts];
    logic [15:0]  timer_n [NPorts];
    logic [31:0]  ser_n [NPorts];
    logic [IdxW:0] hidx_n [NPorts], lidx_n [NPorts];
    logic [15:0]  hrem_n [NPorts], lrem_n [NPorts];
    logic [15:0]  hcnt_n [NPorts];
    logic [15:0]  mk_n [NK];
    logic [NK-1:0] ovf_n;
    /* verilator lint_off UNUSEDSIGNAL */
    int k, j, q;
    /* verilator lint_on UNUSEDSIGNAL */
    logic [6:0] b;
    logic [15:0] w;
    logic [31:0] r;
    for (int i = 0; i < NK; i++) begin
      abr_n[i] = abr_q[i];
      held_n[i] = held_q[i];
      qhd_n[i] = qhd_q[i];
      qn_n[i] = qn_q[i];
      fccl_n[i] = fccl_q[i];
      fctbs_n[i] = fctbs_q[i];
      lastfc_n[i] = lastfc_q[i];
      mk_n[i] = mk_q[i];
    end
    for (int i = 0; i < NPorts*NPorts*NVl; i++) fill_n[i] = fill_q[i];
    for (int i = 0; i < NPorts; i++) begin
      fcp_n[i] = fcp_q[i];
      timer_n[i] = timer_q[i];
      ser_n[i] = ser_q[i];
      hidx_n[i] = hidx_q[i];
      lidx_n[i] = lidx_q[i];
      hrem_n[i] = hrem_q[i];
      lrem_n[i] = lrem_q[i];
      hcnt_n[i] = hcnt_q[i];
    end
    ovf_n = '0;
    if (!rst_n) begin
      for (int i = 0; i < NK; i++) begin
        abr_n[i] = '0;
        held_n[i] = '0;
        qhd_n[i] = '0;
        qn_n[i] = '0;
        fccl_n[i] = fccl_reset_i;
        fctbs_n[i] = '0;
        lastfc_n[i] = '0;
        mk_n[i] = mode_i[i / NVl] ? ((lfsr_seed_i[16*(i / NVl) +: 16] == '0) ? 16'hACE1 : lfsr_seed_i[16*(i / NVl) +: 16]) : 16'd0;
      end
      for (int i = 0; i < NPorts*NPorts*NVl; i++) fill_n[i] = '0;
      for (int i = 0; i < NPorts; i++) begin
        fcp_n[i] = '0;
        timer_n[i] = '0;
        ser_n[i] = '0;
        hidx_n[i] = '0;
        lidx_n[i] = '0;
        hrem_n[i] = '0;
        lrem_n[i] = '0;
        hcnt_n[i] = '0;
      end
    end else begin
      // Outputs: grants (dequeue, credit, fill, arbitration and marking state), flow-control packets, wire.
      for (int o = 0; o < NPorts; o++) begin
        r = ser_n[o];
        if (g_fc[o]) begin
          k = o*NVl + 32'(g_fcvl[o]);
          fcp_n[o][g_fcvl[o][VlW-1:0]] = 1'b0;
          lastfc_n[k] = fccl_now[k];
          r = r + 32'd6 * 32'(rate_den_i[17*o +: 17]);
        end
        if (g_pkt[o]) begin
          k = o*NVl + 32'(g_vl[o]);
          b = blocks_of(g_desc[o][16 +: 13]);
          qhd_n[k] = (32'(qhd_n[k]) + 1 >= SlotMax) ? '0 : qhd_n[k] + 1'b1;
          qn_n[k] = qn_n[k] - 1'b1;
          fctbs_n[k] = fctbs_n[k] + 12'(b);
          j = (32'(g_desc[o][QW-1 -: 8])*NPorts + o)*NVl + 32'(g_vl[o]);
          if (allin_q[int'(g_desc[o][QW-1 -: 8])][SlW'(g_desc[o][15:0])]) fill_n[j] = fill_n[j] - 16'(b);
          else early_q[int'(g_desc[o][QW-1 -: 8])][SlW'(g_desc[o][15:0])] <= 1'b1;
          if (g_elig[o]) mk_n[k] = g_mk[o];
          r = r + 32'(g_desc[o][16 +: 13]) * 32'(rate_den_i[17*o +: 17]);
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
        // Packets that finished streaming out free their input's buffer blocks.
        if (ret_v_q[o]) begin
          k = 32'(ret_in_q[o])*NVl + 32'(ret_ivl_q[o]);
          held_n[k] = held_n[k] - 16'(blocks_of(ret_len_q[o]));
        end
      end
      // Inputs: heads (blocks received and held, fill), flow-control packets in, then tails join their
      // output VL's queue, the highest input first.
      for (int p = 0; p < NPorts; p++) begin
        if (h_v[p] && 32'(h_ivl[p]) < NVl && 32'(h_out[p]) < NPorts && 32'(h_ovl[p]) < NVl) begin
          k = p*NVl + 32'(h_ivl[p]);
          if (32'(held_n[k]) + 32'(h_blk[p]) > 32'(buf_blocks_i[16*k +: 16])) ovf_n[k] = 1'b1;
          abr_n[k] = abr_n[k] + 12'(h_blk[p]);
          held_n[k] = held_n[k] + 16'(h_blk[p]);
        end
        if (h_v[p]) begin
          allin_q[p][SlW'(e_slot[p])] <= 1'b0;
          early_q[p][SlW'(e_slot[p])] <= 1'b0;
        end
        // A packet counts in its queue's fill once its bytes are all in (the fill is the congestion
        // detection's: a store-and-forward view), unless it was granted before.
        if (e_v[p] && 32'(t_out[p]) < NPorts && 32'(t_ovl[p]) < NVl) begin
          logic gone;
          gone = !h_v[p] && early_q[p][SlW'(e_slot[p])];
          for (int o = 0; o < NPorts; o++) begin
            if (g_pkt[o] && 32'(g_desc[o][QW-1 -: 8]) == p && g_desc[o][15:0] == e_slot[p]) gone = 1'b1;
          end
          allin_q[p][SlW'(e_slot[p])] <= 1'b1;
          if (!gone) begin
            j = (p*NPorts + 32'(t_out[p]))*NVl + 32'(t_ovl[p]);
            fill_n[j] = fill_n[j] + 16'(blocks_of(t_desc[p][16 +: 13]));
          end
        end
        if (f_v[p] && 32'(f_vl[p]) < NVl) fccl_n[p*NVl + 32'(f_vl[p])] = f_fccl[p];
      end
      for (int p = NPorts - 1; p >= 0; p--) begin
        if (t_v[p] && 32'(t_out[p]) < NPorts && 32'(t_ovl[p]) < NVl) begin
          k = 32'(t_out[p])*NVl + 32'(t_ovl[p]);
          q = 32'(qhd_n[k]) + 32'(qn_n[k]);
          if (q >= SlotMax) q = q - SlotMax;
          qmem_q[k][q] <= t_desc[p];
          qn_n[k] = qn_n[k] + 1'b1;
        end
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
    held_q <= held_n;
    fill_q <= fill_n;
    qhd_q <= qhd_n;
    qn_q <= qn_n;
    fccl_q <= fccl_n;
    fctbs_q <= fctbs_n;
    lastfc_q <= lastfc_n;
    fcp_q <= fcp_n;
    timer_q <= timer_n;
    ser_q <= ser_n;
    hidx_q <= hidx_n;
    lidx_q <= lidx_n;
    hrem_q <= hrem_n;
    lrem_q <= lrem_n;
    hcnt_q <= hcnt_n;
    mk_q <= mk_n;
    ovf_q <= ovf_n;
  end : update

  assign overflow = ovf_q;

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

  always_comb begin
    cfg_err = nports_i == '0 || 32'(nports_i) > NPorts;
    for (int p = 0; p < NPorts; p++) begin
      if (p < 32'(nports_i) && (rate_num_i[17*p +: 17] == '0 || rate_den_i[17*p +: 17] == '0
          || nvl_i[4*p +: 4] == '0 || 32'(nvl_i[4*p +: 4]) > NVl || fc_interval_i[16*p +: 16] == '0))
        cfg_err = 1'b1;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  always @(posedge clk) begin
    for (int k = 0; k < NK; k++) begin
      if (rst_n && 32'(qn_q[k]) > SlotMax) $fatal(1, "alt_switch: output VL %0d: descriptor queue overflow", k);
    end
  end
`endif

  // ---------------------------------------------------------------- per output: descriptors wait OutDelay
  // cycles, then the packet streams out a beat per cycle (when written, and while out_ready takes the beat
  // held) with its VL and FECN written and its VCRC recomputed, through an output register stage.
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
    logic [3:0]       vl_q;
    logic             fecn_q;
    logic [15:0]      crc_q;

    /* verilator lint_off UNUSEDSIGNAL */
    logic [DW-1:0]    head;   // the tag's bits 19:16 are 0
    /* verilator lint_on UNUSEDSIGNAL */
    logic [DW-1:0]    incoming, fc_in;
    logic             start, beat_ok, head_fc, adv;
    logic [BW-1:0]    b;
    logic [15:0]      c, fin;
    logic [12:0]      base;
    logic             last;

    assign head = dq_q[0];
    assign head_fc = head[DW-1];
    assign start = !busy_q && dn_q != 0 && now_q >= head[31:0];
`ifdef IBCYCLE_FAULT_ALT_FECN_WRONG
    // The marking decision inverted.
    assign incoming = {1'b0, tx_tag[o*32 +: 32], tx_vl[o*4 +: 4], !tx_fecn[o], tx_len[o*13 +: 13], now_q + 32'(OutDelay)};
`else
    assign incoming = {1'b0, tx_tag[o*32 +: 32], tx_vl[o*4 +: 4], tx_fecn[o], tx_len[o*13 +: 13], now_q + 32'(OutDelay)};
`endif
    // Op 0 (normal), FCTBS, VL, FCCL.
    assign fc_in = {1'b1, 4'd0, tx_fc_fctbs[o*12 +: 12], tx_fc_vl[o*4 +: 4], tx_fc_fccl[o*12 +: 12],
                    4'd0, 1'b0, 13'd0, now_q + 32'(OutDelay)};
    // The output register takes a new beat when the last one was taken (or there was none).
    assign adv = out_ready[o] || !out_valid[o];
    // Beats go at the link's pace (beat k not before k * BeatBytes bytes' time), and the packet holds the
    // stream, and its input buffer blocks, until its last byte has left at that pace.
    assign el = now_q - due_q;
    assign paced = 64'(el) * 64'(rate_num_i[17*o +: 17]) >= 64'(k_q) * 64'(BeatBytes) * 64'(rate_den_i[17*o +: 17]);
    assign beat_ok = busy_q && !fin_q && adv && paced && written_q[int'(in_q)][slot_q] > k_q;
    assign wire_done = busy_q && fin_q
                       && 64'(el) * 64'(rate_num_i[17*o +: 17]) >= 64'(len_q) * 64'(rate_den_i[17*o +: 17]);

    always_comb begin
      b = mem_q[int'(in_q)][int'(slot_q) * SlotBeats + int'(k_q)];
      base = 13'(int'(k_q) * BeatBytes);
      last = (base + 13'(BeatBytes)) >= len_q;
      if (k_q == 0) begin
`ifndef IBCYCLE_FAULT_ALT_VL_MIX
        b[7:4] = vl_q;
`endif
        if (fecn_q) b[12*8 + 7] = 1'b1;
      end
      c = crc_q;
      for (int i = 0; i < BeatBytes; i++) begin
        if (base + 13'(i) + 13'd2 < len_q) c = crc_byte(c, b[i*8 +: 8]);
      end
      fin = ~c;
      if (last) begin
        for (int i = 0; i < BeatBytes; i++) begin
`ifdef IBCYCLE_FAULT_ALT_VCRC
          if (base + 13'(i) + 13'd2 == len_q) b[i*8 +: 8] = fin[15:8];
          if (base + 13'(i) + 13'd1 == len_q) b[i*8 +: 8] = fin[7:0];
`else
          if (base + 13'(i) + 13'd2 == len_q) b[i*8 +: 8] = fin[7:0];
          if (base + 13'(i) + 13'd1 == len_q) b[i*8 +: 8] = fin[15:8];
`endif
        end
      end
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
        vl_q <= '0;
        fecn_q <= 1'b0;
        crc_q <= 16'hFFFF;
        out_valid[o] <= 1'b0;
        out_sop[o] <= 1'b0;
        out_eop[o] <= 1'b0;
        out_nbytes[o*NbW +: NbW] <= '0;
        out_keep[o*BeatBytes +: BeatBytes] <= '0;
        out_data[o*BW +: BW] <= '0;
        lfc_out_valid[o] <= 1'b0;
        lfc_out[o*32 +: 32] <= '0;
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
        lfc_out_valid[o] <= 1'b0;
        if (start && head_fc) begin
          lfc_out_valid[o] <= 1'b1;
          lfc_out[o*32 +: 32] <= head[81:50];
          q = q >> DW;
          n = n - 1'b1;
        end else if (start) begin
          busy_q <= 1'b1;
          due_q <= head[31:0];
          in_q <= head[81:74];
          ivl_q <= head[73:70];
          slot_q <= SlW'(head[65:50]);
          k_q <= '0;
          vl_q <= head[49:46];
          fecn_q <= head[45];
          len_q <= head[44:32];
          crc_q <= 16'hFFFF;
          q = q >> DW;
          n = n - 1'b1;
        end
        // At most one of the two is granted on a port in a cycle.
        if (tx_fc[o]) begin
          q[n[4:0]] = fc_in;
          n = n + 1'b1;
        end
        if (tx_pkt[o]) begin
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
          if (beat_ok) out_data[o*BW +: BW] <= order_bytes(b);
        end
        ret_v_q[o] <= 1'b0;
        if (beat_ok) begin
          crc_q <= c;
          k_q <= k_q + 1'b1;
          if (last) begin
`ifdef IBCYCLE_FAULT_ALT_DUP
            if (!dup_q && slot_q[2:0] == 3'b011) begin
              dup_q <= 1'b1;
              k_q <= '0;
              due_q <= now_q + 1;
              crc_q <= 16'hFFFF;
            end else begin
              dup_q <= 1'b0;
              fin_q <= 1'b1;
            end
`else
            fin_q <= 1'b1;
`endif
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
      if (rst_n && 32'(dn_q) + 32'(tx_pkt[o]) + 32'(tx_fc[o]) > DQ + 32'(start))
        $fatal(1, "alt_switch: output %0d: queue full", o);
    end
`endif
`ifdef IBCYCLE_FAULT_ALT_VL_MIX
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_vl;
    assign unused_vl = ^vl_q;
    /* verilator lint_on UNUSEDSIGNAL */
`endif
`ifndef IBCYCLE_FAULT_ALT_DUP
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_dup;
    assign unused_dup = dup_q;
    /* verilator lint_on UNUSEDSIGNAL */
`endif
  end
endmodule
