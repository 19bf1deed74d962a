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

  logic [15:0] off_q, off_d, crc_q, crc_d, crcin_q, crcin_d, errs_q, errs_d;
  logic [1:0]  lnh_q, lnh_d;
  logic        mark_q, mark_d;
  logic        valid_q, sop_q, eop_q, ebp_q, ebp_d;
  logic [NW-1:0] bytes_q;
  logic [8*BeatBytes-1:0] data_q, data_d;

  // Beat rewrite
  logic [15:0] off, crc, crcin, fecn_off, n, pos, rx_vcrc;
  logic [1:0]  lnh;
  logic        mark, has_fecn, last, good;
  logic [7:0]  b;

  always_comb begin
    off  = sop_i ? 16'd0 : off_q;
    lnh  = sop_i ? data_i[9:8] : lnh_q;
    mark = sop_i ? mark_i : mark_q;
    crc  = sop_i ? 16'hFFFF : crc_q;
    crcin = sop_i ? 16'hFFFF : crcin_q;
    last = eop_i;
    n    = (bytes_i == '0 || 32'(bytes_i) > BeatBytes) ? 16'(BeatBytes) : 16'(bytes_i);
    if (!last) n = 16'(BeatBytes);
    has_fecn = mark && lnh[1];
    fecn_off = lnh[0] ? FecnOffGlobal : FecnOffLocal;
    data_d = data_i;
    for (int k = 0; k < BeatBytes; k++) begin
      pos = off + 16'(k);
      b = data_i[8*k +: 8];
      if (16'(k) < n) begin
        // Every byte before the VCRC, as received, into the check's CRC.
        if (!last || 16'(k) + 16'd2 < n) begin
          crcin = crcin ^ {8'h00, b};
          for (int j = 0; j < 8; j++) crcin = crcin[0] ? ((crcin >> 1) ^ VcrcPoly) : (crcin >> 1);
        end
        if (has_fecn && pos == fecn_off) begin
`ifdef IBCYCLE_FAULT_FECN_BIT
          b = b | 8'h40;
`else
          b = b | 8'h80;
`endif
        end
        // Every byte before the VCRC, as rewritten, into the regenerated VCRC.
        if (!last || 16'(k) + 16'd2 < n) begin
          crc = crc ^ {8'h00, b};
          for (int j = 0; j < 8; j++) crc = crc[0] ? ((crc >> 1) ^ VcrcPoly) : (crc >> 1);
        end
      end
      data_d[8*k +: 8] = b;
    end
    // The received VCRC, least significant byte first; a last beat of fewer than 2 bytes has none.
    rx_vcrc = 16'h0000;
    for (int k = 0; k < BeatBytes - 1; k++) begin
      if (16'(k) + 16'd2 == n) rx_vcrc = {data_i[8*(k+1) +: 8], data_i[8*k +: 8]};
    end
    good = (n >= 16'd2) && (rx_vcrc == ~crcin);
    ebp_d = valid_i && last && !good;
    if (last && n >= 16'd2) begin
      for (int k = 0; k < BeatBytes - 1; k++) begin
        if (16'(k) + 16'd2 == n) begin
          // A good packet gets the regenerated VCRC, a bad one its complement (stomped: never good).
`ifdef IBCYCLE_FAULT_VCRC_BYTE_ORDER
          data_d[8*k +: 16] = good ? {~crc[7:0], ~crc[15:8]} : {crc[7:0], crc[15:8]};
`else
          data_d[8*k +: 16] = good ? {~crc[15:8], ~crc[7:0]} : crc;
`endif
        end
      end
    end
    if (!valid_i) data_d = data_i;
    off_d  = (32'(off) + BeatBytes > 32'hFFFF) ? 16'hFFFF : off + 16'(BeatBytes);
    crc_d  = crc;
    crcin_d = crcin;
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
