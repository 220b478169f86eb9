/*
 * ctest suite of the device-buffer API (mv_buffer, mv_submit_*): on every backend available
 * here (CPU always; OpenCL on PoCL in CI; CUDA on a GPU machine) each operation's result must
 * equal the immediate CPU function's exactly (u8/i16/u32/u64 outputs), and misuse must return
 * its documented status with outputs untouched. C99, -Wall -Wextra -Werror -pedantic.
 */
#include <mvision.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned g_passed, g_failed;
static char g_where[160];

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (cond) {                                                                       \
            g_passed++;                                                                   \
        } else {                                                                          \
            g_failed++;                                                                   \
            fprintf(stderr, "%s:%d: [%s] check failed: %s\n", __FILE__, __LINE__, g_where, \
                    #cond);                                                               \
        }                                                                                 \
    } while (0)

#define CHECK_STATUS(call, want)                                                          \
    do {                                                                                  \
        mv_status got_ = (call);                                                          \
        if (got_ == (mv_status)(want)) {                                                  \
            g_passed++;                                                                   \
        } else {                                                                          \
            g_failed++;                                                                   \
            fprintf(stderr, "%s:%d: [%s] %s returned %s, expected %s\n", __FILE__,        \
                    __LINE__, g_where, #call, mv_status_name(got_), mv_status_name(want));  \
        }                                                                                 \
    } while (0)

#define W 67u
#define H 45u

static uint32_t g_rng = 12345u;
static uint8_t next_u8(void)
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return (uint8_t)(g_rng >> 24);
}

static mv_image host(void *data, size_t size, uint32_t w, uint32_t h, size_t elem,
                     mv_pixel_format fmt)
{
    mv_image im;
    im.data = data;
    im.data_size = size;
    im.width = w;
    im.height = h;
    im.stride = w * elem;
    im.format = fmt;
    return im;
}

static const mv_border REFLECT = {MV_BORDER_REFLECT_101, 0.0f};
static const mv_border CONSTANT = {MV_BORDER_CONSTANT, 9.0f};

