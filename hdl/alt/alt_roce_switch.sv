// alt_roce_switch: the RoCEv2 mode of the second switch implementation (hdl/alt/alt_switch.sv), for
// `ibcycle rtl-check` to prove its RoCEv2 checks on RTL that is not the Rust model's twin. It keeps
// alt_switch's own organisation (input slots, store-and-forward, a descriptor FIFO per output priority shared
// by every input, its own VL arbitration and congestion decision at the grant) and replaces the IB link
// layer by Ethernet's: RoCEv2 frames on the byte streams, PFC pause frames on side ports instead of credits,
// ECN CE instead of FECN. It shares no module with hdl/ib_switch.sv; its configuration interface is
// ib_switch's held ports and table write port (a port map's `config = "ib_switch"`) plus the PFC ports
// below, which the harness drives when the configuration's ports run PFC. Checked through its port map
// (hdl/alt/alt_roce_switch.map.toml) by the transaction-level scoreboard, never cycle by cycle.
//
// What it does:
// - Frames as the golden model makes them (`PacketDesc::materialise_roce_v4`): Ethernet (no VLAN tag, no
//   FCS), IPv4 without options (or IPv6), UDP, BTH ... ICRC. A frame's length is its beats' (in_eop and
//   in_nbytes, 0 meaning a whole beat); its DLID is the low 16 bits of the destination MAC (bytes 4-5), its
//   priority the DSCP / 8 (IPv4 ToS bits 7:5; IPv6 traffic class bits 7:5), which is both its SL and its
//   input priority. Routing by the LFT, the output priority by SL2VL(input, output)[priority].
// - Store-and-forward: a frame is written into a slot of its input's buffer (the lowest free slot), and its
//   descriptor joins its output priority's FIFO with its last beat (tails of one cycle in descending input
//   order).
// - PFC, receive side, per input priority: the blocks (64 bytes) held, counted as the beats come in (a beat
//   adds the blocks it starts) and released when the frame's last byte has left at the output's pace (later
//   than the scoreboard's release at the first byte out: never an overrun the scoreboard does not see
//   coming). With the golden model's watermarks (pfc_xoff_i, pfc_xon_i) and PfcRx rule: XOFF
//   (pfc_quanta_i) when the blocks held reach XOFF, refreshed every pfc_half_i cycles while it stands, XON
//   (quanta 0) when they fall to XON. A pause frame per port at a time, the lowest priority due first, before
//   waiting frames; it takes 64 bytes of the wire's time and leaves on pause_out in the cycle after its grant.
// - PFC, transmit side: a pause frame in (pause_in) pauses each priority it enables for its quanta, counted
//   as byte ticks (quanta x 64 x rate_den, less rate_num a cycle: the 512-bit times at the link rate); 0
//   resumes. A pause frame counts from the cycle it arrives; no frame of a paused output priority is
//   granted. The response (a frame granted in the pause's cycle starts OutDelay, default 0 as a store-and-
//   forward switch has nothing to wait for, plus about three cycles later) is within the scoreboard's
//   `pause_response`.
// - VL arbitration by the configured tables over the output priorities that have a frame and are not paused,
//   as alt_switch arbitrates (its round-robin start and budget countdown).
// - Its own congestion decision, at the grant: alt_switch's fill (blocks per (input, output, priority), a
//   frame counted from its last byte in to its grant) against the configured threshold table plus one MTU
//   packet, compared per input, as a sum or per contributor (roce_detect_i = 0, RCM-1a); a root when the
//   output priority has credit, which on a PFC port is not being paused nor within victim_hold_i cycles of a
//   pause's end; a victim marks only under Victim_Mask. With roce_detect_i = 1 (RCM-1b): at least two
//   inputs have frames counted in the fill for the output priority and one of them holds more than
//   in_buf_thr_i plus one MTU packet of that priority in its buffer. Packet_Size and Marking_Rate as
//   alt_switch (counter mode marks the last of each Marking_Rate + 1 eligible frames; LFSR mode its own
//   LFSR). A frame is marked only when it is IPv4 and ECN-capable (ECT(0) or ECT(1)); CE stays CE.
// - Its own egress rewrite: a marked frame leaves with ECN 11 and its IPv4 header checksum updated
//   incrementally (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') over the 16-bit word of the version and ToS). The
//   ICRC is untouched (RoCEv2's ICRC masks the ToS and the checksum).
// Configuration ports read for ib_switch's sake only (credit and flow-control settings, speedup, mark_enq,
// root_rule, stall_window) are accepted and unused.
// Limits: BeatBytes of at least 16 (the DLID and ToS in the first beat); IPv6 frames are forwarded but
// never marked; at most SlotBeats beats per frame, NSlots frames held per input and SlotMax queued per
// output priority (assertions stop the simulation beyond); priorities 0 to NVl - 1 only.
//
// Fault-injection variants (each needs IBCYCLE_FAULTS_ENABLE beside it):
//   IBCYCLE_FAULT_ALT_ROCE_PAUSE_IGNORED  the grant ignores the link partner's pauses
//   IBCYCLE_FAULT_ALT_ROCE_CE_NOT_ECT     the ECN-capable test is forgotten: a congested not-ECT frame is
//                                         marked CE too
//   IBCYCLE_FAULT_ALT_ROCE_DUP            a frame held in a slot whose number ends in binary 011 streams out
//                                         twice
//   IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX       a pause frame received for priority p XOR 1 pauses priority p
//                                         (and the pause of p pauses p XOR 1)
//   IBCYCLE_FAULT_ALT_ROCE_CSUM           a marked frame keeps the IPv4 header checksum it came in with
`default_nettype none
`include "ibcycle_assertions.svh"

