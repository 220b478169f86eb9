/*
 * Test suite of libmvision's C API, in C99 (built with -std=c99 -Wall -Wextra -Werror -pedantic).
 *
 * (a) Results against values computed by hand (the arithmetic is in the comments).
 * (b) Every bad input returns the status include/mvision.h documents and leaves the outputs
 *     untouched: outputs are filled with a sentinel byte before each failing call and compared
 *     after it.
 *
 * Prints one line per failed check (file:line, the call, the status names) and finally
 * "N passed, N failed"; exits non-zero if anything failed.
 */
#include <mvision.h>

#include <math.h> /* NAN and INFINITY only: no libm functions are called. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ------------------------------------------------------------------------------------------ */
/* Helpers                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static mv_border border(mv_border_mode mode, float value)
{
    mv_border b;
    b.mode = mode;
    b.value = value;
    return b;
}

static int rect_eq(mv_rect r, int32_t x, int32_t y, int32_t w, int32_t h)
{
    return r.x == x && r.y == y && r.width == w && r.height == h;
}

#define REPLICATE border(MV_BORDER_REPLICATE, 0.0f)
#define REFLECT border(MV_BORDER_REFLECT_101, 0.0f)
#define CONSTANT(v) border(MV_BORDER_CONSTANT, (v))

/* The 4 x 4 image used by the hand computations (row-major, tightly packed):
 *
 *        x=0  x=1  x=2  x=3
 *   y=0   10   20   30   40
 *   y=1   50   61   70   80
 *   y=2   90  100  110  120
 *   y=3  130  140  150  165
 */
static const uint8_t H4[16] = {10, 20, 30, 40, 50, 61, 70, 80, 90, 100, 110, 120, 130, 140, 150, 165};

/* Bad variants of a valid image, each with the status it must produce. */
typedef struct {
    mv_image im;
    uint32_t status;
    const char *what;
} bad_image;

enum { MAX_BAD = 16 };

static int bad_images(mv_image good, bad_image *out)
{
    int n = 0;
    size_t bpp = mv_pixel_format_size(good.format);
    mv_image b;
#define ADD_BAD(stmt, want, text)      \
    do {                               \
        b = good;                      \
        stmt;                          \
        out[n].im = b;                 \
        out[n].status = (want);        \
        out[n].what = (text);          \
        n++;                           \
    } while (0)
    ADD_BAD(b.data = NULL, MV_STATUS_NULL_POINTER, "data NULL");
    ADD_BAD(b.width = 0, MV_STATUS_ZERO_SIZE, "width 0");
    ADD_BAD(b.height = 0, MV_STATUS_ZERO_SIZE, "height 0");
    ADD_BAD(b.stride = 0, MV_STATUS_STRIDE_TOO_SMALL, "stride 0 (only mv_image_init packs)");
    ADD_BAD(b.stride = (good.width - 1) * bpp, MV_STATUS_STRIDE_TOO_SMALL,
            "stride one pixel short of a row");
    ADD_BAD(b.data_size = good.data_size - 1, MV_STATUS_BUFFER_TOO_SMALL,
            "data_size one byte short");
    ADD_BAD((b.width = UINT32_MAX, b.height = UINT32_MAX, b.stride = SIZE_MAX / 2 / bpp * bpp),
            MV_STATUS_OVERFLOW, "UINT32_MAX x UINT32_MAX, stride SIZE_MAX/2");
    ADD_BAD(b.format = 0, MV_STATUS_UNSUPPORTED_FORMAT, "format 0");
    ADD_BAD(b.format = 99, MV_STATUS_UNSUPPORTED_FORMAT, "format 99");
    if (bpp > 1) {
        ADD_BAD(b.data = (char *)good.data + 1, MV_STATUS_MISALIGNED, "data pointer misaligned");
        ADD_BAD(b.stride = good.stride + 1, MV_STATUS_MISALIGNED,
                "stride not a multiple of the pixel size");
    }
#undef ADD_BAD
    return n;
}

static const char *format_name(mv_pixel_format f)
{
    switch (f) {
    case MV_PIXEL_U8: return "U8";
    case MV_PIXEL_U16: return "U16";
    case MV_PIXEL_I16: return "I16";
    case MV_PIXEL_U32: return "U32";
    case MV_PIXEL_U64: return "U64";
    case MV_PIXEL_F32: return "F32";
    default: return "?";
    }
}

/* ------------------------------------------------------------------------------------------ */
/* (a) Library identity, statuses, contexts                                                   */
/* ------------------------------------------------------------------------------------------ */

static void test_version(void)
{
    set_context("version");
    CHECK(mv_version() != NULL);
    CHECK(strcmp(mv_version(), MV_VERSION_STRING) == 0);
    CHECK_INT(mv_version_number(), MV_VERSION_NUMBER);
    CHECK_INT(MV_VERSION_NUMBER, MV_VERSION_MAJOR * 10000 + MV_VERSION_MINOR * 100 + MV_VERSION_PATCH);
    {
        char expect[32];
        snprintf(expect, sizeof expect, "%d.%d.%d", MV_VERSION_MAJOR, MV_VERSION_MINOR,
                 MV_VERSION_PATCH);
        CHECK(strcmp(expect, MV_VERSION_STRING) == 0);
    }
}

static void test_cpu_level(void)
{
    mv_cpu_level detected = mv_cpu_detected();
    CHECK(detected >= MV_CPU_BASELINE && detected <= MV_CPU_X86_64_V4);
    CHECK_INT(mv_cpu_active(), detected);
    CHECK_INT(mv_cpu_set_max_level(MV_CPU_BASELINE), MV_STATUS_OK);
    CHECK_INT(mv_cpu_active(), MV_CPU_BASELINE);
    CHECK_INT(mv_cpu_set_max_level(99), MV_STATUS_INVALID_ARGUMENT);
    CHECK_INT(mv_cpu_active(), MV_CPU_BASELINE);
    CHECK_INT(mv_cpu_set_max_level(MV_CPU_X86_64_V4), MV_STATUS_OK);
    CHECK_INT(mv_cpu_active(), detected);
}

static void test_status_names(void)
{
    static const struct {
        uint32_t code;
        const char *name;
    } names[] = {
        {MV_STATUS_OK, "MV_STATUS_OK"},
        {MV_STATUS_NULL_POINTER, "MV_STATUS_NULL_POINTER"},
        {MV_STATUS_ZERO_SIZE, "MV_STATUS_ZERO_SIZE"},
        {MV_STATUS_STRIDE_TOO_SMALL, "MV_STATUS_STRIDE_TOO_SMALL"},
        {MV_STATUS_BUFFER_TOO_SMALL, "MV_STATUS_BUFFER_TOO_SMALL"},
        {MV_STATUS_OVERFLOW, "MV_STATUS_OVERFLOW"},
        {MV_STATUS_SIZE_MISMATCH, "MV_STATUS_SIZE_MISMATCH"},
        {MV_STATUS_UNSUPPORTED_FORMAT, "MV_STATUS_UNSUPPORTED_FORMAT"},
        {MV_STATUS_MISALIGNED, "MV_STATUS_MISALIGNED"},
        {MV_STATUS_INVALID_KERNEL, "MV_STATUS_INVALID_KERNEL"},
        {MV_STATUS_INVALID_ARGUMENT, "MV_STATUS_INVALID_ARGUMENT"},
        {MV_STATUS_OUT_OF_BOUNDS, "MV_STATUS_OUT_OF_BOUNDS"},
        {MV_STATUS_OVERLAP, "MV_STATUS_OVERLAP"},
        {MV_STATUS_OUT_OF_MEMORY, "MV_STATUS_OUT_OF_MEMORY"},
        {MV_STATUS_NOT_INITIALIZED, "MV_STATUS_NOT_INITIALIZED"},
        {MV_STATUS_MALFORMED, "MV_STATUS_MALFORMED"},
        {MV_STATUS_UNSUPPORTED_VERSION, "MV_STATUS_UNSUPPORTED_VERSION"},
        {MV_STATUS_BACKEND_UNAVAILABLE, "MV_STATUS_BACKEND_UNAVAILABLE"},
        {MV_STATUS_DEVICE_ERROR, "MV_STATUS_DEVICE_ERROR"},
        {MV_STATUS_KERNEL_BUILD_FAILED, "MV_STATUS_KERNEL_BUILD_FAILED"},
        {MV_STATUS_OUT_OF_DEVICE_MEMORY, "MV_STATUS_OUT_OF_DEVICE_MEMORY"},
        {MV_STATUS_BACKEND_MISMATCH, "MV_STATUS_BACKEND_MISMATCH"},
        {MV_STATUS_PANIC, "MV_STATUS_PANIC"},
    };
    static const uint32_t unknown[] = {17, 19, 25, 99, 101, 1000, UINT32_MAX};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        set_context("status %u", (unsigned)names[i].code);
        CHECK(strcmp(mv_status_name(names[i].code), names[i].name) == 0);
        CHECK(mv_status_description(names[i].code) != NULL);
        CHECK(strcmp(mv_status_description(names[i].code), "unknown status") != 0);
    }
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        set_context("unknown status %u", (unsigned)unknown[i]);
        CHECK(strcmp(mv_status_name(unknown[i]), "MV_STATUS_UNKNOWN") == 0);
        CHECK(strcmp(mv_status_description(unknown[i]), "unknown status") == 0);
    }
}

static void test_pixel_format_size(void)
{
    set_context("mv_pixel_format_size");
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_U8), 1);
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_U16), 2);
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_I16), 2);
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_U32), 4);
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_U64), 8);
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_F32), 4);
    CHECK_INT(mv_pixel_format_size(0), 0);
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_RGB8), 3);
    CHECK_INT(mv_pixel_format_size(8), 0);
    CHECK_INT(mv_pixel_format_size(UINT32_MAX), 0);
}

static void test_context(void)
{
    mv_context *ctx = NULL;
    mv_backend avail = mv_backends_available();
    mv_backend b;
    static const mv_backend gpu[] = {MV_BACKEND_OPENCL, MV_BACKEND_CUDA};
    size_t i;

    set_context("context");
    CHECK(avail & MV_BACKEND_CPU);
    CHECK((avail & ~(mv_backend)MV_BACKEND_ALL) == 0);
    CHECK_INT(MV_BACKEND_ALL, MV_BACKEND_CPU | MV_BACKEND_OPENCL | MV_BACKEND_CUDA);

    CHECK_OK(mv_context_create(MV_BACKEND_CPU, &ctx));
    CHECK(ctx != NULL);
    b = 0;
    CHECK_OK(mv_context_backends(ctx, &b));
    CHECK_INT(b, MV_BACKEND_CPU);
    CHECK_FAILS(MV_STATUS_NULL_POINTER, b, mv_context_backends(NULL, &b));
    CHECK_STATUS(mv_context_backends(ctx, NULL), MV_STATUS_NULL_POINTER);
    mv_context_destroy(ctx);
    mv_context_destroy(NULL); /* documented no-op */

    CHECK_STATUS(mv_context_create(MV_BACKEND_CPU, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, ctx, mv_context_create(0, &ctx));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, ctx, mv_context_create(8, &ctx));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, ctx, mv_context_create(MV_BACKEND_CPU | 8, &ctx));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, ctx, mv_context_create(0x80000000u, &ctx));

    for (i = 0; i < sizeof gpu / sizeof gpu[0]; i++) {
        set_context("context for backend 0x%x", (unsigned)gpu[i]);
        if (avail & gpu[i]) {
            printf("note: backend 0x%x is available here; BACKEND_UNAVAILABLE not tested for it\n",
                   (unsigned)gpu[i]);
            ctx = NULL;
            CHECK_OK(mv_context_create(gpu[i], &ctx));
            mv_context_destroy(ctx);
        } else {
            CHECK_FAILS(MV_STATUS_BACKEND_UNAVAILABLE, ctx, mv_context_create(gpu[i], &ctx));
            CHECK_FAILS(MV_STATUS_BACKEND_UNAVAILABLE, ctx,
                        mv_context_create(MV_BACKEND_CPU | gpu[i], &ctx));
        }
    }
    /* Every combination of available backends works. */
    ctx = NULL;
    set_context("context for all available backends");
    CHECK_OK(mv_context_create(avail, &ctx));
    b = 0;
    CHECK_OK(mv_context_backends(ctx, &b));
    CHECK_INT(b, avail);
    mv_context_destroy(ctx);
}

