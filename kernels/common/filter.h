/* Linear filters: dense k x k convolution (naive and tiled), separable convolution (tiled, also
 * box and Gaussian blur) and 3 x 3 Sobel, for u8 (exact i32 fixed point) and f32 images.
 *
 * The arithmetic is the CPU reference's (mvision_core::filter): correlation, kernel centred on
 * the output pixel, integer sums exact in i32 with one rounding at the end, float sums in the
 * same order as the CPU engine (kernel row-major; horizontal before vertical).
 *
 * Tiled kernels run with a work-group of exactly MV_TILE_W x MV_TILE_H (MV_KERNEL_TILED). Each
 * group loads the (MV_TILE_W + k - 1) x (MV_TILE_H + k - 1) halo tile its outputs need into
 * local memory once (the 8 x 4 group of a 3 x 3 filter reads 60 pixels instead of 288), then
 * computes from it. Local arrays are sized for the largest kernel, MV_MAX_KSIZE, so one program
 * serves every kernel size.
 *
 * Needs border.h and fixed_point.h; from the prelude MV_KERNEL, MV_KERNEL_TILED, MV_GLOBAL, MV_CONSTANT, MV_LOCAL,
 * MV_LOCAL_ARRAY, MV_BARRIER, MV_INLINE, the MV_GID/LID/GROUP/LSIZE indices and the mv_ types;
 * generated: MV_MAX_KSIZE, MV_TILE_W, MV_TILE_H. */

#ifndef MV_TILE_W
#define MV_TILE_W 16
#endif
#ifndef MV_TILE_H
#define MV_TILE_H 16
#endif

/* Row pitch and row count of the largest halo tile. */
#define MV_HALO_W (MV_TILE_W + MV_MAX_KSIZE - 1)
#define MV_HALO_H (MV_TILE_H + MV_MAX_KSIZE - 1)

/* mv_load_halo_<T>: the work-group cooperatively copies the tw x th source window whose top-left
 * pixel is (x0, y0) (border applied) into `tile` (row pitch `pitch`). Every work-item must call
 * it; a barrier must follow before the tile is read. */
#define MV_DEFINE_LOAD_HALO(SUFFIX, PIX, VAL)                                                     \
    MV_INLINE void mv_load_halo_##SUFFIX(MV_LOCAL PIX* tile, int pitch, MV_GLOBAL const PIX* src, \
                                         int stride, int w, int h, int x0, int y0, int tw,        \
                                         int th, int mode, VAL value)                             \
    {                                                                                             \
        int n = MV_LSIZE_X * MV_LSIZE_Y;                                                          \
        for (int i = MV_LID_Y * MV_LSIZE_X + MV_LID_X; i < tw * th; i += n) {                     \
            int ty = i / tw;                                                                      \
            int tx = i - ty * tw;                                                                 \
            tile[ty * pitch + tx] =                                                               \
                (PIX)mv_fetch_##SUFFIX(src, stride, w, h, x0 + tx, y0 + ty, mode, value);         \
        }                                                                                         \
    }

/* mv_conv_global_<T> / mv_conv_tile_<T>: the k x k correlation sum at one output pixel, read
 * straight from global memory (border per tap) or from a halo tile (`t` points at the window's
 * top-left pixel). Same summation order as the CPU: kernel row-major, acc = acc + c * p. */
#define MV_DEFINE_CONV(SUFFIX, PIX, ACC)                                                       \
    MV_INLINE ACC mv_conv_global_##SUFFIX(MV_GLOBAL const PIX* src, int stride, int w, int h,  \
                                          int x, int y, MV_CONSTANT ACC* c, int k, int mode,   \
                                          ACC value)                                           \
    {                                                                                          \
        int r = k / 2;                                                                         \
        ACC acc = 0;                                                                           \
        for (int ty = 0; ty < k; ++ty) {                                                       \
            for (int tx = 0; tx < k; ++tx) {                                                   \
                ACC p = mv_fetch_##SUFFIX(src, stride, w, h, x + tx - r, y + ty - r, mode,     \
                                          value);                                              \
                acc = acc + c[ty * k + tx] * p;                                                \
            }                                                                                  \
        }                                                                                      \
        return acc;                                                                            \
    }                                                                                          \
    MV_INLINE ACC mv_conv_tile_##SUFFIX(MV_LOCAL const PIX* t, int pitch, MV_CONSTANT ACC* c,  \
                                        int k)                                                 \
    {                                                                                          \
        ACC acc = 0;                                                                           \
        for (int ty = 0; ty < k; ++ty) {                                                       \
            for (int tx = 0; tx < k; ++tx) {                                                   \
                acc = acc + c[ty * k + tx] * (ACC)t[ty * pitch + tx];                          \
            }                                                                                  \
        }                                                                                      \
        return acc;                                                                            \
    }

