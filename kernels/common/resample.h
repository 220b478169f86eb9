/* Resampling: one Gaussian pyramid level down (mvision_core::pyramid) and bilinear resize with
 * pixel-centre alignment (mvision_core::resize), both one work-item per output pixel.
 *
 * Needs border.h and fixed_point.h; from the prelude MV_KERNEL, MV_GLOBAL,
 * MV_INLINE, MV_GID_X/Y and the mv_ types; generated: MV_RESIZE_FRAC_BITS. */

/* ---- Pyramid: [1 4 6 4 1] / 16 on both axes, every other row and column kept ------------ */

MV_INLINE int mv_pyr_tap(int t)
{
    return t == 2 ? 6 : ((t == 1 || t == 3) ? 4 : 1);
}

/* mv_pyr_sum_<T>: the weighted 5 x 5 sum centred on source (2 ox, 2 oy), each row summed first
 * and the row sums then down the column, as the CPU engine orders it. */
#define MV_DEFINE_PYR(SUFFIX, PIX, ACC)                                                         \
    MV_INLINE ACC mv_pyr_sum_##SUFFIX(MV_GLOBAL const PIX* src, int stride, int w, int h,       \
                                      int ox, int oy, int mode, ACC value)                      \
    {                                                                                           \
        ACC acc = 0;                                                                            \
        for (int ty = 0; ty < 5; ++ty) {                                                        \
            ACC row = 0;                                                                        \
            for (int tx = 0; tx < 5; ++tx) {                                                    \
                ACC p = mv_fetch_##SUFFIX(src, stride, w, h, 2 * ox + tx - 2, 2 * oy + ty - 2, \
                                          mode, value);                                         \
                row = row + (ACC)mv_pyr_tap(tx) * p;                                            \
            }                                                                                   \
            acc = acc + (ACC)mv_pyr_tap(ty) * row;                                              \
        }                                                                                       \
        return acc;                                                                             \
    }

MV_DEFINE_PYR(u8, mv_u8, mv_i32)
MV_DEFINE_PYR(f32, float, float)

MV_KERNEL mv_pyr_down_u8(MV_GLOBAL const mv_u8* src, int src_stride, int src_w, int src_h,
                         MV_GLOBAL mv_u8* dst, int dst_stride, int dst_w, int dst_h,
                         int border_mode, int border_value)
{
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= dst_w || y >= dst_h) {
        return;
    }
    mv_i32 acc = mv_pyr_sum_u8(src, src_stride, src_w, src_h, x, y, border_mode, border_value);
    dst[y * dst_stride + x] = mv_round_shift_sat_u8(acc, 8);
}

MV_KERNEL mv_pyr_down_f32(MV_GLOBAL const float* src, int src_stride, int src_w, int src_h,
                          MV_GLOBAL float* dst, int dst_stride, int dst_w, int dst_h,
                          int border_mode, float border_value)
{
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= dst_w || y >= dst_h) {
        return;
    }
    float acc = mv_pyr_sum_f32(src, src_stride, src_w, src_h, x, y, border_mode, border_value);
    dst[y * dst_stride + x] = acc * (1.0f / 256.0f);
}

/* ---- Bilinear resize --------------------------------------------------------------------- */

#define MV_RESIZE_ONE ((mv_i64)1 << MV_RESIZE_FRAC_BITS)

/* floor(a / b) for b > 0 (C division truncates towards zero). */
MV_INLINE mv_i64 mv_floor_div_i64(mv_i64 a, mv_i64 b)
{
    mv_i64 q = a / b;
    return (q * b != a && a < 0) ? q - 1 : q;
}

/* The source coordinate of destination index d in Q(MV_RESIZE_FRAC_BITS), exactly as
 * mvision_core::resize::map_coord: floor(((2d + 1) src - dst) 2^F / (2 dst)) clamped to
 * [0, (src - 1) 2^F]. The numerator fits i64 for every int-sized axis ((2d + 1) < 2^32,
 * src < 2^31); the scaling by 2^F is split off the quotient so nothing overflows. */