/* ------------------------------------------------------------------------------------------ */
/* (a) Geometry                                                                               */
/* ------------------------------------------------------------------------------------------ */

static void test_rect(void)
{
    mv_rect r;
    set_context("rect");
    /* {0,0,10,10} ∩ {5,5,10,10} = {5,5,5,5}; IoU = 25 / (100 + 100 − 25) = 1/7. */
    CHECK_OK(mv_rect_intersection(rect(0, 0, 10, 10), rect(5, 5, 10, 10), &r));
    CHECK(rect_eq(r, 5, 5, 5, 5));
    CHECK_NEAR(mv_rect_iou(rect(0, 0, 10, 10), rect(5, 5, 10, 10)), 1.0 / 7.0, 1e-6);
    CHECK_NEAR(mv_rect_iou(rect(3, 4, 5, 6), rect(3, 4, 5, 6)), 1.0, 0.0);
    /* Touching edges do not overlap (right edge is exclusive). */
    CHECK_OK(mv_rect_intersection(rect(0, 0, 5, 5), rect(5, 0, 5, 5), &r));
    CHECK(rect_eq(r, 0, 0, 0, 0));
    CHECK_NEAR(mv_rect_iou(rect(0, 0, 5, 5), rect(5, 0, 5, 5)), 0.0, 0.0);
    /* Empty rectangles: IoU 0. {2,2,4,4} inside {0,0,8,8}: 16/64. */
    CHECK_NEAR(mv_rect_iou(rect(0, 0, 0, 5), rect(0, 0, 0, 5)), 0.0, 0.0);
    CHECK_NEAR(mv_rect_iou(rect(0, 0, -3, 5), rect(0, 0, 5, 5)), 0.0, 0.0);
    CHECK_NEAR(mv_rect_iou(rect(2, 2, 4, 4), rect(0, 0, 8, 8)), 0.25, 1e-7);
    /* Extreme coordinates do not overflow. */
    CHECK_OK(mv_rect_intersection(rect(INT32_MAX - 1, 0, INT32_MAX, 1),
                                  rect(INT32_MIN, 0, INT32_MAX, 1), &r));
    CHECK(rect_eq(r, 0, 0, 0, 0));

    /* Clamp into an 8 x 8 frame. */
    CHECK_OK(mv_rect_clamp(rect(-5, -5, 10, 10), 8, 8, &r));
    CHECK(rect_eq(r, 0, 0, 5, 5));
    CHECK_OK(mv_rect_clamp(rect(6, 6, 10, 10), 8, 8, &r));
    CHECK(rect_eq(r, 6, 6, 2, 2));
    CHECK_OK(mv_rect_clamp(rect(1, 2, 3, 4), 8, 8, &r));
    CHECK(rect_eq(r, 1, 2, 3, 4));
    CHECK_OK(mv_rect_clamp(rect(10, 10, 5, 5), 8, 8, &r));
    CHECK(rect_eq(r, 0, 0, 0, 0));
    CHECK_OK(mv_rect_clamp(rect(0, 0, 5, 5), 0, 8, &r));
    CHECK(rect_eq(r, 0, 0, 0, 0));

    CHECK_STATUS(mv_rect_intersection(rect(0, 0, 1, 1), rect(0, 0, 1, 1), NULL),
                 MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_rect_clamp(rect(0, 0, 1, 1), 8, 8, NULL), MV_STATUS_NULL_POINTER);
}

/* ------------------------------------------------------------------------------------------ */
/* Image descriptors: mv_image_init, mv_image_roi                                             */
/* ------------------------------------------------------------------------------------------ */

static void test_image_init(void)
{
    static uint8_t buf8[64];
    static float buff[32];
    mv_image out;

    set_context("mv_image_init");
    /* stride 0 packs rows. */
    CHECK_OK(mv_image_init(buf8, sizeof buf8, 4, 3, 0, MV_PIXEL_U8, &out));
    CHECK(out.data == (void *)buf8);
    CHECK_INT(out.data_size, sizeof buf8);
    CHECK_INT(out.width, 4);
    CHECK_INT(out.height, 3);
    CHECK_INT(out.stride, 4);
    CHECK_INT(out.format, MV_PIXEL_U8);
    CHECK_OK(mv_image_init(buff, 3 * 4 * sizeof(float), 4, 3, 0, MV_PIXEL_F32, &out));
    CHECK_INT(out.stride, 16);
    /* Explicit stride; the last row needs only width·bpp bytes: 10·2 + 4 = 24. */
    CHECK_OK(mv_image_init(buf8, 24, 4, 3, 10, MV_PIXEL_U8, &out));
    CHECK_INT(out.stride, 10);

    CHECK_STATUS(mv_image_init(buf8, sizeof buf8, 4, 3, 0, MV_PIXEL_U8, NULL),
                 MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_NULL_POINTER, out, mv_image_init(NULL, 64, 4, 3, 0, MV_PIXEL_U8, &out));
    CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, out, mv_image_init(buf8, 64, 4, 3, 0, 0, &out));
    CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, out, mv_image_init(buf8, 64, 4, 3, 0, 8, &out));
    /* Packed RGB (for the KCF trackers): 3 bytes a pixel, any stride. */
    CHECK_OK(mv_image_init(buf8, 64, 4, 3, 0, MV_PIXEL_RGB8, &out));
    CHECK_INT(out.stride, 12);
    CHECK_OK(mv_image_init(buf8, 64, 4, 3, 13, MV_PIXEL_RGB8, &out));
    CHECK_FAILS(MV_STATUS_STRIDE_TOO_SMALL, out,
                mv_image_init(buf8, 64, 4, 3, 11, MV_PIXEL_RGB8, &out));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, out, mv_image_init(buf8, 64, 0, 3, 0, MV_PIXEL_U8, &out));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, out, mv_image_init(buf8, 64, 4, 0, 0, MV_PIXEL_U8, &out));
    CHECK_FAILS(MV_STATUS_STRIDE_TOO_SMALL, out,
                mv_image_init(buf8, 64, 4, 3, 3, MV_PIXEL_U8, &out));
    CHECK_FAILS(MV_STATUS_STRIDE_TOO_SMALL, out,
                mv_image_init(buff, 128, 4, 3, 12, MV_PIXEL_F32, &out));
    /* f32: stride 18 covers a row (16) but is not a multiple of 4; data + 1 byte. */
    CHECK_FAILS(MV_STATUS_MISALIGNED, out, mv_image_init(buff, 120, 4, 3, 18, MV_PIXEL_F32, &out));
    CHECK_FAILS(MV_STATUS_MISALIGNED, out,
                mv_image_init((char *)buff + 1, 120, 4, 3, 0, MV_PIXEL_F32, &out));
    CHECK_FAILS(MV_STATUS_MISALIGNED, out,
                mv_image_init((char *)buff + 1, 60, 4, 3, 0, MV_PIXEL_I16, &out));
    /* 4 x 3 packed u8 needs 12 bytes; stride 10 needs 24. */
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, out, mv_image_init(buf8, 11, 4, 3, 0, MV_PIXEL_U8, &out));
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, out, mv_image_init(buf8, 23, 4, 3, 10, MV_PIXEL_U8, &out));
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, out, mv_image_init(buf8, 0, 1, 1, 0, MV_PIXEL_U8, &out));
    /* stride·(height−1) overflows size_t. */
    CHECK_FAILS(MV_STATUS_OVERFLOW, out,
                mv_image_init(buf8, SIZE_MAX, UINT32_MAX, UINT32_MAX, SIZE_MAX / 2, MV_PIXEL_U8,
                              &out));
    /* No overflow of size_t, but above PTRDIFF_MAX bytes: 2^63 + 1. */
    CHECK_FAILS(MV_STATUS_OVERFLOW, out,
                mv_image_init(buf8, SIZE_MAX, 1, 2, SIZE_MAX / 2 + 1, MV_PIXEL_U8, &out));
}