/* mv_sep_rows_<T>: horizontal pass of a separable filter over a loaded halo tile: for each of
 * the `th` tile rows and each of the MV_TILE_W output columns, sum kx along the row into `rows`
 * (row pitch MV_TILE_W). Cooperative; a barrier must follow.
 * mv_sep_column_<T>: vertical pass at one output pixel (`t` points at its column in the first
 * row it needs). */
#define MV_DEFINE_SEP(SUFFIX, PIX, ACC)                                                          \
    MV_INLINE void mv_sep_rows_##SUFFIX(MV_LOCAL const PIX* halo, MV_LOCAL ACC* rows,            \
                                        MV_CONSTANT ACC* kx, int kx_len, int th)                 \
    {                                                                                            \
        int n = MV_LSIZE_X * MV_LSIZE_Y;                                                         \
        for (int i = MV_LID_Y * MV_LSIZE_X + MV_LID_X; i < MV_TILE_W * th; i += n) {             \
            int hy = i / MV_TILE_W;                                                              \
            int hx = i - hy * MV_TILE_W;                                                         \
            MV_LOCAL const PIX* p = halo + hy * MV_HALO_W + hx;                                  \
            ACC acc = 0;                                                                         \
            for (int t = 0; t < kx_len; ++t) {                                                   \
                acc = acc + kx[t] * (ACC)p[t];                                                   \
            }                                                                                    \
            rows[i] = acc;                                                                       \
        }                                                                                        \
    }                                                                                            \
    MV_INLINE ACC mv_sep_column_##SUFFIX(MV_LOCAL const ACC* t, MV_CONSTANT ACC* ky, int ky_len) \
    {                                                                                            \
        ACC acc = 0;                                                                             \
        for (int i = 0; i < ky_len; ++i) {                                                       \
            acc = acc + ky[i] * t[i * MV_TILE_W];                                                \
        }                                                                                        \
        return acc;                                                                              \
    }

/* mv_sobel3_<T>: one 3 x 3 Sobel derivative from a halo tile (`t` at the window's top-left):
 * along x ([-1 0 1] on rows, then [1 2 1] down) or along y (transposed), in the CPU's order. */
#define MV_DEFINE_SOBEL(SUFFIX, PIX, ACC)                                                    \
    MV_INLINE ACC mv_sobel3_##SUFFIX(MV_LOCAL const PIX* t, int pitch, int along_x)          \
    {                                                                                        \
        ACC acc = 0;                                                                         \
        for (int ty = 0; ty < 3; ++ty) {                                                     \
            ACC h = 0;                                                                       \
            for (int tx = 0; tx < 3; ++tx) {                                                 \
                ACC cx = along_x ? (ACC)(tx - 1) : (ACC)(tx == 1 ? 2 : 1);                   \
                h = h + cx * (ACC)t[ty * pitch + tx];                                        \
            }                                                                                \
            ACC cy = along_x ? (ACC)(ty == 1 ? 2 : 1) : (ACC)(ty - 1);                       \
            acc = acc + cy * h;                                                              \
        }                                                                                    \
        return acc;                                                                          \
    }

MV_DEFINE_LOAD_HALO(u8, mv_u8, mv_i32)
MV_DEFINE_LOAD_HALO(f32, float, float)
MV_DEFINE_CONV(u8, mv_u8, mv_i32)
MV_DEFINE_CONV(f32, float, float)
MV_DEFINE_SEP(u8, mv_u8, mv_i32)
MV_DEFINE_SEP(f32, float, float)
MV_DEFINE_SOBEL(u8, mv_u8, mv_i32)
MV_DEFINE_SOBEL(f32, float, float)

/* ---- Dense k x k ------------------------------------------------------------------------- */

