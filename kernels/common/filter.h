/* Linear filters: dense k x k convolution (naive and tiled), separable convolution (tiled, also
 * box and Gaussian blur) and 3 x 3 Sobel, for u8 (exact i32 fixed point) and f32 images.
 *
 * The arithmetic is the CPU reference's (mvision_core::filter): correlation, kernel centred on
 * the output pixel, integer sums exact in i32 with one rounding at the end, float sums in the
 * same order as the CPU engine (kernel row-major; horizontal before vertical).
 *
 * Tiled kernels run with a work-group of exactly MV_TILE_W x MV_TILE_H (MV_KERNEL_TILED). Each
 * group loads the halo tile its outputs need into local memory once, then computes from it.
 * Local arrays are sized for the largest kernel, MV_MAX_KSIZE, so one program serves every
 * kernel size. The tiled dense and separable filters compute several outputs per work-item (see
 * their section below); the naive filters and Sobel one.
 *
 * Needs border.h and fixed_point.h; from the prelude MV_KERNEL, MV_KERNEL_TILED, MV_GLOBAL,
 * MV_CONSTANT, MV_LOCAL, MV_LOCAL_ARRAY, MV_BARRIER, MV_INLINE, MV_UNROLL, MV_BYTE, MV_PACK4, the
 * MV_GID/LID/GROUP/LSIZE indices, the mv_ types and vector types; generated: MV_MAX_KSIZE,
 * MV_PX_U8, MV_PX_F32, MV_TILE_W, MV_TILE_H. */

#ifndef MV_TILE_W
#define MV_TILE_W 16
#endif
#ifndef MV_TILE_H
#define MV_TILE_H 16
#endif

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

/* Filter coefficients: a dense k x k table (row-major, in MV_MAX_KSIZE^2 slots) or one line of
 * separable taps (MV_MAX_KSIZE slots). With MV_TAPS_BY_VALUE 1 (the CUDA prelude; OpenCL builds
 * where mvision_kernels::FilterTuning::taps_by_value holds) a kernel takes them by value, as a
 * struct the driver fills (zero-padded, plan::Table::by_value): NVIDIA GPUs keep kernel
 * parameters in their constant bank and feed them to the multiply-adds directly, where
 * coefficients read through a pointer cost a load each. Otherwise it takes a pointer to a
 * read-only table the driver uploaded. MV_TAPS_ARG(T, n) / MV_LINE_ARG(T, n) declare the
 * parameter (T: i32 or f32), MV_TAPS_OPEN(T, n), the body's first statement, makes n a
 * MV_TAPS_PTR pointer to the coefficients either way; MV_MMA_ARG(n) / MV_MMA_OPEN(n) the same
 * for the matrix-unit filter's mv_mma_taps. */
typedef struct {
    mv_i32 c[MV_MAX_KSIZE * MV_MAX_KSIZE];
} mv_taps_i32;
typedef struct {
    float c[MV_MAX_KSIZE * MV_MAX_KSIZE];
} mv_taps_f32;
typedef struct {
    mv_i32 c[MV_MAX_KSIZE];
} mv_line_i32;
typedef struct {
    float c[MV_MAX_KSIZE];
} mv_line_f32;
/* The matrix-unit filter's coefficients: byte rows of up to MV_MMA_MAX_K kernel rows of up to 3
 * planes (see its section below). */
typedef struct {
    mv_u32 w[MV_MMA_WORDS];
} mv_mma_taps;
#define MV_ELEM_i32 mv_i32
#define MV_ELEM_f32 float
#ifndef MV_TAPS_BY_VALUE
#define MV_TAPS_BY_VALUE 0
#endif
#if MV_TAPS_BY_VALUE
#define MV_TAPS_PTR const
#define MV_TAPS_ARG(T, n) MV_PARAM_CONST mv_taps_##T n##_v
#define MV_LINE_ARG(T, n) MV_PARAM_CONST mv_line_##T n##_v
#define MV_TAPS_OPEN(T, n) MV_TAPS_PTR MV_ELEM_##T* n = n##_v.c;
#define MV_MMA_ARG(n) MV_PARAM_CONST mv_mma_taps n##_v
#define MV_MMA_OPEN(n) MV_TAPS_PTR mv_u32* n = n##_v.w;
#else
#define MV_TAPS_PTR MV_CONSTANT
#define MV_TAPS_ARG(T, n) MV_CONSTANT MV_ELEM_##T* n
#define MV_LINE_ARG(T, n) MV_CONSTANT MV_ELEM_##T* n
#define MV_TAPS_OPEN(T, n)
#define MV_MMA_ARG(n) MV_CONSTANT mv_u32* n
#define MV_MMA_OPEN(n)
#endif

/* mv_conv_global_<T>: the k x k correlation sum at one output pixel, read straight from global
 * memory (border per tap). Same summation order as the CPU: kernel row-major, acc = acc + c * p. */
#define MV_DEFINE_CONV(SUFFIX, PIX, ACC)                                                      \
    MV_INLINE ACC mv_conv_global_##SUFFIX(MV_GLOBAL const PIX* src, int stride, int w, int h, \
                                          int x, int y, MV_TAPS_PTR ACC* c, int k, int mode,  \
                                          ACC value)                                          \
    {                                                                                         \
        int r = k / 2;                                                                        \
        ACC acc = 0;                                                                          \
        for (int ty = 0; ty < k; ++ty) {                                                      \
            for (int tx = 0; tx < k; ++tx) {                                                  \
                ACC p = mv_fetch_##SUFFIX(src, stride, w, h, x + tx - r, y + ty - r, mode,    \
                                          value);                                             \
                acc = acc + c[ty * k + tx] * p;                                               \
            }                                                                                 \
        }                                                                                     \
        return acc;                                                                           \
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
MV_DEFINE_SOBEL(u8, mv_u8, mv_i32)
MV_DEFINE_SOBEL(f32, float, float)

/* ---- Dense k x k ------------------------------------------------------------------------- */

MV_KERNEL mv_filter2d_u8_naive(MV_GLOBAL const mv_u8* src, int src_stride, MV_GLOBAL mv_u8* dst,
                               int dst_stride, int width, int height, MV_TAPS_ARG(i32, coeffs),
                               int ksize, int shift, int border_mode, int border_value)
{
    MV_TAPS_OPEN(i32, coeffs)
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
                                int dst_stride, int width, int height, MV_TAPS_ARG(f32, coeffs),
                                int ksize, int border_mode, float border_value)
{
    MV_TAPS_OPEN(f32, coeffs)
    int x = MV_GID_X;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    dst[y * dst_stride + x] = mv_conv_global_f32(src, src_stride, width, height, x, y, coeffs,
                                                 ksize, border_mode, border_value);
}

/* ---- Tiled dense and separable filters: several outputs per work-item ------------------ *
 *
 * A work-item of a tiled dense or separable filter computes MV_PX_<T> horizontally adjacent
 * output pixels (MV_PX_U8 = 8, MV_PX_F32 = 4, generated from the host's constants), so a work-group
 * covers (MV_TILE_W * MV_PX_<T>) x MV_TILE_H outputs and the host launches
 * ceil(width / (MV_TILE_W * MV_PX_<T>)) groups along x. Each work-item slides a window of
 * MV_PX_<T> + k - 1 halo pixels, read with aligned wide loads, across one kernel row at a time,
 * so each halo pixel is read once per kernel row instead of once per tap. Kernel sizes 3, 5 and
 * 7 run fully unrolled code (coefficients in registers); every other size runs the same scheme
 * with loops. Summation order per output is unchanged: kernel row-major for dense filters,
 * horizontal then vertical for separable ones. */

#if MV_PX_U8 % 8 != 0 || MV_PX_F32 % 4 != 0
#error "MV_PX_U8 must be a multiple of 8 and MV_PX_F32 a multiple of 4"
#endif

/* Row pitch of the halo tiles (elements): outputs of the group plus room for the largest
 * kernel's apron and for the last window's wide loads, a multiple of 8 bytes (u8) / 16 bytes
 * (f32) so that every work-item's window starts aligned. */
#define MV_HP_U8 (MV_TILE_W * MV_PX_U8 + 16)
#define MV_HP_F32 (MV_TILE_W * MV_PX_F32 + 16)
/* Rows of the largest halo tile. */
#define MV_HR (MV_TILE_H + MV_MAX_KSIZE - 1)
/* Row pitch (elements) of the separable filters' horizontal-pass rows. */
#define MV_RW_U8 (MV_TILE_W * MV_PX_U8)
#define MV_RW_F32 (MV_TILE_W * MV_PX_F32)
/* Halo rows each work-item of a separable filter passes horizontally, at most. */
#define MV_SEP_ITERS ((MV_HR + MV_TILE_H - 1) / MV_TILE_H)
/* The dense filters compute two output rows per work-item: halo rows of their largest tile, and
 * how many each work-item copies, at most. */
#define MV_HR2 (2 * MV_TILE_H + MV_MAX_KSIZE - 1)
#define MV_DENSE_ITERS ((MV_HR2 + MV_TILE_H - 1) / MV_TILE_H)
#define MV_MAXI(a, b) ((a) > (b) ? (a) : (b))
/* Local arrays, in 16-byte vectors (16-byte aligned). The separable filters reuse the halo's
 * memory for the rows of their horizontal pass. */
#define MV_DENSE_U8_VECS ((MV_HP_U8 * MV_HR2 + 15) / 16)
#define MV_DENSE_F32_VECS (MV_HP_F32 * MV_HR2 / 4)
#define MV_SEP_U8_VECS MV_MAXI((MV_HP_U8 * MV_HR + 15) / 16, MV_RW_U8 * MV_HR / 4)
#define MV_SEP_F32_VECS MV_MAXI(MV_HP_F32 * MV_HR / 4, MV_RW_F32 * MV_HR / 4)

/* Columns and rows of the largest halo tile each work-item of a tiled dense or separable filter
 * copies, at most. */
#define MV_FILL_NX(PX) ((PX) + (MV_MAX_KSIZE - 1 + MV_TILE_W - 1) / MV_TILE_W)

/* mv_fill_<T>: the work-group copies the tw x th source window whose top-left pixel is (x0, y0)
 * into `tile` (row pitch `pitch`), without divisions: work-item (lx, ly) copies the pixels
 * (lx + i * MV_TILE_W, ly + j * MV_TILE_H), issuing all its loads before its stores so that
 * they overlap. When the window lies inside the image no border is mapped at all. Every
 * work-item must call it; a barrier must follow. */