module alt_roce_switch #(
  parameter int NPorts    = 4,
  parameter int BeatBytes = 16,
  parameter int NSlots    = 256,
  parameter int SlotBeats = 136,
  parameter int OutDelay  = 0,
  parameter int SlotMax   = 512,
  parameter int LftMax    = 256,
  parameter int NVl       = 2,
  parameter int TableMax  = 64,
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
  // PFC (per port, or per port and priority: lane p*NVl + priority).
  input  wire logic [NPorts*NVl*16-1:0]          pfc_xoff_i,
  input  wire logic [NPorts*NVl*16-1:0]          pfc_xon_i,
  input  wire logic [NPorts*16-1:0]              pfc_quanta_i,
  input  wire logic [NPorts*32-1:0]              pfc_half_i,
  input  wire logic [NPorts*32-1:0]              victim_hold_i,
  input  wire logic [NPorts-1:0]                 roce_detect_i,
  input  wire logic [NPorts*16-1:0]              in_buf_thr_i,
  input  wire logic                              tbl_we_i,
  input  wire logic                              tbl_sel_i,
  input  wire logic [15:0]                       tbl_addr_i,
  input  wire logic [63:0]                       tbl_data_i,
  input  wire logic [NPorts*BeatBytes*8-1:0]     in_data,
  input  wire logic [NPorts-1:0]                 in_valid,
  input  wire logic [NPorts-1:0]                 in_sop,
  input  wire logic [NPorts-1:0]                 in_eop,
  input  wire logic [NPorts*NbW-1:0]             in_nbytes,
  input  wire logic [NPorts-1:0]                 pause_in_valid,
  input  wire logic [NPorts*8-1:0]               pause_in_en,
  input  wire logic [NPorts*128-1:0]             pause_in_quanta,
  output logic [NPorts*BeatBytes*8-1:0]          out_data,
  output logic [NPorts-1:0]                      out_valid,
  output logic [NPorts-1:0]                      out_sop,
  output logic [NPorts-1:0]                      out_eop,
  output logic [NPorts*NbW-1:0]                  out_nbytes,
  output logic [NPorts-1:0]                      pause_out_valid,
  output logic [NPorts*8-1:0]                    pause_out_en,
  output logic [NPorts*128-1:0]                  pause_out_quanta,
  output logic [NPorts*NVl*16-1:0]               out_fill,
  output logic                                   cfg_err
);

