// fecn_rewrite: sets FECN in the BTH of a marked packet on a streaming datapath and regenerates the VCRC.
//
// RTL twin of rtl-model/src/blocks/fecn_rewrite.rs (`FecnRewrite`); every output is bit-for-bit the Rust
// `step`. It sits after `fecn_marker`: `mark_i` (its `mark_o`) is sampled with the first beat of a packet.
// A packet is a run of beats of BeatBytes bytes, byte 0 of a beat at data_i[7:0]; the first beat carries
// sop_i, the last eop_i and the count of its valid bytes.
//
// | port         | dir | width        | meaning                                                           |
// |--------------|-----|--------------|-------------------------------------------------------------------|
// | `clk_i`      | in  | 1            | clock                                                             |
// | `rst_ni`     | in  | 1            | synchronous reset, active low                                     |
// | `valid_i`    | in  | 1            | a beat is on `data_i` this cycle                                  |
// | `sop_i`      | in  | 1            | it is the first beat of a packet (starts a new packet regardless) |
// | `eop_i`      | in  | 1            | it is the last beat                                               |
// | `bytes_i`    | in  | NW           | valid bytes of the last beat; 0 or above BeatBytes means all      |
// | `data_i`     | in  | 8*BeatBytes  | the beat, packet byte `off + k` at [8k +: 8]                      |
// | `mark_i`     | in  | 1            | with the first beat: set FECN in this packet                      |
// | outputs (registered: the beat of the previous cycle, rewritten; 0 while `rst_ni` is low)                 |
// | `valid_o`, `sop_o`, `eop_o`, `bytes_o` | out | as inputs | the previous cycle's inputs              |
// | `data_o`     | out | 8*BeatBytes  | the previous cycle's beat: FECN set, VCRC regenerated (when valid)|
// | `ebp_o`      | out | 1            | with the last beat: the packet ends bad (wrong or no VCRC)        |
// | `vcrc_errs_o`| out | 16           | packets ended bad since reset, saturating (a port error counter)  |
//
// What is rewritten (IBA layout: LRH 8 bytes, GRH 40 bytes when LRH LNH = 3, then the BTH; FECN is bit 7 of
// BTH byte 4; the VCRC is the packet's last two bytes, over every byte before them):
// - FECN: when the packet is marked and its LNH (LRH byte 1 [1:0], from the first beat) is 2 (IBA local) or 3
//   (IBA global), bit 7 of packet byte 12 or 52 is set. Raw packets (LNH 0, 1) have no BTH: never touched.
// - VCRC (CRC-16, reflected polynomial 0xD008, init 0xFFFF, final XOR 0xFFFF, rtl_model::crc::vcrc, least
//   significant byte first: `VCRC_BYTE_ORDER`): the received VCRC (the last two bytes) is checked against the
//   bytes before them as received. A good packet's last two bytes become the VCRC of the bytes as rewritten
//   (an unmarked good packet leaves unchanged). A bad one ends bad: `ebp_o` with its last beat, its VCRC
//   stomped (the complement of the rewritten bytes' VCRC, which never checks good) and counted.
//
// Designer choices:
// - The VCRC must lie in the last beat: IB packets are 4n + 2 bytes long and beats start at the packet's first
//   byte, so with BeatBytes a multiple of 4 the last beat holds at least 2 bytes. A last beat of 1 valid byte
//   (not a valid IB packet) is passed without a VCRC rewrite.
// - A bad packet is ended bad, not dropped: under cut-through its first beats have left before its VCRC
//   arrives, so it can only be ended with the End Bad Packet delimiter (`ebp_o`) and a failing VCRC, for the
//   next receiver to discard. A packet whose last beat holds no whole VCRC (not 4n + 2 bytes) ends bad too.
// - One cycle of latency, no back-pressure (the output port takes a beat every cycle it is offered one).
// - A beat without sop_i continues the current packet (byte offsets keep counting, saturating at 65535); beats
//   outside a packet are rewritten as if continuing the last one. Bytes past `bytes_i` in the last beat pass
//   unchanged; while `valid_i` is low `data_i` passes unchanged.
//
// State: `off_q` (16: bytes of the packet before this beat), `crc_q` and `crcin_q` (16 each: VCRC registers
// over them as rewritten and as received), `lnh_q` (2), `mark_q` (1), `errs_q` (16), and the output
// registers; all reset to 0 (the CRC registers to 0xFFFF).
//
// Fault-injection variants (build with +define+IBCYCLE_FAULTS_ENABLE+IBCYCLE_FAULT_<NAME> /
// -DIBCYCLE_FAULTS_ENABLE -DIBCYCLE_FAULT_<NAME>; a variant defined without the enable stops elaboration):
// - IBCYCLE_FAULT_VCRC_BYTE_ORDER: the VCRC is stored most significant byte first.
// - IBCYCLE_FAULT_FECN_BIT: the mark sets bit 6 of BTH byte 4 (that is BECN) instead of bit 7.