/* Runs every u8 operation on `backend` and compares with the immediate CPU functions. */
static void check_backend(mv_backend backend, const char *name)
{
    static uint8_t src[H][W], want[H][W], got[H][W];
    static int16_t wdx[H][W], wdy[H][W], gdx[H][W], gdy[H][W];
    static uint32_t wsum[H + 1][W + 1], gsum[H + 1][W + 1];
    static uint64_t wsq[H + 1][W + 1], gsq[H + 1][W + 1];
    static uint8_t wsmall[(H + 1) / 2][(W + 1) / 2], gsmall[(H + 1) / 2][(W + 1) / 2];
    static const float sharpen[9] = {0, -1, 0, -1, 5, -1, 0, -1, 0};
    mv_context *ctx = NULL;
    mv_buffer *bs = NULL, *bd = NULL, *bx = NULL, *by = NULL, *bt = NULL, *bq = NULL, *bp = NULL;
    mv_image s, d, g, ix, iy, jx, jy, ts, tq, us, uq, ps, pg;
    uint32_t x, y, bw = 0, bh = 0;
    mv_pixel_format bf = 0;
    mv_backend bb = 0;

    for (y = 0; y < H; y++)
        for (x = 0; x < W; x++)
            src[y][x] = next_u8();
    s = host(src, sizeof src, W, H, 1, MV_PIXEL_U8);
    d = host(want, sizeof want, W, H, 1, MV_PIXEL_U8);
    g = host(got, sizeof got, W, H, 1, MV_PIXEL_U8);

    snprintf(g_where, sizeof g_where, "%s: setup", name);
    CHECK_STATUS(mv_context_create(backend | MV_BACKEND_CPU, &ctx), MV_STATUS_OK);
    if (!ctx)
        return;
    CHECK_STATUS(mv_buffer_create(ctx, backend, W, H, MV_PIXEL_U8, &bs), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_create(ctx, backend, W, H, MV_PIXEL_U8, &bd), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_info(bd, &bw, &bh, &bf, &bb), MV_STATUS_OK);
    CHECK(bw == W && bh == H && bf == MV_PIXEL_U8 && bb == backend);
    CHECK_STATUS(mv_buffer_upload(bs, &s), MV_STATUS_OK);

    snprintf(g_where, sizeof g_where, "%s: gaussian", name);
    CHECK_STATUS(mv_gaussian_blur(&s, &d, 0, 1.5f, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_submit_gaussian_blur(bs, bd, 0, 1.5f, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bd, &g), MV_STATUS_OK);
    CHECK(memcmp(want, got, sizeof want) == 0);

    snprintf(g_where, sizeof g_where, "%s: box", name);
    CHECK_STATUS(mv_box_blur(&s, &d, 5, CONSTANT), MV_STATUS_OK);
    CHECK_STATUS(mv_submit_box_blur(bs, bd, 5, CONSTANT), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bd, &g), MV_STATUS_OK);
    CHECK(memcmp(want, got, sizeof want) == 0);

    snprintf(g_where, sizeof g_where, "%s: filter2d", name);
    CHECK_STATUS(mv_filter2d(&s, &d, sharpen, 3, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_submit_filter2d(bs, bd, sharpen, 3, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bd, &g), MV_STATUS_OK);
    CHECK(memcmp(want, got, sizeof want) == 0);

    snprintf(g_where, sizeof g_where, "%s: sobel", name);
    ix = host(wdx, sizeof wdx, W, H, 2, MV_PIXEL_I16);
    iy = host(wdy, sizeof wdy, W, H, 2, MV_PIXEL_I16);
    jx = host(gdx, sizeof gdx, W, H, 2, MV_PIXEL_I16);
    jy = host(gdy, sizeof gdy, W, H, 2, MV_PIXEL_I16);
    CHECK_STATUS(mv_buffer_create(ctx, backend, W, H, MV_PIXEL_I16, &bx), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_create(ctx, backend, W, H, MV_PIXEL_I16, &by), MV_STATUS_OK);
    CHECK_STATUS(mv_sobel(&s, &ix, &iy, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_submit_sobel(bs, bx, by, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bx, &jx), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(by, &jy), MV_STATUS_OK);
    CHECK(memcmp(wdx, gdx, sizeof wdx) == 0 && memcmp(wdy, gdy, sizeof wdy) == 0);
    CHECK_STATUS(mv_submit_sobel(bs, bx, bx, REFLECT), MV_STATUS_OVERLAP);

    snprintf(g_where, sizeof g_where, "%s: integral", name);
    ts = host(wsum, sizeof wsum, W + 1, H + 1, 4, MV_PIXEL_U32);
    tq = host(wsq, sizeof wsq, W + 1, H + 1, 8, MV_PIXEL_U64);
    us = host(gsum, sizeof gsum, W + 1, H + 1, 4, MV_PIXEL_U32);
    uq = host(gsq, sizeof gsq, W + 1, H + 1, 8, MV_PIXEL_U64);
    CHECK_STATUS(mv_buffer_create(ctx, backend, W + 1, H + 1, MV_PIXEL_U32, &bt), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_create(ctx, backend, W + 1, H + 1, MV_PIXEL_U64, &bq), MV_STATUS_OK);
    CHECK_STATUS(mv_integral(&s, &ts, &tq), MV_STATUS_OK);
    CHECK_STATUS(mv_submit_integral(bs, bt, bq), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bt, &us), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bq, &uq), MV_STATUS_OK);
    CHECK(memcmp(wsum, gsum, sizeof wsum) == 0 && memcmp(wsq, gsq, sizeof wsq) == 0);

    snprintf(g_where, sizeof g_where, "%s: pyramid and resize", name);
    ps = host(wsmall, sizeof wsmall, (W + 1) / 2, (H + 1) / 2, 1, MV_PIXEL_U8);
    pg = host(gsmall, sizeof gsmall, (W + 1) / 2, (H + 1) / 2, 1, MV_PIXEL_U8);
    CHECK_STATUS(mv_buffer_create(ctx, backend, (W + 1) / 2, (H + 1) / 2, MV_PIXEL_U8, &bp),
                 MV_STATUS_OK);
    CHECK_STATUS(mv_pyr_down(&s, &ps, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_submit_pyr_down(bs, bp, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bp, &pg), MV_STATUS_OK);
    CHECK(memcmp(wsmall, gsmall, sizeof wsmall) == 0);
    CHECK_STATUS(mv_resize_bilinear(&s, &ps), MV_STATUS_OK);
    CHECK_STATUS(mv_submit_resize_bilinear(bs, bp), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bp, &pg), MV_STATUS_OK);
    CHECK(memcmp(wsmall, gsmall, sizeof wsmall) == 0);

    snprintf(g_where, sizeof g_where, "%s: misuse", name);
    CHECK_STATUS(mv_submit_box_blur(bs, bs, 3, REFLECT), MV_STATUS_OVERLAP);
    CHECK_STATUS(mv_submit_box_blur(bs, bp, 3, REFLECT), MV_STATUS_SIZE_MISMATCH);
    CHECK_STATUS(mv_submit_box_blur(bs, bx, 3, REFLECT), MV_STATUS_UNSUPPORTED_FORMAT);
    CHECK_STATUS(mv_submit_box_blur(bs, bd, 4, REFLECT), MV_STATUS_INVALID_KERNEL);
    CHECK_STATUS(mv_submit_box_blur(NULL, bd, 3, REFLECT), MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_submit_filter2d(bs, bd, NULL, 3, REFLECT), MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_buffer_upload(bs, &ps), MV_STATUS_SIZE_MISMATCH);
    CHECK_STATUS(mv_buffer_upload(bs, &ix), MV_STATUS_UNSUPPORTED_FORMAT);
    memset(gsmall, 0xA5, sizeof gsmall);
    CHECK_STATUS(mv_buffer_download(bs, &pg), MV_STATUS_SIZE_MISMATCH);
    CHECK(gsmall[0][0] == 0xA5 && gsmall[(H + 1) / 2 - 1][(W + 1) / 2 - 1] == 0xA5);
    {
        mv_buffer *none = NULL;
        CHECK_STATUS(mv_buffer_create(ctx, backend, 0, H, MV_PIXEL_U8, &none), MV_STATUS_ZERO_SIZE);
        CHECK_STATUS(mv_buffer_create(ctx, backend, W, H, 99, &none),
                     MV_STATUS_UNSUPPORTED_FORMAT);
        CHECK(none == NULL);
    }
    {
        mv_buffer *extra = NULL;
        CHECK_STATUS(mv_buffer_create(ctx, backend | MV_BACKEND_CPU, W, H, MV_PIXEL_U8, &extra),
                     backend == MV_BACKEND_CPU ? MV_STATUS_OK : MV_STATUS_INVALID_ARGUMENT);
        mv_buffer_destroy(extra);
    }

    /* Buffers keep their device alive after the context is gone. */
    mv_context_destroy(ctx);
    CHECK_STATUS(mv_submit_box_blur(bs, bd, 3, REFLECT), MV_STATUS_OK);
    CHECK_STATUS(mv_buffer_download(bd, &g), MV_STATUS_OK);

    mv_buffer_destroy(bs);
    mv_buffer_destroy(bd);
    mv_buffer_destroy(bx);
    mv_buffer_destroy(by);
    mv_buffer_destroy(bt);
    mv_buffer_destroy(bq);
    mv_buffer_destroy(bp);
}

