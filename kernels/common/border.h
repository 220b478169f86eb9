/* Borders: how kernels read outside the image, exactly as mvision_core::Border::map_index.
 *
 * Needs from the prelude: MV_INLINE, MV_GLOBAL, mv_i64. Needs the generated constants
 * MV_BORDER_REPLICATE, MV_BORDER_REFLECT_101, MV_BORDER_CONSTANT. */

/* mv_border_index within one reflection of an axis of n >= 2 pixels (-n < i < 2n - 1), or for
 * any i under the replicate and constant borders: the inside coordinate, or -1 for the
 * constant. No division, which GPUs run as a long 64-bit routine; tile copies that checked the
 * range once call it directly. */
MV_INLINE int mv_border_near(int i, int n, int mode)
{
    if (i >= 0 && i < n) {
        return i;
    }
    if (mode == MV_BORDER_REPLICATE) {
        return i < 0 ? 0 : n - 1;
    }
    if (mode == MV_BORDER_REFLECT_101) {
        return i < 0 ? -i : 2 * (n - 1) - i;
    }
    return -1;
}

/* Maps coordinate i on an axis of n >= 1 pixels to an inside coordinate, or -1 when the pixel
 * is the constant border value. Reflect-101 keeps reflecting for coordinates further out than n
 * (kernels larger than the image); n == 1 maps everything to 0. */
MV_INLINE int mv_border_index(int i, int n, int mode)
{
    /* Within one reflection (every halo of a kernel smaller than the image), and the other
     * modes: mv_border_near. i - (n - 1) < n rather than i < 2n - 1: 2n overflows int. */
    if (mode != MV_BORDER_REFLECT_101 || (n > 1 && i > -n && i - (n - 1) < n)) {
        return mv_border_near(i, n, mode);
    }
    if (n == 1) {
        return 0;
    }
    /* 64-bit: 2(n - 1) overflows int for n > 2^30. */
    mv_i64 period = 2 * ((mv_i64)n - 1);
    mv_i64 m = (mv_i64)i % period;
    if (m < 0) {
        m += period;
    }
    return (int)(m >= n ? period - m : m);
}

/* mv_fetch_<T>(src, stride, w, h, x, y, mode, value): pixel (x, y) of a w x h image, widened to
 * the accumulator type, with the border applied on both axes (a constant border wins when either
 * coordinate is outside, as in the CPU engine, which fills a whole outside row with it). */
#define MV_DEFINE_FETCH(SUFFIX, PIX, VAL)                                                      \
    MV_INLINE VAL mv_fetch_##SUFFIX(MV_GLOBAL const PIX* src, int stride, int w, int h, int x, \
                                    int y, int mode, VAL value)                                \
    {                                                                                          \
        int sx = mv_border_index(x, w, mode);                                                  \
        int sy = mv_border_index(y, h, mode);                                                  \
        return (sx < 0 || sy < 0) ? value : (VAL)src[sy * stride + sx];                        \
    }

MV_DEFINE_FETCH(u8, mv_u8, mv_i32)
MV_DEFINE_FETCH(f32, float, float)