`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_ALT_ROCE_PAUSE_IGNORED
  $fatal(1, "IBCYCLE_FAULT_ALT_ROCE_PAUSE_IGNORED is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_CE_NOT_ECT
  $fatal(1, "IBCYCLE_FAULT_ALT_ROCE_CE_NOT_ECT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_DUP
  $fatal(1, "IBCYCLE_FAULT_ALT_ROCE_DUP is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX
  $fatal(1, "IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_CSUM
  $fatal(1, "IBCYCLE_FAULT_ALT_ROCE_CSUM is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  if (BeatBytes < 16) begin : g_beat_check
    $fatal(1, "alt_roce_switch: BeatBytes %0d: the DLID and ToS must be in the first beat (16 or more)", BeatBytes);
  end

  localparam int BW = BeatBytes * 8;
  localparam int SlW = (NSlots > 1) ? $clog2(NSlots) : 1;
  localparam int KW = $clog2(SlotBeats + 1);
  localparam int NK = NPorts * NVl;
  localparam int QA = (SlotMax > 1) ? $clog2(SlotMax) : 1;
  // A queued descriptor: input, input priority, length in bytes, ECN-capable IPv4, the IPv4 header's word
  // of version and ToS (bytes 14-15) and its checksum (bytes 24-25), slot.
  localparam int QW = 8 + 4 + 13 + 1 + 16 + 16 + 16;
  localparam int QSLOT = 0;
  localparam int QCSUM = 16;
  localparam int QW14 = 32;
  localparam int QECT = 48;
  localparam int QLEN = 49;
  localparam int QIVL = 62;
  localparam int QIN = 66;
  // Per output, a granted frame waits OutDelay cycles in a queue: tag (input, input priority, slot),
  // output priority, mark, the new checksum, length, due cycle.
  localparam int DQ = 32;
  localparam int DW = 32 + 4 + 1 + 16 + 13 + 32;
  localparam logic [15:0] LfsrTaps = 16'hB400;

  // Byte k of a beat at bits 8k+7:8k.
  function automatic logic [6:0] blocks_of(input logic [12:0] len);
    return 7'((len + 13'd63) >> 6);
  endfunction

  // One's complement sum of two 16-bit words (the end-around carry added back: it cannot carry again).
  function automatic logic [15:0] ones_add(input logic [15:0] a, input logic [15:0] b);
    logic [16:0] s;
    s = 17'(a) + 17'(b);
    return s[15:0] + 16'(s[16]);
  endfunction

  logic [NPorts-1:0]     tx_pkt, tx_mark;
  logic [NPorts*4-1:0]   tx_vl;
  logic [NPorts*13-1:0]  tx_len;
  logic [NPorts*32-1:0]  tx_tag;
  logic [NPorts*16-1:0]  tx_csum;

  // Packet buffer: per input NSlots slots of SlotBeats beats, and how many beats of each slot are written.
  logic [BW-1:0]         mem_q [NPorts][NSlots*SlotBeats];
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

  // Per input, this cycle (from the input register stage): blocks a beat starts (to its priority), a frame's
  // tail (its descriptor joins a queue), a pause frame from the link partner.
  logic [NPorts-1:0]     b_v, t_v, pz_v;
  logic [3:0]            b_ivl [NPorts];
  logic [6:0]            b_blk [NPorts];
  logic [7:0]            t_out [NPorts];
  logic [3:0]            t_ovl [NPorts];
  logic [QW-1:0]         t_desc [NPorts];
  logic [7:0]            pz_en [NPorts];
  logic [127:0]          pz_q [NPorts];

  // ---------------------------------------------------------------- per input: register stage for the
  // stream, header parse and route, slot allocation, beat store
  for (genvar p = 0; p < NPorts; p++) begin : g_in
    logic [BW-1:0]    d1_q;
    logic             v1_q, sop1_q, eop1_q;
    logic [NbW-1:0]   nb1_q;
    logic [SlW-1:0]   cur_q, free_slot, s;
    logic [KW-1:0]    wbeat_q, k;
    logic             none_free;
    logic [NSlots-1:0] ret_mask;
    logic [7:0]       out_q, out;
    logic [3:0]       ovl_q, ovl, ivl_q, ivl;
    logic [12:0]      base, nb, len;
    logic [15:0]      w14_q, w14, cs_q, cs;
    logic             ect_q, ect;
    logic [15:0]      dlid;
    logic [63:0]      t;
    logic             v4, v6;

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        v1_q <= 1'b0; sop1_q <= 1'b0; eop1_q <= 1'b0; d1_q <= '0; nb1_q <= '0;
      end else begin
        v1_q <= in_valid[p]; sop1_q <= in_sop[p]; eop1_q <= in_eop[p]; d1_q <= in_data[p*BW +: BW];
        nb1_q <= in_nbytes[p*NbW +: NbW];
      end
    end

    // The lowest free slot; slots whose frame finished streaming out.
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

    // The head's Ethernet and IP headers: DLID (bytes 4-5), EtherType (12-13), IPv4 version and IHL (14),
    // ToS (15) or the IPv6 traffic class (bits 3:0 of byte 14, 7:4 of byte 15); later beats: the IPv4
    // header checksum (bytes 24-25), the length.
    always_comb begin
      k = sop1_q ? '0 : wbeat_q;
      s = sop1_q ? free_slot : cur_q;
      base = 13'(int'(k) * BeatBytes);
      nb = (eop1_q && nb1_q != '0) ? 13'(nb1_q) : 13'(BeatBytes);
      len = base + nb;
      dlid = {d1_q[4*8 +: 8], d1_q[5*8 +: 8]};
      v4 = d1_q[12*8 +: 8] == 8'h08 && d1_q[13*8 +: 8] == 8'h00 && d1_q[14*8 +: 8] == 8'h45;
      v6 = d1_q[12*8 +: 8] == 8'h86 && d1_q[13*8 +: 8] == 8'hDD;
      ivl = sop1_q ? (v6 ? 4'(d1_q[14*8 + 1 +: 3]) : 4'(d1_q[15*8 + 5 +: 3])) : ivl_q;
      out = (32'(dlid) < LftMax) ? lft_q[32'(dlid)] : 8'hFF;
      t = (32'(out) < NPorts) ? sl2vl_q[p*NPorts + 32'(out)] : 64'hFFFF_FFFF_FFFF_FFFF;
      ovl = sop1_q ? t[4*32'(ivl) +: 4] : ovl_q;
      w14 = sop1_q ? {d1_q[14*8 +: 8], d1_q[15*8 +: 8]} : w14_q;
      ect = sop1_q ? (v4 && (d1_q[15*8 +: 2] == 2'b01 || d1_q[15*8 +: 2] == 2'b10)) : ect_q;
      cs = cs_q;
      for (int i = 0; i < BeatBytes; i++) begin
        if (base + 13'(i) == 13'd24) cs[15:8] = d1_q[i*8 +: 8];
        if (base + 13'(i) == 13'd25) cs[7:0] = d1_q[i*8 +: 8];
      end
      b_v[p] = v1_q;
      b_ivl[p] = ivl;
      b_blk[p] = blocks_of(len) - blocks_of(base);
      t_v[p] = v1_q && eop1_q;
      t_out[p] = sop1_q ? out : out_q;
      t_ovl[p] = ovl;
      t_desc[p] = {8'(p), ivl, len, ect, w14, cs, 16'(s)};
      // A pause frame is taken in the cycle it arrives (no register stage: the response time counts).
      pz_v[p] = pause_in_valid[p];
      pz_en[p] = pause_in_en[p*8 +: 8];
      pz_q[p] = pause_in_quanta[p*128 +: 128];
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        used_q[p] <= '0;
        cur_q <= '0;
        wbeat_q <= '0;
        out_q <= '0;
        ovl_q <= '0;
        ivl_q <= '0;
        w14_q <= '0;
        cs_q <= '0;
        ect_q <= 1'b0;
      end else begin
        if (v1_q) begin
          if (int'(k) < SlotBeats) mem_q[p][int'(s) * SlotBeats + int'(k)] <= d1_q;
          cur_q <= s;
          wbeat_q <= k + 1'b1;
          cs_q <= cs;
        end
        if (v1_q && sop1_q) begin
          out_q <= out;
          ovl_q <= ovl;
          ivl_q <= ivl;
          w14_q <= w14;
          ect_q <= ect;
        end
        used_q[p] <= (used_q[p] & ~ret_mask) | ((v1_q && sop1_q) ? (NSlots'(1) << free_slot) : '0);
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && v1_q && sop1_q && none_free) $fatal(1, "alt_roce_switch: input %0d has no free frame slot", p);
      if (rst_n && v1_q && !sop1_q && int'(wbeat_q) >= SlotBeats)
        $fatal(1, "alt_roce_switch: input %0d: a frame beyond %0d beats", p, SlotBeats);
      if (rst_n && v1_q && sop1_q && (32'(out) >= NPorts || 32'(ovl) >= NVl || 32'(ivl) >= NVl))
        $fatal(1, "alt_roce_switch: input %0d: a frame to DLID %0d that the tables do not route", p, dlid);
    end
`endif
  end

  // ---------------------------------------------------------------- switching state
  logic [15:0]  held_q [NK];            // per input priority: blocks in the buffer
  logic [15:0]  fill_q [NPorts*NPorts*NVl];  // (input, output, priority): blocks queued, all in to grant
  logic [QW-1:0] qmem_q [NK][SlotMax];  // per output priority: the descriptor queue
  logic [QA-1:0] qhd_q [NK];
  logic [QA:0]  qn_q [NK];
  logic         xoff_q [NK];            // per input priority: an XOFF stands
  logic [31:0]  refresh_q [NK];         // and the cycle it is refreshed
  logic         ppend_q [NK];           // a pause frame is due, with these quanta
  logic [15:0]  pquanta_q [NK];
  logic [47:0]  pticks_q [NK];          // per output priority: byte ticks of pause left
  logic [31:0]  vhold_q [NK];           // and cycles it still counts as without credit after a pause
  logic [31:0]  ser_q [NPorts];         // per output: wire ticks still busy
  logic [IdxW:0] hidx_q [NPorts], lidx_q [NPorts];
  logic [15:0]  hrem_q [NPorts], lrem_q [NPorts];
  logic [15:0]  hcnt_q [NPorts];
  logic [15:0]  mk_q [NK];              // per output priority: marking counter or LFSR

  // ---------------------------------------------------------------- per output: the decision of the cycle
  // (a pause frame, or a frame by VL arbitration), and the marking decision of a granted frame.
  logic          g_pz [NPorts];
  logic [3:0]    g_pzvl [NPorts];
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
    logic [15:0]   cand;  // a bit per priority, 0 beyond NVl
    logic          hi_any, lo_any, limit;
    logic          hfound, lfound, hkeep, lkeep;
    logic [IdxW:0] hsel, lsel, hn, ln, hcur, lcur, e;
    logic [31:0]   num;

    always_comb begin
      num = 32'(rate_num_i[17*o +: 17]);
      cand = '0;
      for (int v = 0; v < NVl; v++) begin