static void test_image_roi(void)
{
    static uint8_t buf[16];
    static float buff[20];
    mv_image img = image(buf, 4, 4, 4, MV_PIXEL_U8);
    mv_image imf = image(buff, 4, 4, 20, MV_PIXEL_F32);
    mv_image out;
    bad_image bad[MAX_BAD];
    int i, n;

    set_context("mv_image_roi");
    memcpy(buf, H4, sizeof buf);
    /* (1,1) 2 x 2: starts at byte 1·4 + 1 = 5; 16 − 5 = 11 bytes remain. */
    CHECK_OK(mv_image_roi(&img, rect(1, 1, 2, 2), &out));
    CHECK(out.data == (void *)(buf + 5));
    CHECK_INT(out.width, 2);
    CHECK_INT(out.height, 2);
    CHECK_INT(out.stride, 4);
    CHECK_INT(out.data_size, 11);
    CHECK_INT(out.format, MV_PIXEL_U8);
    CHECK_INT(((uint8_t *)out.data)[0], 61);
    CHECK_INT(((uint8_t *)out.data)[out.stride + 1], 110);
    /* The whole image, and the bottom-right pixel. */
    CHECK_OK(mv_image_roi(&img, rect(0, 0, 4, 4), &out));
    CHECK(out.data == (void *)buf && out.width == 4 && out.height == 4);
    CHECK_OK(mv_image_roi(&img, rect(3, 3, 1, 1), &out));
    CHECK_INT(*(uint8_t *)out.data, 165);
    CHECK_INT(out.data_size, 1);
    /* f32, stride 20 bytes: (2,1) starts at 20 + 2·4 = 28 bytes. */
    CHECK_OK(mv_image_roi(&imf, rect(2, 1, 2, 3), &out));
    CHECK(out.data == (void *)((char *)buff + 28));
    CHECK_INT(out.stride, 20);
    CHECK_INT(out.data_size, imf.data_size - 28);

    CHECK_STATUS(mv_image_roi(&img, rect(0, 0, 1, 1), NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_NULL_POINTER, out, mv_image_roi(NULL, rect(0, 0, 1, 1), &out));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, out, mv_image_roi(&img, rect(0, 0, 0, 2), &out));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, out, mv_image_roi(&img, rect(0, 0, 2, -1), &out));
    CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, out, mv_image_roi(&img, rect(3, 3, 2, 2), &out));
    CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, out, mv_image_roi(&img, rect(-1, 0, 2, 2), &out));
    CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, out, mv_image_roi(&img, rect(0, 4, 1, 1), &out));
    CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, out,
                mv_image_roi(&img, rect(2, 0, INT32_MAX, 1), &out));

    n = bad_images(imf, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_image_roi: image %s", bad[i].what);
        CHECK_FAILS(bad[i].status, out, mv_image_roi(&bad[i].im, rect(0, 0, 1, 1), &out));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* (a) Hand-computed filter results                                                           */
/* ------------------------------------------------------------------------------------------ */

static void test_box_blur_values(void)
{
    static uint8_t src[16], dst[16];
    static float srcf[16], dstf[16];
    static uint8_t one = 200, one_out;
    mv_image s = image(src, 4, 4, 4, MV_PIXEL_U8), d = image(dst, 4, 4, 4, MV_PIXEL_U8);
    mv_image sf = image(srcf, 4, 4, 16, MV_PIXEL_F32), df = image(dstf, 4, 4, 16, MV_PIXEL_F32);
    mv_image s1 = image(&one, 1, 1, 1, MV_PIXEL_U8), d1 = image(&one_out, 1, 1, 1, MV_PIXEL_U8);
    int i;

    set_context("box blur values");
    memcpy(src, H4, sizeof src);
    for (i = 0; i < 16; i++) {
        srcf[i] = H4[i];
    }
    CHECK_OK(mv_box_blur(&s, &d, 3, REPLICATE));
    /* (1,1): 10+20+30 + 50+61+70 + 90+100+110 = 541; 541/9 = 60.11 -> 60. */
    CHECK_INT(dst[1 * 4 + 1], 60);
    /* (2,2): 61+70+80 + 100+110+120 + 140+150+165 = 996; 996/9 = 110.67 -> 111. */
    CHECK_INT(dst[2 * 4 + 2], 111);
    /* (0,0) replicate: rows {0,0,1} x cols {0,0,1}: 2·(10+10+20) + (50+50+61) = 241 -> 26.78 -> 27. */
    CHECK_INT(dst[0], 27);
    CHECK_OK(mv_box_blur(&s, &d, 3, REFLECT));
    /* (0,0) reflect-101: rows {1,0,1} x cols {1,0,1}: 2·(61+50+61) + (20+10+20) = 394 -> 43.78 -> 44. */
    CHECK_INT(dst[0], 44);
    CHECK_INT(dst[1 * 4 + 1], 60);
    CHECK_OK(mv_box_blur(&s, &d, 3, CONSTANT(0.0f)));
    /* (0,0) constant 0: 10+20+50+61 = 141 -> 15.67 -> 16. */
    CHECK_INT(dst[0], 16);
    CHECK_OK(mv_box_blur(&s, &d, 3, CONSTANT(255.0f)));
    /* (0,0) constant 255: 141 + 5·255 = 1416 -> 157.33 -> 157. */
    CHECK_INT(dst[0], 157);
    /* ksize 1 is the identity. */
    CHECK_OK(mv_box_blur(&s, &d, 1, REPLICATE));
    CHECK(memcmp(dst, H4, 16) == 0);

    CHECK_OK(mv_box_blur(&sf, &df, 3, REPLICATE));
    CHECK_NEAR(dstf[1 * 4 + 1], 541.0 / 9.0, 1e-4);
    CHECK_NEAR(dstf[2 * 4 + 2], 996.0 / 9.0, 1e-4);
    CHECK_NEAR(dstf[0], 241.0 / 9.0, 1e-4);

    /* 1 x 1 images: every border reads the pixel itself, except constant. */
    CHECK_OK(mv_box_blur(&s1, &d1, 3, REFLECT));
    CHECK_INT(one_out, 200);
    CHECK_OK(mv_box_blur(&s1, &d1, 15, REPLICATE));
    CHECK_INT(one_out, 200);
    /* constant 0: 200/9 = 22.2 -> 22. */
    CHECK_OK(mv_box_blur(&s1, &d1, 3, CONSTANT(0.0f)));
    CHECK_INT(one_out, 22);
}

static void test_filter2d_values(void)
{
    static uint8_t src[16], dst[16];
    static float srcf[16], dstf[16];
    mv_image s = image(src, 4, 4, 4, MV_PIXEL_U8), d = image(dst, 4, 4, 4, MV_PIXEL_U8);
    mv_image sf = image(srcf, 4, 4, 16, MV_PIXEL_F32), df = image(dstf, 4, 4, 16, MV_PIXEL_F32);
    static const float identity[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    static const float ninth[9] = {1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9,
                                   1.f / 9, 1.f / 9, 1.f / 9, 1.f / 9};
    static const float binomial[9] = {0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f,
                                      0.125f, 0.0625f, 0.125f, 0.0625f};
    static const int32_t half_k[1] = {1};
    static const int32_t left_k[9] = {0, 0, 0, -1, 3, 0, 0, 0, 0};
    static const int32_t binomial_q[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    static const int32_t four[1] = {4}, minus[1] = {-1};
    static const int32_t limit[1] = {8421504}; /* floor(INT32_MAX / 255) */
    static const int32_t kx_q[3] = {1, 2, 1}, ky_q[3] = {1, 2, 1};
    int i;

    set_context("filter2d values");
    memcpy(src, H4, sizeof src);
    for (i = 0; i < 16; i++) {
        srcf[i] = H4[i];
    }
    CHECK_OK(mv_filter2d(&s, &d, identity, 3, REFLECT));
    CHECK(memcmp(dst, H4, 16) == 0);
    /* 1/9 is quantised at shift 14: round(16384/9) = 1820 (gain 9·1820·255 + 2^13 fits i32).
     * (1,1): floor((1820·541 + 8192) / 16384) = floor(992812 / 16384) = floor(60.6) = 60.
     * (2,2): floor((1820·996 + 8192) / 16384) = floor(1820912 / 16384) = floor(111.1) = 111. */
    CHECK_OK(mv_filter2d(&s, &d, ninth, 3, REPLICATE));
    CHECK_INT(dst[1 * 4 + 1], 60);
    CHECK_INT(dst[2 * 4 + 2], 111);
    /* [1 2 1]ᵀ[1 2 1]/16 at (1,1): (10+2·20+30 + 2·50+4·61+2·70 + 90+2·100+110)/16 = 964/16
     * = 60.25: u8 60; f32 60.25. */
    CHECK_OK(mv_filter2d(&s, &d, binomial, 3, REPLICATE));
    CHECK_INT(dst[1 * 4 + 1], 60);
    CHECK_OK(mv_filter2d(&sf, &df, binomial, 3, REPLICATE));
    CHECK_NEAR(dstf[1 * 4 + 1], 60.25, 1e-4);

    set_context("filter2d_fixed values");
    /* kernel {1}, shift 1: floor((p + 1) / 2), halves round up: 61 -> 30.5 -> 31,
     * 165 -> 82.5 -> 83, 10 -> 5 (exact). */
    CHECK_OK(mv_filter2d_fixed(&s, &d, half_k, 1, 1, REPLICATE));
    CHECK_INT(dst[1 * 4 + 1], 31);
    CHECK_INT(dst[15], 83);
    CHECK_INT(dst[0], 5);
    /* kernel (3·centre − left), shift 1: (1,1): (3·61 − 50 + 1)/2 = 134/2 = 67 (66.5 up);
     * (2,2): (3·110 − 100 + 1)/2 = 115.5 -> 115 (exact 115). */
    CHECK_OK(mv_filter2d_fixed(&s, &d, left_k, 3, 1, REPLICATE));
    CHECK_INT(dst[1 * 4 + 1], 67);
    CHECK_INT(dst[2 * 4 + 2], 115);
    /* Same as binomial/16: 964 + 8 = 972, >> 4 = 60. */
    CHECK_OK(mv_filter2d_fixed(&s, &d, binomial_q, 3, 4, REPLICATE));
    CHECK_INT(dst[1 * 4 + 1], 60);
    /* Saturation: 4·165 = 660 -> 255; −p -> 0. */
    CHECK_OK(mv_filter2d_fixed(&s, &d, four, 1, 0, REPLICATE));
    CHECK_INT(dst[15], 255);
    CHECK_INT(dst[0], 40);
    CHECK_OK(mv_filter2d_fixed(&s, &d, minus, 1, 0, REPLICATE));
    CHECK_INT(dst[15], 0);
    /* Range limit: 255·8421504 = 2147483520; + 2^6 fits INT32_MAX, + 2^7 does not. */
    CHECK_OK(mv_filter2d_fixed(&s, &d, limit, 1, 7, REPLICATE));
    poison(dst, sizeof dst);
    CHECK_STATUS(mv_filter2d_fixed(&s, &d, limit, 1, 8, REPLICATE), MV_STATUS_INVALID_KERNEL);
    CHECK(untouched(dst, sizeof dst));

    set_context("sep_filter2d values");
    CHECK_OK(mv_sep_filter2d_fixed(&s, &d, kx_q, 3, ky_q, 3, 4, REPLICATE));
    CHECK_INT(dst[1 * 4 + 1], 60);
    /* Separable boundary: 255·8421504·1 + 2^6 fits, + 2^7 does not. */
    CHECK_OK(mv_sep_filter2d_fixed(&s, &d, limit, 1, half_k, 1, 7, REPLICATE));
    poison(dst, sizeof dst);
    CHECK_STATUS(mv_sep_filter2d_fixed(&s, &d, limit, 1, half_k, 1, 8, REPLICATE),
                 MV_STATUS_INVALID_KERNEL);
    CHECK(untouched(dst, sizeof dst));
    {
        static const float v[3] = {0.25f, 0.5f, 0.25f};
        CHECK_OK(mv_sep_filter2d(&sf, &df, v, 3, v, 3, REPLICATE));
        CHECK_NEAR(dstf[1 * 4 + 1], 60.25, 1e-4);
        CHECK_OK(mv_sep_filter2d(&s, &d, v, 3, v, 3, REPLICATE));
        CHECK_INT(dst[1 * 4 + 1], 60);
    }
}

static void test_gaussian_values(void)
{
    static uint8_t flat[5 * 7], flat_out[5 * 7], imp[9], imp_out[9];
    static float impf[9], impf_out[9];
    mv_image s = image(flat, 5, 7, 5, MV_PIXEL_U8), d = image(flat_out, 5, 7, 5, MV_PIXEL_U8);
    mv_image si = image(imp, 3, 3, 3, MV_PIXEL_U8), di = image(imp_out, 3, 3, 3, MV_PIXEL_U8);
    mv_image sf = image(impf, 3, 3, 12, MV_PIXEL_F32), df = image(impf_out, 3, 3, 12, MV_PIXEL_F32);
    uint32_t k;
    int i, all77;

    set_context("gaussian values");
    memset(flat, 77, sizeof flat);
    /* Taps sum to exactly 1024 per axis, so a flat image stays flat at every size. */
    for (k = 1; k <= 15; k += 2) {
        CHECK_OK(mv_gaussian_blur(&s, &d, k, 0.0f, REFLECT));
        all77 = 1;
        for (i = 0; i < 35; i++) {
            all77 &= flat_out[i] == 77;
        }
        CHECK(all77);
    }
    CHECK_OK(mv_gaussian_blur(&s, &d, 0, 1.5f, REPLICATE));
    CHECK(flat_out[17] == 77);

    /* Impulse of 100 at the centre of a 3 x 3 image, ksize 3, sigma 0.8 (what OpenCV's formula
     * 0.3·((3−1)/2 − 1) + 0.8 gives). Weights exp(−d²/(2·0.64)) normalised: 0.238994, 0.522011,
     * 0.238994. In Q10: round -> 245, 535, 245 (sum 1025); centre adjusted so the sum is 1024:
     * 245, 534, 245. Output = floor((kx·ky·100 + 2^19) / 2^20):
     *   centre 534·534·100 = 28515600 -> 27.19 -> 27
     *   edge   534·245·100 = 13083000 -> 12.48 -> 12
     *   corner 245·245·100 =  6002500 ->  5.72 -> 6      (constant border 0) */
    memset(imp, 0, sizeof imp);
    imp[4] = 100;
    CHECK_OK(mv_gaussian_blur(&si, &di, 3, 0.8f, CONSTANT(0.0f)));
    CHECK_INT(imp_out[4], 27);
    CHECK_INT(imp_out[1], 12);
    CHECK_INT(imp_out[3], 12);
    CHECK_INT(imp_out[0], 6);
    CHECK_INT(imp_out[8], 6);
    /* f32: 100·0.522011² = 27.2496, 100·0.522011·0.238994 = 12.4758, 100·0.238994² = 5.7118. */
    memset(impf, 0, sizeof impf);
    impf[4] = 100.0f;
    CHECK_OK(mv_gaussian_blur(&sf, &df, 3, 0.8f, CONSTANT(0.0f)));
    CHECK_NEAR(impf_out[4], 27.2496, 1e-3);
    CHECK_NEAR(impf_out[1], 12.4758, 1e-3);
    CHECK_NEAR(impf_out[0], 5.7118, 1e-3);

    /* sigma 0 with ksize <= 7: OpenCV's fixed table, [1 2 1]/4 for ksize 3 (Q10: 256, 512, 256).
     *   centre 512·512·100 = 26214400 -> 25.0 -> 25
     *   edge   512·256·100 = 13107200 -> 12.5 -> 13      (halves round up)
     *   corner 256·256·100 =  6553600 -> 6.25 -> 6
     * f32: 25, 12.5, 6.25 exactly (dyadic weights). */
    CHECK_OK(mv_gaussian_blur(&si, &di, 3, 0.0f, CONSTANT(0.0f)));
    CHECK_INT(imp_out[4], 25);
    CHECK_INT(imp_out[1], 13);
    CHECK_INT(imp_out[5], 13);
    CHECK_INT(imp_out[0], 6);
    CHECK_OK(mv_gaussian_blur(&sf, &df, 3, 0.0f, CONSTANT(0.0f)));
    CHECK_NEAR(impf_out[4], 25.0, 1e-6);
    CHECK_NEAR(impf_out[7], 12.5, 1e-6);
    CHECK_NEAR(impf_out[2], 6.25, 1e-6);
}

static void test_sobel_values(void)
{
    static uint8_t ramp[16], h4[16];
    static int16_t dx[16], dy[16];
    static float h4f[16], dxf[16], dyf[16], mag[4], ang[4];
    static int16_t gx[4] = {3, -1, 0, -5}, gy[4] = {4, 0, 0, -12};
    mv_image sr = image(ramp, 4, 4, 4, MV_PIXEL_U8), sh = image(h4, 4, 4, 4, MV_PIXEL_U8);
    mv_image ix = image(dx, 4, 4, 8, MV_PIXEL_I16), iy = image(dy, 4, 4, 8, MV_PIXEL_I16);
    mv_image shf = image(h4f, 4, 4, 16, MV_PIXEL_F32);
    mv_image fx = image(dxf, 4, 4, 16, MV_PIXEL_F32), fy = image(dyf, 4, 4, 16, MV_PIXEL_F32);
    mv_image pgx = image(gx, 4, 1, 8, MV_PIXEL_I16), pgy = image(gy, 4, 1, 8, MV_PIXEL_I16);
    mv_image pm = image(mag, 4, 1, 16, MV_PIXEL_F32), pa = image(ang, 4, 1, 16, MV_PIXEL_F32);
    int x, y;

    set_context("sobel values");
    /* Ramp p(x, y) = 10x + 3y. Interior: dx = (1+2+1)·(p(x+1) − p(x−1)) = 4·20 = 80,
     * dy = 4·(3·2) = 24. At (0,0) with replicate: dx = 4·(p(1) − p(0)) = 40, dy = 4·3 = 12. */
    for (y = 0; y < 4; y++) {
        for (x = 0; x < 4; x++) {
            ramp[y * 4 + x] = (uint8_t)(10 * x + 3 * y);
        }
    }
    CHECK_OK(mv_sobel(&sr, &ix, &iy, REPLICATE));
    CHECK_INT(dx[1 * 4 + 1], 80);
    CHECK_INT(dy[1 * 4 + 1], 24);
    CHECK_INT(dx[2 * 4 + 2], 80);
    CHECK_INT(dx[0], 40);
    CHECK_INT(dy[0], 12);
    /* Reflect-101 mirrors the ramp at the edge: the derivative there is 0. */
    CHECK_OK(mv_sobel(&sr, &ix, &iy, REFLECT));
    CHECK_INT(dx[0], 0);
    CHECK_INT(dy[0], 0);

    /* H4 at (1,1): dx = (30−10) + 2·(70−50) + (110−90) = 80; dy = (90−10) + 2·(100−20) +
     * (110−30) = 320. At (2,2): dx = (80−61) + 2·(120−100) + (165−140) = 84;
     * dy = (140−61) + 2·(150−70) + (165−80) = 324. */
    memcpy(h4, H4, sizeof h4);
    for (x = 0; x < 16; x++) {
        h4f[x] = H4[x];
    }
    CHECK_OK(mv_sobel(&sh, &ix, &iy, REPLICATE));
    CHECK_INT(dx[1 * 4 + 1], 80);
    CHECK_INT(dy[1 * 4 + 1], 320);
    CHECK_INT(dx[2 * 4 + 2], 84);
    CHECK_INT(dy[2 * 4 + 2], 324);
    CHECK_OK(mv_sobel(&shf, &fx, &fy, REPLICATE));
    CHECK_NEAR(dxf[2 * 4 + 2], 84.0, 0.0);
    CHECK_NEAR(dyf[2 * 4 + 2], 324.0, 0.0);

    set_context("gradient polar values");
    /* (3,4) -> 5, atan2(4,3) = 0.927295; (−1,0) -> 1, π; (0,0) -> 0, 0; (−5,−12) -> 13, −1.965587. */
    CHECK_OK(mv_gradient_polar(&pgx, &pgy, &pm, &pa));
    CHECK_NEAR(mag[0], 5.0, 1e-6);
    CHECK_NEAR(ang[0], 0.9272952, 1e-6);
    CHECK_NEAR(mag[1], 1.0, 1e-6);
    CHECK_NEAR(ang[1], 3.14159265, 1e-6);
    CHECK_NEAR(mag[2], 0.0, 0.0);
    CHECK_NEAR(ang[2], 0.0, 0.0);
    CHECK_NEAR(mag[3], 13.0, 1e-6);
    CHECK_NEAR(ang[3], -1.9655874, 1e-6);
}

static void test_integral_values(void)
{
    /* Source 3 x 3 with stride 4 (one padding byte per row); tables 4 x 4 with a padding
     * element per row, which must stay untouched. */
    static uint8_t src[12] = {1, 2, 3, 0xEE, 4, 5, 6, 0xEE, 7, 8, 9, 0xEE};
    static uint32_t sum[4 * 5];
    static uint64_t sq[4 * 5];
    static const uint32_t want_sum[16] = {0, 0, 0, 0, 0, 1, 3, 6, 0, 5, 12, 21, 0, 12, 27, 45};
    static const uint64_t want_sq[16] = {0, 0, 0, 0, 0, 1, 5, 14, 0, 17, 46, 91, 0, 66, 159, 285};
    mv_image s = image(src, 3, 3, 4, MV_PIXEL_U8);
    mv_image t = image(sum, 4, 4, 5 * 4, MV_PIXEL_U32), q = image(sq, 4, 4, 5 * 8, MV_PIXEL_U64);
    uint32_t ws = 0;
    double mean = -1.0, var = -1.0;
    int x, y, pad_ok = 1;

    set_context("integral values");
    poison(sum, sizeof sum);
    poison(sq, sizeof sq);
    /* sum(x, y) = Σ of pixels above and left; e.g. (2,2) = 1+2+4+5 = 12, (3,3) = 45.
     * sqsum(2,2) = 1+4+16+25 = 46; (3,3) = 1+4+9+16+25+36+49+64+81 = 285. */
    CHECK_OK(mv_integral(&s, &t, &q));
    for (y = 0; y < 4; y++) {
        for (x = 0; x < 4; x++) {
            set_context("integral entry (%d,%d)", x, y);
            CHECK_INT(sum[y * 5 + x], want_sum[y * 4 + x]);
            CHECK_INT(sq[y * 5 + x], want_sq[y * 4 + x]);
        }
        pad_ok &= untouched(&sum[y * 5 + 4], sizeof sum[0]) && untouched(&sq[y * 5 + 4], sizeof sq[0]);
    }
    set_context("integral values");
    CHECK(pad_ok);
    /* sqsum is optional. */
    poison(sum, sizeof sum);
    CHECK_OK(mv_integral(&s, &t, NULL));
    CHECK_INT(sum[3 * 5 + 3], 45);

    set_context("integral window values");
    /* Window (1,1) 2 x 2 = {5,6,8,9}: sum 28, mean 7, variance (4·206 − 28²)/16 = 40/16 = 2.5. */
    CHECK_OK(mv_integral_window_sum(&t, rect(1, 1, 2, 2), &ws));
    CHECK_INT(ws, 28);
    CHECK_OK(mv_integral_window_stats(&t, &q, rect(1, 1, 2, 2), &mean, &var));
    CHECK_NEAR(mean, 7.0, 0.0);
    CHECK_NEAR(var, 2.5, 0.0);
    /* Whole image: 45, mean 5, variance (9·285 − 45²)/81 = 540/81 = 6.666…. */
    CHECK_OK(mv_integral_window_sum(&t, rect(0, 0, 3, 3), &ws));
    CHECK_INT(ws, 45);
    CHECK_OK(mv_integral_window_stats(&t, &q, rect(0, 0, 3, 3), &mean, &var));
    CHECK_NEAR(mean, 5.0, 0.0);
    CHECK_NEAR(var, 540.0 / 81.0, 1e-12);
    /* Single pixel (2,0) = 3: variance 0. Only one output requested each time. */
    mean = var = -1.0;
    CHECK_OK(mv_integral_window_stats(&t, &q, rect(2, 0, 1, 1), &mean, NULL));
    CHECK_NEAR(mean, 3.0, 0.0);
    CHECK_NEAR(var, -1.0, 0.0);
    CHECK_OK(mv_integral_window_stats(&t, &q, rect(2, 0, 1, 1), NULL, &var));
    CHECK_NEAR(var, 0.0, 0.0);
}

static void test_pyramid_resize_values(void)
{
    static uint8_t flat[5 * 7], half[3 * 4];
    static float flatf[5 * 7], halff[3 * 4];
    static uint8_t two[4] = {0, 102, 200, 40}, four[16], one[1];
    static float twof[4] = {0.0f, 102.0f, 200.0f, 40.0f}, fourf[16];
    static uint8_t h4[16];
    static uint8_t single = 42, grid[6];
    mv_image s = image(flat, 5, 7, 5, MV_PIXEL_U8), d = image(half, 3, 4, 3, MV_PIXEL_U8);
    mv_image sf = image(flatf, 5, 7, 20, MV_PIXEL_F32), df = image(halff, 3, 4, 12, MV_PIXEL_F32);
    mv_image s2 = image(two, 2, 2, 2, MV_PIXEL_U8), d4 = image(four, 4, 4, 4, MV_PIXEL_U8);
    mv_image s2f = image(twof, 2, 2, 8, MV_PIXEL_F32), d4f = image(fourf, 4, 4, 16, MV_PIXEL_F32);
    mv_image sh = image(h4, 4, 4, 4, MV_PIXEL_U8), d1 = image(one, 1, 1, 1, MV_PIXEL_U8);
    mv_image s1 = image(&single, 1, 1, 1, MV_PIXEL_U8), dg = image(grid, 3, 2, 3, MV_PIXEL_U8);
    uint32_t w = 0, h = 0;
    int i, ok;

    set_context("pyr_down_size");
    CHECK_OK(mv_pyr_down_size(5, 7, &w, &h));
    CHECK(w == 3 && h == 4);
    CHECK_OK(mv_pyr_down_size(1, 1, &w, &h));
    CHECK(w == 1 && h == 1);
    CHECK_OK(mv_pyr_down_size(UINT32_MAX, 2, &w, &h));
    CHECK(w == 2147483648u && h == 1);

    set_context("pyr_down values");
    memset(flat, 77, sizeof flat);
    for (i = 0; i < 35; i++) {
        flatf[i] = 77.0f;
    }
    /* [1 4 6 4 1]/16 sums to 1: a constant image stays constant. */
    CHECK_OK(mv_pyr_down(&s, &d, REFLECT));
    ok = 1;
    for (i = 0; i < 12; i++) {
        ok &= half[i] == 77;
    }
    CHECK(ok);
    CHECK_OK(mv_pyr_down(&sf, &df, REPLICATE));
    ok = 1;
    for (i = 0; i < 12; i++) {
        ok &= halff[i] == 77.0f;
    }
    CHECK(ok);

    set_context("resize values");
    /* 2 x 2 -> 4 x 4: destination d samples s = (d + ½)·2/4 − ½ = d/2 − ¼, clamped to [0, 1]:
     * d = 0 -> 0 (clamped), 1 -> 0.25, 2 -> 0.75, 3 -> 1 (clamped).
     * src = [0 102; 200 40].
     *   (1,0): 0.75·0 + 0.25·102 = 25.5 -> 26 (half up)     (2,0): 0.25·0 + 0.75·102 = 76.5 -> 77
     *   (3,0): 102                                          (0,1): 0.75·0 + 0.25·200 = 50
     *   (1,1): 0.5625·0 + 0.1875·102 + 0.1875·200 + 0.0625·40 = 59.125 -> 59
     *   (2,2): 0.0625·0 + 0.1875·102 + 0.1875·200 + 0.5625·40 = 79.125 -> 79
     *   (0,3): 200                                          (3,3): 40 */
    CHECK_OK(mv_resize_bilinear(&s2, &d4));
    CHECK_INT(four[0], 0);
    CHECK_INT(four[1], 26);
    CHECK_INT(four[2], 77);
    CHECK_INT(four[3], 102);
    CHECK_INT(four[1 * 4 + 0], 50);
    CHECK_INT(four[1 * 4 + 1], 59);
    CHECK_INT(four[2 * 4 + 2], 79);
    CHECK_INT(four[3 * 4 + 0], 200);
    CHECK_INT(four[3 * 4 + 3], 40);
    CHECK_OK(mv_resize_bilinear(&s2f, &d4f));
    CHECK_NEAR(fourf[1], 25.5, 1e-5);
    CHECK_NEAR(fourf[1 * 4 + 1], 59.125, 1e-4);
    CHECK_NEAR(fourf[2 * 4 + 2], 79.125, 1e-4);
    CHECK_NEAR(fourf[3 * 4 + 3], 40.0, 0.0);
    /* 4 x 4 -> 1 x 1 samples (0.5·4 − 0.5) = 1.5 on both axes: the mean of the four centre
     * pixels of H4, (61 + 70 + 100 + 110)/4 = 85.25 -> 85. */
    memcpy(h4, H4, sizeof h4);
    CHECK_OK(mv_resize_bilinear(&sh, &d1));
    CHECK_INT(one[0], 85);
    /* 1 x 1 -> 3 x 2: every pixel is the source pixel. */
    CHECK_OK(mv_resize_bilinear(&s1, &dg));
    ok = 1;
    for (i = 0; i < 6; i++) {
        ok &= grid[i] == 42;
    }
    CHECK(ok);
}

/* ------------------------------------------------------------------------------------------ */
/* (b) Shared error suite of the src -> dst operations                                        */
/* ------------------------------------------------------------------------------------------ */

enum dst_kind { DST_SAME, DST_PYR, DST_RESIZE };

typedef struct {
    const char *name;
    mv_status (*run)(const mv_image *src, const mv_image *dst, mv_border border);
    int has_border;
    int accepts_f32;
    enum dst_kind kind;
} unary_op;

static const float K3F[9] = {0.0625f, 0.125f, 0.0625f, 0.125f, 0.25f, 0.125f, 0.0625f, 0.125f, 0.0625f};
static const int32_t K3Q[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
static const float V3F[3] = {0.25f, 0.5f, 0.25f};
static const int32_t V3Q[3] = {1, 2, 1};

static mv_status op_box(const mv_image *s, const mv_image *d, mv_border b)
{
    return mv_box_blur(s, d, 3, b);
}
static mv_status op_gaussian(const mv_image *s, const mv_image *d, mv_border b)
{
    return mv_gaussian_blur(s, d, 5, 0.0f, b);
}
static mv_status op_filter2d(const mv_image *s, const mv_image *d, mv_border b)
{
    return mv_filter2d(s, d, K3F, 3, b);
}
static mv_status op_filter2d_fixed(const mv_image *s, const mv_image *d, mv_border b)
{
    return mv_filter2d_fixed(s, d, K3Q, 3, 4, b);
}
static mv_status op_sep(const mv_image *s, const mv_image *d, mv_border b)
{
    return mv_sep_filter2d(s, d, V3F, 3, V3F, 3, b);
}
static mv_status op_sep_fixed(const mv_image *s, const mv_image *d, mv_border b)
{
    return mv_sep_filter2d_fixed(s, d, V3Q, 3, V3Q, 3, 4, b);
}
static mv_status op_pyr(const mv_image *s, const mv_image *d, mv_border b)
{
    return mv_pyr_down(s, d, b);
}
static mv_status op_resize(const mv_image *s, const mv_image *d, mv_border b)
{
    (void)b;
    return mv_resize_bilinear(s, d);
}

static const unary_op OPS[] = {
    {"mv_box_blur", op_box, 1, 1, DST_SAME},
    {"mv_gaussian_blur", op_gaussian, 1, 1, DST_SAME},
    {"mv_filter2d", op_filter2d, 1, 1, DST_SAME},
    {"mv_filter2d_fixed", op_filter2d_fixed, 1, 0, DST_SAME},
    {"mv_sep_filter2d", op_sep, 1, 1, DST_SAME},
    {"mv_sep_filter2d_fixed", op_sep_fixed, 1, 0, DST_SAME},
    {"mv_pyr_down", op_pyr, 1, 1, DST_PYR},
    {"mv_resize_bilinear", op_resize, 0, 1, DST_RESIZE},
};

/* Source 7 x 5 with padded rows (u8 stride 9 bytes, f32 stride 8 floats); outputs packed. The
 * buffers have slack so misaligned variants stay inside them. */
enum { SW = 7, SH = 5, S8_STRIDE = 9, SF_STRIDE = 8 };
static uint8_t g_src8[SH * S8_STRIDE + 8];
static float g_srcf[SH * SF_STRIDE + 2];
static uint16_t g_src16[SH * SW + 2];
static uint8_t g_dst8[64];
static float g_dstf[64];
static uint16_t g_dst16[64];
static uint8_t g_ref8[64];
static float g_reff[64];
static uint8_t g_work8[(SH + 1) * S8_STRIDE];
static float g_workf[(SH + 1) * SF_STRIDE];

static void fill_sources(void)
{
    int x, y;
    memset(g_src8, 0xEE, sizeof g_src8);
    for (y = 0; y < SH; y++) {
        for (x = 0; x < SW; x++) {
            uint8_t v = (uint8_t)((x * 37 + y * 91 + x * y * 13) & 0xFF);
            g_src8[y * S8_STRIDE + x] = v;
            g_srcf[y * SF_STRIDE + x] = (float)v;
            g_src16[y * SW + x] = v;
        }
    }
}

static mv_image op_src(mv_pixel_format f)
{
    if (f == MV_PIXEL_F32) {
        return image(g_srcf, SW, SH, SF_STRIDE * sizeof(float), f);
    }
    return image(g_src8, SW, SH, S8_STRIDE, f);
}

/* The destination of `op`; `wrong` gives one of the wrong size (not for resize). */
static mv_image op_dst(const unary_op *op, mv_pixel_format f, int wrong)
{
    uint32_t w = SW, h = SH;
    if (op->kind == DST_PYR) {
        w = (SW + 1) / 2; /* 4 x 3 */
        h = (SH + 1) / 2;
        if (wrong) {
            w = SW; /* the source size is wrong for a pyramid level */
            h = SH;
        }
    } else if (op->kind == DST_RESIZE) {
        w = 5;
        h = 3;
    } else if (wrong) {
        w = SW - 1;
    }
    if (f == MV_PIXEL_F32) {
        return image(g_dstf, w, h, w * sizeof(float), f);
    }
    if (f == MV_PIXEL_U16 || f == MV_PIXEL_I16) {
        return image(g_dst16, w, h, w * 2, f);
    }
    return image(g_dst8, w, h, w, f);
}

static void test_unary_errors(const unary_op *op, mv_pixel_format f)
{
    mv_image src = op_src(f), dst = op_dst(op, f, 0);
    mv_image src16 = image(g_src16, SW, SH, SW * 2, MV_PIXEL_U16);
    mv_border good = f == MV_PIXEL_U8 ? CONSTANT(255.0f) : CONSTANT(300.0f);
    bad_image bad[MAX_BAD];
    int i, n;
    /* Both destination buffers are checked: a failing call must touch neither. */
#define OP_FAILS(want, call) CHECK_FAILS2(want, g_dst8, g_dstf, call)

    set_context("%s %s: valid call", op->name, format_name(f));
    CHECK_OK(op->run(&src, &dst, REPLICATE));
    CHECK_OK(op->run(&src, &dst, REFLECT));
    if (op->has_border) {
        CHECK_OK(op->run(&src, &dst, good));
    }

    set_context("%s %s: NULL images", op->name, format_name(f));
    OP_FAILS(MV_STATUS_NULL_POINTER, op->run(NULL, &dst, REPLICATE));
    OP_FAILS(MV_STATUS_NULL_POINTER, op->run(&src, NULL, REPLICATE));
    OP_FAILS(MV_STATUS_NULL_POINTER, op->run(NULL, NULL, REPLICATE));

    n = bad_images(src, bad);
    for (i = 0; i < n; i++) {
        set_context("%s %s: src %s", op->name, format_name(f), bad[i].what);
        OP_FAILS(bad[i].status, op->run(&bad[i].im, &dst, REPLICATE));
    }
    n = bad_images(dst, bad);
    for (i = 0; i < n; i++) {
        set_context("%s %s: dst %s", op->name, format_name(f), bad[i].what);
        OP_FAILS(bad[i].status, op->run(&src, &bad[i].im, REPLICATE));
    }

    set_context("%s %s: formats", op->name, format_name(f));
    {
        mv_image other = op_dst(op, f == MV_PIXEL_U8 ? MV_PIXEL_F32 : MV_PIXEL_U8, 0);
        mv_image dst16 = op_dst(op, MV_PIXEL_U16, 0);
        mv_image srci16 = src16, dsti16 = dst16;
        srci16.format = dsti16.format = MV_PIXEL_I16;
        mv_image rgb = src;
        rgb.format = MV_PIXEL_RGB8; /* a valid image, but only the KCF trackers take it */
        OP_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, op->run(&src, &other, REPLICATE));
        OP_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, op->run(&rgb, &dst, REPLICATE));
        CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, g_dst16, op->run(&src16, &dst16, REPLICATE));
        CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, g_dst16, op->run(&srci16, &dsti16, REPLICATE));
        CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, g_dst16, op->run(&src16, &dst, REPLICATE));
    }

    if (op->kind != DST_RESIZE) {
        mv_image wrong = op_dst(op, f, 1);
        set_context("%s %s: size mismatch", op->name, format_name(f));
        OP_FAILS(MV_STATUS_SIZE_MISMATCH, op->run(&src, &wrong, REPLICATE));
    }

    if (op->has_border) {
        set_context("%s %s: borders", op->name, format_name(f));
        OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, border(3, 0.0f)));
        OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, border(UINT32_MAX, 0.0f)));
        OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(NAN)));
        if (f == MV_PIXEL_U8) {
            /* u8 constants are integers in 0..255. */
            OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(300.0f)));
            OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(256.0f)));
            OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(-1.0f)));
            OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(1.5f)));
            OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(INFINITY)));
            CHECK_OK(op->run(&src, &dst, CONSTANT(0.0f)));
        } else {
            OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(INFINITY)));
            OP_FAILS(MV_STATUS_INVALID_ARGUMENT, op->run(&src, &dst, CONSTANT(-INFINITY)));
            CHECK_OK(op->run(&src, &dst, CONSTANT(-1.5f)));
        }
    }

    if (op->kind == DST_SAME) {
        /* In place (dst == src) and with an output overlapping the input by all but one row:
         * both succeed and equal the out-of-place result. */
        size_t row = f == MV_PIXEL_F32 ? SF_STRIDE * sizeof(float) : S8_STRIDE;
        size_t bytes = row * SH;
        void *work = f == MV_PIXEL_F32 ? (void *)g_workf : (void *)g_work8;
        void *ref = f == MV_PIXEL_F32 ? (void *)g_reff : (void *)g_ref8;
        mv_image w = src, shifted;
        uint32_t y;
        int same = 1;

        set_context("%s %s: in place", op->name, format_name(f));
        CHECK_OK(op->run(&src, &dst, REFLECT));
        memcpy(ref, dst.data, dst.data_size);
        memcpy(work, src.data, bytes);
        w.data = work;
        CHECK_OK(op->run(&w, &w, REFLECT));
        for (y = 0; y < SH; y++) {
            same &= memcmp((char *)work + y * row, (char *)ref + y * dst.stride,
                           SW * mv_pixel_format_size(f)) == 0;
        }
        CHECK(same);

        set_context("%s %s: output overlapping the input", op->name, format_name(f));
        memcpy(work, src.data, bytes);
        shifted = w;
        shifted.data = (char *)work + row; /* rows 1..SH of the work buffer */
        CHECK_OK(op->run(&w, &shifted, REFLECT));
        same = 1;
        for (y = 0; y < SH; y++) {
            same &= memcmp((char *)work + (y + 1) * row, (char *)ref + y * dst.stride,
                           SW * mv_pixel_format_size(f)) == 0;
        }
        CHECK(same);
    }