MV_KERNEL mv_filter2d_u8_naive(MV_GLOBAL const mv_u8* src, int src_stride, MV_GLOBAL mv_u8* dst,
                               int dst_stride, int width, int height, MV_CONSTANT mv_i32* coeffs,
                               int ksize, int shift, int border_mode, int border_value)
{
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    mv_i32 acc = mv_conv_global_u8(src, src_stride, width, height, x, y, coeffs, ksize,
                                   border_mode, border_value);
    dst[y * dst_stride + x] = mv_round_shift_sat_u8(acc, shift);
}

MV_KERNEL mv_filter2d_f32_naive(MV_GLOBAL const float* src, int src_stride, MV_GLOBAL float* dst,
                                int dst_stride, int width, int height, MV_CONSTANT float* coeffs,
                                int ksize, int border_mode, float border_value)
{
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    dst[y * dst_stride + x] = mv_conv_global_f32(src, src_stride, width, height, x, y, coeffs,
                                                 ksize, border_mode, border_value);
}

MV_KERNEL_TILED mv_filter2d_u8_tiled(MV_GLOBAL const mv_u8* src, int src_stride,
                                     MV_GLOBAL mv_u8* dst, int dst_stride, int width, int height,
                                     MV_CONSTANT mv_i32* coeffs, int ksize, int shift,
                                     int border_mode, int border_value)
{
    MV_LOCAL_ARRAY(mv_u8, halo, MV_HALO_W * MV_HALO_H);
    int r = ksize / 2;
    mv_load_halo_u8(halo, MV_HALO_W, src, src_stride, width, height, MV_GROUP_X * MV_TILE_W - r,
                    MV_GROUP_Y * MV_TILE_H - r, MV_TILE_W + ksize - 1, MV_TILE_H + ksize - 1,
                    border_mode, border_value);
    MV_BARRIER();
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    mv_i32 acc =
        mv_conv_tile_u8(halo + MV_LID_Y * MV_HALO_W + MV_LID_X, MV_HALO_W, coeffs, ksize);
    dst[y * dst_stride + x] = mv_round_shift_sat_u8(acc, shift);
}

MV_KERNEL_TILED mv_filter2d_f32_tiled(MV_GLOBAL const float* src, int src_stride,
                                      MV_GLOBAL float* dst, int dst_stride, int width, int height,
                                      MV_CONSTANT float* coeffs, int ksize, int border_mode,
                                      float border_value)
{
    MV_LOCAL_ARRAY(float, halo, MV_HALO_W * MV_HALO_H);
    int r = ksize / 2;
    mv_load_halo_f32(halo, MV_HALO_W, src, src_stride, width, height,
                     MV_GROUP_X * MV_TILE_W - r, MV_GROUP_Y * MV_TILE_H - r,
                     MV_TILE_W + ksize - 1, MV_TILE_H + ksize - 1, border_mode, border_value);
    MV_BARRIER();
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    dst[y * dst_stride + x] =
        mv_conv_tile_f32(halo + MV_LID_Y * MV_HALO_W + MV_LID_X, MV_HALO_W, coeffs, ksize);
}

/* ---- Separable (also box and Gaussian blur) -------------------------------------------- */

/* finish 0: round_shift_sat_u8(acc, shift); finish 1: box mean (acc + area/2) / area (acc >= 0
 * for a box of ones over u8 pixels). */
MV_KERNEL_TILED mv_sep_filter_u8_tiled(MV_GLOBAL const mv_u8* src, int src_stride,
                                       MV_GLOBAL mv_u8* dst, int dst_stride, int width,
                                       int height, MV_CONSTANT mv_i32* kx, int kx_len,
                                       MV_CONSTANT mv_i32* ky, int ky_len, int shift, int finish,
                                       int area, int border_mode, int border_value)
{
    MV_LOCAL_ARRAY(mv_u8, halo, MV_HALO_W * MV_HALO_H);
    MV_LOCAL_ARRAY(mv_i32, rows, MV_TILE_W * MV_HALO_H);
    int th = MV_TILE_H + ky_len - 1;
    mv_load_halo_u8(halo, MV_HALO_W, src, src_stride, width, height,
                    MV_GROUP_X * MV_TILE_W - kx_len / 2, MV_GROUP_Y * MV_TILE_H - ky_len / 2,
                    MV_TILE_W + kx_len - 1, th, border_mode, border_value);
    MV_BARRIER();
    mv_sep_rows_u8(halo, rows, kx, kx_len, th);
    MV_BARRIER();
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    mv_i32 acc = mv_sep_column_u8(rows + MV_LID_Y * MV_TILE_W + MV_LID_X, ky, ky_len);
    dst[y * dst_stride + x] =
        finish == 1 ? (mv_u8)((acc + area / 2) / area) : mv_round_shift_sat_u8(acc, shift);
}