#define MV_DEFINE_FILL(SUFFIX, PIX, VAL, PX, MV_FILL_NY)                                         \
    MV_INLINE void mv_fill_##SUFFIX(MV_LOCAL PIX* tile, int pitch, MV_GLOBAL const PIX* src,     \
                                    int stride, int w, int h, int x0, int y0, int tw, int th,    \
                                    int mode, VAL value)                                         \
    {                                                                                            \
        PIX v[MV_FILL_NY][MV_FILL_NX(PX)];                                                       \
        if (x0 >= 0 && y0 >= 0 && x0 + tw <= w && y0 + th <= h) {                               \
            MV_GLOBAL const PIX* s = src + (y0 + MV_LID_Y) * stride + x0 + MV_LID_X;             \
            MV_UNROLL for (int j = 0; j < MV_FILL_NY; ++j)                                       \
            {                                                                                    \
                MV_UNROLL for (int i = 0; i < MV_FILL_NX(PX); ++i)                               \
                {                                                                                \
                    if (MV_LID_Y + j * MV_TILE_H < th && MV_LID_X + i * MV_TILE_W < tw) {        \
                        v[j][i] = s[j * MV_TILE_H * stride + i * MV_TILE_W];                     \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        } else {                                                                                 \
            MV_UNROLL for (int j = 0; j < MV_FILL_NY; ++j)                                       \
            {                                                                                    \
                int sy = mv_border_index(y0 + MV_LID_Y + j * MV_TILE_H, h, mode);                \
                MV_GLOBAL const PIX* s = src + (sy < 0 ? 0 : sy) * stride;                       \
                MV_UNROLL for (int i = 0; i < MV_FILL_NX(PX); ++i)                               \
                {                                                                                \
                    if (MV_LID_Y + j * MV_TILE_H < th && MV_LID_X + i * MV_TILE_W < tw) {        \
                        int sx = mv_border_index(x0 + MV_LID_X + i * MV_TILE_W, w, mode);        \
                        v[j][i] = (sx < 0 || sy < 0) ? (PIX)value : s[sx];                       \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
        MV_LOCAL PIX* d = tile + MV_LID_Y * pitch + MV_LID_X;                                    \
        MV_UNROLL for (int j = 0; j < MV_FILL_NY; ++j)                                           \
        {                                                                                        \
            MV_UNROLL for (int i = 0; i < MV_FILL_NX(PX); ++i)                                   \
            {                                                                                    \
                if (MV_LID_Y + j * MV_TILE_H < th && MV_LID_X + i * MV_TILE_W < tw) {            \
                    d[j * MV_TILE_H * pitch + i * MV_TILE_W] = v[j][i];                          \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }

MV_DEFINE_FILL(u8, mv_u8, mv_i32, MV_PX_U8, MV_SEP_ITERS)
MV_DEFINE_FILL(f32, float, float, MV_PX_F32, MV_SEP_ITERS)
MV_DEFINE_FILL(u8d, mv_u8, mv_i32, MV_PX_U8, MV_DENSE_ITERS)
MV_DEFINE_FILL(f32d, float, float, MV_PX_F32, MV_DENSE_ITERS)

/* The halo tiles of the tiled dense and separable filters: halo column c holds image column
 * xb - MV_APRON(r) + c, where xb is the group's first output column and r the horizontal kernel
 * radius; the apron is r rounded up to a multiple of 4 (at most 8), so that inside the image
 * whole 4-pixel vectors can be copied, and a work-item's window for a kernel of radius r starts
 * MV_APRON(r) - r pixels after its aligned first output column. */
#define MV_APRON(r) (((r) + 3) & ~3)
/* Vectors of 4 pixels per halo row each work-item copies, at most. */
#define MV_FILL_NV(PX) ((PX) / 4 + (16 / 4 + MV_TILE_W - 1) / MV_TILE_W)

/* mv_halo_<T>: fills the halo tile of a group whose first output column is xb, for a kernel of
 * horizontal radius r, with the th source rows from y0 on. Inside the
 * image, with rows and buffer aligned to 4 pixels (16 bytes for f32), by whole vectors; else
 * pixel by pixel with the border applied. Every work-item must call it; a barrier must follow. */
#define MV_DEFINE_HALO(SUFFIX, PIX, VAL, VEC, PX, MV_FILL_NY)                                    \
    MV_INLINE void mv_halo_##SUFFIX(MV_LOCAL PIX* tile, int pitch, MV_GLOBAL const PIX* src,     \
                                    int stride, int w, int h, int xb, int y0, int r, int th,     \
                                    int mode, VAL value)                                         \
    {                                                                                            \
        int a = MV_APRON(r);                                                                     \
        int x0 = xb - a;                                                                         \
        int nv = (MV_TILE_W * PX + 2 * a) / 4;                                                   \
        if ((stride & 3) == 0 && ((mv_u64)src & 15) == 0 && x0 >= 0 && x0 + 4 * nv <= w &&      \
            y0 >= 0 && y0 + th <= h) {                                                           \
            VEC v[MV_FILL_NY][MV_FILL_NV(PX)];                                                   \
            MV_GLOBAL const VEC* s =                                                             \
                (MV_GLOBAL const VEC*)(src + (y0 + MV_LID_Y) * stride + x0) + MV_LID_X;          \
            int vs = stride / 4;                                                                 \
            MV_UNROLL for (int j = 0; j < MV_FILL_NY; ++j)                                       \
            {                                                                                    \
                MV_UNROLL for (int i = 0; i < MV_FILL_NV(PX); ++i)                               \
                {                                                                                \
                    if (MV_LID_Y + j * MV_TILE_H < th && MV_LID_X + i * MV_TILE_W < nv) {        \
                        v[j][i] = s[j * MV_TILE_H * vs + i * MV_TILE_W];                         \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
            MV_LOCAL VEC* d = (MV_LOCAL VEC*)(tile + MV_LID_Y * pitch) + MV_LID_X;               \
            MV_UNROLL for (int j = 0; j < MV_FILL_NY; ++j)                                       \
            {                                                                                    \
                MV_UNROLL for (int i = 0; i < MV_FILL_NV(PX); ++i)                               \
                {                                                                                \
                    if (MV_LID_Y + j * MV_TILE_H < th && MV_LID_X + i * MV_TILE_W < nv) {        \
                        d[j * MV_TILE_H * (pitch / 4) + i * MV_TILE_W] = v[j][i];                \
                    }                                                                            \
                }                                                                                \
            }                                                                                    \
        } else {                                                                                 \
            mv_fill_##SUFFIX(tile + (a - r), pitch, src, stride, w, h, xb - r, y0,               \
                             MV_TILE_W * PX + 2 * r, th, mode, value);                           \
        }                                                                                        \
    }

MV_DEFINE_HALO(u8, mv_u8, mv_i32, mv_u32, MV_PX_U8, MV_SEP_ITERS)
MV_DEFINE_HALO(f32, float, float, mv_f32x4, MV_PX_F32, MV_SEP_ITERS)
MV_DEFINE_HALO(u8d, mv_u8, mv_i32, mv_u32, MV_PX_U8, MV_DENSE_ITERS)
MV_DEFINE_HALO(f32d, float, float, mv_f32x4, MV_PX_F32, MV_DENSE_ITERS)

/* MV_WINDOW_<T>(win, p, n): win[0 .. n) = the n halo pixels from p on (n a multiple of 8 for u8,
 * of 4 for f32; p aligned to 8 / 16 bytes), widened to the accumulator type. */
#define MV_WINDOW_U8(win, p, n)                                                    \
    MV_UNROLL for (int q_ = 0; q_ < (n) / 8; ++q_)                                 \
    {                                                                              \
        mv_u32x2 v_ = ((MV_LOCAL const mv_u32x2*)(p))[q_];                         \
        win[8 * q_ + 0] = (mv_i32)MV_BYTE(v_.x, 0);                                \
        win[8 * q_ + 1] = (mv_i32)MV_BYTE(v_.x, 1);                                \
        win[8 * q_ + 2] = (mv_i32)MV_BYTE(v_.x, 2);                                \
        win[8 * q_ + 3] = (mv_i32)MV_BYTE(v_.x, 3);                                \
        win[8 * q_ + 4] = (mv_i32)MV_BYTE(v_.y, 0);                                \
        win[8 * q_ + 5] = (mv_i32)MV_BYTE(v_.y, 1);                                \
        win[8 * q_ + 6] = (mv_i32)MV_BYTE(v_.y, 2);                                \
        win[8 * q_ + 7] = (mv_i32)MV_BYTE(v_.y, 3);                                \
    }
#define MV_WINDOW_F32(win, p, n)                                                   \
    MV_UNROLL for (int q_ = 0; q_ < (n) / 4; ++q_)                                 \
    {                                                                              \
        mv_f32x4 v_ = ((MV_LOCAL const mv_f32x4*)(p))[q_];                         \
        win[4 * q_ + 0] = v_.x;                                                    \
        win[4 * q_ + 1] = v_.y;                                                    \
        win[4 * q_ + 2] = v_.z;                                                    \
        win[4 * q_ + 3] = v_.w;                                                    \
    }

/* Where a work-item's window for a k-tap row starts after its first output column (k <= 9, the
 * apron being 4), and the window's length, whole wide loads from the aligned first column. */
#define MV_WOFF(k) (4 - (k) / 2)
#define MV_NWIN_U8(k) (((MV_WOFF(k) + MV_PX_U8 + (k) - 1 + 7) / 8) * 8)
#define MV_NWIN_F32(k) (((MV_WOFF(k) + MV_PX_F32 + (k) - 1 + 3) / 4) * 4)

/* mv_dense_<T>_k<K>(t, pitch, c, acc, acc1): the PX dense K x K sums of a work-item's outputs in
 * two consecutive rows (acc: the first, acc1: the next; the K + 1 halo rows they need are read
 * once), t being its first output column in the first halo row it needs (aligned as
 * MV_WINDOW_<T> needs; the windows start MV_WOFF(K) further). mv_dense_<T>_any: one row, any k,
 * with loops, t pointing at the first window itself. */
#define MV_DEFINE_DENSE_K(SUFFIX, PIX, ACC, PX, WINDOW, NWIN, K)                            \
    MV_INLINE void mv_dense_##SUFFIX##_k##K(MV_LOCAL const PIX* t, int pitch,               \
                                            MV_TAPS_PTR ACC* c, ACC* acc, ACC* acc1)        \
    {                                                                                       \
        MV_UNROLL for (int j = 0; j < PX; ++j)                                              \
        {                                                                                   \
            acc[j] = 0;                                                                     \
            acc1[j] = 0;                                                                    \
        }                                                                                   \
        MV_UNROLL for (int ty = 0; ty <= K; ++ty)                                           \
        {                                                                                   \
            ACC win[NWIN(K)];                                                               \
            WINDOW(win, t + ty * pitch, NWIN(K))                                            \
            if (ty < K) {                                                                   \
                MV_UNROLL for (int tx = 0; tx < K; ++tx)                                    \
                {                                                                           \
                    ACC ck = c[ty * K + tx];                                                \
                    MV_UNROLL for (int j = 0; j < PX; ++j)                                  \
                    {                                                                       \
                        acc[j] = acc[j] + ck * win[MV_WOFF(K) + j + tx];                    \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
            if (ty > 0) {                                                                   \
                MV_UNROLL for (int tx = 0; tx < K; ++tx)                                    \
                {                                                                           \
                    ACC ck = c[(ty - 1) * K + tx];                                          \
                    MV_UNROLL for (int j = 0; j < PX; ++j)                                  \
                    {                                                                       \
                        acc1[j] = acc1[j] + ck * win[MV_WOFF(K) + j + tx];                  \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }
#define MV_DEFINE_DENSE_ANY(SUFFIX, PIX, ACC, PX)                                           \
    MV_INLINE void mv_dense_##SUFFIX##_any(MV_LOCAL const PIX* t, int pitch,                \
                                           MV_TAPS_PTR ACC* c, int k, ACC* acc)             \
    {                                                                                       \
        MV_UNROLL for (int j = 0; j < PX; ++j)                                              \
        {                                                                                   \
            acc[j] = 0;                                                                     \
        }                                                                                   \
        for (int ty = 0; ty < k; ++ty) {                                                    \
            for (int tx = 0; tx < k; ++tx) {                                                \
                ACC ck = c[ty * k + tx];                                                    \
                MV_UNROLL for (int j = 0; j < PX; ++j)                                      \
                {                                                                           \
                    acc[j] = acc[j] + ck * (ACC)t[ty * pitch + j + tx];                     \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

/* mv_hrow_<T>_k<K>(p, kx, h): the PX horizontal sums of a separable filter's row pass, p as t
 * above; mv_hrow_<T>_any for any length, p pointing at the first window.
 * mv_vcol_<T>_k<K>(col, ky, acc): the PX vertical sums over the rows array, output j's column
 * being col[j * MV_TILE_W] (rows of pitch RW); mv_vcol_<T>_any for any length. */
#define MV_DEFINE_SEP_K(SUFFIX, PIX, ACC, PX, WINDOW, NWIN, RW, K)                          \
    MV_INLINE void mv_hrow_##SUFFIX##_k##K(MV_LOCAL const PIX* p, MV_TAPS_PTR ACC* kx,      \
                                           ACC* h)                                          \
    {                                                                                       \
        ACC win[NWIN(K)];                                                                   \
        WINDOW(win, p, NWIN(K))                                                             \
        MV_UNROLL for (int j = 0; j < PX; ++j)                                              \
        {                                                                                   \
            h[j] = 0;                                                                       \
        }                                                                                   \
        MV_UNROLL for (int t = 0; t < K; ++t)                                               \
        {                                                                                   \
            ACC ck = kx[t];                                                                 \
            MV_UNROLL for (int j = 0; j < PX; ++j)                                          \
            {                                                                               \
                h[j] = h[j] + ck * win[MV_WOFF(K) + j + t];                                        \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    MV_INLINE void mv_vcol_##SUFFIX##_k##K(MV_LOCAL const ACC* col, MV_TAPS_PTR ACC* ky,    \
                                           ACC* acc)                                        \
    {                                                                                       \
        MV_UNROLL for (int j = 0; j < PX; ++j)                                              \
        {                                                                                   \
            acc[j] = 0;                                                                     \
        }                                                                                   \
        MV_UNROLL for (int i = 0; i < K; ++i)                                               \
        {                                                                                   \
            ACC ck = ky[i];                                                                 \
            MV_UNROLL for (int j = 0; j < PX; ++j)                                          \
            {                                                                               \
                acc[j] = acc[j] + ck * col[i * RW + j * MV_TILE_W];                         \
            }                                                                               \
        }                                                                                   \
    }
#define MV_DEFINE_SEP_ANY(SUFFIX, PIX, ACC, PX, RW)                                         \
    MV_INLINE void mv_hrow_##SUFFIX##_any(MV_LOCAL const PIX* p, MV_TAPS_PTR ACC* kx,       \
                                          int n, ACC* h)                                    \
    {                                                                                       \
        MV_UNROLL for (int j = 0; j < PX; ++j)                                              \
        {                                                                                   \
            h[j] = 0;                                                                       \
        }                                                                                   \
        for (int t = 0; t < n; ++t) {                                                       \
            ACC ck = kx[t];                                                                 \
            MV_UNROLL for (int j = 0; j < PX; ++j)                                          \
            {                                                                               \
                h[j] = h[j] + ck * (ACC)p[j + t];                                           \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
    MV_INLINE void mv_vcol_##SUFFIX##_any(MV_LOCAL const ACC* col, MV_TAPS_PTR ACC* ky,     \
                                          int n, ACC* acc)                                  \
    {                                                                                       \
        MV_UNROLL for (int j = 0; j < PX; ++j)                                              \
        {                                                                                   \
            acc[j] = 0;                                                                     \
        }                                                                                   \
        for (int i = 0; i < n; ++i) {                                                       \
            ACC ck = ky[i];                                                                 \
            MV_UNROLL for (int j = 0; j < PX; ++j)                                          \
            {                                                                               \
                acc[j] = acc[j] + ck * col[i * RW + j * MV_TILE_W];                         \
            }                                                                               \
        }                                                                                   \
    }

MV_DEFINE_DENSE_K(u8, mv_u8, mv_i32, MV_PX_U8, MV_WINDOW_U8, MV_NWIN_U8, 3)
MV_DEFINE_DENSE_K(u8, mv_u8, mv_i32, MV_PX_U8, MV_WINDOW_U8, MV_NWIN_U8, 5)
MV_DEFINE_DENSE_K(u8, mv_u8, mv_i32, MV_PX_U8, MV_WINDOW_U8, MV_NWIN_U8, 7)
MV_DEFINE_DENSE_ANY(u8, mv_u8, mv_i32, MV_PX_U8)
MV_DEFINE_DENSE_K(f32, float, float, MV_PX_F32, MV_WINDOW_F32, MV_NWIN_F32, 3)
MV_DEFINE_DENSE_K(f32, float, float, MV_PX_F32, MV_WINDOW_F32, MV_NWIN_F32, 5)
MV_DEFINE_DENSE_K(f32, float, float, MV_PX_F32, MV_WINDOW_F32, MV_NWIN_F32, 7)
MV_DEFINE_DENSE_ANY(f32, float, float, MV_PX_F32)
MV_DEFINE_SEP_K(u8, mv_u8, mv_i32, MV_PX_U8, MV_WINDOW_U8, MV_NWIN_U8, MV_RW_U8, 3)
MV_DEFINE_SEP_K(u8, mv_u8, mv_i32, MV_PX_U8, MV_WINDOW_U8, MV_NWIN_U8, MV_RW_U8, 5)
MV_DEFINE_SEP_K(u8, mv_u8, mv_i32, MV_PX_U8, MV_WINDOW_U8, MV_NWIN_U8, MV_RW_U8, 7)
MV_DEFINE_SEP_ANY(u8, mv_u8, mv_i32, MV_PX_U8, MV_RW_U8)
MV_DEFINE_SEP_K(f32, float, float, MV_PX_F32, MV_WINDOW_F32, MV_NWIN_F32, MV_RW_F32, 3)
MV_DEFINE_SEP_K(f32, float, float, MV_PX_F32, MV_WINDOW_F32, MV_NWIN_F32, MV_RW_F32, 5)
MV_DEFINE_SEP_K(f32, float, float, MV_PX_F32, MV_WINDOW_F32, MV_NWIN_F32, MV_RW_F32, 7)
MV_DEFINE_SEP_ANY(f32, float, float, MV_PX_F32, MV_RW_F32)

/* mv_store_px_<T>(d, idx, left, o): writes the PX outputs o[] to d[0 .. PX), only those below
 * `left`, with aligned wide stores when all PX are inside the row and element index idx of the
 * image (its buffer being aligned) allows them. */
MV_INLINE void mv_store_px_u8(MV_GLOBAL mv_u8* d, int idx, int left, const mv_u32* o)
{
    if (left >= MV_PX_U8 && (idx & 7) == 0) {
        MV_UNROLL for (int q = 0; q < MV_PX_U8 / 8; ++q)
        {
            mv_u32x2 v;
            v.x = MV_PACK4(o[8 * q + 0], o[8 * q + 1], o[8 * q + 2], o[8 * q + 3]);
            v.y = MV_PACK4(o[8 * q + 4], o[8 * q + 5], o[8 * q + 6], o[8 * q + 7]);
            ((MV_GLOBAL mv_u32x2*)d)[q] = v;
        }
    } else {
        MV_UNROLL for (int j = 0; j < MV_PX_U8; ++j)
        {
            if (j < left) {
                d[j] = (mv_u8)o[j];
            }
        }
    }
}

MV_INLINE void mv_store_px_f32(MV_GLOBAL float* d, int idx, int left, const float* o)
{
    if (left >= MV_PX_F32 && (idx & 3) == 0) {
        MV_UNROLL for (int q = 0; q < MV_PX_F32 / 4; ++q)
        {
            mv_f32x4 v;
            v.x = o[4 * q + 0];
            v.y = o[4 * q + 1];
            v.z = o[4 * q + 2];
            v.w = o[4 * q + 3];
            ((MV_GLOBAL mv_f32x4*)d)[q] = v;
        }
    } else {
        MV_UNROLL for (int j = 0; j < MV_PX_F32; ++j)
        {
            if (j < left) {
                d[j] = o[j];
            }
        }
    }
}

/* The box mean (acc + area/2) / area (acc >= 0), with constant divisors for the common sizes. */
MV_INLINE mv_u32 mv_box_mean(mv_i32 acc, int area)
{
    mv_u32 a = (mv_u32)acc;
    if (area == 9) {
        return (a + 4u) / 9u;
    }
    if (area == 25) {
        return (a + 12u) / 25u;
    }
    if (area == 49) {
        return (a + 24u) / 49u;
    }
    return (mv_u32)((acc + area / 2) / area);
}

/* ---- Dense k x k tiled ------------------------------------------------------------------- */

/* Each work-item computes MV_PX_<T> outputs in each of two consecutive rows: a work-group covers
 * (MV_TILE_W * MV_PX_<T>) x (2 * MV_TILE_H) outputs. */
MV_KERNEL_TILED mv_filter2d_u8_tiled(MV_GLOBAL const mv_u8* src, int src_stride,
                                     MV_GLOBAL mv_u8* dst, int dst_stride, int width, int height,
                                     MV_TAPS_ARG(i32, coeffs), int ksize, int shift,
                                     int border_mode, int border_value)
{
    MV_TAPS_OPEN(i32, coeffs)
    MV_LOCAL_ARRAY(mv_u32x4, smem, MV_DENSE_U8_VECS);
    MV_LOCAL mv_u8* halo = (MV_LOCAL mv_u8*)smem;
    int r = ksize / 2;
    mv_halo_u8d(halo, MV_HP_U8, src, src_stride, width, height,
                MV_GROUP_X * (MV_TILE_W * MV_PX_U8), MV_GROUP_Y * (2 * MV_TILE_H) - r, r,
                2 * MV_TILE_H + 2 * r, border_mode, border_value);
    MV_BARRIER();
    int x = (MV_GROUP_X * MV_TILE_W + MV_LID_X) * MV_PX_U8;
    int y = MV_GROUP_Y * (2 * MV_TILE_H) + 2 * MV_LID_Y;
    if (x >= width || y >= height) {
        return;
    }
    MV_LOCAL const mv_u8* t = halo + (2 * MV_LID_Y) * MV_HP_U8 + MV_LID_X * MV_PX_U8;
    mv_i32 acc[MV_PX_U8];
    mv_i32 acc1[MV_PX_U8];
    if (ksize == 3) {
        mv_dense_u8_k3(t, MV_HP_U8, coeffs, acc, acc1);
    } else if (ksize == 5) {
        mv_dense_u8_k5(t, MV_HP_U8, coeffs, acc, acc1);
    } else if (ksize == 7) {
        mv_dense_u8_k7(t, MV_HP_U8, coeffs, acc, acc1);
    } else {
        mv_dense_u8_any(t + (MV_APRON(r) - r), MV_HP_U8, coeffs, ksize, acc);
        mv_dense_u8_any(t + MV_HP_U8 + (MV_APRON(r) - r), MV_HP_U8, coeffs, ksize, acc1);
    }
    mv_u32 o[MV_PX_U8];
    MV_UNROLL for (int j = 0; j < MV_PX_U8; ++j)
    {
        o[j] = mv_round_shift_sat_u32(acc[j], shift);
    }
    int idx = y * dst_stride + x;
    mv_store_px_u8(dst + idx, idx, width - x, o);
    if (y + 1 < height) {
        MV_UNROLL for (int j = 0; j < MV_PX_U8; ++j)
        {
            o[j] = mv_round_shift_sat_u32(acc1[j], shift);
        }
        idx += dst_stride;
        mv_store_px_u8(dst + idx, idx, width - x, o);
    }
}

MV_KERNEL_TILED mv_filter2d_f32_tiled(MV_GLOBAL const float* src, int src_stride,
                                      MV_GLOBAL float* dst, int dst_stride, int width, int height,
                                      MV_TAPS_ARG(f32, coeffs), int ksize, int border_mode,
                                      float border_value)
{
    MV_TAPS_OPEN(f32, coeffs)
    MV_LOCAL_ARRAY(mv_f32x4, smem, MV_DENSE_F32_VECS);
    MV_LOCAL float* halo = (MV_LOCAL float*)smem;
    int r = ksize / 2;
    mv_halo_f32d(halo, MV_HP_F32, src, src_stride, width, height,
                 MV_GROUP_X * (MV_TILE_W * MV_PX_F32), MV_GROUP_Y * (2 * MV_TILE_H) - r, r,
                 2 * MV_TILE_H + 2 * r, border_mode, border_value);
    MV_BARRIER();
    int x = (MV_GROUP_X * MV_TILE_W + MV_LID_X) * MV_PX_F32;
    int y = MV_GROUP_Y * (2 * MV_TILE_H) + 2 * MV_LID_Y;
    if (x >= width || y >= height) {
        return;
    }
    MV_LOCAL const float* t = halo + (2 * MV_LID_Y) * MV_HP_F32 + MV_LID_X * MV_PX_F32;
    float acc[MV_PX_F32];
    float acc1[MV_PX_F32];
    if (ksize == 3) {
        mv_dense_f32_k3(t, MV_HP_F32, coeffs, acc, acc1);
    } else if (ksize == 5) {
        mv_dense_f32_k5(t, MV_HP_F32, coeffs, acc, acc1);
    } else if (ksize == 7) {
        mv_dense_f32_k7(t, MV_HP_F32, coeffs, acc, acc1);
    } else {
        mv_dense_f32_any(t + (MV_APRON(r) - r), MV_HP_F32, coeffs, ksize, acc);
        mv_dense_f32_any(t + MV_HP_F32 + (MV_APRON(r) - r), MV_HP_F32, coeffs, ksize, acc1);
    }
    int idx = y * dst_stride + x;
    mv_store_px_f32(dst + idx, idx, width - x, acc);
    if (y + 1 < height) {
        idx += dst_stride;
        mv_store_px_f32(dst + idx, idx, width - x, acc1);
    }
}

/* ---- Separable (also box and Gaussian blur) -------------------------------------------- */

/* The horizontal pass of a separable filter: every work-item passes its halo rows MV_LID_Y,
 * MV_LID_Y + MV_TILE_H, ... into registers, then (after a barrier, the rows reusing the halo's
 * memory) stores them so that output column MV_LID_X * PX + j of halo row hy is
 * rows[hy * RW + j * MV_TILE_W + MV_LID_X]: conflict-free for the stores and the vertical pass. */
#define MV_SEP_ROWS(SUFFIX, ACC, PX, HP, RW, halo, rows, kx, kx_len, th)                     \
    {                                                                                        \
        ACC hs_[MV_SEP_ITERS][PX];                                                           \
        MV_UNROLL for (int it_ = 0; it_ < MV_SEP_ITERS; ++it_)                               \
        {                                                                                    \
            int hy_ = MV_LID_Y + it_ * MV_TILE_H;                                            \
            if (hy_ < (th)) {                                                                \
                if ((kx_len) == 3) {                                                         \
                    mv_hrow_##SUFFIX##_k3((halo) + hy_ * (HP) + MV_LID_X * (PX), kx,         \
                                          hs_[it_]);                                         \
                } else if ((kx_len) == 5) {                                                  \
                    mv_hrow_##SUFFIX##_k5((halo) + hy_ * (HP) + MV_LID_X * (PX), kx,         \
                                          hs_[it_]);                                         \
                } else if ((kx_len) == 7) {                                                  \
                    mv_hrow_##SUFFIX##_k7((halo) + hy_ * (HP) + MV_LID_X * (PX), kx,         \
                                          hs_[it_]);                                         \
                } else {                                                                     \
                    mv_hrow_##SUFFIX##_any((halo) + hy_ * (HP) + MV_LID_X * (PX) +           \
                                               (MV_APRON((kx_len) / 2) - (kx_len) / 2),      \
                                           kx, kx_len, hs_[it_]);                            \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        MV_BARRIER();                                                                        \
        MV_UNROLL for (int it_ = 0; it_ < MV_SEP_ITERS; ++it_)                               \
        {                                                                                    \
            int hy_ = MV_LID_Y + it_ * MV_TILE_H;                                            \
            if (hy_ < (th)) {                                                                \
                MV_UNROLL for (int j_ = 0; j_ < PX; ++j_)                                    \
                {                                                                            \
                    (rows)[hy_ * (RW) + j_ * MV_TILE_W + MV_LID_X] = hs_[it_][j_];           \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        MV_BARRIER();                                                                        \
    }

#define MV_SEP_COLS(SUFFIX, RW, rows, ky, ky_len, acc)                                     \
    if ((ky_len) == 3) {                                                                   \
        mv_vcol_##SUFFIX##_k3((rows) + MV_LID_Y * (RW) + MV_LID_X, ky, acc);               \
    } else if ((ky_len) == 5) {                                                            \
        mv_vcol_##SUFFIX##_k5((rows) + MV_LID_Y * (RW) + MV_LID_X, ky, acc);               \
    } else if ((ky_len) == 7) {                                                            \
        mv_vcol_##SUFFIX##_k7((rows) + MV_LID_Y * (RW) + MV_LID_X, ky, acc);               \
    } else {                                                                               \
        mv_vcol_##SUFFIX##_any((rows) + MV_LID_Y * (RW) + MV_LID_X, ky, ky_len, acc);      \
    }

/* finish 0: round_shift_sat_u8(acc, shift); finish 1: box mean (acc + area/2) / area (acc >= 0
 * for a box of ones over u8 pixels). */
MV_KERNEL_TILED mv_sep_filter_u8_tiled(MV_GLOBAL const mv_u8* src, int src_stride,
                                       MV_GLOBAL mv_u8* dst, int dst_stride, int width,
                                       int height, MV_LINE_ARG(i32, kx), int kx_len,
                                       MV_LINE_ARG(i32, ky), int ky_len, int shift, int finish,
                                       int area, int border_mode, int border_value)
{
    MV_TAPS_OPEN(i32, kx)
    MV_TAPS_OPEN(i32, ky)
    MV_LOCAL_ARRAY(mv_u32x4, smem, MV_SEP_U8_VECS);
    MV_LOCAL mv_u8* halo = (MV_LOCAL mv_u8*)smem;
    MV_LOCAL mv_i32* rows = (MV_LOCAL mv_i32*)smem;
    int th = MV_TILE_H + ky_len - 1;
    mv_halo_u8(halo, MV_HP_U8, src, src_stride, width, height, MV_GROUP_X * (MV_TILE_W * MV_PX_U8),
               MV_GROUP_Y * MV_TILE_H - ky_len / 2, kx_len / 2, th, border_mode, border_value);
    MV_BARRIER();
    MV_SEP_ROWS(u8, mv_i32, MV_PX_U8, MV_HP_U8, MV_RW_U8, halo, rows, kx, kx_len, th)
    int x = (MV_GROUP_X * MV_TILE_W + MV_LID_X) * MV_PX_U8;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    mv_i32 acc[MV_PX_U8];
    MV_SEP_COLS(u8, MV_RW_U8, rows, ky, ky_len, acc)
    mv_u32 o[MV_PX_U8];
    if (finish == 1) {
        MV_UNROLL for (int j = 0; j < MV_PX_U8; ++j)
        {
            o[j] = mv_box_mean(acc[j], area);
        }
    } else {
        MV_UNROLL for (int j = 0; j < MV_PX_U8; ++j)
        {
            o[j] = mv_round_shift_sat_u32(acc[j], shift);
        }
    }
    int idx = y * dst_stride + x;
    mv_store_px_u8(dst + idx, idx, width - x, o);
}

/* dst = acc * scale: scale 1 for filters, 1/k^2 (rounded to f32 by the host) for a box. */
MV_KERNEL_TILED mv_sep_filter_f32_tiled(MV_GLOBAL const float* src, int src_stride,
                                        MV_GLOBAL float* dst, int dst_stride, int width,
                                        int height, MV_LINE_ARG(f32, kx), int kx_len,
                                        MV_LINE_ARG(f32, ky), int ky_len, float scale,
                                        int border_mode, float border_value)
{
    MV_TAPS_OPEN(f32, kx)
    MV_TAPS_OPEN(f32, ky)
    MV_LOCAL_ARRAY(mv_f32x4, smem, MV_SEP_F32_VECS);
    MV_LOCAL float* halo = (MV_LOCAL float*)smem;
    MV_LOCAL float* rows = (MV_LOCAL float*)smem;
    int th = MV_TILE_H + ky_len - 1;
    mv_halo_f32(halo, MV_HP_F32, src, src_stride, width, height,
                MV_GROUP_X * (MV_TILE_W * MV_PX_F32), MV_GROUP_Y * MV_TILE_H - ky_len / 2, kx_len / 2, th,
                border_mode, border_value);
    MV_BARRIER();
    MV_SEP_ROWS(f32, float, MV_PX_F32, MV_HP_F32, MV_RW_F32, halo, rows, kx, kx_len, th)
    int x = (MV_GROUP_X * MV_TILE_W + MV_LID_X) * MV_PX_F32;
    int y = MV_GID_Y;
    if (x >= width || y >= height) {
        return;
    }
    float acc[MV_PX_F32];
    MV_SEP_COLS(f32, MV_RW_F32, rows, ky, ky_len, acc)
    MV_UNROLL for (int j = 0; j < MV_PX_F32; ++j)
    {
        acc[j] = acc[j] * scale;
    }
    int idx = y * dst_stride + x;
    mv_store_px_f32(dst + idx, idx, width - x, acc);
}

/* ---- Streaming filters (register windows, no local memory) ------------------------------- */

/* Each work-item computes MV_SPX adjacent outputs in each of MV_STREAM_ROWS consecutive rows,
 * for square separable kernels of size 3, 5 or 7 and dense 3 x 3 ones (the host launches these
 * kernels only then). It reads
 * the MV_STREAM_ROWS + K - 1 source rows its outputs need straight from global memory (through
 * the cache), one row at a time -- inside the image with three aligned 4-pixel loads, at the
 * border pixel by pixel through column indices mapped once -- and adds each row into the
 * running sums of the K output rows that use it, kept in a ring of K register rows; an output
 * row is finished and stored as soon as its last source row has been added. The row loop is
 * unrolled K rows at a time (so ring slots are constants) and no more, which keeps the code
 * small. No local memory, no barrier: the work-group shape only groups work-items. Summation
 * order per output is the CPU's (dense: kernel row-major; separable: horizontal then vertical,
 * each from 0 in tap order), so integer results are exact and float ones identical. */

#ifndef MV_STREAM_ROWS
#define MV_STREAM_ROWS 4
#endif
#define MV_SPX 4
/* Pixels of a window row, at most (radius 3). */
#define MV_SWIN (MV_SPX + 6)

/* The columns a work-item at x (a multiple of 4) reads for a kernel of radius r <= 3: cols[i]
 * = border-mapped x - r + i, -1 for the constant border; returns whether the 12 pixels
 * x - 4 .. x + 7 are inside and each row of them can be read with three aligned 4-pixel loads
 * (u8: 4-byte words, `align` 4; f32: 16-byte vectors, `align` 16), cols[] being unused then. */
MV_INLINE int mv_scols(MV_GLOBAL const void* src, int stride, int w, int x, int r, int mode,
                       int align, int* cols)
{
    if (x >= 4 && x + 8 <= w && (stride & 3) == 0 && ((mv_u64)src & (mv_u64)(align - 1)) == 0) {
        return 1;
    }
    MV_UNROLL for (int i = 0; i < MV_SWIN; ++i)
    {
        cols[i] = i < MV_SPX + 2 * r ? mv_border_index(x - r + i, w, mode) : 0;
    }
    return 0;
}

/* mv_swin_<T>(src, stride, h, x, yy, r, fast, cols, mode, value, win): win[0 .. MV_SPX + 2r) =
 * the pixels x - r .. x + MV_SPX - 1 + r of source row yy (border applied on both axes; fast
 * and cols from mv_scols; r a constant after inlining). */
#define MV_DEFINE_SWIN(SUFFIX, PIX, ACC, LOAD12)                                                 \
    MV_INLINE void mv_swin_##SUFFIX(MV_GLOBAL const PIX* src, int stride, int h, int x, int yy,  \
                                    int r, int fast, const int* cols, int mode, ACC value,       \
                                    ACC* win)                                                    \
    {                                                                                            \
        int sy = (yy >= 0 && yy < h) ? yy : mv_border_index(yy, h, mode);                       \
        MV_GLOBAL const PIX* row = src + (sy < 0 ? 0 : sy) * stride;                             \
        if (fast && sy >= 0) {                                                                   \
            ACC q[12];                                                                           \
            LOAD12(row + x - 4, q)                                                               \
            MV_UNROLL for (int i = 0; i < MV_SPX + 2 * r; ++i)                                   \
            {                                                                                    \
                win[i] = q[4 - r + i];                                                           \
            }                                                                                    \
        } else {                                                                                 \
            MV_UNROLL for (int i = 0; i < MV_SPX + 2 * r; ++i)                                   \
            {                                                                                    \
                int sx = fast ? x - r + i : cols[i];                                             \
                win[i] = (sy < 0 || sx < 0) ? value : (ACC)row[sx];                              \
            }                                                                                    \
        }                                                                                        \
    }
#define MV_LOAD12_U8(p, q)                                                 \
    {                                                                      \
        MV_GLOBAL const mv_u32* w_ = (MV_GLOBAL const mv_u32*)(p);         \
        MV_UNROLL for (int v_ = 0; v_ < 3; ++v_)                           \
        {                                                                  \
            mv_u32 t_ = w_[v_];                                            \
            q[4 * v_ + 0] = (mv_i32)MV_BYTE(t_, 0);                        \
            q[4 * v_ + 1] = (mv_i32)MV_BYTE(t_, 1);                        \
            q[4 * v_ + 2] = (mv_i32)MV_BYTE(t_, 2);                        \
            q[4 * v_ + 3] = (mv_i32)MV_BYTE(t_, 3);                        \
        }                                                                  \
    }
#define MV_LOAD12_F32(p, q)                                                \
    {                                                                      \
        MV_GLOBAL const mv_f32x4* w_ = (MV_GLOBAL const mv_f32x4*)(p);     \
        MV_UNROLL for (int v_ = 0; v_ < 3; ++v_)                           \
        {                                                                  \
            mv_f32x4 t_ = w_[v_];                                          \
            q[4 * v_ + 0] = t_.x;                                          \
            q[4 * v_ + 1] = t_.y;                                          \
            q[4 * v_ + 2] = t_.z;                                          \
            q[4 * v_ + 3] = t_.w;                                          \
        }                                                                  \
    }
MV_DEFINE_SWIN(u8, mv_u8, mv_i32, MV_LOAD12_U8)
MV_DEFINE_SWIN(f32, float, float, MV_LOAD12_F32)

/* The MV_SPX outputs o[] of one row at d (element index idx of its image), those below `left`:
 * one aligned wide store when all are inside and idx allows it. */
MV_INLINE void mv_sstore_u8(MV_GLOBAL mv_u8* d, int idx, int left, const mv_u32* o)
{
    if (left >= MV_SPX && (idx & 3) == 0) {
        *(MV_GLOBAL mv_u32*)d = MV_PACK4(o[0], o[1], o[2], o[3]);
    } else {
        MV_UNROLL for (int j = 0; j < MV_SPX; ++j)
        {
            if (j < left) {
                d[j] = (mv_u8)o[j];
            }
        }
    }
}

MV_INLINE void mv_sstore_f32(MV_GLOBAL float* d, int idx, int left, const float* o)
{
    if (left >= MV_SPX && (idx & 3) == 0) {
        mv_f32x4 v;
        v.x = o[0];
        v.y = o[1];
        v.z = o[2];
        v.w = o[3];
        *(MV_GLOBAL mv_f32x4*)d = v;
    } else {
        MV_UNROLL for (int j = 0; j < MV_SPX; ++j)
        {
            if (j < left) {
                d[j] = o[j];
            }
        }
    }
}

/* The ring slot of output row o when input row i = base + u (base a multiple of K) arrives and
 * o = i - t: (u - t) mod K, a constant inside the unrolled loop. */
#define MV_SLOT(u, t, K) (((u) - (t) + (K)) % (K))

/* The arguments every streaming work-item function takes after its own. */
#define MV_SARGS                                                                             \
    MV_GLOBAL const PIX *src, int ss, MV_GLOBAL PIX *dst, int ds, int w, int h, int x, int y0, \
        int fast, const int *cols, int mode, ACC value

/* The row loop of a streaming work-item: ROW adds window row i (ring position u = i mod K) into
 * the sums, DONE finishes the output row whose last source row i is, from ring slot
 * MV_SLOT(u, K - 1, K), into o_[]. A work-item whose source rows and columns are all inside
 * runs it fully unrolled with unconditional aligned loads (no border, no bounds: every load can
 * be issued early); the others run it K rows at a time with the border applied. */
#define MV_LOAD12_u8 MV_LOAD12_U8
#define MV_LOAD12_f32 MV_LOAD12_F32
#define MV_STREAM_LOOP(SUFFIX, K, OUT, ROW, DONE)                                           \
    MV_STREAM_LOOP_F(SUFFIX, K, OUT, MV_FAST_WIN(SUFFIX, K) ROW, ROW, DONE)
/* The window of a fast work-item's row i: the 12 pixels at rp_ (aligned), from x - K/2 on. */
#define MV_FAST_WIN(SUFFIX, K)                                                              \
    ACC win[MV_SPX + K - 1];                                                                \
    {                                                                                       \
        ACC q[12];                                                                          \
        MV_LOAD12_##SUFFIX(rp_, q)                                                          \
        MV_UNROLL for (int n = 0; n < MV_SPX + K - 1; ++n)                                  \
        {                                                                                   \
            win[n] = q[4 - K / 2 + n];                                                      \
        }                                                                                   \
    }
/* MV_STREAM_LOOP with FASTROW, not the window and ROW, as the fast work-items' row step: it
 * reads row i's 12 pixels x - 4 .. x + 7 from rp_ (4-pixel aligned, all inside). */
#define MV_STREAM_LOOP_F(SUFFIX, K, OUT, FASTROW, ROW, DONE)                                \
    if (fast && y0 - K / 2 >= 0 && y0 + MV_STREAM_ROWS + K / 2 <= h) {                      \
        MV_GLOBAL const PIX* p_ = src + (y0 - K / 2) * ss + x - 4;                          \
        MV_UNROLL for (int i = 0; i < MV_STREAM_ROWS + K - 1; ++i)                          \
        {                                                                                   \
            int u = i % K;                                                                  \
            MV_GLOBAL const PIX* rp_ = p_ + i * ss;                                         \
            FASTROW                                                                         \
            if (i >= K - 1) {                                                               \
                OUT o_[MV_SPX];                                                             \
                DONE                                                                        \
                int idx = (y0 + i - (K - 1)) * ds + x;                                      \
                mv_sstore_##SUFFIX(dst + idx, idx, MV_SPX, o_);                             \
            }                                                                               \
        }                                                                                   \
    } else {                                                                                \
        MV_NO_UNROLL for (int base = 0; base < MV_STREAM_ROWS + K - 1; base += K)           \
        {                                                                                   \
            MV_UNROLL for (int u = 0; u < K; ++u)                                           \
            {                                                                               \
                int i = base + u;                                                           \
                if (i < MV_STREAM_ROWS + K - 1) {                                           \
                    ACC win[MV_SPX + K - 1];                                                \
                    mv_swin_##SUFFIX(src, ss, h, x, y0 - K / 2 + i, K / 2, fast, cols,      \
                                     mode, value, win);                                     \
                    ROW                                                                     \
                    if (i >= K - 1 && y0 + i - (K - 1) < h) {                               \
                        OUT o_[MV_SPX];                                                     \
                        DONE                                                                \
                        int idx = (y0 + i - (K - 1)) * ds + x;                              \
                        mv_sstore_##SUFFIX(dst + idx, idx, w - x, o_);                      \
                    }                                                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    }

/* Packed-product rows (the _dp kernels, u8 with coefficients that fit 16 bits). A K-tap row sum
 * at output j of a fast work-item reads bytes s = 4 + j - K/2 .. s + K - 1 of the row's three
 * aligned words wd[]; it takes them two at a time, as the (K + 1) / 2 byte pairs 2h, 2h + 1 from
 * h = s / 2 on, each with one mv_dp2a: the pair's coefficients are MV_DP_PAIRS' pe[m] = (c[2m],
 * c[2m + 1]) when s is even and po[m] = (c[2m - 1], c[2m]) when it is odd (c[-1] = c[K] = 0).
 * Integer sums are exact in any order, so the results are those of the plain kernels. */
#define MV_DP_PAIRS(c, K, pe, po)                                                           \
    mv_u32 pe[(K + 1) / 2];                                                                 \
    mv_u32 po[(K + 1) / 2];                                                                 \
    MV_UNROLL for (int m = 0; m < (K + 1) / 2; ++m)                                         \
    {                                                                                       \
        pe[m] = mv_pack16((c)[2 * m], 2 * m + 1 < K ? (c)[2 * m + 1] : 0);                  \
        po[m] = mv_pack16(m > 0 ? (c)[2 * m - 1] : 0, (c)[2 * m]);                          \
    }
/* The three words of a fast row (rp_). */
#define MV_DP_WORDS(wd)                                                                     \
    mv_u32 wd[3];                                                                           \
    {                                                                                       \
        MV_GLOBAL const mv_u32* w_ = (MV_GLOBAL const mv_u32*)rp_;                          \
        wd[0] = w_[0];                                                                      \
        wd[1] = w_[1];                                                                      \
        wd[2] = w_[2];                                                                      \
    }
/* acc + the K-tap sum of output j from the words wd[] (pe / po from MV_DP_PAIRS). */
MV_INLINE mv_i32 mv_dp_row(const mv_u32* wd, const mv_u32* pe, const mv_u32* po, int k, int j,
                           mv_i32 acc)
{
    int s = 4 + j - k / 2;
    MV_UNROLL for (int m = 0; m < (k + 1) / 2; ++m)
    {
        int hh = (s >> 1) + m;
        acc = MV_DP2A((s & 1) ? po[m] : pe[m], wd[hh >> 1], acc, hh & 1);
    }
    return acc;
}

/* mv_sdense_u8_k<K>: the dense fixed-point K x K filter of work-item (x, y0); with DP 1 the
 * fast work-items take packed products (mv_dp_row). */
#define PIX mv_u8
#define ACC mv_i32
/* Adds row i's contributions (window win) to the output rows that use it. */
#define MV_SDENSE_ROW(K)                                                                      \
    MV_UNROLL for (int ty = 0; ty < K; ++ty) {                                                \
        if (i - ty >= 0 && i - ty < MV_STREAM_ROWS) {                                         \
            MV_UNROLL for (int j = 0; j < MV_SPX; ++j)                                        \
            {                                                                                 \
                ACC s = ty == 0 ? 0 : acc[MV_SLOT(u, ty, K)][j];                              \
                MV_UNROLL for (int tx = 0; tx < K; ++tx)                                      \
                {                                                                             \
                    s = s + ck[ty * K + tx] * win[j + tx];                                    \
                }                                                                             \
                acc[MV_SLOT(u, ty, K)][j] = s;                                                \
            }                                                                                 \
        }                                                                                     \
    }
/* The same from the words wd[] of a fast row, kernel row ty's pairs at dpe[ty], dpo[ty]. */
#define MV_SDENSE_DP_ROW(K)                                                                   \
    MV_DP_WORDS(wd)                                                                           \
    MV_UNROLL for (int ty = 0; ty < K; ++ty) {                                                \
        if (i - ty >= 0 && i - ty < MV_STREAM_ROWS) {                                         \
            MV_UNROLL for (int j = 0; j < MV_SPX; ++j)                                        \
            {                                                                                 \
                mv_i32 s = ty == 0 ? 0 : acc[MV_SLOT(u, ty, K)][j];                           \
                acc[MV_SLOT(u, ty, K)][j] = mv_dp_row(wd, dpe[ty], dpo[ty], K, j, s);         \
            }                                                                                 \
        }                                                                                     \
    }
/* Output row DONE of the ring: o_[j] = FINISH of its sum `a`. */
#define MV_SDENSE_DONE(K, FINISH)                                                             \
    MV_UNROLL for (int j = 0; j < MV_SPX; ++j) {                                              \
        ACC a = acc[MV_SLOT(u, K - 1, K)][j];                                                 \
        o_[j] = FINISH;                                                                       \
    }
/* The coefficients c in registers (ck) and the ring of K accumulator rows. */
#define MV_SDENSE_TAPS(K)                                                                     \
    ACC ck[K * K];                                                                            \
    MV_UNROLL for (int t = 0; t < K * K; ++t)                                                 \
    {                                                                                         \
        ck[t] = c[t];                                                                         \
    }                                                                                         \
    ACC acc[K][MV_SPX];
#define MV_SDENSE_U8_FINISH mv_round_shift_sat_u32(a, shift)
#define MV_DEFINE_SDENSE_U8(K)                                                                \
    MV_INLINE void mv_sdense_u8_k##K(MV_TAPS_PTR mv_i32* c, int shift, MV_SARGS)              \
    {                                                                                         \
        MV_SDENSE_TAPS(K)                                                                     \
        MV_STREAM_LOOP(u8, K, mv_u32, MV_SDENSE_ROW(K),                                       \
                       MV_SDENSE_DONE(K, MV_SDENSE_U8_FINISH))                                \
    }                                                                                         \
    MV_INLINE void mv_sdense_u8dp_k##K(MV_TAPS_PTR mv_i32* c, int shift, MV_SARGS)            \
    {                                                                                         \
        MV_SDENSE_TAPS(K)                                                                     \
        mv_u32 dpe[K][(K + 1) / 2];                                                           \
        mv_u32 dpo[K][(K + 1) / 2];                                                           \
        MV_UNROLL for (int ty = 0; ty < K; ++ty)                                              \
        {                                                                                     \
            MV_DP_PAIRS(ck + ty * K, K, pe, po)                                               \
            MV_UNROLL for (int m = 0; m < (K + 1) / 2; ++m)                                   \
            {                                                                                 \
                dpe[ty][m] = pe[m];                                                           \
                dpo[ty][m] = po[m];                                                           \
            }                                                                                 \
        }                                                                                     \
        MV_STREAM_LOOP_F(u8, K, mv_u32, MV_SDENSE_DP_ROW(K), MV_SDENSE_ROW(K),                \
                         MV_SDENSE_DONE(K, MV_SDENSE_U8_FINISH))                              \
    }
MV_DEFINE_SDENSE_U8(3)
#undef PIX
#undef ACC

/* mv_sdense_f32_k<K>: the dense float K x K filter of work-item (x, y0), in the tiled kernel's
 * (and the CPU's) order: each output from 0, kernel rows top down, taps left to right. */
#define PIX float
#define ACC float
MV_INLINE void mv_sdense_f32_k3(MV_TAPS_PTR float* c, MV_SARGS)
{
    MV_SDENSE_TAPS(3)
    MV_STREAM_LOOP(f32, 3, float, MV_SDENSE_ROW(3), MV_SDENSE_DONE(3, a))
}
#undef PIX
#undef ACC

/* mv_ssep_<T>_k<K>: the separable K x K filter of work-item (x, y0); FINISH makes an output
 * from its sum `a`. mv_ssep_u8dp_k<K>: the same for u8 with the fast work-items' horizontal
 * sums from packed products (mv_dp_row). */
/* The horizontal sums hs[] of row i from its window win. */
#define MV_SSEP_HS(K)                                                                         \
    ACC hs[MV_SPX];                                                                           \
    MV_UNROLL for (int j = 0; j < MV_SPX; ++j) {                                              \
        ACC s = 0;                                                                            \
        MV_UNROLL for (int tx = 0; tx < K; ++tx)                                              \
        {                                                                                     \
            s = s + cx[tx] * win[j + tx];                                                     \
        }                                                                                     \
        hs[j] = s;                                                                            \
    }
/* The same from the words of a fast row. */
#define MV_SSEP_DP_HS(K)                                                                      \
    MV_DP_WORDS(wd)                                                                           \
    ACC hs[MV_SPX];                                                                           \
    MV_UNROLL for (int j = 0; j < MV_SPX; ++j) {                                              \
        hs[j] = mv_dp_row(wd, pe, po, K, j, 0);                                               \
    }
/* Adds hs[] times the vertical taps into the output rows that use row i. */
#define MV_SSEP_V(K)                                                                          \
    MV_UNROLL for (int ty = 0; ty < K; ++ty) {                                                \
        if (i - ty >= 0 && i - ty < MV_STREAM_ROWS) {                                         \
            MV_UNROLL for (int j = 0; j < MV_SPX; ++j)                                        \
            {                                                                                 \
                ACC s = ty == 0 ? 0 : acc[MV_SLOT(u, ty, K)][j];                              \
                acc[MV_SLOT(u, ty, K)][j] = s + cy[ty] * hs[j];                               \
            }                                                                                 \
        }                                                                                     \
    }
#define MV_SSEP_DONE(K, FINISH)                                                               \
    MV_UNROLL for (int j = 0; j < MV_SPX; ++j) {                                              \
        ACC a = acc[MV_SLOT(u, K - 1, K)][j];                                                 \
        o_[j] = FINISH;                                                                       \
    }
#define MV_SSEP_TAPS(K)                                                                       \
    ACC cx[K];                                                                                \
    ACC cy[K];                                                                                \
    MV_UNROLL for (int t = 0; t < K; ++t)                                                     \
    {                                                                                         \
        cx[t] = kx[t];                                                                        \
        cy[t] = ky[t];                                                                        \
    }                                                                                         \
    ACC acc[K][MV_SPX];
#define MV_DEFINE_SSEP(SUFFIX, OUT, K, FINISH_ARGS, FINISH)                                   \
    MV_INLINE void mv_ssep_##SUFFIX##_k##K(MV_TAPS_PTR ACC* kx, MV_TAPS_PTR ACC* ky,          \
                                           FINISH_ARGS, MV_SARGS)                             \
    {                                                                                         \
        MV_SSEP_TAPS(K)                                                                       \
        MV_STREAM_LOOP(SUFFIX, K, OUT, MV_SSEP_HS(K) MV_SSEP_V(K), MV_SSEP_DONE(K, FINISH))   \
    }
#define MV_DEFINE_SSEP_DP(K, FINISH_ARGS, FINISH)                                             \
    MV_INLINE void mv_ssep_u8dp_k##K(MV_TAPS_PTR ACC* kx, MV_TAPS_PTR ACC* ky, FINISH_ARGS,   \
                                     MV_SARGS)                                                \
    {                                                                                         \
        MV_SSEP_TAPS(K)                                                                       \
        MV_DP_PAIRS(cx, K, pe, po)                                                            \
        MV_STREAM_LOOP_F(u8, K, mv_u32, MV_SSEP_DP_HS(K) MV_SSEP_V(K),                        \
                         MV_SSEP_HS(K) MV_SSEP_V(K), MV_SSEP_DONE(K, FINISH))                 \
    }
#define PIX mv_u8
#define ACC mv_i32
#define MV_SSEP_U8_ARGS int shift, int finish, int area
#define MV_SSEP_U8_FINISH (finish == 1 ? mv_box_mean(a, area) : mv_round_shift_sat_u32(a, shift))
MV_DEFINE_SSEP(u8, mv_u32, 3, MV_SSEP_U8_ARGS, MV_SSEP_U8_FINISH)
MV_DEFINE_SSEP(u8, mv_u32, 5, MV_SSEP_U8_ARGS, MV_SSEP_U8_FINISH)
MV_DEFINE_SSEP(u8, mv_u32, 7, MV_SSEP_U8_ARGS, MV_SSEP_U8_FINISH)
MV_DEFINE_SSEP_DP(3, MV_SSEP_U8_ARGS, MV_SSEP_U8_FINISH)
MV_DEFINE_SSEP_DP(5, MV_SSEP_U8_ARGS, MV_SSEP_U8_FINISH)
MV_DEFINE_SSEP_DP(7, MV_SSEP_U8_ARGS, MV_SSEP_U8_FINISH)
#undef PIX
#undef ACC
#define PIX float
#define ACC float
MV_DEFINE_SSEP(f32, float, 3, float scale, a * scale)
MV_DEFINE_SSEP(f32, float, 5, float scale, a * scale)
MV_DEFINE_SSEP(f32, float, 7, float scale, a * scale)
#undef PIX
#undef ACC

/* The streaming kernels take the tiled kernels' arguments; ksize is 3, kx_len == ky_len 3, 5 or 7
 * (anything else writes nothing). One work-item per MV_SPX x MV_STREAM_ROWS outputs; on CUDA
 * capped at 64 registers (MV_KERNEL_LEAN): with more, too few work-items fit an SM to hide the
 * loads' latency (measured on the H200). */
/* The dense streaming kernels' parameters and body (FN##3: the work-item function). */
#define MV_FILTER2D_U8_STREAM_PARAMS                                                           \
    MV_GLOBAL const mv_u8 *src, int src_stride, MV_GLOBAL mv_u8 *dst, int dst_stride,          \
        int width, int height, MV_TAPS_ARG(i32, coeffs), int ksize, int shift,               \
        int border_mode, int border_value
#define MV_FILTER2D_U8_STREAM_BODY(FN)                                                         \
    MV_TAPS_OPEN(i32, coeffs)                                                                  \
    int x = MV_GID_X * MV_SPX;                                                                 \
    int y0 = MV_GID_Y * MV_STREAM_ROWS;                                                        \
    if (x >= width || y0 >= height) {                                                          \
        return;                                                                                \
    }                                                                                          \
    int cols[MV_SWIN];                                                                         \
    int fast = mv_scols(src, src_stride, width, x, ksize / 2, border_mode, 4, cols);           \
    if (ksize == 3) {                                                                          \
        FN##3(coeffs, shift, src, src_stride, dst, dst_stride, width, height, x, y0, fast,     \
              cols, border_mode, border_value);                                                \
    }
/* The separable streaming u8 kernels' parameters and body. */
#define MV_SEP_U8_STREAM_PARAMS                                                                \
    MV_GLOBAL const mv_u8 *src, int src_stride, MV_GLOBAL mv_u8 *dst, int dst_stride,          \
        int width, int height, MV_LINE_ARG(i32, kx), int kx_len, MV_LINE_ARG(i32, ky),      \
        int ky_len, int shift, int finish, int area, int border_mode, int border_value
#define MV_SEP_U8_STREAM_CALL(FN)                                                              \
    FN(kx, ky, shift, finish, area, src, src_stride, dst, dst_stride, width, height, x, y0,    \
       fast, cols, border_mode, border_value)
#define MV_SEP_U8_STREAM_BODY(FN)                                                              \
    MV_TAPS_OPEN(i32, kx)                                                                      \
    MV_TAPS_OPEN(i32, ky)                                                                      \
    int x = MV_GID_X * MV_SPX;                                                                 \
    int y0 = MV_GID_Y * MV_STREAM_ROWS;                                                        \
    if (x >= width || y0 >= height || kx_len != ky_len) {                                      \
        return;                                                                                \
    }                                                                                          \
    int cols[MV_SWIN];                                                                         \
    int fast = mv_scols(src, src_stride, width, x, kx_len / 2, border_mode, 4, cols);          \
    if (kx_len == 3) {                                                                         \
        MV_SEP_U8_STREAM_CALL(FN##3);                                                          \
    } else if (kx_len == 5) {                                                                  \
        MV_SEP_U8_STREAM_CALL(FN##5);                                                          \
    } else if (kx_len == 7) {                                                                  \
        MV_SEP_U8_STREAM_CALL(FN##7);                                                          \
    }

MV_KERNEL_LEAN mv_filter2d_u8_stream(MV_FILTER2D_U8_STREAM_PARAMS)
{
    MV_FILTER2D_U8_STREAM_BODY(mv_sdense_u8_k)
}

MV_KERNEL_LEAN mv_sep_filter_u8_stream(MV_SEP_U8_STREAM_PARAMS)
{
    MV_SEP_U8_STREAM_BODY(mv_ssep_u8_k)
}

/* The _dp twins: the same outputs, the fast work-items' row sums from packed products
 * (mv_dp2a); the host runs them only with coefficients (the dense ones, the horizontal
 * separable ones) within -32768 .. 32767, where the device has the instruction (or when told
 * to, for tests: then mv_dp2a_soft computes the same sums). */
MV_KERNEL_LEAN mv_filter2d_u8_stream_dp(MV_FILTER2D_U8_STREAM_PARAMS)
{
    MV_FILTER2D_U8_STREAM_BODY(mv_sdense_u8dp_k)
}

MV_KERNEL_LEAN mv_sep_filter_u8_stream_dp(MV_SEP_U8_STREAM_PARAMS)
{
    MV_SEP_U8_STREAM_BODY(mv_ssep_u8dp_k)
}

MV_KERNEL_LEAN mv_filter2d_f32_stream(MV_GLOBAL const float* src, int src_stride,
                                      MV_GLOBAL float* dst, int dst_stride, int width,
                                      int height, MV_TAPS_ARG(f32, coeffs), int ksize,
                                      int border_mode, float border_value)
{
    MV_TAPS_OPEN(f32, coeffs)
    int x = MV_GID_X * MV_SPX;
    int y0 = MV_GID_Y * MV_STREAM_ROWS;
    if (x >= width || y0 >= height) {
        return;
    }
    int cols[MV_SWIN];
    int fast = mv_scols(src, src_stride, width, x, ksize / 2, border_mode, 16, cols);
    if (ksize == 3) {
        mv_sdense_f32_k3(coeffs, src, src_stride, dst, dst_stride, width, height, x, y0, fast,
                         cols, border_mode, border_value);
    }
}

/* One separable f32 streaming kernel per tap count (the host picks it by kx_len): each compiles
 * only its own path, and the 5-tap one alone ran box 5 f32 at 3840 x 2160 1.03x (CUDA) and 1.06x
 * (NVIDIA OpenCL) the single kernel that held all three paths, at the same 64 registers
 * (BENCHMARKS.md, fourteenth session). Anything but kx_len == ky_len == K writes nothing. */
#define MV_SEP_F32_STREAM_PARAMS                                                               \
    MV_GLOBAL const float *src, int src_stride, MV_GLOBAL float *dst, int dst_stride, int width, \
        int height, MV_LINE_ARG(f32, kx), int kx_len, MV_LINE_ARG(f32, ky), int ky_len,          \
        float scale, int border_mode, float border_value
#define MV_SEP_F32_STREAM_BODY(K)                                                              \
    MV_TAPS_OPEN(f32, kx)                                                                      \
    MV_TAPS_OPEN(f32, ky)                                                                      \
    int x = MV_GID_X * MV_SPX;                                                                 \
    int y0 = MV_GID_Y * MV_STREAM_ROWS;                                                        \
    if (x >= width || y0 >= height || kx_len != K || ky_len != K) {                            \
        return;                                                                                \
    }                                                                                          \
    int cols[MV_SWIN];                                                                         \
    int fast = mv_scols(src, src_stride, width, x, K / 2, border_mode, 16, cols);              \
    mv_ssep_f32_k##K(kx, ky, scale, src, src_stride, dst, dst_stride, width, height, x, y0,   \
                     fast, cols, border_mode, border_value);

MV_KERNEL_LEAN mv_sep_filter_f32_stream_k3(MV_SEP_F32_STREAM_PARAMS)
{
    MV_SEP_F32_STREAM_BODY(3)
}

MV_KERNEL_LEAN mv_sep_filter_f32_stream_k5(MV_SEP_F32_STREAM_PARAMS)
{
    MV_SEP_F32_STREAM_BODY(5)
}

MV_KERNEL_LEAN mv_sep_filter_f32_stream_k7(MV_SEP_F32_STREAM_PARAMS)
{
    MV_SEP_F32_STREAM_BODY(7)
}

/* ---- Separable f32 filters from a column tile (mv_sep_filter_f32_cols) ------------------ *
 *
 * The streaming separable kernel's work-items, but fed from local memory: a work-group of
 * MV_TILE_W x MV_TILE_H work-items covers MV_TILE_W * MV_SPX columns by MV_TILE_H * MV_COLS_ROWS
 * rows and first copies its whole halo tile (4 pixels of apron each side, the kernel radius
 * above and below) into local memory -- inside the image as 16-byte vectors, every load issued
 * before any store, else pixel by pixel with the border applied -- and after one barrier each
 * work-item walks its MV_SPX columns down its MV_COLS_ROWS rows exactly as the streaming
 * kernel does (horizontal sums of each row once, added into a ring of K output rows). The
 * streaming kernel reads every source row from global memory in each of the 2.5 (K = 7)
 * work-items that need it, each load waiting its turn; here the group's loads go out at once and
 * each pixel is read from global memory about 1.2 times. Same sums in the same order as the
 * streaming kernel, so the same images. */

/* Output rows per work-item: 4, or 2 or 1 where the tile of 4 would pass MV_COLS_MAX_BYTES of
 * local memory (large work-groups; mvision_kernels::Tile::cols_rows is the host's copy). */
#define MV_COLS_BYTES(rows) (4 * (MV_TILE_W * MV_SPX + 8) * (MV_TILE_H * (rows) + 6))
#define MV_COLS_ROWS                                                                  \
    (MV_COLS_BYTES(4) <= MV_COLS_MAX_BYTES ? 4 : MV_COLS_BYTES(2) <= MV_COLS_MAX_BYTES ? 2 : 1)
/* Row pitch (floats) and rows of the column tile, in 16-byte vectors per row, and vectors each
 * work-item copies at most. */
#define MV_CP (MV_TILE_W * MV_SPX + 8)
#define MV_CR (MV_TILE_H * MV_COLS_ROWS + 6)
#define MV_CV (MV_CP / 4)
/* The vector fill's layout: each step the group copies MV_CRS whole rows of the tile, work-item
 * tid the vector at column tid % MV_CV of row tid / MV_CV (work-items past MV_CRS rows idle), in
 * MV_CSTEPS steps, so no work-item divides per vector. Groups narrower than a tile row
 * (MV_CRS 0: only 1 x 1 and 1 x 2) fill pixel by pixel. */
#define MV_CRS ((MV_TILE_W * MV_TILE_H) / MV_CV)
#define MV_CSTEPS (MV_CRS > 0 ? (MV_CR + MV_CRS - 1) / MV_CRS : 1)

/* The 4 pixels from p on (p aligned to their 4 pixels' bytes) as floats. */
MV_INLINE mv_f32x4 mv_cols_load4_f32(MV_GLOBAL const float* p)
{
    return *(MV_GLOBAL const mv_f32x4*)p;
}
MV_INLINE mv_f32x4 mv_cols_load4_u8(MV_GLOBAL const mv_u8* p)
{
    mv_u32 w = *(MV_GLOBAL const mv_u32*)p;
    mv_f32x4 v;
    v.x = (float)MV_BYTE(w, 0);
    v.y = (float)MV_BYTE(w, 1);
    v.z = (float)MV_BYTE(w, 2);
    v.w = (float)MV_BYTE(w, 3);
    return v;
}
/* The same 4 pixels as one word of bytes (the byte tile of mv_sep_filter_u8_cols_dp). */
MV_INLINE mv_u32 mv_cols_load4_u8w(MV_GLOBAL const mv_u8* p)
{
    return *(MV_GLOBAL const mv_u32*)p;
}
/* A tile vector from 4 tile elements. */
MV_INLINE mv_f32x4 mv_cols_make4_f32(float a, float b, float c, float d)
{
    mv_f32x4 v;
    v.x = a;
    v.y = b;
    v.z = c;
    v.w = d;
    return v;
}
#define mv_cols_make4_u8 mv_cols_make4_f32
MV_INLINE mv_u32 mv_cols_make4_u8w(mv_u8 a, mv_u8 b, mv_u8 c, mv_u8 d)
{
    return MV_PACK4((mv_u32)a, (mv_u32)b, (mv_u32)c, (mv_u32)d);
}

/* mv_cols_store_<VEC>: stores the MV_CSTEPS vectors v that the work-item at column c, row cy of
 * the fill layout (copying while act) loaded for the column tile's first nr rows. */
#define MV_DEFINE_COLS_STORE(VEC)                                                                  \
MV_INLINE void mv_cols_store_##VEC(MV_LOCAL VEC* tile, const VEC* v, int c, int cy, int act,       \
                                   int nr)                                                         \
{                                                                                                  \
    MV_LOCAL VEC* d = tile + cy * MV_CV + c;                                                       \
    MV_UNROLL for (int k = 0; k < MV_CSTEPS; ++k)                                                  \
    {                                                                                              \
        if (act && cy + k * MV_CRS < nr) {                                                         \
            d[k * MV_CRS * MV_CV] = v[k];                                                          \
        }                                                                                          \
    }                                                                                              \
}
MV_DEFINE_COLS_STORE(mv_f32x4)
MV_DEFINE_COLS_STORE(mv_u32)

/* mv_cols_fill_<T>: copies the group's tile, as ELEM (floats; u8w: the bytes themselves, a VEC of
 * 4 pixels one 32-bit word): source rows y0 - r .. y0 + MV_TILE_H *
 * MV_COLS_ROWS + r - 1, columns x0 - 4 .. x0 + MV_TILE_W * MV_SPX + 3 (border applied), row j of
 * them at tile + j * MV_CP.
 * Every work-item must call it; a barrier must follow.
 * Where rows allow vector loads (4 pixels), every tile goes as vectors in the layout of MV_CRS,
 * each work-item loading its MV_CSTEPS vectors (one column of the tile, MV_CRS rows apart)
 * before storing any: a tile inside the image straight; a tile at the border with each row
 * mapped once (a row outside the image under a constant border is the value), a vector of 4
 * inside columns one load and the apron beyond the left or right edge pixel by pixel with the
 * columns mapped -- while every coordinate of the tile is within one reflection. Otherwise
 * pixel by pixel. The same pixels either way. (The pixel-by-pixel border tiles, each work-item
 * waiting on about 20 loads in turn, made Gaussian 7 f32 1.3x slower at 3840 x 2160 and 1.6x at
 * 1920 x 1080 on the H200: BENCHMARKS.md.) */
#define MV_DEFINE_COLS_FILL(SUFFIX, PIX, VEC, ELEM)                                                \
MV_INLINE void mv_cols_fill_##SUFFIX(MV_LOCAL ELEM* tile, MV_GLOBAL const PIX* src, int ss,        \
                                     int w, int h, int x0, int y0, int r, int mode, ELEM value)    \
{                                                                                                  \
    int n = MV_TILE_W * MV_TILE_H;                                                                 \
    int tid = MV_LID_Y * MV_TILE_W + MV_LID_X;                                                     \
    int nr = MV_TILE_H * MV_COLS_ROWS + 2 * r;                                                     \
    int vec = MV_CRS > 0 && (ss & 3) == 0 && ((mv_u64)src & (4 * sizeof(PIX) - 1)) == 0;           \
    /* This work-item's column and first row of the vector layout. */                              \
    int c = tid % MV_CV;                                                                           \
    int cy = tid / MV_CV;                                                                          \
    int act = cy < MV_CRS;                                                                         \
    cy = act ? cy : 0;                                                                             \
    if (vec && x0 >= 4 && x0 + MV_CP - 4 <= w && y0 >= r && y0 - r + nr <= h) {                    \
        MV_GLOBAL const PIX* s = src + (y0 - r + cy) * ss + x0 - 4 + 4 * c;                        \
        VEC v[MV_CSTEPS];                                                                          \
        MV_UNROLL for (int k = 0; k < MV_CSTEPS; ++k)                                              \
        {                                                                                          \
            if (act && cy + k * MV_CRS < nr) {                                                     \
                v[k] = mv_cols_load4_##SUFFIX(s + k * MV_CRS * ss);                                \
            }                                                                                      \
        }                                                                                          \
        mv_cols_store_##VEC((MV_LOCAL VEC*)tile, v, c, cy, act, nr);                               \
    } else if (vec && w > 4 && h > 4 && x0 + MV_CP - 5 < 2 * w - 1 &&                              \
               y0 - r + nr - 1 < 2 * h - 1) {                                                      \
        /* The columns are the same in every step. */                                              \
        int cx = x0 - 4 + 4 * c;                                                                   \
        int inside = cx >= 0 && cx + 4 <= w;                                                       \
        int s0 = mv_border_near(cx, w, mode);                                                      \
        int s1 = mv_border_near(cx + 1, w, mode);                                                  \
        int s2 = mv_border_near(cx + 2, w, mode);                                                  \
        int s3 = mv_border_near(cx + 3, w, mode);                                                  \
        VEC v[MV_CSTEPS];                                                                          \
        MV_UNROLL for (int k = 0; k < MV_CSTEPS; ++k)                                              \
        {                                                                                          \
            int ty = cy + k * MV_CRS;                                                              \
            if (act && ty < nr) {                                                                  \
                int sy = mv_border_near(y0 - r + ty, h, mode);                                     \
                MV_GLOBAL const PIX* row = src + (sy < 0 ? 0 : sy) * ss;                           \
                if (sy < 0) {                                                                      \
                    v[k] = mv_cols_make4_##SUFFIX(value, value, value, value);                     \
                } else if (inside) {                                                               \
                    v[k] = mv_cols_load4_##SUFFIX(row + cx);                                       \
                } else {                                                                           \
                    v[k] = mv_cols_make4_##SUFFIX(s0 < 0 ? value : (ELEM)row[s0],                  \
                                                  s1 < 0 ? value : (ELEM)row[s1],                  \
                                                  s2 < 0 ? value : (ELEM)row[s2],                  \
                                                  s3 < 0 ? value : (ELEM)row[s3]);                 \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        mv_cols_store_##VEC((MV_LOCAL VEC*)tile, v, c, cy, act, nr);                               \
    } else {                                                                                       \
        for (int i = tid; i < nr * MV_CP; i += n) {                                                \
            int ty = i / MV_CP;                                                                    \
            int tx = i - ty * MV_CP;                                                               \
            int sy = mv_border_index(y0 - r + ty, h, mode);                                        \
            int sx = mv_border_index(x0 - 4 + tx, w, mode);                                        \
            tile[i] = (sx < 0 || sy < 0) ? value : (ELEM)src[sy * ss + sx];                        \
        }                                                                                          \
    }                                                                                              \
}
MV_DEFINE_COLS_FILL(f32, float, mv_f32x4, float)
MV_DEFINE_COLS_FILL(u8, mv_u8, mv_f32x4, float)
MV_DEFINE_COLS_FILL(u8w, mv_u8, mv_u32, mv_u8)

/* mv_csep_<T>_k<K>: the separable K x K filter of the work-item at column x, rows y0 .. y0 +
 * MV_COLS_ROWS - 1, from its rows of the tile, t pointing at its first window row (source row
 * y0 - K / 2) 4 pixels before x. Output row o's sums sit in ring slot o mod K. The u8 filter sums
 * in float too: the host runs it only where every product and partial sum is an integer below
 * 2^24 in magnitude (plan::exact_in_f32), so each is exact and FINISH sees the integer sum. */
#define MV_CSEP_V(K)                                                                          \
    MV_UNROLL for (int ty = 0; ty < K; ++ty) {                                                \
        if (i - ty >= 0 && i - ty < MV_COLS_ROWS) {                                           \
            MV_UNROLL for (int j = 0; j < MV_SPX; ++j)                                        \
            {                                                                                 \
                ACC s = ty == 0 ? 0 : acc[MV_SLOT(u, ty, K)][j];                              \
                acc[MV_SLOT(u, ty, K)][j] = s + cy[ty] * hs[j];                               \
            }                                                                                 \
        }                                                                                     \
    }
/* The horizontal sums hs[] of window row i from a float tile (t + i * MV_CP). */
#define MV_CSEP_FLOAT_HS(K)                                                                   \
    ACC q[12];                                                                                \
    MV_WINDOW_F32(q, t + i * MV_CP, 12)                                                       \
    ACC win[MV_SPX + K - 1];                                                                  \
    MV_UNROLL for (int n = 0; n < MV_SPX + K - 1; ++n) {                                      \
        win[n] = q[4 - K / 2 + n];                                                            \
    }                                                                                         \
    MV_SSEP_HS(K)
/* The same from a byte tile (t + i * MV_CV words) by packed products (pe / po of MV_DP_PAIRS). */
#define MV_CSEP_DP_HS(K)                                                                      \
    mv_u32 wd[3];                                                                             \
    wd[0] = t[i * MV_CV];                                                                     \
    wd[1] = t[i * MV_CV + 1];                                                                 \
    wd[2] = t[i * MV_CV + 2];                                                                 \
    ACC hs[MV_SPX];                                                                           \
    MV_UNROLL for (int j = 0; j < MV_SPX; ++j) {                                              \
        hs[j] = mv_dp_row(wd, pe, po, K, j, 0);                                               \
    }
/* No set-up before the rows (float tiles); the packed horizontal taps (byte tiles). */
#define MV_CSEP_FLOAT_SETUP(K)
#define MV_CSEP_DP_SETUP(K) MV_DP_PAIRS(cx, K, pe, po)
/* mv_csep_<SUFFIX>_k<K> over a tile of TT (t), row sums by HS, outputs stored by
 * mv_sstore_<STORE>. */
#define MV_DEFINE_CSEP(SUFFIX, STORE, TAP, OUT, TT, K, FINISH_ARGS, FINISH, SETUP, HS)        \
    MV_INLINE void mv_csep_##SUFFIX##_k##K(MV_TAPS_PTR TAP* kx, MV_TAPS_PTR TAP* ky,          \
                                           FINISH_ARGS, MV_LOCAL const TT* t,                 \
                                           MV_GLOBAL PIX* dst, int ds, int w, int h, int x,   \
                                           int y0)                                            \
    {                                                                                         \
        MV_SSEP_TAPS(K)                                                                       \
        SETUP(K)                                                                              \
        MV_UNROLL for (int i = 0; i < MV_COLS_ROWS + K - 1; ++i)                              \
        {                                                                                     \
            int u = i % K;                                                                    \
            HS(K)                                                                             \
            MV_CSEP_V(K)                                                                      \
            if (i >= K - 1 && y0 + i - (K - 1) < h) {                                         \
                OUT o_[MV_SPX];                                                               \
                MV_SSEP_DONE(K, FINISH)                                                       \
                int idx = (y0 + i - (K - 1)) * ds + x;                                        \
                mv_sstore_##STORE(dst + idx, idx, w - x, o_);                                 \
            }                                                                                 \
        }                                                                                     \
    }
#define PIX float
#define ACC float
#define MV_CSEP_F32(K)                                                                        \
    MV_DEFINE_CSEP(f32, f32, float, float, float, K, float scale, a * scale,                  \
                   MV_CSEP_FLOAT_SETUP, MV_CSEP_FLOAT_HS)
MV_CSEP_F32(3)
MV_CSEP_F32(5)
MV_CSEP_F32(7)
#undef PIX
#define PIX mv_u8
#define MV_CSEP_U8_FINISH                                                                     \
    (finish == 1 ? mv_box_mean((mv_i32)a, area) : mv_round_shift_sat_u32((mv_i32)a, shift))
#define MV_CSEP_U8(K)                                                                         \
    MV_DEFINE_CSEP(u8, u8, mv_i32, mv_u32, float, K, MV_SSEP_U8_ARGS, MV_CSEP_U8_FINISH,      \
                   MV_CSEP_FLOAT_SETUP, MV_CSEP_FLOAT_HS)
MV_CSEP_U8(3)
MV_CSEP_U8(5)
MV_CSEP_U8(7)
#undef ACC
/* mv_csep_u8dp_k<K>: the u8 filter from a tile of the bytes themselves, each row's horizontal
 * sums from packed 16 x 8-bit products (mv_dp_row: dp2a where the device has it), the ring of
 * vertical sums in int: exact integers, as the CPU's. */
#define ACC mv_i32
#define MV_CSEP_U8DP(K)                                                                       \
    MV_DEFINE_CSEP(u8dp, u8, mv_i32, mv_u32, mv_u32, K, MV_SSEP_U8_ARGS, MV_CSEP_U8_FINISH,   \
                   MV_CSEP_DP_SETUP, MV_CSEP_DP_HS)
MV_CSEP_U8DP(3)
MV_CSEP_U8DP(5)
MV_CSEP_U8DP(7)
#undef PIX
#undef ACC

/* The column-tile kernels' start: their group's tile (SMEM_T words of MV_CR * MV_CV, viewed as
 * ELEM) filled by mv_cols_fill_<FILL> for kernel radius R (VALUE: the border constant), one
 * barrier, then a return for work-items outside the image or where OK is false (every work-item
 * reaches the barrier first), and t: the work-item's first window row, 4 pixels before its first
 * column, as TT. */
#define MV_COLS_ENTER(FILL, SMEM_T, ELEM, TT, OK, R, VALUE)                                   \
    MV_LOCAL_ARRAY(SMEM_T, smem, MV_CR * MV_CV);                                              \
    MV_LOCAL ELEM* tile = (MV_LOCAL ELEM*)smem;                                               \
    int x0 = MV_GROUP_X * (MV_TILE_W * MV_SPX);                                               \
    int gy = MV_GROUP_Y * (MV_TILE_H * MV_COLS_ROWS);                                         \
    mv_cols_fill_##FILL(tile, src, src_stride, width, height, x0, gy, R, border_mode, VALUE); \
    MV_BARRIER();                                                                             \
    int x = x0 + MV_LID_X * MV_SPX;                                                           \
    int y0 = gy + MV_LID_Y * MV_COLS_ROWS;                                                    \
    if (!(OK) || x >= width || y0 >= height) {                                                \
        return;                                                                               \
    }                                                                                         \
    MV_LOCAL const TT* t =                                                                    \
        (MV_LOCAL const TT*)(tile + (MV_LID_Y * MV_COLS_ROWS) * MV_CP + MV_LID_X * MV_SPX);

/* The separable column-tile kernels' body: square kx_len == ky_len of 3, 5 or 7 (anything else
 * copies a radius-3 tile and writes nothing); one work-item per MV_SPX x MV_COLS_ROWS outputs, in
 * work-groups of exactly MV_TILE_W x MV_TILE_H, mv_csep_<SUFFIX>_k<K> on the tile of
 * MV_COLS_ENTER. FINISH_CALL: what follows the taps in its arguments. */
#define MV_CSEP_BODY(SUFFIX, FILL, T, SMEM_T, ELEM, TT, FINISH_CALL, VALUE)                   \
    MV_TAPS_OPEN(T, kx)                                                                       \
    MV_TAPS_OPEN(T, ky)                                                                       \
    int ok = kx_len == ky_len && (kx_len == 3 || kx_len == 5 || kx_len == 7);                 \
    MV_COLS_ENTER(FILL, SMEM_T, ELEM, TT, ok, ok ? kx_len / 2 : 3, VALUE)                     \
    if (kx_len == 3) {                                                                        \
        mv_csep_##SUFFIX##_k3(kx, ky, FINISH_CALL, t, dst, dst_stride, width, height, x, y0); \
    } else if (kx_len == 5) {                                                                 \
        mv_csep_##SUFFIX##_k5(kx, ky, FINISH_CALL, t, dst, dst_stride, width, height, x, y0); \
    } else {                                                                                  \
        mv_csep_##SUFFIX##_k7(kx, ky, FINISH_CALL, t, dst, dst_stride, width, height, x, y0); \
    }

/* The f32 filter: dst = acc * scale, as mv_sep_filter_f32_tiled. */
MV_KERNEL_TILED mv_sep_filter_f32_cols(MV_GLOBAL const float* src, int src_stride,
                                       MV_GLOBAL float* dst, int dst_stride, int width,
                                       int height, MV_LINE_ARG(f32, kx), int kx_len,
                                       MV_LINE_ARG(f32, ky), int ky_len, float scale,
                                       int border_mode, float border_value)
{
    MV_CSEP_BODY(f32, f32, f32, mv_f32x4, float, float, scale, border_value)
}

/* The u8 filter with the arguments and finishes of mv_sep_filter_u8_tiled, summed in float
 * (exact: the host runs it only for taps that keep every sum an integer below 2^24). */
#define MV_CSEP_U8_CALL shift, finish, area
MV_KERNEL_TILED mv_sep_filter_u8_cols(MV_GLOBAL const mv_u8* src, int src_stride,
                                      MV_GLOBAL mv_u8* dst, int dst_stride, int width,
                                      int height, MV_LINE_ARG(i32, kx), int kx_len,
                                      MV_LINE_ARG(i32, ky), int ky_len, int shift, int finish,
                                      int area, int border_mode, int border_value)
{
    MV_CSEP_BODY(u8, u8, i32, mv_f32x4, float, float, MV_CSEP_U8_CALL, (float)border_value)
}

/* The u8 filter from a tile of bytes (mv_csep_u8dp_k<K>: 4 pixels a 32-bit word, no
 * conversions); the host runs it for horizontal taps of 16 bits that keep every sum below 2^24
 * (as mv_sep_filter_u8_cols). */
MV_KERNEL_TILED mv_sep_filter_u8_cols_dp(MV_GLOBAL const mv_u8* src, int src_stride,
                                         MV_GLOBAL mv_u8* dst, int dst_stride, int width,
                                         int height, MV_LINE_ARG(i32, kx), int kx_len,
                                         MV_LINE_ARG(i32, ky), int ky_len, int shift,
                                         int finish, int area, int border_mode,
                                         int border_value)
{
    MV_CSEP_BODY(u8dp, u8w, i32, mv_u32, mv_u8, mv_u32, MV_CSEP_U8_CALL, (mv_u8)border_value)
}

/* ---- Dense f32 filters from the column tile (mv_filter2d_f32_cols) ----------------------- *
 *
 * The dense K x K f32 filter (K = 3, 5, 7) with the column tile's work-groups and fill: each
 * work-item computes MV_SPX columns by MV_COLS_ROWS rows, walking its MV_COLS_ROWS + K - 1
 * window rows once and adding each into every output row that uses it, so a source row is read
 * from local memory once per work-item rather than once per output row (the halo tile's
 * kernel reads each 2 rows' windows separately). Each output starts at 0 and takes kernel row
 * ky when window row o + ky arrives, its taps left to right: the CPU's order. */
#define MV_DEFINE_CDENSE(K)                                                                   \
    MV_INLINE void mv_cdense_f32_k##K(MV_TAPS_PTR float* c, MV_LOCAL const float* t,          \
                                      MV_GLOBAL float* dst, int ds, int w, int h, int x,      \
                                      int y0)                                                 \
    {                                                                                         \
        float acc[MV_COLS_ROWS][MV_SPX];                                                      \
        MV_UNROLL for (int i = 0; i < MV_COLS_ROWS + K - 1; ++i)                              \
        {                                                                                     \
            float q[12];                                                                      \
            MV_WINDOW_F32(q, t + i * MV_CP, 12)                                               \
            MV_UNROLL for (int o = 0; o < MV_COLS_ROWS; ++o)                                  \
            {                                                                                 \
                int ky = i - o;                                                               \
                if (ky >= 0 && ky < K) {                                                      \
                    MV_UNROLL for (int j = 0; j < MV_SPX; ++j)                                \
                    {                                                                         \
                        float s = ky == 0 ? 0.0f : acc[o][j];                                 \
                        MV_UNROLL for (int kx = 0; kx < K; ++kx)                              \
                        {                                                                     \
                            s = s + c[ky * K + kx] * q[4 - K / 2 + j + kx];                   \
                        }                                                                     \
                        acc[o][j] = s;                                                        \
                    }                                                                         \
                }                                                                             \
                if (ky == K - 1 && y0 + o < h) {                                              \
                    int idx = (y0 + o) * ds + x;                                              \
                    mv_sstore_f32(dst + idx, idx, w - x, acc[o]);                             \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }
MV_DEFINE_CDENSE(3)
MV_DEFINE_CDENSE(5)
MV_DEFINE_CDENSE(7)

/* The arguments of mv_filter2d_f32_tiled; ksize 3, 5 or 7 (anything else writes nothing); one
 * work-item per MV_SPX x MV_COLS_ROWS outputs, in work-groups of exactly MV_TILE_W x
 * MV_TILE_H. */
MV_KERNEL_TILED mv_filter2d_f32_cols(MV_GLOBAL const float* src, int src_stride,
                                     MV_GLOBAL float* dst, int dst_stride, int width, int height,
                                     MV_TAPS_ARG(f32, coeffs), int ksize, int border_mode,
                                     float border_value)
{
    MV_TAPS_OPEN(f32, coeffs)
    int ok = ksize == 3 || ksize == 5 || ksize == 7;
    MV_COLS_ENTER(f32, mv_f32x4, float, float, ok, ok ? ksize / 2 : 3, border_value)
    if (ksize == 3) {
        mv_cdense_f32_k3(coeffs, t, dst, dst_stride, width, height, x, y0);
    } else if (ksize == 5) {
        mv_cdense_f32_k5(coeffs, t, dst, dst_stride, width, height, x, y0);
    } else {
        mv_cdense_f32_k7(coeffs, t, dst, dst_stride, width, height, x, y0);
    }
}

/* ---- Dense u8 filters on the matrix units (mv_filter2d_u8_mma) ------------------------- *
 *
 * The dense k x k fixed-point filter (k = 3, 5, 7), and the square separable ones as the dense
 * filter of their outer product, from warp-wide 16 x 8 x 16 integer matrix products (PTX
 * mma.m16n8k16 u8 x s8 / u8 -> s32, sm_80 and later, through CUDA or NVIDIA's OpenCL; other
 * devices compute the same products from local memory, mv_mma_soft). Integer sums are exact in
 * any order, so the images are the CPU's.
 *
 * A work-group is MV_MMA_WARPS warps side by side: MV_MMA_COLS output columns (xb ..) by 16 k
 * output rows (y0 ..); warp w takes columns x0 = xb + 8 w .. x0 + 7. For phase d (0 <= d < k)
 * its 16 x 8 product tile holds the outputs (x0 + n, y0 + k m + d), and kernel row ky adds
 * A_{d+ky} B_ky to it, where
 *   A_e[m][j]  = pixel (x0 - 4 + j, y0 + k m + e - r), j < 16: 16 bytes of one source row, the
 *                rows of a fragment k apart, so the 2 k - 1 fragments e serve all k^2 products;
 *   B_ky[j][n] = c[ky][j - n - 4 + r] (0 outside the kernel row): the row as a band.
 * Coefficients wider than 8 bits are split into byte planes, the most significant one signed:
 * acc = ((sum top p) 256 + sum mid p) 256 + sum low p. The host checks that no partial sum can
 * leave an int (plan::MmaTaps).
 *
 * The work-group first copies its source rows y0 - r .. y0 + 16 k + r - 1, columns
 * xb - 16 .. xb + MV_MMA_COLS + 15, into local memory (16-byte vectors inside the image, the
 * border applied per pixel elsewhere), and the coefficient planes: the host passes each kernel
 * row of each plane as 32 bytes, coefficient kx at byte kx + 12 - r, zeros around it, and lane
 * (g, t) of a warp (g = lane / 4, t = lane % 4) reads its B fragment -- bytes j = 4 t .. 4 t + 3
 * of column n = g -- as the 4 bytes from 4 t - g + 8 on. The outputs go through local memory
 * too, so that rows leave in 16-byte stores. */

/* Bytes of an input row in local memory: its MV_MMA_COLS + 32 columns and 16 of padding, which
 * puts the fragment rows of a warp (k apart) in distinct banks. */
#define MV_MMA_IP (MV_MMA_COLS + 48)
#define MV_MMA_IN_ROWS (16 * MV_MMA_MAX_K + MV_MMA_MAX_K - 1)
#define MV_MMA_OP (MV_MMA_COLS + 16)
#define MV_MMA_THREADS (32 * MV_MMA_WARPS)
/* 16-byte chunks of an input row, of an output row. */
#define MV_MMA_ICH ((MV_MMA_COLS + 32) / 16)
#define MV_MMA_OCH (MV_MMA_COLS / 16)

/* The 4 bytes from byte s (0 .. 3) of the 8-byte run lo, hi (lo first in memory). */
#if MV_LITTLE_ENDIAN
#define MV_BYTES_AT(lo, hi, s) ((mv_u32)((((mv_u64)(hi) << 32) | (mv_u64)(lo)) >> (8 * (s))))
#else
MV_INLINE mv_u32 mv_bytes_at(mv_u32 lo, mv_u32 hi, int s)
{
    mv_u32 b[4];
    for (int i = 0; i < 4; ++i) {
        int q = s + i;
        b[i] = q < 4 ? MV_BYTE(lo, q) : MV_BYTE(hi, q - 4);
    }
    return MV_PACK4(b[0], b[1], b[2], b[3]);
}
#define MV_BYTES_AT(lo, hi, s) mv_bytes_at((lo), (hi), (s))
#endif

#if MV_MMA_HW
/* c[0..4) += the lane's part of A B for the warp's fragments: PTX mma.m16n8k16.row.col with
 * u8 A and s8 (mv_mma_u8s8) or u8 (mv_mma_u8u8) B, s32 accumulators. */
MV_INLINE void mv_mma_u8s8(mv_i32* c, mv_u32 a0, mv_u32 a1, mv_u32 b)
{
    asm("mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(b));
}
MV_INLINE void mv_mma_u8u8(mv_i32* c, mv_u32 a0, mv_u32 a1, mv_u32 b)
{
    asm("mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(b));
}
#define MV_MMA(c, a0, a1, b, b_signed)             \
    if (b_signed) {                                \
        mv_mma_u8s8((c), (a0), (a1), (b));         \
    } else {                                       \
        mv_mma_u8u8((c), (a0), (a1), (b));         \
    }
#else
/* c[0..4) += the lane's part of A B for the warp's fragments (as mma.m16n8k16.row.col: lane
 * (g, t) holds a0 = A[g][4t .. 4t + 3], a1 = A[g + 8][4t ..], b = B[4t .. 4t + 3][g] and
 * c = D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1]), the fragments exchanged through
 * the warp's 96 words at `x`. Every work-item of the group must call it. */
MV_INLINE void mv_mma_soft(mv_i32* c, mv_u32 a0, mv_u32 a1, mv_u32 b, int b_signed,
                           MV_LOCAL mv_u32* x, int lane)
{
    int g = lane >> 2;
    int t = lane & 3;
    x[g * 4 + t] = a0;
    x[(g + 8) * 4 + t] = a1;
    x[64 + g * 4 + t] = b;
    MV_BARRIER();
    for (int i = 0; i < 4; ++i) {
        int m = g + 8 * (i >> 1);
        int n = 2 * t + (i & 1);
        mv_i32 s = 0;
        for (int k = 0; k < 16; ++k) {
            mv_i32 av = (mv_i32)MV_BYTE(x[m * 4 + (k >> 2)], k & 3);
            mv_i32 bv = (mv_i32)MV_BYTE(x[64 + n * 4 + (k >> 2)], k & 3);
            s += av * (b_signed && bv > 127 ? bv - 256 : bv);
        }
        c[i] += s;
    }
    MV_BARRIER();
}
#define MV_MMA(c, a0, a1, b, b_signed) mv_mma_soft((c), (a0), (a1), (b), (b_signed), xs, lane)
#endif
/* The loops around the products: unrolled for the matrix units; loops around mv_mma_soft's
 * barriers elsewhere (code size: PoCL's compiler fails on the unrolled form). */
#if MV_MMA_HW
#define MV_MMA_UNROLL MV_UNROLL
#else
#define MV_MMA_UNROLL MV_NO_UNROLL
#endif

/* Stores a warp's outputs into `out` (row pitch MV_MMA_OP), each made from its sum `sum` by
 * FINISH. */
#define MV_MMA_STORE(K, FINISH)                                                               \
    MV_UNROLL for (int d = 0; d < K; ++d)                                                     \
    {                                                                                         \
        mv_u32 o[4];                                                                          \
        MV_UNROLL for (int i = 0; i < 4; ++i)                                                 \
        {                                                                                     \
            mv_i32 sum = c[d][i];                                                             \
            o[i] = FINISH;                                                                    \
        }                                                                                     \
        MV_LOCAL mv_u8* q = out + (K * g + d) * MV_MMA_OP + 8 * warp + 2 * t;                \
        *(MV_LOCAL mv_u16*)q = (mv_u16)MV_PACK2(o[0], o[1]);                                  \
        *(MV_LOCAL mv_u16*)(q + 8 * K * MV_MMA_OP) = (mv_u16)MV_PACK2(o[2], o[3]);            \
    }
/* The products of one work-group for a K x K kernel (K a constant): fragments from `in`, the
 * planes' byte rows from `zs`, then each output through `finish` into `out`. */
#define MV_DEFINE_MMA_TILE(K)                                                                 \
    MV_INLINE void mv_mma_tile_k##K(MV_LOCAL const mv_u8* in, MV_LOCAL const mv_u32* zs,      \
                                    MV_LOCAL mv_u8* out, MV_LOCAL mv_u32* xs, int planes,     \
                                    int shift, int finish, int area)                          \
    {                                                                                         \
        int lane = MV_LID_X & 31;                                                             \
        int warp = MV_LID_X >> 5;                                                             \
        int g = lane >> 2;                                                                    \
        int t = lane & 3;                                                                     \
        int q0 = 4 * t - g + 8;                                                               \
        MV_LOCAL const mv_u8* fa = in + K * g * MV_MMA_IP + 8 * warp + 12 + 4 * t;           \
        mv_u32 a[2 * K - 1][2];                                                               \
        MV_UNROLL for (int e = 0; e < 2 * K - 1; ++e)                                         \
        {                                                                                     \
            a[e][0] = *(MV_LOCAL const mv_u32*)(fa + e * MV_MMA_IP);                          \
            a[e][1] = *(MV_LOCAL const mv_u32*)(fa + (8 * K + e) * MV_MMA_IP);                \
        }                                                                                     \
        mv_i32 c[K][4];                                                                       \
        MV_UNROLL for (int d = 0; d < K; ++d)                                                 \
        {                                                                                     \
            MV_UNROLL for (int i = 0; i < 4; ++i)                                             \
            {                                                                                 \
                c[d][i] = 0;                                                                  \
            }                                                                                 \
        }                                                                                     \
        mv_u32 b[K];                                                                          \
        MV_MMA_UNROLL for (int p = 0; p < 3; ++p)                                             \
        {                                                                                     \
            if (p < planes) {                                                                 \
                /* This plane's B fragments: 4 bytes of each kernel row from 4t - g + 8 on. */ \
                MV_UNROLL for (int ky = 0; ky < K; ++ky)                                      \
                {                                                                             \
                    MV_LOCAL const mv_u32* zr = zs + (p * K + ky) * MV_MMA_ROW_WORDS;        \
                    b[ky] = MV_BYTES_AT(zr[q0 >> 2], zr[(q0 >> 2) + 1], q0 & 3);              \
                }                                                                             \
                MV_UNROLL for (int d = 0; d < K; ++d)                                         \
                {                                                                             \
                    MV_UNROLL for (int i = 0; i < 4; ++i)                                     \
                    {                                                                         \
                        c[d][i] = (mv_i32)((mv_u32)c[d][i] << 8);                             \
                    }                                                                         \
                }                                                                             \
                MV_MMA_UNROLL for (int ky = 0; ky < K; ++ky)                                  \
                {                                                                             \
                    MV_MMA_UNROLL for (int d = 0; d < K; ++d)                                 \
                    {                                                                         \
                        MV_MMA(c[d], a[d + ky][0], a[d + ky][1], b[ky], p == 0);              \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        /* The finish decided once per tile: per output, both would be computed. */          \
        if (finish == 1) {                                                                    \
            MV_MMA_STORE(K, mv_box_mean(sum, area))                                           \
        } else {                                                                              \
            MV_MMA_STORE(K, mv_round_shift_sat_u32(sum, shift))                               \
        }                                                                                     \
    }
MV_DEFINE_MMA_TILE(3)
MV_DEFINE_MMA_TILE(5)
MV_DEFINE_MMA_TILE(7)

/* The source rows y0 .. y0 + rows - 1, columns xb - 16 .. xb + MV_MMA_COLS + 15 of a
 * work-group into `in` (row pitch MV_MMA_IP), the border applied: 16-byte vectors where a whole
 * vector is inside, pixel by pixel elsewhere. Every work-item must call it. */
MV_INLINE void mv_mma_fill_edge(MV_LOCAL mv_u8* in, MV_GLOBAL const mv_u8* src, int stride, int w,
                                int h, int xb, int y0, int rows, int mode, int value)
{
    int aligned = (stride & 15) == 0 && ((mv_u64)src & 15) == 0;
    for (int i = MV_LID_X; i < rows * MV_MMA_ICH; i += MV_MMA_THREADS) {
        int r = i / MV_MMA_ICH;
        int x = xb - 16 + 16 * (i - r * MV_MMA_ICH);
        int sy = mv_border_index(y0 + r, h, mode);
        MV_GLOBAL const mv_u8* row = src + (sy < 0 ? 0 : sy) * stride;
        mv_u32x4 v;
        if (aligned && sy >= 0 && x >= 0 && x + 16 <= w) {
            v = *(MV_GLOBAL const mv_u32x4*)(row + x);
        } else {
            mv_u32 px[16];
            MV_UNROLL for (int j = 0; j < 16; ++j)
            {
                int sx = mv_border_index(x + j, w, mode);
                px[j] = (sy < 0 || sx < 0) ? (mv_u32)value : (mv_u32)row[sx];
            }
            v.x = MV_PACK4(px[0], px[1], px[2], px[3]);
            v.y = MV_PACK4(px[4], px[5], px[6], px[7]);
            v.z = MV_PACK4(px[8], px[9], px[10], px[11]);
            v.w = MV_PACK4(px[12], px[13], px[14], px[15]);
        }
        *(MV_LOCAL mv_u32x4*)(in + r * MV_MMA_IP + 16 * (i - r * MV_MMA_ICH)) = v;
    }
}

/* Rows y0 .. y0 + rows - 1 of the outputs in `out` (row pitch MV_MMA_OP) to dst, those inside
 * the image, by 16-byte vectors where the row allows. */
MV_INLINE void mv_mma_store_edge(MV_GLOBAL mv_u8* dst, int stride, int w, int h, int xb, int y0,
                                 int rows, MV_LOCAL const mv_u8* out)
{
    int vec = (stride & 15) == 0 && ((mv_u64)dst & 15) == 0;
    for (int i = MV_LID_X; i < rows * MV_MMA_OCH; i += MV_MMA_THREADS) {
        int row = i / MV_MMA_OCH;
        int ch = i - row * MV_MMA_OCH;
        int y = y0 + row;
        int x = xb + 16 * ch;
        if (y >= h || x >= w) {
            continue;
        }
        MV_LOCAL const mv_u8* o = out + row * MV_MMA_OP + 16 * ch;
        MV_GLOBAL mv_u8* d = dst + y * stride + x;
        if (vec && x + 16 <= w) {
            *(MV_GLOBAL mv_u32x4*)d = *(MV_LOCAL const mv_u32x4*)o;
        } else {
            for (int j = 0; j < 16 && x + j < w; ++j) {
                d[j] = o[j];
            }
        }
    }
}

/* A work-group's source rows (y0 .. y0 + rows - 1) into `in`, and its outputs (rows y0 ..
 * y0 + rows - 1) out of `out`. Work-groups wholly inside the image (rows of 16-byte multiples)
 * copy a fixed number of vectors per work-item, all loads issued before the stores (a loop over
 * a variable count would wait for each load in turn); the others take the _edge loops. Every
 * work-item must call them. */
#define MV_MMA_NV(n) (((n) + MV_MMA_THREADS - 1) / MV_MMA_THREADS)
MV_INLINE void mv_mma_fill(MV_LOCAL mv_u8* in, MV_GLOBAL const mv_u8* src, int stride, int w,
                           int h, int xb, int y0, int rows, int mode, int value)
{
    if ((stride & 15) != 0 || ((mv_u64)src & 15) != 0 || xb < 16 ||
        xb + MV_MMA_COLS + 16 > w || y0 < 0 || y0 + rows > h) {
        mv_mma_fill_edge(in, src, stride, w, h, xb, y0, rows, mode, value);
        return;
    }
    mv_u32x4 v[MV_MMA_NV(MV_MMA_IN_ROWS * MV_MMA_ICH)];
    MV_UNROLL for (int j = 0; j < MV_MMA_NV(MV_MMA_IN_ROWS * MV_MMA_ICH); ++j)
    {
        int i = MV_LID_X + j * MV_MMA_THREADS;
        int r = i / MV_MMA_ICH;
        if (i < rows * MV_MMA_ICH) {
            v[j] = *(MV_GLOBAL const mv_u32x4*)(src + (y0 + r) * stride + xb - 16 +
                                                16 * (i - r * MV_MMA_ICH));
        }
    }
    MV_UNROLL for (int j = 0; j < MV_MMA_NV(MV_MMA_IN_ROWS * MV_MMA_ICH); ++j)
    {
        int i = MV_LID_X + j * MV_MMA_THREADS;
        int r = i / MV_MMA_ICH;
        if (i < rows * MV_MMA_ICH) {
            *(MV_LOCAL mv_u32x4*)(in + r * MV_MMA_IP + 16 * (i - r * MV_MMA_ICH)) = v[j];
        }
    }
}

MV_INLINE void mv_mma_store(MV_GLOBAL mv_u8* dst, int stride, int w, int h, int xb, int y0,
                            int rows, MV_LOCAL const mv_u8* out)
{
    if ((stride & 15) != 0 || ((mv_u64)dst & 15) != 0 || xb + MV_MMA_COLS > w ||
        y0 + rows > h) {
        mv_mma_store_edge(dst, stride, w, h, xb, y0, rows, out);
        return;
    }
    mv_u32x4 o[MV_MMA_NV(16 * MV_MMA_MAX_K * MV_MMA_OCH)];
    MV_UNROLL for (int j = 0; j < MV_MMA_NV(16 * MV_MMA_MAX_K * MV_MMA_OCH); ++j)
    {
        int i = MV_LID_X + j * MV_MMA_THREADS;
        int r = i / MV_MMA_OCH;
        if (i < rows * MV_MMA_OCH) {
            o[j] = *(MV_LOCAL const mv_u32x4*)(out + r * MV_MMA_OP + 16 * (i - r * MV_MMA_OCH));
        }
    }
    MV_UNROLL for (int j = 0; j < MV_MMA_NV(16 * MV_MMA_MAX_K * MV_MMA_OCH); ++j)
    {
        int i = MV_LID_X + j * MV_MMA_THREADS;
        int r = i / MV_MMA_OCH;
        if (i < rows * MV_MMA_OCH) {
            *(MV_GLOBAL mv_u32x4*)(dst + (y0 + r) * stride + xb + 16 * (i - r * MV_MMA_OCH)) =
                o[j];
        }
    }
}

/* ksize 3, 5 or 7 (anything else writes nothing); planes 1 to 3 byte planes of `rows` (plane p,
 * kernel row ky at words (p ksize + ky) MV_MMA_ROW_WORDS ..); finish 0: round_shift_sat_u8(acc,
 * shift), 1: box mean (acc + area / 2) / area. One work-group of MV_MMA_THREADS work-items per
 * MV_MMA_COLS x 16 ksize outputs. */
MV_KERNEL_MMA mv_filter2d_u8_mma(MV_GLOBAL const mv_u8* src, int src_stride, MV_GLOBAL mv_u8* dst,
                                 int dst_stride, int width, int height, MV_MMA_ARG(rows),
                                 int ksize, int planes, int shift, int finish, int area,
                                 int border_mode, int border_value)
{
    MV_MMA_OPEN(rows)
    MV_LOCAL_ARRAY(mv_u32x4, in_v, MV_MMA_IP * MV_MMA_IN_ROWS / 16);
    MV_LOCAL_ARRAY(mv_u32x4, out_v, MV_MMA_OP * 16 * MV_MMA_MAX_K / 16);
    MV_LOCAL_ARRAY(mv_u32, zs, MV_MMA_WORDS);
#if MV_MMA_HW
    MV_LOCAL mv_u32* xs = 0;
#else
    MV_LOCAL_ARRAY(mv_u32, xs_all, 96 * MV_MMA_WARPS);
    MV_LOCAL mv_u32* xs = xs_all + 96 * (MV_LID_X >> 5);
#endif
    MV_LOCAL mv_u8* in = (MV_LOCAL mv_u8*)in_v;
    MV_LOCAL mv_u8* out = (MV_LOCAL mv_u8*)out_v;
    int k = ksize;
    if (k != 3 && k != 5 && k != 7) {
        return;
    }
    for (int i = MV_LID_X; i < planes * k * MV_MMA_ROW_WORDS; i += MV_MMA_THREADS) {
        zs[i] = rows[i];
    }
    int xb = MV_GROUP_X * MV_MMA_COLS;
    int y0 = MV_GROUP_Y * 16 * k;
    mv_mma_fill(in, src, src_stride, width, height, xb, y0 - k / 2, 17 * k - 1, border_mode,
                border_value);
    MV_BARRIER();
    if (k == 3) {
        mv_mma_tile_k3(in, zs, out, xs, planes, shift, finish, area);
    } else if (k == 5) {
        mv_mma_tile_k5(in, zs, out, xs, planes, shift, finish, area);
    } else {
        mv_mma_tile_k7(in, zs, out, xs, planes, shift, finish, area);
    }
    MV_BARRIER();
    mv_mma_store(dst, dst_stride, width, height, xb, y0, 16 * k, out);
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