int main(void)
{
    mv_backend available = mv_backends_available();
    mv_context *cpu = NULL, *gpu = NULL;
    mv_buffer *a = NULL, *b = NULL;
    char text[256];
    size_t len = 0;

    check_backend(MV_BACKEND_CPU, "cpu");
    if (available & MV_BACKEND_OPENCL)
        check_backend(MV_BACKEND_OPENCL, "opencl");
    else
        printf("test_buffers: no OpenCL device here, OpenCL part skipped\n");
    if (available & MV_BACKEND_CUDA)
        check_backend(MV_BACKEND_CUDA, "cuda");
    else
        printf("test_buffers: no CUDA device here, CUDA part skipped\n");

    snprintf(g_where, sizeof g_where, "context and device misuse");
    if (!(available & MV_BACKEND_CUDA))
        CHECK_STATUS(mv_context_create_device(MV_BACKEND_CUDA, 0, &gpu),
                     MV_STATUS_BACKEND_UNAVAILABLE);
    CHECK_STATUS(mv_context_create_device(MV_BACKEND_CPU | MV_BACKEND_OPENCL, 0, &gpu),
                 MV_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mv_context_create_device(MV_BACKEND_CPU, 1, &gpu), MV_STATUS_BACKEND_UNAVAILABLE);
    CHECK_STATUS(mv_context_create(MV_BACKEND_CPU, &cpu), MV_STATUS_OK);
    CHECK_STATUS(mv_context_sync(cpu), MV_STATUS_OK);
    CHECK_STATUS(mv_context_device_name(cpu, MV_BACKEND_CPU, text, sizeof text, &len),
                 MV_STATUS_OK);
    CHECK(len == strlen(text) && len > 0);
    CHECK_STATUS(mv_context_device_name(cpu, MV_BACKEND_OPENCL, text, sizeof text, &len),
                 MV_STATUS_BACKEND_UNAVAILABLE);
    CHECK_STATUS(mv_buffer_create(cpu, MV_BACKEND_OPENCL, 8, 8, MV_PIXEL_U8, &a),
                 MV_STATUS_BACKEND_UNAVAILABLE);
    CHECK(a == NULL);
    if (available & MV_BACKEND_OPENCL) {
        CHECK_STATUS(mv_context_create_device(MV_BACKEND_OPENCL, 0, &gpu), MV_STATUS_OK);
        CHECK_STATUS(mv_context_device_name(gpu, MV_BACKEND_OPENCL, text, sizeof text, &len),
                     MV_STATUS_OK);
        printf("test_buffers: OpenCL device 0 is %s\n", text);
        CHECK_STATUS(mv_buffer_create(cpu, MV_BACKEND_CPU, 8, 8, MV_PIXEL_U8, &a), MV_STATUS_OK);
        CHECK_STATUS(mv_buffer_create(gpu, MV_BACKEND_OPENCL, 8, 8, MV_PIXEL_U8, &b),
                     MV_STATUS_OK);
        CHECK_STATUS(mv_submit_box_blur(a, b, 3, REFLECT), MV_STATUS_BACKEND_MISMATCH);
        CHECK_STATUS(mv_last_error_detail(text, sizeof text, &len), MV_STATUS_OK);
        CHECK(len > 0 && strlen(text) == (len < sizeof text ? len : sizeof text - 1));
        CHECK_STATUS(mv_last_error_detail(text, 0, &len), MV_STATUS_BUFFER_TOO_SMALL);
    }
    mv_buffer_destroy(a);
    mv_buffer_destroy(b);
    mv_buffer_destroy(NULL);
    mv_context_destroy(gpu);
    mv_context_destroy(cpu);
    mv_context_destroy(NULL);

    printf("%u passed, %u failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
