// alt_roce_switch: the RoCEv2 mode of the second switch implementation (hdl/alt/alt_switch.sv), for
// `ibcycle rtl-check` to prove its RoCEv2 checks on RTL that is not the Rust model's twin. It is alt_switch's
// switching core (hdl/alt/alt_core.sv: input slots, store-and-forward, a descriptor FIFO per output priority
// shared by every input, its own VL arbitration and congestion decision at the grant, pacing and the output
// stream; see there) with the IB link layer replaced by Ethernet's: RoCEv2 frames on the byte streams, PFC
// pause frames on side ports instead of credits, ECN CE instead of FECN. It shares no module with
// hdl/ib_switch.sv; its configuration interface is ib_switch's held ports and table write port (a port map's
// `config = "ib_switch"`) plus the PFC ports below, which the harness drives when the configuration's ports
// run PFC. Checked through its port map (hdl/alt/alt_roce_switch.map.toml) by the transaction-level
// scoreboard, never cycle by cycle.
//
// This file is the RoCEv2 link layer around the core:
// - Frames as the golden model makes them (`PacketDesc::materialise_roce_v4`): Ethernet (no VLAN tag, no
//   FCS), IPv4 without options (or IPv6), UDP, BTH ... ICRC. A frame's length is its beats' (in_eop and
//   in_nbytes, 0 meaning a whole beat); its DLID is the low 16 bits of the destination MAC (bytes 4-5), its
//   priority the DSCP / 8 (IPv4 ToS bits 7:5; IPv6 traffic class bits 7:5), which is both its SL and its
//   input priority. Routing by the core's LFT, the output priority by SL2VL(input, output)[priority].
// - Store-and-forward: a frame's descriptor joins its output priority's FIFO with its last beat.
// - PFC, receive side, per input priority: the core's count of blocks (64 bytes) held, to which a beat adds
//   the blocks it starts, released when the frame's last byte has left at the output's pace (later than the
//   scoreboard's release at the first byte out: never an overrun the scoreboard does not see coming). With
//   the golden model's watermarks (pfc_xoff_i, pfc_xon_i) and PfcRx rule: XOFF (pfc_quanta_i) when the
//   blocks held reach XOFF, refreshed every pfc_half_i cycles while it stands, XON (quanta 0) when they fall
//   to XON. A pause frame per port at a time, the lowest priority due first, before waiting frames; it takes
//   64 bytes of the wire's time and leaves on pause_out in the cycle after its grant.
// - PFC, transmit side: a pause frame in (pause_in) pauses each priority it enables for its quanta, counted
//   as byte ticks (quanta x 64 x rate_den, less rate_num a cycle: the 512-bit times at the link rate); 0
//   resumes. A pause frame counts from the cycle it arrives; no frame of a paused output priority is
//   granted. The response (a frame granted in the pause's cycle starts OutDelay, default 0 as a store-and-
//   forward switch has nothing to wait for, plus about three cycles later) is within the scoreboard's
//   `pause_response`.
// - The congestion decision is the core's (roce_detect_i = 0, RCM-1a), a root when the output priority has
//   credit, which on a PFC port is not being paused nor within victim_hold_i cycles of a pause's end; or,
//   with roce_detect_i = 1 (RCM-1b), its own: at least two inputs have frames counted in the fill for the
//   output priority and one of them holds more than in_buf_thr_i plus one MTU packet of that priority in its
//   buffer. A frame is marked only when it is IPv4 and ECN-capable (ECT(0) or ECT(1)); CE stays CE.
// - Its own egress rewrite: a marked frame leaves with ECN 11 and its IPv4 header checksum updated
//   incrementally (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') over the 16-bit word of the version and ToS). The
//   ICRC is untouched (RoCEv2's ICRC masks the ToS and the checksum).
// Configuration ports read for ib_switch's sake only (credit and flow-control settings, speedup, mark_enq,
// root_rule, stall_window) are accepted and unused.
// Limits: BeatBytes of at least 16 (the DLID and ToS in the first beat); IPv6 frames are forwarded but
// never marked; at most SlotBeats beats per frame, NSlots frames held per input and SlotMax queued per
// output priority (assertions stop the simulation beyond); priorities 0 to NVl - 1 only.
//
// Fault-injection variants (each needs IBCYCLE_FAULTS_ENABLE beside it; or every one, the core's too, built in
// with IBCYCLE_FAULTS_SELECT and the enable, and turned on at run time by the plusarg +IBCYCLE_FAULT_<NAME>;
// the core's, such as ALT_DUP, are in alt_core.sv):
//   IBCYCLE_FAULT_ALT_ROCE_PAUSE_IGNORED  the grant ignores the link partner's pauses
//   IBCYCLE_FAULT_ALT_ROCE_CE_NOT_ECT     the ECN-capable test is forgotten: a congested not-ECT frame is
//                                         marked CE too
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
`ifdef IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX
  $fatal(1, "IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_CSUM
  $fatal(1, "IBCYCLE_FAULT_ALT_ROCE_CSUM is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

  // Each fault's flag: a constant (1 only in its variant, so a clean build folds the fault away), or with
  // IBCYCLE_FAULTS_SELECT read from its plusarg at time zero (one build serves every fault hunt).
`ifdef IBCYCLE_FAULTS_SELECT
`ifndef IBCYCLE_FAULTS_ENABLE
  $fatal(1, "IBCYCLE_FAULTS_SELECT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
  logic FltPauseIgnored, FltCeNotEct, FltPrioMix, FltCsum;
  initial begin
    FltPauseIgnored = $test$plusargs("IBCYCLE_FAULT_ALT_ROCE_PAUSE_IGNORED") != 0;
    FltCeNotEct = $test$plusargs("IBCYCLE_FAULT_ALT_ROCE_CE_NOT_ECT") != 0;
    FltPrioMix = $test$plusargs("IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX") != 0;
    FltCsum = $test$plusargs("IBCYCLE_FAULT_ALT_ROCE_CSUM") != 0;
  end
`else
`ifdef IBCYCLE_FAULT_ALT_ROCE_PAUSE_IGNORED
  localparam bit FltPauseIgnored = 1'b1;
`else
  localparam bit FltPauseIgnored = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_CE_NOT_ECT
  localparam bit FltCeNotEct = 1'b1;
