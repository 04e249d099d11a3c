/**
 * A tiny H.264 (AVC) writer for the simulator's videos: a solid-colour picture of any size, coded
 * so that it stays small whatever the size, and real enough that browsers decode and play it.
 *
 * Constrained Baseline profile, CAVLC, one slice per picture, deblocking off:
 *   - the IDR picture codes its first macroblock as I_PCM (the colour as raw 4:2:0 samples) and
 *     every other macroblock as Intra 16×16 DC prediction with no residual, so the colour spreads
 *     from the first macroblock over the whole picture: one byte per macroblock (a 4K picture is
 *     about 32 kB);
 *   - every later picture is a P picture whose macroblocks are all skipped (about 8 bytes): the
 *     same picture again, so the clip plays, its clock advances, and it seeks.
 * Sizes are even (4:2:0 crops in steps of 2); sizes that are not multiples of 16 are cropped in
 * the SPS, so decoders report exactly the requested width and height.
 *
 * What comes out is NAL units without start codes (as MP4's `avc1` samples and `avcC` hold them),
 * emulation prevention applied.
 */
import type { Rgb } from './media.js';

const PROFILE_BASELINE = 66;
/** constraint_set0 and constraint_set1: Constrained Baseline. */
const CONSTRAINT_FLAGS = 0xc0;
/** log2_max_frame_num_minus4 = 0: frame_num counts modulo 16. */
const FRAME_NUM_BITS = 4;
const MB_TYPE_I16X16_DC_NO_RESIDUAL = 3; // I_16x16_2_0_0: prediction mode 2 (DC), no coded block pattern
const MB_TYPE_I_PCM = 25;

export type AvcPictureSize = Readonly<{ width: number; height: number }>;

/** Sequence and picture parameter sets (for `avcC`) and the level they declare. */
export function avcParameterSets(size: AvcPictureSize): { sps: Buffer; pps: Buffer; profile: number; compatibility: number; level: number } {
  const { mbWidth, mbHeight } = macroblocks(size);
  const level = levelFor(mbWidth * mbHeight);
  const sps = new BitWriter();
  sps.u(8, PROFILE_BASELINE);
  sps.u(8, CONSTRAINT_FLAGS);
  sps.u(8, level);
  sps.ue(0); // seq_parameter_set_id
  sps.ue(FRAME_NUM_BITS - 4); // log2_max_frame_num_minus4
  sps.ue(2); // pic_order_cnt_type 2: output order is decoding order (no B pictures)
  sps.ue(1); // max_num_ref_frames
  sps.u(1, 0); // gaps_in_frame_num_value_allowed_flag
  sps.ue(mbWidth - 1);
  sps.ue(mbHeight - 1);
  sps.u(1, 1); // frame_mbs_only_flag
  sps.u(1, 1); // direct_8x8_inference_flag
  const cropRight = (mbWidth * 16 - size.width) / 2;
  const cropBottom = (mbHeight * 16 - size.height) / 2;
  const cropping = cropRight > 0 || cropBottom > 0;
  sps.u(1, cropping ? 1 : 0);
  if (cropping) {
    sps.ue(0);
    sps.ue(cropRight);
    sps.ue(0);
    sps.ue(cropBottom);
  }
  sps.u(1, 1); // vui_parameters_present_flag
  writeVui(sps);
  sps.trailing();

  const pps = new BitWriter();
  pps.ue(0); // pic_parameter_set_id
  pps.ue(0); // seq_parameter_set_id
  pps.u(1, 0); // entropy_coding_mode_flag: CAVLC
  pps.u(1, 0); // bottom_field_pic_order_in_frame_present_flag
  pps.ue(0); // num_slice_groups_minus1
  pps.ue(0); // num_ref_idx_l0_default_active_minus1
  pps.ue(0); // num_ref_idx_l1_default_active_minus1
  pps.u(1, 0); // weighted_pred_flag
  pps.u(2, 0); // weighted_bipred_idc
  pps.se(0); // pic_init_qp_minus26
  pps.se(0); // pic_init_qs_minus26
  pps.se(0); // chroma_qp_index_offset
  pps.u(1, 1); // deblocking_filter_control_present_flag (the slices turn it off)
  pps.u(1, 0); // constrained_intra_pred_flag
  pps.u(1, 0); // redundant_pic_cnt_present_flag
  pps.trailing();

  return { sps: nalUnit(3, 7, sps.bytes()), pps: nalUnit(3, 8, pps.bytes()), profile: PROFILE_BASELINE, compatibility: CONSTRAINT_FLAGS, level };
}