#undef OP_FAILS
}

/* ------------------------------------------------------------------------------------------ */
/* (b) Kernel, size and sigma arguments                                                       */
/* ------------------------------------------------------------------------------------------ */

static void test_kernel_errors(void)
{
    mv_image s8 = op_src(MV_PIXEL_U8), sf = op_src(MV_PIXEL_F32);
    mv_image d8 = image(g_dst8, SW, SH, SW, MV_PIXEL_U8);
    mv_image df = image(g_dstf, SW, SH, SW * sizeof(float), MV_PIXEL_F32);
    static float k[15 * 15 + 2];
    static int32_t kq[15 * 15 + 2];
    static const uint32_t bad_sizes[] = {2, 4, 16, 17, 255, UINT32_MAX};
    size_t i;
    const mv_image *srcs[2], *dsts[2];

    srcs[0] = &s8;
    srcs[1] = &sf;
    dsts[0] = &d8;
    dsts[1] = &df;
    for (i = 0; i < sizeof k / sizeof k[0]; i++) {
        k[i] = 0.01f;
        kq[i] = 1;
    }

    for (i = 0; i < 2; i++) {
        const mv_image *s = srcs[i], *d = dsts[i];
        size_t j;
        const char *fn = format_name(s->format);

        set_context("mv_filter2d %s kernel", fn);
        CHECK_OK(mv_filter2d(s, d, k, 15, REPLICATE));
        CHECK_FAILS2(MV_STATUS_NULL_POINTER, g_dst8, g_dstf, mv_filter2d(s, d, NULL, 3, REPLICATE));
        CHECK_FAILS2(MV_STATUS_ZERO_SIZE, g_dst8, g_dstf, mv_filter2d(s, d, k, 0, REPLICATE));
        for (j = 0; j < sizeof bad_sizes / sizeof bad_sizes[0]; j++) {
            set_context("mv_filter2d %s ksize %u", fn, (unsigned)bad_sizes[j]);
            CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                         mv_filter2d(s, d, k, bad_sizes[j], REPLICATE));
        }
        set_context("mv_filter2d %s non-finite coefficients", fn);
        k[4] = NAN;
        CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf, mv_filter2d(s, d, k, 3, REPLICATE));
        k[4] = INFINITY;
        CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf, mv_filter2d(s, d, k, 3, REPLICATE));
        k[4] = 0.01f;

        set_context("mv_sep_filter2d %s kernel", fn);
        CHECK_OK(mv_sep_filter2d(s, d, k, 15, k, 1, REPLICATE));
        CHECK_FAILS2(MV_STATUS_NULL_POINTER, g_dst8, g_dstf,
                     mv_sep_filter2d(s, d, NULL, 3, k, 3, REPLICATE));
        CHECK_FAILS2(MV_STATUS_NULL_POINTER, g_dst8, g_dstf,
                     mv_sep_filter2d(s, d, k, 3, NULL, 3, REPLICATE));
        CHECK_FAILS2(MV_STATUS_ZERO_SIZE, g_dst8, g_dstf,
                     mv_sep_filter2d(s, d, k, 0, k, 3, REPLICATE));
        CHECK_FAILS2(MV_STATUS_ZERO_SIZE, g_dst8, g_dstf,
                     mv_sep_filter2d(s, d, k, 3, k, 0, REPLICATE));
        for (j = 0; j < sizeof bad_sizes / sizeof bad_sizes[0]; j++) {
            set_context("mv_sep_filter2d %s length %u", fn, (unsigned)bad_sizes[j]);
            CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                         mv_sep_filter2d(s, d, k, bad_sizes[j], k, 3, REPLICATE));
            CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                         mv_sep_filter2d(s, d, k, 3, k, bad_sizes[j], REPLICATE));
        }
        set_context("mv_sep_filter2d %s non-finite coefficients", fn);
        k[1] = NAN;
        CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                     mv_sep_filter2d(s, d, k, 3, V3F, 3, REPLICATE));
        CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                     mv_sep_filter2d(s, d, V3F, 3, k, 3, REPLICATE));
        k[1] = 0.01f;

        set_context("mv_box_blur %s ksize", fn);
        CHECK_OK(mv_box_blur(s, d, 15, REPLICATE));
        CHECK_FAILS2(MV_STATUS_ZERO_SIZE, g_dst8, g_dstf, mv_box_blur(s, d, 0, REPLICATE));
        for (j = 0; j < sizeof bad_sizes / sizeof bad_sizes[0]; j++) {
            set_context("mv_box_blur %s ksize %u", fn, (unsigned)bad_sizes[j]);
            CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                         mv_box_blur(s, d, bad_sizes[j], REPLICATE));
        }

        set_context("mv_gaussian_blur %s ksize/sigma", fn);
        CHECK_OK(mv_gaussian_blur(s, d, 15, 0.0f, REPLICATE));
        CHECK_OK(mv_gaussian_blur(s, d, 3, 5.0f, REPLICATE)); /* explicit size, any sigma */
        CHECK_OK(mv_gaussian_blur(s, d, 0, 7.0f / 3.0f, REPLICATE)); /* 2·ceil(7)+1 = 15 */
        CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, g_dst8, g_dstf,
                     mv_gaussian_blur(s, d, 0, 0.0f, REPLICATE));
        CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, g_dst8, g_dstf,
                     mv_gaussian_blur(s, d, 0, -1.0f, REPLICATE));
        CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, g_dst8, g_dstf,
                     mv_gaussian_blur(s, d, 0, NAN, REPLICATE));
        CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, g_dst8, g_dstf,
                     mv_gaussian_blur(s, d, 5, NAN, REPLICATE));
        CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, g_dst8, g_dstf,
                     mv_gaussian_blur(s, d, 0, INFINITY, REPLICATE));
        /* σ > 7/3 with ksize 0 needs a kernel above 15. */
        CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                     mv_gaussian_blur(s, d, 0, 2.34f, REPLICATE));
        CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                     mv_gaussian_blur(s, d, 0, 100.0f, REPLICATE));
        for (j = 0; j < sizeof bad_sizes / sizeof bad_sizes[0]; j++) {
            set_context("mv_gaussian_blur %s ksize %u", fn, (unsigned)bad_sizes[j]);
            CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                         mv_gaussian_blur(s, d, bad_sizes[j], 1.0f, REPLICATE));
            CHECK_FAILS2(MV_STATUS_INVALID_KERNEL, g_dst8, g_dstf,
                         mv_gaussian_blur(s, d, bad_sizes[j], 0.0f, REPLICATE));
        }
    }

    set_context("mv_filter2d U8 kernel gain");
    /* No shift ≤ 14 makes 1e10 fit the i32 accumulator. (f32 images have no such limit.) */
    k[4] = 1e10f;
    CHECK_FAILS(MV_STATUS_INVALID_KERNEL, g_dst8, mv_filter2d(&s8, &d8, k, 3, REPLICATE));
    CHECK_OK(mv_filter2d(&sf, &df, k, 3, REPLICATE));
    k[4] = 0.01f;

    set_context("mv_filter2d_fixed kernel");
    CHECK_OK(mv_filter2d_fixed(&s8, &d8, kq, 15, 8, REPLICATE));
    CHECK_FAILS(MV_STATUS_NULL_POINTER, g_dst8, mv_filter2d_fixed(&s8, &d8, NULL, 3, 4, REPLICATE));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, g_dst8, mv_filter2d_fixed(&s8, &d8, kq, 0, 4, REPLICATE));
    for (i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        set_context("mv_filter2d_fixed ksize %u", (unsigned)bad_sizes[i]);
        CHECK_FAILS(MV_STATUS_INVALID_KERNEL, g_dst8,
                    mv_filter2d_fixed(&s8, &d8, kq, bad_sizes[i], 4, REPLICATE));
    }
    set_context("mv_filter2d_fixed shift and range");
    CHECK_OK(mv_filter2d_fixed(&s8, &d8, kq, 3, 24, REPLICATE));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, g_dst8, mv_filter2d_fixed(&s8, &d8, kq, 3, 25, REPLICATE));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, g_dst8,
                mv_filter2d_fixed(&s8, &d8, kq, 3, UINT32_MAX, REPLICATE));
    kq[0] = INT32_MAX;
    CHECK_FAILS(MV_STATUS_INVALID_KERNEL, g_dst8, mv_filter2d_fixed(&s8, &d8, kq, 3, 0, REPLICATE));
    kq[0] = INT32_MIN;
    CHECK_FAILS(MV_STATUS_INVALID_KERNEL, g_dst8, mv_filter2d_fixed(&s8, &d8, kq, 3, 0, REPLICATE));
    kq[0] = 1;
    /* Fixed-point functions take u8 only. */
    CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, g_dstf, mv_filter2d_fixed(&sf, &df, kq, 3, 4, REPLICATE));

    set_context("mv_sep_filter2d_fixed kernel");
    CHECK_OK(mv_sep_filter2d_fixed(&s8, &d8, kq, 15, kq, 15, 8, REPLICATE));
    CHECK_FAILS(MV_STATUS_NULL_POINTER, g_dst8,
                mv_sep_filter2d_fixed(&s8, &d8, NULL, 3, V3Q, 3, 4, REPLICATE));
    CHECK_FAILS(MV_STATUS_NULL_POINTER, g_dst8,
                mv_sep_filter2d_fixed(&s8, &d8, V3Q, 3, NULL, 3, 4, REPLICATE));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, g_dst8,
                mv_sep_filter2d_fixed(&s8, &d8, V3Q, 0, V3Q, 3, 4, REPLICATE));
    CHECK_FAILS(MV_STATUS_INVALID_KERNEL, g_dst8,
                mv_sep_filter2d_fixed(&s8, &d8, kq, 16, V3Q, 3, 4, REPLICATE));
    CHECK_FAILS(MV_STATUS_INVALID_KERNEL, g_dst8,
                mv_sep_filter2d_fixed(&s8, &d8, V3Q, 3, kq, 4, 4, REPLICATE));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, g_dst8,
                mv_sep_filter2d_fixed(&s8, &d8, V3Q, 3, V3Q, 3, 25, REPLICATE));
    {
        /* 255·2^20·2^20 overflows even though each vector alone would fit. */
        static const int32_t big[1] = {1 << 20};
        CHECK_FAILS(MV_STATUS_INVALID_KERNEL, g_dst8,
                    mv_sep_filter2d_fixed(&s8, &d8, big, 1, big, 1, 0, REPLICATE));
        CHECK_OK(mv_filter2d_fixed(&s8, &d8, big, 1, 0, REPLICATE));
    }
    CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, g_dstf,
                mv_sep_filter2d_fixed(&sf, &df, V3Q, 3, V3Q, 3, 4, REPLICATE));
}

