/* The fixed-point finishing steps shared by the filter and resample kernels, exactly as in
 * mvision_core::filter (round_shift_sat_u8 and the i16 saturation of Sobel).
 *
 * Needs from the prelude: MV_INLINE and the mv_ types. */

/* mvision_core's round_shift_sat_u8: floor((acc + 2^(shift-1)) / 2^shift) clamped to 0..255.
 * A negative sum saturates to 0 before any shift, so no right shift of a negative number (whose
 * rounding C leaves to the implementation) is ever done. */
MV_INLINE mv_u8 mv_round_shift_sat_u8(mv_i32 acc, int shift)
{
    mv_i32 v = acc + ((1 << shift) >> 1);
    if (v < 0) {
        return 0;
    }
    v >>= shift;
    return (mv_u8)(v > 255 ? 255 : v);
}

/* The same value as mv_round_shift_sat_u8, widened to 32 bits (fewer instructions where the
 * caller packs bytes itself). */
MV_INLINE mv_u32 mv_round_shift_sat_u32(mv_i32 acc, int shift)
{
    mv_i32 v = acc + ((1 << shift) >> 1);
    v = v < 0 ? 0 : v;
    v >>= shift;
    return (mv_u32)(v > 255 ? 255 : v);
}

MV_INLINE mv_i16 mv_sat_i16(mv_i32 v)
{
    return (mv_i16)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}

/* Two signed 16-bit coefficients in one word, a in bits 0..15 (the operand of mv_dp2a_*). */
MV_INLINE mv_u32 mv_pack16(mv_i32 a, mv_i32 b)
{
    return ((mv_u32)a & 0xffffu) | ((mv_u32)b << 16);
}

/* The signed 16-bit field `upper` (0: bits 0..15, 1: bits 16..31) of c2, without
 * implementation-defined conversions. */
MV_INLINE mv_i32 mv_s16_of(mv_u32 c2, int upper)
{
    mv_i32 h = (mv_i32)((upper ? c2 >> 16 : c2) & 0xffffu);
    return h >= 32768 ? h - 65536 : h;
}

/* mv_dp2a_lo / mv_dp2a_hi (below) where the device has no such instruction: the same exact
 * sums, acc + lo16(c2) * byte(v, 2 * hi) + hi16(c2) * byte(v, 2 * hi + 1). */
MV_INLINE mv_i32 mv_dp2a_soft(mv_u32 c2, mv_u32 v, mv_i32 acc, int hi)
{
    return acc + mv_s16_of(c2, 0) * (mv_i32)MV_BYTE(v, 2 * hi) +
           mv_s16_of(c2, 1) * (mv_i32)MV_BYTE(v, 2 * hi + 1);
}
#if MV_DP2A_HW
/* Two 16 x 8-bit products added to a 32-bit sum by PTX dp2a (the preludes set MV_DP2A_HW where
 * the device has it; CUDA and NVIDIA's OpenCL take the same inline PTX): mv_dp2a_lo(c2, v, acc)
 * = acc + lo16(c2) * byte0(v) + hi16(c2) * byte1(v), the halves of c2 signed, the bytes of v
 * unsigned, byte i the one at the i-th lowest address; mv_dp2a_hi the same with bytes 2, 3. */
MV_INLINE mv_i32 mv_dp2a_lo(mv_u32 c2, mv_u32 v, mv_i32 acc)
{
    mv_i32 d;
    asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(c2), "r"(v), "r"(acc));
    return d;
}
MV_INLINE mv_i32 mv_dp2a_hi(mv_u32 c2, mv_u32 v, mv_i32 acc)
{
    mv_i32 d;
    asm("dp2a.hi.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(c2), "r"(v), "r"(acc));
    return d;
}
#define MV_DP2A(c2, v, acc, hi) ((hi) ? mv_dp2a_hi((c2), (v), (acc)) : mv_dp2a_lo((c2), (v), (acc)))
#else
#define MV_DP2A(c2, v, acc, hi) mv_dp2a_soft((c2), (v), (acc), (hi))
#endif