/**
 * The IDR picture filled with `colour`. What does not depend on the colour (the slice header
 * and the macroblocks after the first) is byte-aligned around the PCM samples, so callers may
 * keep `idrParts(size)` and only pay for the 384 sample bytes and the emulation-prevention pass.
 */
export function idrPicture(size: AvcPictureSize, colour: Rgb, parts = idrParts(size)): Buffer {
  return nalUnit(3, 5, Buffer.concat([parts.head, pcmMacroblock(colour), parts.tail]));
}

/** Slice header and I_PCM mb_type (`head`), then the other macroblocks and trailing bits (`tail`). */
export function idrParts(size: AvcPictureSize): { head: Buffer; tail: Buffer } {
  const { mbWidth, mbHeight } = macroblocks(size);
  const head = new BitWriter();
  head.ue(0); // first_mb_in_slice
  head.ue(7); // slice_type: I (all slices of the picture)
  head.ue(0); // pic_parameter_set_id
  head.u(FRAME_NUM_BITS, 0); // frame_num
  head.ue(0); // idr_pic_id
  head.u(1, 0); // no_output_of_prior_pics_flag
  head.u(1, 0); // long_term_reference_flag
  head.se(0); // slice_qp_delta
  head.ue(1); // disable_deblocking_filter_idc: off
  head.ue(MB_TYPE_I_PCM);
  head.alignZero(); // pcm_alignment_zero_bit

  const tail = new BitWriter();
  for (let y = 0; y < mbHeight; y++) {
    for (let x = 0; x < mbWidth; x++) {
      if (x === 0 && y === 0) continue; // the I_PCM macroblock
      tail.ue(MB_TYPE_I16X16_DC_NO_RESIDUAL);
      tail.ue(0); // intra_chroma_pred_mode: DC
      tail.se(0); // mb_qp_delta
      // The Intra16x16 DC coefficients: none. Their coeff_token table depends on nC, the coefficient
      // counts of the left and upper neighbours; an I_PCM neighbour counts 16, the others here 0.
      // So the two macroblocks next to the first one use the nC ≥ 8 table, all others nC = 0.
      const nextToPcm = (x === 1 && y === 0) || (x === 0 && y === 1);
      if (nextToPcm) tail.u(6, 0b000011);
      else tail.u(1, 1);
    }
  }
  tail.trailing();
  return { head: head.bytes(), tail: tail.bytes() };
}

/** A P picture whose macroblocks are all skipped: the previous picture again. `index` ≥ 1 in decoding order. */
export function skipPicture(size: AvcPictureSize, index: number): Buffer {
  const { mbWidth, mbHeight } = macroblocks(size);
  const slice = new BitWriter();
  slice.ue(0); // first_mb_in_slice
  slice.ue(5); // slice_type: P (all slices of the picture)
  slice.ue(0); // pic_parameter_set_id
  slice.u(FRAME_NUM_BITS, index % (1 << FRAME_NUM_BITS)); // frame_num: every picture is a reference
  slice.u(1, 0); // num_ref_idx_active_override_flag
  slice.u(1, 0); // ref_pic_list_modification_flag_l0
  slice.u(1, 0); // adaptive_ref_pic_marking_mode_flag: sliding window
  slice.se(0); // slice_qp_delta
  slice.ue(1); // disable_deblocking_filter_idc: off
  slice.ue(mbWidth * mbHeight); // mb_skip_run: the whole picture
  slice.trailing();
  return nalUnit(2, 1, slice.bytes());
}

/**
 * Square pixels; BT.709 colours in limited range, said outright (without it, players guess BT.601
 * or BT.709 from the size, and the colour shifts); pictures leave the decoder as soon as decoded.
 */