/* ------------------------------------------------------------------------------------------ */
/* (b) Sobel and gradient polar                                                               */
/* ------------------------------------------------------------------------------------------ */

static void test_sobel_errors(void)
{
    static int16_t dx[SH * SW + 2], dy[SH * SW + 2];
    static int16_t both[2 * SH * SW];
    static float fx[SH * SW + 2], fy[SH * SW + 2], ref_x[SH * SW], ref_y[SH * SW];
    mv_image s8 = op_src(MV_PIXEL_U8), sf = op_src(MV_PIXEL_F32);
    mv_image ix = image(dx, SW, SH, SW * 2, MV_PIXEL_I16), iy = image(dy, SW, SH, SW * 2, MV_PIXEL_I16);
    mv_image ffx = image(fx, SW, SH, SW * 4, MV_PIXEL_F32), ffy = image(fy, SW, SH, SW * 4, MV_PIXEL_F32);
    mv_image s16 = image(g_src16, SW, SH, SW * 2, MV_PIXEL_U16);
    mv_image small = image(dy, SW - 1, SH, SW * 2, MV_PIXEL_I16);
    mv_image shared_x = image(both, SW, SH, SW * 2, MV_PIXEL_I16), shared_y = shared_x;
    bad_image bad[MAX_BAD];
    int i, n;

    set_context("mv_sobel");
    CHECK_OK(mv_sobel(&s8, &ix, &iy, REPLICATE));
    CHECK_OK(mv_sobel(&sf, &ffx, &ffy, REPLICATE));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, dx, dy, mv_sobel(NULL, &ix, &iy, REPLICATE));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, dx, dy, mv_sobel(&s8, NULL, &iy, REPLICATE));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, dx, dy, mv_sobel(&s8, &ix, NULL, REPLICATE));

    n = bad_images(s8, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_sobel: src %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, dx, dy, mv_sobel(&bad[i].im, &ix, &iy, REPLICATE));
    }
    n = bad_images(ix, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_sobel: dx %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, dx, dy, mv_sobel(&s8, &bad[i].im, &iy, REPLICATE));
        set_context("mv_sobel: dy %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, dx, dy, mv_sobel(&s8, &ix, &bad[i].im, REPLICATE));
    }

    set_context("mv_sobel: format combinations");
    /* U8 -> I16 and F32 -> F32 only. */
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, fx, fy, mv_sobel(&s8, &ffx, &ffy, REPLICATE));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, dx, dy, mv_sobel(&sf, &ix, &iy, REPLICATE));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, dx, fy, mv_sobel(&s8, &ix, &ffy, REPLICATE));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, dx, dy, mv_sobel(&s16, &ix, &iy, REPLICATE));

    set_context("mv_sobel: sizes and overlap");
    CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, dx, dy, mv_sobel(&s8, &ix, &small, REPLICATE));
    CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, dx, dy, mv_sobel(&s8, &small, &iy, REPLICATE));
    /* dx and dy the same memory, then dy starting on dx's last row. */
    CHECK_FAILS(MV_STATUS_OVERLAP, both, mv_sobel(&s8, &shared_x, &shared_y, REPLICATE));
    shared_y.data = (char *)both + (SH - 1) * SW * 2;
    CHECK_FAILS(MV_STATUS_OVERLAP, both, mv_sobel(&s8, &shared_x, &shared_y, REPLICATE));
    /* Adjacent but disjoint is fine. */
    shared_y.data = (char *)both + SH * SW * 2;
    CHECK_OK(mv_sobel(&s8, &shared_x, &shared_y, REPLICATE));

    set_context("mv_sobel: borders");
    CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, dx, dy, mv_sobel(&s8, &ix, &iy, border(7, 0.0f)));
    CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, dx, dy, mv_sobel(&s8, &ix, &iy, CONSTANT(300.0f)));
    CHECK_FAILS2(MV_STATUS_INVALID_ARGUMENT, fx, fy, mv_sobel(&sf, &ffx, &ffy, CONSTANT(NAN)));

    set_context("mv_sobel: in place (f32 dx over the source)");
    {
        int y, same = 1;
        mv_image w = image(g_workf, SW, SH, SF_STRIDE * 4, MV_PIXEL_F32);
        CHECK_OK(mv_sobel(&sf, &ffx, &ffy, REFLECT));
        memcpy(ref_x, fx, sizeof ref_x);
        memcpy(ref_y, fy, sizeof ref_y);
        memcpy(g_workf, g_srcf, SH * SF_STRIDE * sizeof(float));
        CHECK_OK(mv_sobel(&w, &w, &ffy, REFLECT));
        for (y = 0; y < SH; y++) {
            same &= memcmp(&g_workf[y * SF_STRIDE], &ref_x[y * SW], SW * sizeof(float)) == 0;
        }
        CHECK(same);
        CHECK(memcmp(fy, ref_y, sizeof ref_y) == 0);
    }
}

