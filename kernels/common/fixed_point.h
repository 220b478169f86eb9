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