/* dst = acc * scale: scale 1 for filters, 1/k^2 (rounded to f32 by the host) for a box. */
MV_KERNEL_TILED mv_sep_filter_f32_tiled(MV_GLOBAL const float* src, int src_stride,
                                        MV_GLOBAL float* dst, int dst_stride, int width,
                                        int height, MV_CONSTANT float* kx, int kx_len,
                                        MV_CONSTANT float* ky, int ky_len, float scale,
                                        int border_mode, float border_value)
{
    MV_LOCAL_ARRAY(float, halo, MV_HALO_W * MV_HALO_H);
    MV_LOCAL_ARRAY(float, rows, MV_TILE_W * MV_HALO_H);
    int th = MV_TILE_H + ky_len - 1;
    mv_load_halo_f32(halo, MV_HALO_W, src, src_stride, width, height,
                     MV_GROUP_X * MV_TILE_W - kx_len / 2, MV_GROUP_Y * MV_TILE_H - ky_len / 2,
                     MV_TILE_W + kx_len - 1, th, border_mode, border_value);
    MV_BARRIER();
    mv_sep_rows_f32(halo, rows, kx, kx_len, th);
    MV_BARRIER();
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    float acc = mv_sep_column_f32(rows + MV_LID_Y * MV_TILE_W + MV_LID_X, ky, ky_len);
    dst[y * dst_stride + x] = acc * scale;
}

/* ---- Sobel 3 x 3 (both derivatives in one pass over a 1-pixel halo) --------------------- */

MV_KERNEL_TILED mv_sobel_u8(MV_GLOBAL const mv_u8* src, int src_stride, MV_GLOBAL mv_i16* dx,
                            int dx_stride, MV_GLOBAL mv_i16* dy, int dy_stride, int width,
                            int height, int border_mode, int border_value)
{
    MV_LOCAL_ARRAY(mv_u8, halo, (MV_TILE_W + 2) * (MV_TILE_H + 2));
    mv_load_halo_u8(halo, MV_TILE_W + 2, src, src_stride, width, height, MV_GROUP_X * MV_TILE_W - 1,
                    MV_GROUP_Y * MV_TILE_H - 1, MV_TILE_W + 2, MV_TILE_H + 2, border_mode,
                    border_value);
    MV_BARRIER();
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    MV_LOCAL const mv_u8* t = halo + MV_LID_Y * (MV_TILE_W + 2) + MV_LID_X;
    dx[y * dx_stride + x] = mv_sat_i16(mv_sobel3_u8(t, MV_TILE_W + 2, 1));
    dy[y * dy_stride + x] = mv_sat_i16(mv_sobel3_u8(t, MV_TILE_W + 2, 0));
}

MV_KERNEL_TILED mv_sobel_f32(MV_GLOBAL const float* src, int src_stride, MV_GLOBAL float* dx,
                             int dx_stride, MV_GLOBAL float* dy, int dy_stride, int width,
                             int height, int border_mode, float border_value)
{
    MV_LOCAL_ARRAY(float, halo, (MV_TILE_W + 2) * (MV_TILE_H + 2));
    mv_load_halo_f32(halo, MV_TILE_W + 2, src, src_stride, width, height,
                     MV_GROUP_X * MV_TILE_W - 1, MV_GROUP_Y * MV_TILE_H - 1, MV_TILE_W + 2,
                     MV_TILE_H + 2, border_mode, border_value);
    MV_BARRIER();
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    MV_LOCAL const float* t = halo + MV_LID_Y * (MV_TILE_W + 2) + MV_LID_X;
    dx[y * dx_stride + x] = mv_sobel3_f32(t, MV_TILE_W + 2, 1);
    dy[y * dy_stride + x] = mv_sobel3_f32(t, MV_TILE_W + 2, 0);
}