MV_INLINE mv_i64 mv_resize_coord(int d, int src_n, int dst_n)
{
    mv_i64 num = (2 * (mv_i64)d + 1) * (mv_i64)src_n - (mv_i64)dst_n;
    mv_i64 den = 2 * (mv_i64)dst_n;
    mv_i64 whole = mv_floor_div_i64(num, den);
    mv_i64 rest = num - whole * den; /* 0 <= rest < den */
    mv_i64 q = whole * MV_RESIZE_ONE + (rest * MV_RESIZE_ONE) / den;
    mv_i64 hi = ((mv_i64)src_n - 1) * MV_RESIZE_ONE;
    return q < 0 ? 0 : (q > hi ? hi : q);
}

MV_KERNEL mv_resize_bilinear_u8(MV_GLOBAL const mv_u8* src, int src_stride, int src_w, int src_h,
                                MV_GLOBAL mv_u8* dst, int dst_stride, int dst_w, int dst_h)
{
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= dst_w || y >= dst_h) {
        return;
    }
    mv_i64 qx = mv_resize_coord(x, src_w, dst_w);
    mv_i64 qy = mv_resize_coord(y, src_h, dst_h);
    int x0 = (int)(qx >> MV_RESIZE_FRAC_BITS);
    int y0 = (int)(qy >> MV_RESIZE_FRAC_BITS);
    mv_u32 fx = (mv_u32)(qx & (MV_RESIZE_ONE - 1));
    mv_u32 fy = (mv_u32)(qy & (MV_RESIZE_ONE - 1));
    int x1 = x0 + 1 < src_w ? x0 + 1 : src_w - 1;
    int y1 = y0 + 1 < src_h ? y0 + 1 : src_h - 1;
    mv_u32 gx = (mv_u32)MV_RESIZE_ONE - fx;
    mv_u32 gy = (mv_u32)MV_RESIZE_ONE - fy;
    MV_GLOBAL const mv_u8* r0 = src + y0 * src_stride;
    MV_GLOBAL const mv_u8* r1 = src + y1 * src_stride;
    /* Q22 weights summing to 2^22: at most 255 * 2^22 + 2^21 < 2^32. */
    mv_u32 s = gx * gy * (mv_u32)r0[x0] + fx * gy * (mv_u32)r0[x1] + gx * fy * (mv_u32)r1[x0] +
               fx * fy * (mv_u32)r1[x1];
    mv_u32 round_half = (mv_u32)1 << (2 * MV_RESIZE_FRAC_BITS - 1);
    dst[y * dst_stride + x] = (mv_u8)((s + round_half) >> (2 * MV_RESIZE_FRAC_BITS));
}

MV_KERNEL mv_resize_bilinear_f32(MV_GLOBAL const float* src, int src_stride, int src_w,
                                 int src_h, MV_GLOBAL float* dst, int dst_stride, int dst_w,
                                 int dst_h)
{
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= dst_w || y >= dst_h) {
        return;
    }
    mv_i64 qx = mv_resize_coord(x, src_w, dst_w);
    mv_i64 qy = mv_resize_coord(y, src_h, dst_h);
    int x0 = (int)(qx >> MV_RESIZE_FRAC_BITS);
    int y0 = (int)(qy >> MV_RESIZE_FRAC_BITS);
    int x1 = x0 + 1 < src_w ? x0 + 1 : src_w - 1;
    int y1 = y0 + 1 < src_h ? y0 + 1 : src_h - 1;
    float inv_one = 1.0f / (float)MV_RESIZE_ONE;
    float wx = (float)(mv_i32)(qx & (MV_RESIZE_ONE - 1)) * inv_one;
    float wy = (float)(mv_i32)(qy & (MV_RESIZE_ONE - 1)) * inv_one;
    MV_GLOBAL const float* r0 = src + y0 * src_stride;
    MV_GLOBAL const float* r1 = src + y1 * src_stride;
    float top = r0[x0] + (r0[x1] - r0[x0]) * wx;
    float bottom = r1[x0] + (r1[x1] - r1[x0]) * wx;
    dst[y * dst_stride + x] = top + (bottom - top) * wy;
}