`ifdef IBCYCLE_FAULT_ALT_ROCE_PAUSE_IGNORED
        cand[v] = qn_q[o*NVl + v] != '0 && v < 32'(nvl_i[4*o +: 4]);
`else
        cand[v] = qn_q[o*NVl + v] != '0 && v < 32'(nvl_i[4*o +: 4]) && pticks_q[o*NVl + v] == '0;
`endif
      end
      // The tables, as alt_switch: a visit in progress keeps the grant while its budget lasts and its
      // priority is a candidate; otherwise the first entry with weight and a candidate after the current
      // one, wrapping.
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
        e = hcur + (IdxW+1)'(j);
        if (e >= hn) e = e - hn;
        if (j <= 32'(hn) && !hfound && hi_weight_i[8*(o*TableMax + 32'(e)) +: 8] != '0
            && 32'(hi_vl_i[4*(o*TableMax + 32'(e)) +: 4]) < NVl && cand[hi_vl_i[4*(o*TableMax + 32'(e)) +: 4]]) begin
          hfound = 1'b1;
          hsel = e;
        end
        e = lcur + (IdxW+1)'(j);
        if (e >= ln) e = e - ln;
        if (j <= 32'(ln) && !lfound && lo_weight_i[8*(o*TableMax + 32'(e)) +: 8] != '0
            && 32'(lo_vl_i[4*(o*TableMax + 32'(e)) +: 4]) < NVl && cand[lo_vl_i[4*(o*TableMax + 32'(e)) +: 4]]) begin
          lfound = 1'b1;
          lsel = e;
        end
      end
      hi_any = hkeep || hfound;
      lo_any = lkeep || lfound;
      limit = vl_high_limit_i[8*o +: 8] != 8'd255 && hcnt_q[o] != '0
              && 32'(hcnt_q[o]) >= 64 * 32'(vl_high_limit_i[8*o +: 8]);

      g_pz[o] = 1'b0;
      g_pzvl[o] = '0;
      g_pkt[o] = 1'b0;
      g_vl[o] = '0;
      g_high[o] = 1'b0;
      g_idx[o] = '0;
      g_new[o] = 1'b0;
      g_lo_any[o] = lo_any;
      if (rst_n && ser_q[o] < num) begin
        // Pause frames first, the lowest priority due.
        for (int v = NVl - 1; v >= 0; v--) begin
          if (ppend_q[o*NVl + v]) begin
            g_pz[o] = 1'b1;
            g_pzvl[o] = 4'(v);
          end
        end
        if (!g_pz[o] && (hi_any || lo_any)) begin
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

    // Congestion of the granted priority and the marking decision.
    always_comb begin
      logic [15:0] thr, lane, mx, hmax;
      logic [31:0] sum, n, avail;
      logic over, mstate, nocredit, capable;
      logic [3:0] th;
      logic [1:0] cmp;
      logic [12:0] len;
      logic [15:0] s;
      th = threshold_i[4*o +: 4];
      cmp = compare_i[2*o +: 2];
      // One MTU packet above the configured threshold, as alt_switch: the FIFO serves inputs in arrival
      // order, so one input's lane holds up to a packet more than a round-robin switch's at the same load.
      thr = thr_table_i[256*(o*NVl + 32'(g_vl[o])) + 16*32'(th) +: 16] + 16'(mtu_blocks_i);
      sum = '0;
      n = '0;
      mx = '0;
      hmax = '0;
      for (int p = 0; p < NPorts; p++) begin
        lane = (p < 32'(nports_i)) ? fill_q[(p*NPorts + o)*NVl + 32'(g_vl[o])] : 16'd0;
        sum = sum + 32'(lane);
        if (lane != '0) begin
          n = n + 1;
          if (held_q[p*NVl + 32'(g_vl[o])] > hmax) hmax = held_q[p*NVl + 32'(g_vl[o])];
        end
        if (lane > mx) mx = lane;
      end
      // A PFC port's credit: all of it unless the priority is paused or within the victim hold after.
      nocredit = pticks_q[o*NVl + 32'(g_vl[o])] != '0 || vhold_q[o*NVl + 32'(g_vl[o])] != '0;
      avail = nocredit ? 32'd0 : 32'd4095;
      if (roce_detect_i[o]) begin
        // RCM-1b: two inputs or more queued, one of them holding more than the threshold (plus an MTU
        // packet: its blocks are released later than the golden model's).
        mstate = n >= 2 && 32'(hmax) > 32'(in_buf_thr_i[16*o +: 16]) + 32'(mtu_blocks_i);
      end else begin
        case (cmp)
          2'd1: over = sum > 32'(thr);
          2'd2: over = n != 0 && n * sum > 32'(thr);
          default: over = mx > thr;
        endcase
        if (th == '0) over = 1'b0;
        mstate = over && (avail >= 32'(root_min_credits_i[12*o +: 12]) || victim_mask_i[o]);
      end
      len = g_desc[o][QLEN +: 13];
      g_elig[o] = mstate && {1'b0, len} >= {packet_size_i[8*o +: 8], 6'b0};
`ifdef IBCYCLE_FAULT_ALT_ROCE_CE_NOT_ECT
      // The ECN-capable test replaced by the IPv4 one: a not-ECT frame is marked too.
      capable = g_desc[o][QECT] || g_desc[o][QW14 + 8 +: 8] == 8'h45;