static void test_gradient_polar_errors(void)
{
    static int16_t gx[12], gy[12];
    static float fx[12], fy[12], mag[12], ang[12], both[24];
    static uint8_t u8[12];
    mv_image ix = image(gx, 4, 3, 8, MV_PIXEL_I16), iy = image(gy, 4, 3, 8, MV_PIXEL_I16);
    mv_image ffx = image(fx, 4, 3, 16, MV_PIXEL_F32), ffy = image(fy, 4, 3, 16, MV_PIXEL_F32);
    mv_image m = image(mag, 4, 3, 16, MV_PIXEL_F32), a = image(ang, 4, 3, 16, MV_PIXEL_F32);
    mv_image iu8 = image(u8, 4, 3, 4, MV_PIXEL_U8);
    mv_image mi16 = image(mag, 4, 3, 8, MV_PIXEL_I16);
    mv_image small = image(ang, 3, 3, 16, MV_PIXEL_F32);
    mv_image sm = image(both, 4, 3, 16, MV_PIXEL_F32), sa = sm;
    bad_image bad[MAX_BAD];
    int i, n;

    for (i = 0; i < 12; i++) {
        gx[i] = (int16_t)(i - 6);
        gy[i] = (int16_t)(3 * i);
        fx[i] = (float)gx[i];
        fy[i] = (float)gy[i];
    }
    set_context("mv_gradient_polar");
    CHECK_OK(mv_gradient_polar(&ix, &iy, &m, &a));
    CHECK_OK(mv_gradient_polar(&ffx, &ffy, &m, &a));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, mag, ang, mv_gradient_polar(NULL, &iy, &m, &a));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, mag, ang, mv_gradient_polar(&ix, NULL, &m, &a));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, mag, ang, mv_gradient_polar(&ix, &iy, NULL, &a));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, mag, ang, mv_gradient_polar(&ix, &iy, &m, NULL));
    n = bad_images(m, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_gradient_polar: magnitude %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, mag, ang, mv_gradient_polar(&ix, &iy, &bad[i].im, &a));
        set_context("mv_gradient_polar: orientation %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, mag, ang, mv_gradient_polar(&ix, &iy, &m, &bad[i].im));
    }
    n = bad_images(ix, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_gradient_polar: dx %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, mag, ang, mv_gradient_polar(&bad[i].im, &iy, &m, &a));
    }
    set_context("mv_gradient_polar: formats, sizes, overlap");
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, mag, ang, mv_gradient_polar(&ix, &ffy, &m, &a));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, mag, ang, mv_gradient_polar(&iu8, &iu8, &m, &a));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, mag, ang, mv_gradient_polar(&ix, &iy, &mi16, &a));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, mag, ang, mv_gradient_polar(&ix, &iy, &m, &iu8));
    CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, mag, ang, mv_gradient_polar(&ix, &iy, &m, &small));
    CHECK_FAILS(MV_STATUS_OVERLAP, both, mv_gradient_polar(&ix, &iy, &sm, &sa));
    sa.data = (char *)both + 16; /* one row later: still overlapping */
    CHECK_FAILS(MV_STATUS_OVERLAP, both, mv_gradient_polar(&ix, &iy, &sm, &sa));

    set_context("mv_gradient_polar: in place (magnitude over dx)");
    {
        static float ref_m[12], ref_a[12];
        mv_image w = ffx;
        CHECK_OK(mv_gradient_polar(&ffx, &ffy, &m, &a));
        memcpy(ref_m, mag, sizeof ref_m);
        memcpy(ref_a, ang, sizeof ref_a);
        CHECK_OK(mv_gradient_polar(&w, &ffy, &w, &a));
        CHECK(memcmp(fx, ref_m, sizeof ref_m) == 0);
        CHECK(memcmp(ang, ref_a, sizeof ref_a) == 0);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* (b) Integral images                                                                        */
/* ------------------------------------------------------------------------------------------ */

static void test_integral_errors(void)
{
    static uint8_t src[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    static float srcf[9];
    static uint32_t sum[16];
    static uint64_t sq[16], shared[16];
    static uint32_t sum_small[12];
    mv_image s = image(src, 3, 3, 3, MV_PIXEL_U8), sf = image(srcf, 3, 3, 12, MV_PIXEL_F32);
    mv_image t = image(sum, 4, 4, 16, MV_PIXEL_U32), q = image(sq, 4, 4, 32, MV_PIXEL_U64);
    mv_image t_as_u64 = image(sq, 4, 4, 32, MV_PIXEL_U64), q_as_u32 = image(sum, 4, 4, 16, MV_PIXEL_U32);
    mv_image t_small = image(sum_small, 4, 3, 16, MV_PIXEL_U32), q_small = image(sq, 3, 4, 24, MV_PIXEL_U64);
    mv_image t_shared = image(shared, 4, 4, 16, MV_PIXEL_U32), q_shared = image(shared, 4, 4, 32, MV_PIXEL_U64);
    bad_image bad[MAX_BAD];
    int i, n;

    set_context("mv_integral");
    CHECK_OK(mv_integral(&s, &t, &q));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, sum, sq, mv_integral(NULL, &t, &q));
    CHECK_FAILS2(MV_STATUS_NULL_POINTER, sum, sq, mv_integral(&s, NULL, &q));
    n = bad_images(s, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_integral: src %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, sum, sq, mv_integral(&bad[i].im, &t, &q));
    }
    n = bad_images(t, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_integral: sum %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, sum, sq, mv_integral(&s, &bad[i].im, &q));
    }
    n = bad_images(q, bad);
    for (i = 0; i < n; i++) {
        set_context("mv_integral: sqsum %s", bad[i].what);
        CHECK_FAILS2(bad[i].status, sum, sq, mv_integral(&s, &t, &bad[i].im));
    }
    set_context("mv_integral: formats, sizes, overlap");
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, sum, sq, mv_integral(&sf, &t, &q));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, sum, sq, mv_integral(&s, &t_as_u64, NULL));
    CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, sum, sq, mv_integral(&s, &t, &q_as_u32));
    CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, sum_small, sq, mv_integral(&s, &t_small, &q));
    CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, sum, sq, mv_integral(&s, &t, &q_small));
    CHECK_FAILS(MV_STATUS_OVERLAP, shared, mv_integral(&s, &t_shared, &q_shared));

    set_context("mv_integral: more than 16 843 009 pixels");
    {
        /* 4105 x 4104 = 16 846 920 pixels: 255 times that does not fit the u32 table. */
        const uint32_t w = 4105, h = 4104;
        size_t src_bytes = (size_t)w * h, table_bytes = (size_t)(w + 1) * (h + 1) * 4;
        uint8_t *big = (uint8_t *)malloc(src_bytes);
        uint32_t *table = (uint32_t *)malloc(table_bytes);
        if (big == NULL || table == NULL) {
            printf("note: skipping the integral overflow test (no memory)\n");
        } else {
            mv_image bs = image(big, w, h, w, MV_PIXEL_U8);
            mv_image bt = image(table, w + 1, h + 1, (size_t)(w + 1) * 4, MV_PIXEL_U32);
            memset(big, 1, src_bytes);
            poison(table, table_bytes);
            CHECK_STATUS(mv_integral(&bs, &bt, NULL), MV_STATUS_OVERFLOW);
            CHECK(untouched(table, table_bytes));
        }
        free(big);
        free(table);
    }

    /* Window queries (tables from the valid call above). */
    CHECK_OK(mv_integral(&s, &t, &q));
    {
        uint32_t ws;
        double mean, var;
        static uint32_t tiny[2];
        mv_image t1 = image(tiny, 1, 1, 4, MV_PIXEL_U32);
        mv_image t_rows = image(sum, 4, 3, 16, MV_PIXEL_U32); /* 4 x 3 vs sqsum 4 x 4 */

        set_context("mv_integral_window_sum");
        CHECK_STATUS(mv_integral_window_sum(&t, rect(0, 0, 1, 1), NULL), MV_STATUS_NULL_POINTER);
        CHECK_FAILS(MV_STATUS_NULL_POINTER, ws, mv_integral_window_sum(NULL, rect(0, 0, 1, 1), &ws));
        CHECK_FAILS(MV_STATUS_UNSUPPORTED_FORMAT, ws,
                    mv_integral_window_sum(&t_as_u64, rect(0, 0, 1, 1), &ws));
        CHECK_FAILS(MV_STATUS_ZERO_SIZE, ws, mv_integral_window_sum(&t, rect(0, 0, 0, 1), &ws));
        CHECK_FAILS(MV_STATUS_ZERO_SIZE, ws, mv_integral_window_sum(&t, rect(1, 1, 2, -2), &ws));
        CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, ws, mv_integral_window_sum(&t, rect(2, 2, 2, 2), &ws));
        CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, ws, mv_integral_window_sum(&t, rect(-1, 0, 1, 1), &ws));
        CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, ws, mv_integral_window_sum(&t, rect(0, 3, 1, 1), &ws));
        /* A 1 x 1 table is the integral of a 0 x 0 source: a zero size. */
        CHECK_FAILS(MV_STATUS_ZERO_SIZE, ws, mv_integral_window_sum(&t1, rect(0, 0, 1, 1), &ws));
        n = bad_images(t, bad);
        for (i = 0; i < n; i++) {
            set_context("mv_integral_window_sum: table %s", bad[i].what);
            CHECK_FAILS(bad[i].status, ws, mv_integral_window_sum(&bad[i].im, rect(0, 0, 1, 1), &ws));
        }

        set_context("mv_integral_window_stats");
        CHECK_STATUS(mv_integral_window_stats(&t, &q, rect(0, 0, 1, 1), NULL, NULL),
                     MV_STATUS_NULL_POINTER);
        CHECK_FAILS2(MV_STATUS_NULL_POINTER, mean, var,
                     mv_integral_window_stats(NULL, &q, rect(0, 0, 1, 1), &mean, &var));
        CHECK_FAILS2(MV_STATUS_NULL_POINTER, mean, var,
                     mv_integral_window_stats(&t, NULL, rect(0, 0, 1, 1), &mean, &var));
        CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, mean, var,
                     mv_integral_window_stats(&t, &q_as_u32, rect(0, 0, 1, 1), &mean, &var));
        CHECK_FAILS2(MV_STATUS_UNSUPPORTED_FORMAT, mean, var,
                     mv_integral_window_stats(&t_as_u64, &q, rect(0, 0, 1, 1), &mean, &var));
        CHECK_FAILS2(MV_STATUS_SIZE_MISMATCH, mean, var,
                     mv_integral_window_stats(&t_rows, &q, rect(0, 0, 1, 1), &mean, &var));
        CHECK_FAILS2(MV_STATUS_ZERO_SIZE, mean, var,
                     mv_integral_window_stats(&t, &q, rect(0, 0, 2, 0), &mean, &var));
        CHECK_FAILS2(MV_STATUS_OUT_OF_BOUNDS, mean, var,
                     mv_integral_window_stats(&t, &q, rect(1, 1, 3, 1), &mean, &var));
        CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, mean,
                    mv_integral_window_stats(&t, &q, rect(0, -1, 1, 1), &mean, NULL));
        CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, var,
                    mv_integral_window_stats(&t, &q, rect(3, 0, 1, 1), NULL, &var));
        n = bad_images(q, bad);
        for (i = 0; i < n; i++) {
            set_context("mv_integral_window_stats: sqsum %s", bad[i].what);
            CHECK_FAILS2(bad[i].status, mean, var,
                         mv_integral_window_stats(&t, &bad[i].im, rect(0, 0, 1, 1), &mean, &var));
        }
    }
}