// Every net is declared: a misspelt name is an error, not a new 1-bit wire.
`default_nettype none

// The assertions at the end are compiled as ibcycle_assertions.svh decides (on except in synthesis).
`include "ibcycle_assertions.svh"

module fecn_rewrite #(
  // Bytes per beat; a multiple of 4, 4..32.
  parameter int BeatBytes = 16,
  // Width of `bytes_i`/`bytes_o`: holds BeatBytes; derived, do not override.
  parameter int NW = $clog2(BeatBytes + 1)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,

  input  logic                   valid_i,
  input  logic                   sop_i,
  input  logic                   eop_i,
  input  logic [NW-1:0]          bytes_i,
  input  logic [8*BeatBytes-1:0] data_i,
  input  logic                   mark_i,

  output logic                   valid_o,
  output logic                   sop_o,
  output logic                   eop_o,
  output logic [NW-1:0]          bytes_o,
  output logic [8*BeatBytes-1:0] data_o,
  output logic                   ebp_o,
  output logic [15:0]            vcrc_errs_o
);

  // A fault variant is built only on purpose: defined without IBCYCLE_FAULTS_ENABLE (a stray define from
  // another file, say) it stops elaboration instead of silently building the broken block.
`ifndef IBCYCLE_FAULTS_ENABLE
`ifdef IBCYCLE_FAULT_FECN_BIT
  $fatal(1, "IBCYCLE_FAULT_FECN_BIT is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`ifdef IBCYCLE_FAULT_VCRC_BYTE_ORDER
  $fatal(1, "IBCYCLE_FAULT_VCRC_BYTE_ORDER is defined without IBCYCLE_FAULTS_ENABLE");
`endif
`endif

`ifdef __ICARUS__
  initial if (BeatBytes < 4 || BeatBytes > 32 || BeatBytes % 4 != 0 || NW != $clog2(BeatBytes + 1)) begin
    $error("fecn_rewrite: BeatBytes (%0d) must be a multiple of 4 in 4..32 (instance %m)", BeatBytes);
    $finish;
  end
`else
  if (BeatBytes < 4 || BeatBytes > 32 || BeatBytes % 4 != 0 || NW != $clog2(BeatBytes + 1)) begin : g_bad_param
    $error("fecn_rewrite: BeatBytes (%0d) must be a multiple of 4 in 4..32", BeatBytes);
  end
`endif

  localparam logic [15:0] VcrcPoly = 16'hD008;  // 0x100B reflected
  localparam logic [15:0] FecnOffLocal = 16'd12;  // LRH 8 + BTH byte 4
  localparam logic [15:0] FecnOffGlobal = 16'd52; // LRH 8 + GRH 40 + BTH byte 4

  // The VCRC of a beat as XOR trees (a parallel CRC, the same result as the byte-serial definition in one
  // cycle). The CRC is linear over GF(2): the register after the beat's B = BeatBytes bytes is a fixed
  // 16 x (16 + 8B) matrix times {bytes, register}, so each bit is the XOR of a constant subset of the inputs.
  // A last beat covers only its first m bytes (the VCRC's two bytes are not covered): the bytes from m on are
  // masked to 0 and the register after the whole masked beat is mapped back over the B - m zero bytes, each
  // step of the shift being invertible (the polynomial's constant term is 1), by one of B + 1 constant 16 x 16
  // matrices, selected by m. The matrices are computed at elaboration from the byte-serial definition.
  localparam int DW = 8 * BeatBytes;
  localparam int LW = 16 + DW;

  // Row j of the whole-beat map at [j*LW +: LW]: bit i set when input bit i ({bytes, register}, the register
  // at [15:0]) reaches register bit j; each byte goes into the register bit-serially, as the definition
  // (rtl_model::crc::vcrc) has it. (Written without calls: Icarus 11 evaluates no call in a constant function.)
  function automatic logic [16*LW-1:0] beat_map(input int unused);
    logic [16*LW-1:0] r;
    logic [LW-1:0]    e;
    logic [15:0]      y;
    for (int i = 0; i < LW; i++) begin
      e = '0;
      e[i] = 1'b1;
      y = e[15:0];
      for (int k = 0; k < BeatBytes; k++) begin
        y = y ^ {8'h00, e[16 + 8*k +: 8]};
        for (int j = 0; j < 8; j++) y = y[0] ? ((y >> 1) ^ VcrcPoly) : (y >> 1);
      end
      for (int j = 0; j < 16; j++) r[j*LW + i] = y[j];
    end
    beat_map = r;
  endfunction

  // Matrix t (t = 0..B) at [256*t +: 256], row j at [16*j +: 16]: the register before t zero bytes from the
  // register after them (8t inverse shifts; the inverse of a shift takes the register's top bit as the bit
  // shifted out).
  function automatic logic [256*(BeatBytes+1)-1:0] back_maps(input int unused);
    logic [256*(BeatBytes+1)-1:0] r;
    logic [15:0] y;
    logic        top;
    for (int t = 0; t <= BeatBytes; t++) begin
      for (int i = 0; i < 16; i++) begin
        y = 16'(1) << i;
        for (int s = 0; s < 8*t; s++) begin
          top = y[15];
          y = y ^ (top ? VcrcPoly : 16'h0000);
          y = {y[14:0], top};
        end
        for (int j = 0; j < 16; j++) r[256*t + 16*j + i] = y[j];
      end
    end
    back_maps = r;
  endfunction

  localparam logic [16*LW-1:0]              BeatMap  = beat_map(0);
  localparam logic [256*(BeatBytes+1)-1:0] BackMaps = back_maps(0);

  logic [15:0] off_q, off_d, crc_q, crc_d, crcin_q, crcin_d, errs_q, errs_d;
  logic [1:0]  lnh_q, lnh_d;
  logic        mark_q, mark_d;
  logic        valid_q, sop_q, eop_q, ebp_q, ebp_d;
  logic [NW-1:0] bytes_q;
  logic [8*BeatBytes-1:0] data_q, data_d;

  // Beat rewrite
  logic [15:0] off, crc, crcin, rx_vcrc, tx_vcrc;
  logic [BeatBytes-2:0] at_vcrc;
  logic [16*(BeatBytes+1)-1:0] crc_terms, crcin_terms;
  logic [16*(BeatBytes-1)-1:0] rx_terms;
  logic          full;
  logic [BeatBytes:0] back;
  logic [1:0]  lnh;
  logic        mark, last, good;
  logic [BeatBytes-1:0] fecn_at, covered;
  logic [DW-1:0] rw, rw_cov, rx_cov;
  logic [15:0] crc_all, crcin_all;

  always_comb begin
    off  = sop_i ? 16'd0 : off_q;
    lnh  = sop_i ? data_i[9:8] : lnh_q;
    mark = sop_i ? mark_i : mark_q;
    crc  = sop_i ? 16'hFFFF : crc_q;
    crcin = sop_i ? 16'hFFFF : crcin_q;
    last = eop_i;
    // Valid bytes of the beat: n, all B unless a last beat says fewer (full: all). The VCRC covers the first
    // m of them (a last beat's last two are its VCRC). Every use below compares bytes_i with a constant
    // instead of computing n and m first (the difference cost the path through the CRC a subtractor).
    full = !last || bytes_i == '0 || 32'(bytes_i) > BeatBytes;
    // FECN's byte: byte k when off + k is its offset (only a marked IBA packet, LNH 2 or 3, has one);
    // compared as off against the offset less k, a constant, for each k.
    for (int k = 0; k < BeatBytes; k++) begin
      fecn_at[k] = mark && lnh[1] && (full || 32'(bytes_i) > k)
                   && (lnh[0] ? (k <= 32'(FecnOffGlobal) && off == FecnOffGlobal - 16'(k))
                              : (k <= 32'(FecnOffLocal) && off == FecnOffLocal - 16'(k)));
      covered[k] = full ? (!last || k + 2 < BeatBytes) : (32'(bytes_i) > k + 2);
    end
    rw = data_i;
    for (int k = 0; k < BeatBytes; k++) begin
`ifdef IBCYCLE_FAULT_FECN_BIT
      if (fecn_at[k]) rw[8*k + 6] = 1'b1;
`else
      if (fecn_at[k]) rw[8*k + 7] = 1'b1;
`endif
      rw_cov[8*k +: 8] = covered[k] ? rw[8*k +: 8] : 8'h00;
      rx_cov[8*k +: 8] = covered[k] ? data_i[8*k +: 8] : 8'h00;
    end
    // t = B - m masked bytes to map back over: 0 for a beat that is not the last; for a last beat of n
    // bytes (2 <= n <= B) t = B + 2 - n, and B when n < 2.
    for (int t = 0; t <= BeatBytes; t++) begin
      if (t == 0) back[t] = !last || (full && BeatBytes == 2);
      else if (t == BeatBytes) back[t] = last && !full && 32'(bytes_i) <= 2;
      else back[t] = last && (full ? (BeatBytes + 2 - t == BeatBytes) : (32'(bytes_i) == BeatBytes + 2 - t));
    end
  end

  // The registers after the whole masked beat, then mapped back over its B - m masked bytes: the B + 1
  // candidates selected as an AND-OR (exactly one t matches; OR trees, not chains of multiplexers). Continuous
  // assignments, each bit its own XOR tree (a simulator re-evaluates only what changed).
  for (genvar j = 0; j < 16; j++) begin : g_crc
    assign crc_all[j]   = ^({rw_cov, crc} & BeatMap[j*LW +: LW]);
    assign crcin_all[j] = ^({rx_cov, crcin} & BeatMap[j*LW +: LW]);
    for (genvar t = 0; t <= BeatBytes; t++) begin : g_back
      assign crc_terms[j*(BeatBytes+1) + t]   = back[t] & ^(crc_all & BackMaps[256*t + 16*j +: 16]);
      assign crcin_terms[j*(BeatBytes+1) + t] = back[t] & ^(crcin_all & BackMaps[256*t + 16*j +: 16]);
    end
    assign crc_d[j]   = |crc_terms[j*(BeatBytes+1) +: BeatBytes+1];
    assign crcin_d[j] = |crcin_terms[j*(BeatBytes+1) +: BeatBytes+1];
  end

  always_comb begin
    // The VCRC's place: bytes k and k + 1 with k + 2 = n (a last beat of fewer than 2 bytes has none). The
    // received VCRC (least significant byte first) and the bytes that replace it are AND-OR selections by
    // place, not chains of multiplexers.
    for (int k = 0; k < BeatBytes - 1; k++) begin
      at_vcrc[k] = full ? (k + 2 == BeatBytes) : (32'(bytes_i) == k + 2);
      for (int j = 0; j < 16; j++) rx_terms[j*(BeatBytes-1) + k] = at_vcrc[k] & data_i[8*k + j];
    end
    for (int j = 0; j < 16; j++) rx_vcrc[j] = |rx_terms[j*(BeatBytes-1) +: BeatBytes-1];
    good = (full || 32'(bytes_i) >= 2) && (rx_vcrc == ~crcin_d);
    ebp_d = valid_i && last && !good;
    // A good packet gets the regenerated VCRC, a bad one its complement (stomped: never good).
`ifdef IBCYCLE_FAULT_VCRC_BYTE_ORDER
    tx_vcrc = good ? {~crc_d[7:0], ~crc_d[15:8]} : {crc_d[7:0], crc_d[15:8]};
`else
    tx_vcrc = good ? ~crc_d : crc_d;
`endif
    data_d = rw;
    for (int k = 0; k < BeatBytes; k++) begin
      if (last && k < BeatBytes - 1 && at_vcrc[k % (BeatBytes - 1)]) data_d[8*k +: 8] = tx_vcrc[7:0];
      if (last && k > 0 && at_vcrc[(k + BeatBytes - 2) % (BeatBytes - 1)]) data_d[8*k +: 8] = tx_vcrc[15:8];
    end
    if (!valid_i) data_d = data_i;
    off_d  = (32'(off) + BeatBytes > 32'hFFFF) ? 16'hFFFF : off + 16'(BeatBytes);
    errs_d = (ebp_d && errs_q != 16'hFFFF) ? errs_q + 16'd1 : errs_q;
    lnh_d  = lnh;
    mark_d = mark;
  end

  // Registered outputs; while reset is low they show 0.
  assign valid_o = rst_ni && valid_q;
  assign sop_o   = rst_ni && sop_q;
  assign eop_o   = rst_ni && eop_q;
  assign bytes_o = rst_ni ? bytes_q : '0;
  assign data_o  = rst_ni ? data_q : '0;
  assign ebp_o   = rst_ni && ebp_q;
  assign vcrc_errs_o = rst_ni ? errs_q : '0;

  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      off_q   <= '0;
      crc_q   <= 16'hFFFF;
      crcin_q <= 16'hFFFF;
      errs_q  <= '0;
      ebp_q   <= 1'b0;
      lnh_q   <= '0;
      mark_q  <= 1'b0;
      valid_q <= 1'b0;
      sop_q   <= 1'b0;
      eop_q   <= 1'b0;
      bytes_q <= '0;
      data_q  <= '0;
    end else begin
      if (valid_i) begin
        off_q  <= off_d;
        crc_q  <= crc_d;
        crcin_q <= crcin_d;
        lnh_q  <= lnh_d;
        mark_q <= mark_d;
      end
      valid_q <= valid_i;
      sop_q   <= sop_i;
      eop_q   <= eop_i;
      bytes_q <= bytes_i;
      ebp_q   <= ebp_d;
      errs_q  <= errs_d;
      data_q  <= data_d;
    end
  end

`ifdef IBCYCLE_ASSERTIONS
  // A bad end only on the last beat of a packet; the error count never falls and moves by one bad packet.
  logic [15:0] a_errs_q;
  logic [1:0]  a_ok, a_ok_q;
  always_comb begin
    a_ok[0] = !rst_ni || !ebp_o || (valid_o && eop_o);
    a_ok[1] = !rst_ni || a_errs_q == 16'hFFFF || vcrc_errs_o == a_errs_q + 16'(ebp_o);
  end
  // Registered, then asserted (a cycle late), so the check does not depend on how a simulator orders clocked
  // blocks.
  always_ff @(posedge clk_i) begin
    a_ok_q   <= a_ok;
    a_errs_q <= rst_ni ? vcrc_errs_o : 16'd0;
  end
  initial a_ok_q = '1;
  always @(posedge clk_i) begin
    assert (a_ok_q[0]);  // a bad end only on a packet's last beat
    assert (a_ok_q[1]);  // the error count moves by one bad packet
  end
`endif

endmodule

`default_nettype wire