`else
      capable = g_desc[o][QECT];
`endif
      s = mk_q[o*NVl + 32'(g_vl[o])];
      if (mode_i[o]) begin
        g_mark[o] = g_elig[o] && capable && {1'b0, s} < lfsr_thresh_i[17*o +: 17];
        g_mk[o] = s[0] ? ((s >> 1) ^ LfsrTaps) : (s >> 1);
      end else begin
        g_mark[o] = g_elig[o] && capable && s >= marking_rate_i[16*o +: 16];
        g_mk[o] = (s >= marking_rate_i[16*o +: 16]) ? 16'd0 : s + 16'd1;
      end
    end

    // The granted frame's egress rewrite: ECN CE and the new IPv4 header checksum.
    always_comb begin
      logic [15:0] m, m2, hc;
      m = g_desc[o][QW14 +: 16];
      m2 = m | 16'h0003;
      hc = g_desc[o][QCSUM +: 16];
`ifdef IBCYCLE_FAULT_ALT_ROCE_CSUM
      tx_csum[o*16 +: 16] = hc;
      /* verilator lint_off UNUSEDSIGNAL */
      m2 = ~ones_add(ones_add(~hc, ~m), m2);
      /* verilator lint_on UNUSEDSIGNAL */
`else
      tx_csum[o*16 +: 16] = ~ones_add(ones_add(~hc, ~m), m2);
`endif
      tx_pkt[o] = g_pkt[o];
      tx_vl[o*4 +: 4] = g_vl[o];
      tx_mark[o] = g_mark[o];
      tx_len[o*13 +: 13] = g_desc[o][QLEN +: 13];
      // Tag: input, input priority, slot.
      tx_tag[o*32 +: 32] = {g_desc[o][QIN +: 8], g_desc[o][QIVL +: 4], 4'd0, g_desc[o][QSLOT +: 16]};
    end
  end

  // ---------------------------------------------------------------- state update
  always_ff @(posedge clk) begin : update
    logic [15:0]  held_n [NK];
    logic [15:0]  fill_n [NPorts*NPorts*NVl];
    logic [QA-1:0] qhd_n [NK];
    logic [QA:0]  qn_n [NK];
    logic         xoff_n [NK];
    logic [31:0]  refresh_n [NK];
    logic         ppend_n [NK];
    logic [15:0]  pquanta_n [NK];
    logic [47:0]  pticks_n [NK];
    logic [31:0]  vhold_n [NK];
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
    for (int i = 0; i < NK; i++) begin
      held_n[i] = held_q[i];
      qhd_n[i] = qhd_q[i];
      qn_n[i] = qn_q[i];
      xoff_n[i] = xoff_q[i];
      refresh_n[i] = refresh_q[i];
      ppend_n[i] = ppend_q[i];
      pquanta_n[i] = pquanta_q[i];
      pticks_n[i] = pticks_q[i];
      vhold_n[i] = vhold_q[i];
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
        held_n[i] = '0;
        qhd_n[i] = '0;
        qn_n[i] = '0;
        xoff_n[i] = 1'b0;
        refresh_n[i] = '0;
        ppend_n[i] = 1'b0;
        pquanta_n[i] = '0;
        pticks_n[i] = '0;
        vhold_n[i] = '0;
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
      // Outputs: grants (dequeue, fill, arbitration and marking state), pause frames, the wire; the
      // partner's pauses count down.
      for (int o = 0; o < NPorts; o++) begin
        r = ser_n[o];
        if (g_pz[o]) begin
          ppend_n[o*NVl + 32'(g_pzvl[o])] = 1'b0;
          r = r + 32'd64 * 32'(rate_den_i[17*o +: 17]);
        end
        if (g_pkt[o]) begin
          k = o*NVl + 32'(g_vl[o]);
          b = blocks_of(g_desc[o][QLEN +: 13]);
          qhd_n[k] = (32'(qhd_n[k]) + 1 >= SlotMax) ? '0 : qhd_n[k] + 1'b1;
          qn_n[k] = qn_n[k] - 1'b1;
          j = (32'(g_desc[o][QIN +: 8])*NPorts + o)*NVl + 32'(g_vl[o]);
          fill_n[j] = fill_n[j] - 16'(b);
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
        // Frames that finished streaming out free their input's buffer blocks.
        if (ret_v_q[o]) begin
          k = 32'(ret_in_q[o])*NVl + 32'(ret_ivl_q[o]);
          held_n[k] = held_n[k] - 16'(blocks_of(ret_len_q[o]));
        end
        for (int v = 0; v < NVl; v++) begin
          k = o*NVl + v;
          if (pticks_n[k] != '0) begin
            pticks_n[k] = (pticks_n[k] > 48'(rate_num_i[17*o +: 17])) ? pticks_n[k] - 48'(rate_num_i[17*o +: 17]) : '0;
            vhold_n[k] = victim_hold_i[32*o +: 32];
          end else if (vhold_n[k] != '0) begin
            vhold_n[k] = vhold_n[k] - 1;
          end
          // A pause frame in: this cycle's pause of each enabled priority replaces the last.
`ifdef IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX
          // The priorities mixed up: priority v takes the pause of priority v XOR 1.
          if (pz_v[o] && pz_en[o][(v ^ 1) & 7]) begin
            pticks_n[k] = 48'(pz_q[o][16*((v ^ 1) & 7) +: 16]) * 48'd64 * 48'(rate_den_i[17*o +: 17]);
          end
`else
          if (pz_v[o] && pz_en[o][v]) begin
            pticks_n[k] = 48'(pz_q[o][16*v +: 16]) * 48'd64 * 48'(rate_den_i[17*o +: 17]);
          end
`endif
        end
      end
      // Inputs: blocks in, tails join their output priority's queue (the highest input first) and count in
      // its fill, then each input priority's PFC decision on its blocks held after the cycle.
      for (int p = 0; p < NPorts; p++) begin
        if (b_v[p] && 32'(b_ivl[p]) < NVl) begin
          k = p*NVl + 32'(b_ivl[p]);
          held_n[k] = held_n[k] + 16'(b_blk[p]);
        end
        if (t_v[p] && 32'(t_out[p]) < NPorts && 32'(t_ovl[p]) < NVl) begin
          j = (p*NPorts + 32'(t_out[p]))*NVl + 32'(t_ovl[p]);
          fill_n[j] = fill_n[j] + 16'(blocks_of(t_desc[p][QLEN +: 13]));
        end
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
      for (int p = 0; p < NPorts; p++) begin
        for (int v = 0; v < NVl; v++) begin
          k = p*NVl + v;
          if (v < 32'(nvl_i[4*p +: 4])) begin
            if (!xoff_n[k] && held_n[k] >= pfc_xoff_i[16*k +: 16]) begin
              xoff_n[k] = 1'b1;
              refresh_n[k] = now_q + ((pfc_half_i[32*p +: 32] == '0) ? 32'd1 : pfc_half_i[32*p +: 32]);
              ppend_n[k] = 1'b1;
              pquanta_n[k] = pfc_quanta_i[16*p +: 16];
            end else if (xoff_n[k] && held_n[k] <= pfc_xon_i[16*k +: 16]) begin
              xoff_n[k] = 1'b0;
              ppend_n[k] = 1'b1;
              pquanta_n[k] = '0;
            end else if (xoff_n[k] && now_q >= refresh_n[k]) begin
              refresh_n[k] = now_q + ((pfc_half_i[32*p +: 32] == '0) ? 32'd1 : pfc_half_i[32*p +: 32]);
              ppend_n[k] = 1'b1;
              pquanta_n[k] = pfc_quanta_i[16*p +: 16];
            end
          end
        end
      end
    end
    held_q <= held_n;
    fill_q <= fill_n;
    qhd_q <= qhd_n;
    qn_q <= qn_n;
    xoff_q <= xoff_n;
    refresh_q <= refresh_n;
    ppend_q <= ppend_n;
    pquanta_q <= pquanta_n;
    pticks_q <= pticks_n;
    vhold_q <= vhold_n;
    ser_q <= ser_n;
    hidx_q <= hidx_n;
    lidx_q <= lidx_n;
    hrem_q <= hrem_n;
    lrem_q <= lrem_n;
    hcnt_q <= hcnt_n;
    mk_q <= mk_n;
  end : update

  // The fill of each output priority (lane o*NVl + priority, 16 bits, in 64-byte blocks), summed over the
  // inputs as the congestion decision sums it; saturating. A tap for the checker's reports only.
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
          || nvl_i[4*p +: 4] == '0 || 32'(nvl_i[4*p +: 4]) > NVl || pfc_quanta_i[16*p +: 16] == '0))
        cfg_err = 1'b1;
    end
  end

  // The unused configuration inputs (ib_switch's credit and flow-control settings and the rest: see the
  // header).
  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_cfg;
  assign unused_cfg = ^{speedup_i, mark_enq_i, buf_blocks_i, fc_interval_i, fc_on_change_i, fccl_cap_i,
                        fccl_reset_i, root_rule_i, stall_window_i};
  /* verilator lint_on UNUSEDSIGNAL */

`ifdef IBCYCLE_ASSERTIONS
  always @(posedge clk) begin
    for (int k = 0; k < NK; k++) begin
      if (rst_n && 32'(qn_q[k]) > SlotMax) $fatal(1, "alt_roce_switch: output priority %0d: descriptor queue overflow", k);
    end
  end
`endif

  // ---------------------------------------------------------------- per output: a granted frame waits
  // OutDelay cycles, then streams out a beat per cycle at the link's pace with ECN CE and the checksum
  // written when marked, through an output register stage; a granted pause frame leaves in the next cycle.
  for (genvar o = 0; o < NPorts; o++) begin : g_out
    logic [DQ-1:0][DW-1:0] dq_q;
    logic [5:0]       dn_q;
    logic             busy_q, dup_q, fin_q;
    logic [31:0]      due_q, el;
    logic             paced, wire_done;
    logic [7:0]       in_q;
    logic [3:0]       ivl_q;
    logic [SlW-1:0]   slot_q;
    logic [KW-1:0]    k_q;
    logic [12:0]      len_q;
    logic             mark_q;
    logic [15:0]      csum_q;

    /* verilator lint_off UNUSEDSIGNAL */
    logic [DW-1:0]    head;   // the tag's bits 19:16 are 0; the output priority is not written into a frame
    /* verilator lint_on UNUSEDSIGNAL */
    logic [DW-1:0]    incoming;
    logic             start, beat_ok;
    logic [BW-1:0]    b;
    logic [12:0]      base;
    logic             last;
    logic [2:0]       pvl;

    assign head = dq_q[0];
    assign start = !busy_q && dn_q != 0 && now_q >= head[31:0];
    assign incoming = {tx_tag[o*32 +: 32], tx_vl[o*4 +: 4], tx_mark[o], tx_csum[o*16 +: 16],
                       tx_len[o*13 +: 13], now_q + 32'(OutDelay)};
    // Beats go at the link's pace (beat k not before k * BeatBytes bytes' time), and the frame holds the
    // stream, and its input buffer blocks, until its last byte has left at that pace.
    assign el = now_q - due_q;
    assign paced = 64'(el) * 64'(rate_num_i[17*o +: 17]) >= 64'(k_q) * 64'(BeatBytes) * 64'(rate_den_i[17*o +: 17]);
    assign beat_ok = busy_q && !fin_q && paced;
    assign wire_done = busy_q && fin_q
                       && 64'(el) * 64'(rate_num_i[17*o +: 17]) >= 64'(len_q) * 64'(rate_den_i[17*o +: 17]);
    assign pvl = g_pzvl[o][2:0];

    always_comb begin
      b = mem_q[int'(in_q)][int'(slot_q) * SlotBeats + int'(k_q)];
      base = 13'(int'(k_q) * BeatBytes);
      last = (base + 13'(BeatBytes)) >= len_q;
      if (mark_q) begin
        for (int i = 0; i < BeatBytes; i++) begin
          if (base + 13'(i) == 13'd15) b[i*8 +: 2] = 2'b11;
          if (base + 13'(i) == 13'd24) b[i*8 +: 8] = csum_q[15:8];
          if (base + 13'(i) == 13'd25) b[i*8 +: 8] = csum_q[7:0];
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
        mark_q <= 1'b0;
        csum_q <= '0;
        out_valid[o] <= 1'b0;
        out_sop[o] <= 1'b0;
        out_eop[o] <= 1'b0;
        out_nbytes[o*NbW +: NbW] <= '0;
        out_data[o*BW +: BW] <= '0;
        pause_out_valid[o] <= 1'b0;
        pause_out_en[o*8 +: 8] <= '0;
        pause_out_quanta[o*128 +: 128] <= '0;
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
        if (start) begin
          busy_q <= 1'b1;
          due_q <= head[31:0];
          in_q <= head[DW-1 -: 8];
          ivl_q <= head[DW-9 -: 4];
          slot_q <= SlW'(head[DW-17 -: 16]);
          k_q <= '0;
          mark_q <= head[45 + 16];
          csum_q <= head[45 +: 16];
          len_q <= head[44:32];
          q = q >> DW;
          n = n - 1'b1;
        end
        if (tx_pkt[o]) begin
          q[n[4:0]] = incoming;
          n = n + 1'b1;
        end
        dq_q <= q;
        dn_q <= n;

        pause_out_valid[o] <= g_pz[o];
        if (g_pz[o]) begin
          pause_out_en[o*8 +: 8] <= 8'd1 << pvl;
          pause_out_quanta[o*128 +: 128] <= 128'(pquanta_q[o*NVl + 32'(g_pzvl[o])]) << (16 * 32'(pvl));
        end

        out_valid[o] <= beat_ok;
        out_sop[o] <= beat_ok && k_q == 0;
        out_eop[o] <= beat_ok && last;
        out_nbytes[o*NbW +: NbW] <= (beat_ok && last) ? NbW'(len_q - base) : '0;
        if (beat_ok) out_data[o*BW +: BW] <= b;
        ret_v_q[o] <= 1'b0;
        if (beat_ok) begin
          k_q <= k_q + 1'b1;
          if (last) begin
`ifdef IBCYCLE_FAULT_ALT_ROCE_DUP
            if (!dup_q && slot_q[2:0] == 3'b011) begin
              dup_q <= 1'b1;
              k_q <= '0;
              due_q <= now_q + 1;
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
      if (rst_n && 32'(dn_q) + 32'(tx_pkt[o]) > DQ + 32'(start))
        $fatal(1, "alt_roce_switch: output %0d: queue full", o);
    end
`endif
`ifndef IBCYCLE_FAULT_ALT_ROCE_DUP
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_dup;
    assign unused_dup = dup_q;
    /* verilator lint_on UNUSEDSIGNAL */
`endif
  end
endmodule