function writeVui(vui: BitWriter): void {
  vui.u(1, 1); // aspect_ratio_info_present_flag
  vui.u(8, 1); // aspect_ratio_idc: 1:1
  vui.u(1, 0); // overscan_info_present_flag
  vui.u(1, 1); // video_signal_type_present_flag
  vui.u(3, 5); // video_format: unspecified
  vui.u(1, 0); // video_full_range_flag: limited range
  vui.u(1, 1); // colour_description_present_flag
  vui.u(8, 1); // colour_primaries: BT.709
  vui.u(8, 1); // transfer_characteristics: BT.709
  vui.u(8, 1); // matrix_coefficients: BT.709
  vui.u(1, 0); // chroma_loc_info_present_flag
  vui.u(1, 0); // timing_info_present_flag (the container has the timing)
  vui.u(1, 0); // nal_hrd_parameters_present_flag
  vui.u(1, 0); // vcl_hrd_parameters_present_flag
  vui.u(1, 0); // pic_struct_present_flag
  vui.u(1, 1); // bitstream_restriction_flag
  vui.u(1, 1); // motion_vectors_over_pic_boundaries_flag
  vui.ue(0); // max_bytes_per_pic_denom: no limit
  vui.ue(0); // max_bits_per_mb_denom: no limit
  vui.ue(0); // log2_max_mv_length_horizontal (all motion vectors are zero)
  vui.ue(0); // log2_max_mv_length_vertical
  vui.ue(0); // max_num_reorder_frames
  vui.ue(1); // max_dec_frame_buffering
}

/** The 16×16 luma and two 8×8 chroma blocks of the colour (BT.709, limited range, as the VUI says). */
function pcmMacroblock([r, g, b]: Rgb): Buffer {
  const luma = 0.2126 * r + 0.7152 * g + 0.0722 * b; // 0..255
  // pcm samples of 0 were forbidden in the first edition of the standard: keep them within 1..254.
  const clamp = (v: number): number => Math.min(254, Math.max(1, Math.round(v)));
  const y = clamp(16 + (219 * luma) / 255);
  const cb = clamp(128 + (224 * (b - luma)) / (1.8556 * 255));
  const cr = clamp(128 + (224 * (r - luma)) / (1.5748 * 255));
  return Buffer.concat([Buffer.alloc(256, y), Buffer.alloc(64, cb), Buffer.alloc(64, cr)]);
}

function macroblocks(size: AvcPictureSize): { mbWidth: number; mbHeight: number } {
  if (!Number.isInteger(size.width) || !Number.isInteger(size.height) || size.width < 2 || size.height < 2 || size.width % 2 || size.height % 2) {
    throw new Error(`H.264 4:2:0 needs even sizes of at least 2, got ${size.width}×${size.height}`);
  }
  return { mbWidth: Math.ceil(size.width / 16), mbHeight: Math.ceil(size.height / 16) };
}

/** The lowest level whose maximum frame size (in macroblocks, Table A-1) holds the picture; at one picture a second, rates never bind. */
function levelFor(frameMacroblocks: number): number {
  const levels: ReadonlyArray<readonly [number, number]> = [
    [396, 21],
    [1620, 30],
    [3600, 31],
    [8192, 40],
    [22080, 50],
    [36864, 51],
    [139264, 60],
  ];
  return levels.find(([maxFs]) => frameMacroblocks <= maxFs)?.[1] ?? 62;
}

/** NAL header, then the payload with emulation prevention (a 0x03 after any two zero bytes followed by 0x00..0x03). */
function nalUnit(refIdc: number, type: number, rbsp: Buffer): Buffer {
  const out: number[] = [(refIdc << 5) | type];
  let zeros = 0;
  for (const byte of rbsp) {
    if (zeros >= 2 && byte <= 3) {
      out.push(3);
      zeros = 0;
    }
    out.push(byte);
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return Buffer.from(out);
}

/** Bits most significant first, with the Exp-Golomb codes of the standard. */
class BitWriter {
  private readonly out: number[] = [];
  private current = 0;
  private filled = 0;

  /** `bits` (≤ 31) bits of `value`. */
  u(bits: number, value: number): void {
    for (let i = bits - 1; i >= 0; i--) this.bit((value >>> i) & 1);
  }

  ue(value: number): void {
    const coded = value + 1;
    const length = 32 - Math.clz32(coded);
    this.u(length - 1, 0);
    this.u(length, coded);
  }

  se(value: number): void {
    this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  alignZero(): void {
    while (this.filled !== 0) this.bit(0);
  }

  /** rbsp_trailing_bits: a stop bit, then zeros to the byte boundary. */
  trailing(): void {
    this.bit(1);
    this.alignZero();
  }

  bytes(): Buffer {
    if (this.filled !== 0) throw new Error('not byte-aligned');
    return Buffer.from(this.out);
  }

  private bit(b: number): void {
    this.current = (this.current << 1) | b;
    this.filled++;
    if (this.filled === 8) {
      this.out.push(this.current);
      this.current = 0;
      this.filled = 0;
    }
  }
}