static void test_pyr_down_size_errors(void)
{
    uint32_t w, h;
    set_context("mv_pyr_down_size");
    CHECK_STATUS(mv_pyr_down_size(4, 4, NULL, &h), MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_pyr_down_size(4, 4, &w, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS2(MV_STATUS_ZERO_SIZE, w, h, mv_pyr_down_size(0, 4, &w, &h));
    CHECK_FAILS2(MV_STATUS_ZERO_SIZE, w, h, mv_pyr_down_size(4, 0, &w, &h));
    poison(&h, sizeof h);
    CHECK_STATUS(mv_pyr_down_size(4, 4, NULL, &h), MV_STATUS_NULL_POINTER);
    CHECK(untouched(&h, sizeof h));
}

int main(void)
{
    size_t i;

    fill_sources();
    test_version();
    test_cpu_level();
    test_status_names();
    test_pixel_format_size();
    test_context();
    test_rect();
    test_image_init();
    test_image_roi();
    test_box_blur_values();
    test_filter2d_values();
    test_gaussian_values();
    test_sobel_values();
    test_integral_values();
    test_pyramid_resize_values();
    for (i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
        test_unary_errors(&OPS[i], MV_PIXEL_U8);
        if (OPS[i].accepts_f32) {
            test_unary_errors(&OPS[i], MV_PIXEL_F32);
        }
    }
    test_kernel_errors();
    test_sobel_errors();
    test_gradient_polar_errors();
    test_integral_errors();
    test_pyr_down_size_errors();

    g_context[0] = '\0';
    printf("%u passed, %u failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