`else
  localparam bit FltCeNotEct = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_PRIO_MIX
  localparam bit FltPrioMix = 1'b1;
`else
  localparam bit FltPrioMix = 1'b0;
`endif
`ifdef IBCYCLE_FAULT_ALT_ROCE_CSUM
  localparam bit FltCsum = 1'b1;
`else
  localparam bit FltCsum = 1'b0;
`endif
`endif

  if (BeatBytes < 16) begin : g_beat_check
    $fatal(1, "alt_roce_switch: BeatBytes %0d: the DLID and ToS must be in the first beat (16 or more)", BeatBytes);
  end

  localparam int BW = BeatBytes * 8;
  localparam int KW = $clog2(SlotBeats + 1);
  localparam int NK = NPorts * NVl;
  // The descriptor's own bits: ECN-capable IPv4, the IPv4 header's word of version and ToS (bytes 14-15)
  // and its checksum (bytes 24-25); their places in the core's descriptor (input, input priority, length,
  // these, slot).
  localparam int XW = 1 + 16 + 16;
  localparam int QW = 8 + 4 + 13 + XW + 16;
  localparam int QCSUM = 16;
  localparam int QW14 = 32;
  localparam int QECT = 48;
  // Per granted frame, what its output stage writes: the mark and the new checksum.
  localparam int MW = 1 + 16;

  function automatic logic [6:0] blocks_of(input logic [12:0] len);
    return 7'((len + 13'd63) >> 6);
  endfunction

  // One's complement sum of two 16-bit words (the end-around carry added back: it cannot carry again).
  function automatic logic [15:0] ones_add(input logic [15:0] a, input logic [15:0] b);
    logic [16:0] s;
    s = 17'(a) + 17'(b);
    return s[15:0] + 16'(s[16]);
  endfunction

  // The core's side of the link layer.
  logic [NPorts-1:0]        beat_v, beat_sop;
  logic [NPorts*BW-1:0]     beat;
  logic [NPorts*KW-1:0]     beat_k;
  logic [NPorts*16-1:0]     rt_dlid;
  logic [NPorts*4-1:0]      rt_sl;
  logic [NPorts*8-1:0]      rt_out;
  logic [NPorts*4-1:0]      rt_ovl;
  logic [NPorts-1:0]        tail_v, buf_v;
  logic [NPorts*8-1:0]      tail_out;
  logic [NPorts*4-1:0]      tail_ovl, tail_ivl, buf_ivl;
  logic [NPorts*13-1:0]     tail_len;
  logic [NPorts*XW-1:0]     tail_x;
  logic [NPorts*7-1:0]      buf_blk;
  logic [NK*16-1:0]         held_q, held_nx;
  logic [NK-1:0]            send_ok;
  logic [NK*12-1:0]         avail;
  logic [NK-1:0]            ctl_due, cong;
  logic [NK*NPorts-1:0]     contrib;
  logic [NPorts-1:0]        g_ctl, g_mark, capable;
  logic [NPorts*4-1:0]      g_ctlvl;
  logic [NPorts*QW-1:0]     g_desc;
  logic [NPorts*MW-1:0]     g_meta;
  logic [NPorts*BW-1:0]     rd_data, wr_data;
  logic [NPorts*KW-1:0]     rd_k;
  logic [NPorts*MW-1:0]     rd_meta;
  logic [31:0]              now;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NPorts*16-1:0]     beat_slot;
  logic [NK*16-1:0]         held_rel;  // the credit top's
  logic [NK*13-1:0]         head_len;  // the credit top's
  logic [NPorts*4-1:0]      g_vl;
  logic [NPorts-1:0]        g_pkt, g_elig, ctl_out_valid, rd_v;
  logic [NPorts*13-1:0]     rd_len;
  logic [NPorts*BeatBytes-1:0] out_keep;
  logic [NPorts*32-1:0]     ctl_out;
  logic [NK-1:0]            out_mark;
  /* verilator lint_on UNUSEDSIGNAL */

  alt_core #(
    .NPorts(NPorts), .BeatBytes(BeatBytes), .NSlots(NSlots), .SlotBeats(SlotBeats), .OutDelay(OutDelay),
    .SlotMax(SlotMax), .LftMax(LftMax), .NVl(NVl), .TableMax(TableMax), .MsbFirst(1'b0), .XW(XW), .MW(MW),
    .CtlBytes(64), .CtlQueued(1'b0), .Name("alt_roce_switch")
  ) u_core (
    .clk, .rst_n, .nports_i, .mtu_blocks_i, .rate_num_i, .rate_den_i, .nvl_i, .threshold_i, .thr_table_i,
    .compare_i, .root_min_credits_i, .victim_mask_i, .packet_size_i, .marking_rate_i, .mode_i, .lfsr_seed_i,
    .lfsr_thresh_i, .hi_vl_i, .hi_weight_i, .hi_n_i, .lo_vl_i, .lo_weight_i, .lo_n_i, .vl_high_limit_i,
    .tbl_we_i, .tbl_sel_i, .tbl_addr_i, .tbl_data_i,
    .in_data, .in_valid, .in_sop, .beat_v, .beat_sop, .beat, .beat_k, .beat_slot,
    .rt_dlid, .rt_sl, .rt_out, .rt_ovl,
    .tail_v, .allin_v(tail_v), .tail_out, .tail_ovl, .tail_ivl, .tail_len, .tail_x, .buf_v, .buf_ivl,
    .buf_blk, .held_q_o(held_q), .held_rel, .held_nx,
    .head_len, .send_ok, .avail, .ctl_due, .cong_sel(roce_detect_i), .cong, .contrib,
    .g_ctl_o(g_ctl), .g_ctlvl_o(g_ctlvl), .g_pkt_o(g_pkt), .g_vl_o(g_vl), .g_desc_o(g_desc),
    .g_elig_o(g_elig), .g_mark_o(g_mark), .capable, .g_meta, .ctl_word('0),
    .rd_v, .rd_data, .rd_k, .rd_len, .rd_meta, .wr_data,
    .out_ready('1), .out_data, .out_valid, .out_sop, .out_eop, .out_nbytes, .out_keep,
    .ctl_out_valid, .ctl_out, .out_fill, .out_mark, .now
  );

  // ---------------------------------------------------------------- per input: register stage for the
  // stream's end, the Ethernet and IP header parse
  for (genvar p = 0; p < NPorts; p++) begin : g_in
    logic             eop1_q;
    logic [NbW-1:0]   nb1_q;
    logic [KW-1:0]    k;
    logic [7:0]       out_q, out;
    logic [3:0]       ovl_q, ovl, ivl_q, ivl;
    logic [12:0]      base, nb, len;
    logic [15:0]      w14_q, w14, cs_q, cs;
    logic             ect_q, ect;
    logic [15:0]      dlid;
    logic             v4, v6, v1, sop1;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [BW-1:0]    d1;     // the headers' fields
    /* verilator lint_on UNUSEDSIGNAL */

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        eop1_q <= 1'b0; nb1_q <= '0;
      end else begin
        eop1_q <= in_eop[p]; nb1_q <= in_nbytes[p*NbW +: NbW];
      end
    end

    // The head's Ethernet and IP headers: DLID (bytes 4-5), EtherType (12-13), IPv4 version and IHL (14),
    // ToS (15) or the IPv6 traffic class (bits 3:0 of byte 14, 7:4 of byte 15); later beats: the IPv4
    // header checksum (bytes 24-25), the length.
    always_comb begin
      v1 = beat_v[p];
      sop1 = beat_sop[p];
      d1 = beat[p*BW +: BW];
      dlid = {d1[4*8 +: 8], d1[5*8 +: 8]};
      v4 = d1[12*8 +: 8] == 8'h08 && d1[13*8 +: 8] == 8'h00 && d1[14*8 +: 8] == 8'h45;
      v6 = d1[12*8 +: 8] == 8'h86 && d1[13*8 +: 8] == 8'hDD;
      ivl = sop1 ? (v6 ? 4'(d1[14*8 + 1 +: 3]) : 4'(d1[15*8 + 5 +: 3])) : ivl_q;
      rt_dlid[16*p +: 16] = dlid;
      rt_sl[4*p +: 4] = ivl;
    end

    always_comb begin
      k = beat_k[KW*p +: KW];
      base = 13'(int'(k) * BeatBytes);
      nb = (eop1_q && nb1_q != '0) ? 13'(nb1_q) : 13'(BeatBytes);
      len = base + nb;
      out = rt_out[8*p +: 8];
      ovl = sop1 ? rt_ovl[4*p +: 4] : ovl_q;
      w14 = sop1 ? {d1[14*8 +: 8], d1[15*8 +: 8]} : w14_q;
      ect = sop1 ? (v4 && (d1[15*8 +: 2] == 2'b01 || d1[15*8 +: 2] == 2'b10)) : ect_q;
      cs = cs_q;
      for (int i = 0; i < BeatBytes; i++) begin
        if (base + 13'(i) == 13'd24) cs[15:8] = d1[i*8 +: 8];
        if (base + 13'(i) == 13'd25) cs[7:0] = d1[i*8 +: 8];
      end
      buf_v[p] = v1;
      buf_ivl[4*p +: 4] = ivl;
      buf_blk[7*p +: 7] = blocks_of(len) - blocks_of(base);
      tail_v[p] = v1 && eop1_q;
      tail_out[8*p +: 8] = sop1 ? out : out_q;
      tail_ovl[4*p +: 4] = ovl;
      tail_ivl[4*p +: 4] = ivl;
      tail_len[13*p +: 13] = len;
      tail_x[XW*p +: XW] = {ect, w14, cs};
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        out_q <= '0;
        ovl_q <= '0;
        ivl_q <= '0;
        w14_q <= '0;
        cs_q <= '0;
        ect_q <= 1'b0;
      end else begin
        if (v1) cs_q <= cs;
        if (v1 && sop1) begin
          out_q <= out;
          ovl_q <= ovl;
          ivl_q <= ivl;
          w14_q <= w14;
          ect_q <= ect;
        end
      end
    end

`ifdef IBCYCLE_ASSERTIONS
    always @(posedge clk) begin
      if (rst_n && v1 && sop1 && (32'(out) >= NPorts || 32'(ovl) >= NVl || 32'(ivl) >= NVl))
        $fatal(1, "alt_roce_switch: input %0d: a frame to DLID %0d that the tables do not route", p, dlid);
    end
`endif
  end

  // ---------------------------------------------------------------- PFC state
  logic         xoff_q [NK];            // per input priority: an XOFF stands
  logic [31:0]  refresh_q [NK];         // and the cycle it is refreshed
  logic         ppend_q [NK];           // a pause frame is due, with these quanta
  logic [15:0]  pquanta_q [NK];
  logic [47:0]  pticks_q [NK];          // per output priority: byte ticks of pause left
  logic [31:0]  vhold_q [NK];           // and cycles it still counts as without credit after a pause

  // Per output priority, what the core's decision takes from PFC: a frame may go unless paused; the credit
  // (all of it unless the priority is paused or within the victim hold after); the pause frames due.
  always_comb begin
    for (int k = 0; k < NK; k++) begin
      // (The fault: the pauses ignored.)
      send_ok[k] = pticks_q[k] == '0 || FltPauseIgnored;
      avail[12*k +: 12] = (pticks_q[k] != '0 || vhold_q[k] != '0) ? 12'd0 : 12'd4095;
      ctl_due[k] = ppend_q[k];
    end
  end

  // RCM-1b, per output priority: two inputs or more queued, one of them holding more than the threshold
  // (plus an MTU packet: its blocks are released later than the golden model's).
  always_comb begin
    for (int o = 0; o < NPorts; o++) begin
      for (int v = 0; v < NVl; v++) begin
        logic [15:0] hmax;
        logic [31:0] n;
        n = '0;
        hmax = '0;
        for (int p = 0; p < NPorts; p++) begin
          if (contrib[(o*NVl + v)*NPorts + p]) begin
            n = n + 1;
            if (held_q[16*(p*NVl + v) +: 16] > hmax) hmax = held_q[16*(p*NVl + v) +: 16];
          end
        end
        cong[o*NVl + v] = n >= 2 && 32'(hmax) > 32'(in_buf_thr_i[16*o +: 16]) + 32'(mtu_blocks_i);
      end
    end
  end

  // The granted frame: whether it may be marked CE, and its new IPv4 header checksum if it is.
  always_comb begin
    for (int o = 0; o < NPorts; o++) begin
      logic [15:0] m, m2, hc;
      // (The fault: the ECN-capable test replaced by the IPv4 one, so a not-ECT frame is marked too.)
      capable[o] = g_desc[QW*o + QECT] || (FltCeNotEct && g_desc[QW*o + QW14 + 8 +: 8] == 8'h45);
      m = g_desc[QW*o + QW14 +: 16];
      m2 = m | 16'h0003;
      hc = g_desc[QW*o + QCSUM +: 16];
      // (The fault: the checksum the frame came in with kept.)
      g_meta[MW*o +: MW] = {g_mark[o], FltCsum ? hc : ~ones_add(ones_add(~hc, ~m), m2)};
    end
  end

  // ---------------------------------------------------------------- PFC update
  always_ff @(posedge clk) begin : update
    logic         xoff_n [NK];
    logic [31:0]  refresh_n [NK];
    logic         ppend_n [NK];
    logic [15:0]  pquanta_n [NK];
    logic [47:0]  pticks_n [NK];
    logic [31:0]  vhold_n [NK];
    int k;
    int pv;
    for (int i = 0; i < NK; i++) begin
      xoff_n[i] = xoff_q[i];
      refresh_n[i] = refresh_q[i];
      ppend_n[i] = ppend_q[i];
      pquanta_n[i] = pquanta_q[i];
      pticks_n[i] = pticks_q[i];
      vhold_n[i] = vhold_q[i];
    end
    if (!rst_n) begin
      for (int i = 0; i < NK; i++) begin
        xoff_n[i] = 1'b0;
        refresh_n[i] = '0;
        ppend_n[i] = 1'b0;
        pquanta_n[i] = '0;
        pticks_n[i] = '0;
        vhold_n[i] = '0;
      end
    end else begin
      // Outputs: pause frames granted; the partner's pauses count down, and a pause frame in replaces them.
      for (int o = 0; o < NPorts; o++) begin
        if (g_ctl[o]) ppend_n[o*NVl + 32'(g_ctlvl[4*o +: 4])] = 1'b0;
        for (int v = 0; v < NVl; v++) begin
          k = o*NVl + v;
          if (pticks_n[k] != '0) begin
            pticks_n[k] = (pticks_n[k] > 48'(rate_num_i[17*o +: 17])) ? pticks_n[k] - 48'(rate_num_i[17*o +: 17]) : '0;
            vhold_n[k] = victim_hold_i[32*o +: 32];
          end else if (vhold_n[k] != '0) begin
            vhold_n[k] = vhold_n[k] - 1;
          end
          // A pause frame in (taken in the cycle it arrives: no register stage, the response time counts):
          // this cycle's pause of each enabled priority replaces the last.
          // (The fault: the priorities mixed up, priority v taking the pause of priority v XOR 1.)
          pv = FltPrioMix ? ((v ^ 1) & 7) : v;
          if (pause_in_valid[o] && pause_in_en[8*o + pv]) begin
            pticks_n[k] = 48'(pause_in_quanta[128*o + 16*pv +: 16]) * 48'd64 * 48'(rate_den_i[17*o +: 17]);
          end
        end
      end
      // Inputs: each input priority's PFC decision on its blocks held after the cycle.
      for (int p = 0; p < NPorts; p++) begin
        for (int v = 0; v < NVl; v++) begin
          k = p*NVl + v;
          if (v < 32'(nvl_i[4*p +: 4])) begin
            if (!xoff_n[k] && held_nx[16*k +: 16] >= pfc_xoff_i[16*k +: 16]) begin
              xoff_n[k] = 1'b1;
              refresh_n[k] = now + ((pfc_half_i[32*p +: 32] == '0) ? 32'd1 : pfc_half_i[32*p +: 32]);
              ppend_n[k] = 1'b1;
              pquanta_n[k] = pfc_quanta_i[16*p +: 16];
            end else if (xoff_n[k] && held_nx[16*k +: 16] <= pfc_xon_i[16*k +: 16]) begin
              xoff_n[k] = 1'b0;
              ppend_n[k] = 1'b1;
              pquanta_n[k] = '0;
            end else if (xoff_n[k] && now >= refresh_n[k]) begin
              refresh_n[k] = now + ((pfc_half_i[32*p +: 32] == '0) ? 32'd1 : pfc_half_i[32*p +: 32]);
              ppend_n[k] = 1'b1;
              pquanta_n[k] = pfc_quanta_i[16*p +: 16];
            end
          end
        end
      end
    end
    xoff_q <= xoff_n;
    refresh_q <= refresh_n;
    ppend_q <= ppend_n;
    pquanta_q <= pquanta_n;
    pticks_q <= pticks_n;
    vhold_q <= vhold_n;
  end : update

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

  // ---------------------------------------------------------------- per output: a granted pause frame leaves
  // in the next cycle; each beat the core streams out of a marked frame gets ECN CE and the new checksum.
  for (genvar o = 0; o < NPorts; o++) begin : g_out
    logic [2:0]       pvl;
    logic [BW-1:0]    b;
    logic [12:0]      base;
    logic             mark;
    logic [15:0]      csum;

    assign pvl = g_ctlvl[4*o +: 3];

    always_comb begin
      b = rd_data[o*BW +: BW];
      base = 13'(int'(rd_k[KW*o +: KW]) * BeatBytes);
      {mark, csum} = rd_meta[MW*o +: MW];
      if (mark) begin
        for (int i = 0; i < BeatBytes; i++) begin
          if (base + 13'(i) == 13'd15) b[i*8 +: 2] = 2'b11;
          if (base + 13'(i) == 13'd24) b[i*8 +: 8] = csum[15:8];
          if (base + 13'(i) == 13'd25) b[i*8 +: 8] = csum[7:0];
        end
      end
      wr_data[o*BW +: BW] = b;
    end

    always_ff @(posedge clk) begin
      if (!rst_n) begin
        pause_out_valid[o] <= 1'b0;
        pause_out_en[o*8 +: 8] <= '0;
        pause_out_quanta[o*128 +: 128] <= '0;
      end else begin
        pause_out_valid[o] <= g_ctl[o];
        if (g_ctl[o]) begin
          pause_out_en[o*8 +: 8] <= 8'd1 << pvl;
          pause_out_quanta[o*128 +: 128] <= 128'(pquanta_q[o*NVl + 32'(g_ctlvl[4*o +: 4])]) << (16 * 32'(pvl));
        end
      end
    end
  end
endmodule
