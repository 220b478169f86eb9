/*
 * ctest suite of the TLD tracker's C API (mv_tld_*), in C99 (-Wall -Wextra -Werror -pedantic,
 * run plain and under ASan + UBSan):
 *
 * (a) every bad input returns the status include/mvision.h documents and leaves every output
 *     untouched (outputs are filled with a sentinel byte before each failing call and compared
 *     after it), the caller's workspace included;
 * (b) the contract of the good path: defaults, a workspace size that is a pure function, any
 *     workspace alignment, "not found" as a success with zeroed outputs, strides honoured, and
 *     create / create_in trackers giving identical results.
 *
 * Prints one line per failed check and finally "N passed, N failed"; exits non-zero if anything
 * failed.
 */
#include <mvision.h>

#include <math.h> /* NAN only: no libm functions are called. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"


/* ------------------------------------------------------------------------------------------ */
/* Frames                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define W 80u
#define H 60u
#define PAD 13u /* extra bytes per row of the strided copies */

static uint8_t g_frame[H * W];          /* textured background with a textured object */
static uint8_t g_shifted[H * W];        /* the same, object 2 px right and 1 px down */
static uint8_t g_strided[H * (W + PAD)]; /* g_frame with a stride of W + PAD bytes */
static uint8_t g_strided2[H * (W + PAD)];
static uint8_t g_flat[H * W];           /* nothing to track */
static uint16_t g_frame16[H * W];
static uint8_t g_small[(H - 1) * W];


/* Background: 4 x 4 blocks of hash noise; object (20 x 16 at (ox, oy)): 3 x 3 blocks. */
static void draw(uint8_t *dst, size_t stride, uint32_t ox, uint32_t oy)
{
    uint32_t x, y;
    for (y = 0; y < H; y++) {
        for (x = 0; x < W; x++) {
            uint8_t v = (uint8_t)(hash8(x / 4, y / 4, 1) / 2 + 40);
            if (x >= ox && x < ox + 20 && y >= oy && y < oy + 16) {
                v = hash8((x - ox) / 3, (y - oy) / 3, 2);
            }
            dst[y * stride + x] = v;
        }
    }
}


#define BOX rect(30, 20, 20, 16)

/* ------------------------------------------------------------------------------------------ */
/* Tests                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static void test_params(void)
{
    mv_tld_params p;
    size_t i;
    int zero = 1;
    CHECK_STATUS(mv_tld_params_init(NULL), MV_STATUS_NULL_POINTER);
    poison(&p, sizeof p);
    CHECK_OK(mv_tld_params_init(&p));
    CHECK(p.grid_min_window_px == 24 && p.grid_min_window_floor_px == 15 && p.grid_shift_percent == 10 && p.grid_scale_steps == 10);
    CHECK(p.fern_count == 10 && p.fern_features == 13);
    CHECK(p.nn_max_positive == 100 && p.nn_max_negative == 100);
    CHECK(p.flow_points_per_side == 10 && p.flow_window_px == 9 && p.flow_levels == 5);
    CHECK(p.variance_factor_num == 1 && p.variance_factor_den == 2);
    CHECK(p.blur_sigma_px == 2.0f && p.max_candidates == 100);
    CHECK(p.learning == 1 && p.seed == 0);
    for (i = 0; i < MV_TLD_PARAMS_RESERVED; i++) {
        zero = zero && p.reserved[i] == 0;
    }
    CHECK(zero);
}

/* Invalid variants of the defaults, each with the status every params-taking call returns. */
typedef struct {
    mv_tld_params p;
    uint32_t status;
    const char *what;
} bad_params;

static int make_bad_params(bad_params *out)
{
    int n = 0;
    mv_tld_params b;
#define ADD_BAD(stmt, want)                \
    do {                                   \
        mv_tld_params_init(&b);            \
        stmt;                              \
        out[n].p = b;                      \
        out[n].status = (want);            \
        out[n].what = #stmt;               \
        n++;                               \
    } while (0)
    ADD_BAD(b.reserved[0] = 1, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.reserved[MV_TLD_PARAMS_RESERVED - 1] = 7, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.learning = 2, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.fern_count = 0, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.fern_features = 17, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.nn_max_positive = 1, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.nn_detect_threshold = NAN, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.flow_window_px = 8, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.flow_levels = 0, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.variance_factor_den = 0, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.positive_overlap = 1.5f, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.max_candidates = 0, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.max_candidates = 1001, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.grid_shift_percent = 0, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.blur_sigma_px = 0.0f, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.blur_sigma_px = 3.0f, MV_STATUS_INVALID_KERNEL);
    ADD_BAD(b.grid_min_window_floor_px = 0, MV_STATUS_INVALID_ARGUMENT);
    ADD_BAD(b.grid_min_window_floor_px = b.grid_min_window_px + 1, MV_STATUS_INVALID_ARGUMENT);
#undef ADD_BAD
    return n;
}

static void test_workspace_size(void)
{
    mv_tld_params p;
    bad_params bad[32];
    size_t size, again;
    int i, n = make_bad_params(bad);

    mv_tld_params_init(&p);
    CHECK_FAILS(MV_STATUS_NULL_POINTER, size, mv_tld_workspace_size(NULL, W, H, &size));
    CHECK_STATUS(mv_tld_workspace_size(&p, W, H, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, size, mv_tld_workspace_size(&p, 0, H, &size));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, size, mv_tld_workspace_size(&p, W, 0, &size));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, size, mv_tld_workspace_size(&p, 70000, H, &size));
    for (i = 0; i < n; i++) {
        poison(&size, sizeof size);
        if (mv_tld_workspace_size(&bad[i].p, W, H, &size) != (mv_status)bad[i].status ||
            !untouched(&size, sizeof size)) {
            fprintf(stderr, "  bad params: %s\n", bad[i].what);
            CHECK(0);
        } else {
            CHECK(1);
        }
    }
    /* A pure function of its arguments, growing with the frame. */
    CHECK_OK(mv_tld_workspace_size(&p, W, H, &size));
    CHECK_OK(mv_tld_workspace_size(&p, W, H, &again));
    CHECK(size == again && size > 0);
    CHECK_OK(mv_tld_workspace_size(&p, 2 * W, 2 * H, &again));
    CHECK(again > size);
}

static void test_create_errors(void)
{
    mv_tld_params p;
    bad_params bad[32];
    mv_tld *t;
    size_t size;
    unsigned char *ws;
    int i, n = make_bad_params(bad);

    mv_tld_params_init(&p);
    CHECK_OK(mv_tld_workspace_size(&p, W, H, &size));
    ws = (unsigned char *)malloc(size + 1);
    CHECK(ws != NULL);
    if (ws == NULL) {
        return;
    }
    CHECK_FAILS(MV_STATUS_NULL_POINTER, t, mv_tld_create_in(NULL, size, &p, W, H, &t));
    CHECK_FAILS(MV_STATUS_NULL_POINTER, t, mv_tld_create_in(ws, size, NULL, W, H, &t));
    CHECK_STATUS(mv_tld_create_in(ws, size, &p, W, H, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, t, mv_tld_create_in(ws, size, &p, 0, H, &t));
    /* Too small by one byte: neither *out nor the workspace is written. */
    poison(ws, size + 1);
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, t, mv_tld_create_in(ws, size - 1, &p, W, H, &t));
    CHECK(untouched(ws, size + 1));
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, t, mv_tld_create_in(ws, 0, &p, W, H, &t));
    for (i = 0; i < n; i++) {
        poison(&t, sizeof t);
        if (mv_tld_create_in(ws, size, &bad[i].p, W, H, &t) != (mv_status)bad[i].status ||
            !untouched(&t, sizeof t) ||
            mv_tld_create(&bad[i].p, W, H, &t) != (mv_status)bad[i].status ||
            !untouched(&t, sizeof t)) {
            fprintf(stderr, "  bad params: %s\n", bad[i].what);
            CHECK(0);
        } else {
            CHECK(1);
        }
    }
    CHECK(untouched(ws, size + 1));
    CHECK_FAILS(MV_STATUS_NULL_POINTER, t, mv_tld_create(NULL, W, H, &t));
    CHECK_STATUS(mv_tld_create(&p, W, H, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, t, mv_tld_create(&p, W, 0, &t));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, t, mv_tld_create(&p, W, 65536, &t));
    mv_tld_destroy(NULL); /* accepted, does nothing */
    free(ws);
}

/* Init and update errors on one tracker; the good path runs in between. */
static void test_init_update_errors(void)
{
    mv_tld_params p;
    mv_tld *t = NULL;
    mv_image frame = image(g_frame, W, H, W, MV_PIXEL_U8);
    mv_image small = image(g_small, W, H - 1, W, MV_PIXEL_U8);
    mv_image wide = image(g_strided, W + 1, H, W + PAD, MV_PIXEL_U8);
    mv_image u16 = image(g_frame16, W, H, 2 * W, MV_PIXEL_U16);
    mv_image bad;
    mv_rectf box;
    mv_rect dets[4];
    bool found;
    float conf;
    size_t count;

    mv_tld_params_init(&p);
    CHECK_OK(mv_tld_create(&p, W, H, &t));
    if (t == NULL) {
        return;
    }
    /* Before init. */
    CHECK_UPDATE_FAILS(MV_STATUS_NOT_INITIALIZED, mv_tld_update(t, &frame, &box, &found, &conf));
    CHECK_FAILS(MV_STATUS_NOT_INITIALIZED, count, mv_tld_detections(t, dets, 4, &count));

    /* Bad init arguments. */
    CHECK_STATUS(mv_tld_init(NULL, &frame, BOX), MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_tld_init(t, NULL, BOX), MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_tld_init(t, &small, BOX), MV_STATUS_SIZE_MISMATCH);
    CHECK_STATUS(mv_tld_init(t, &wide, BOX), MV_STATUS_SIZE_MISMATCH);
    CHECK_STATUS(mv_tld_init(t, &u16, BOX), MV_STATUS_UNSUPPORTED_FORMAT);
    bad = frame;
    bad.format = 99;
    CHECK_STATUS(mv_tld_init(t, &bad, BOX), MV_STATUS_UNSUPPORTED_FORMAT);
    bad = frame;
    bad.data = NULL;
    CHECK_STATUS(mv_tld_init(t, &bad, BOX), MV_STATUS_NULL_POINTER);
    bad = frame;
    bad.stride = W - 1;
    CHECK_STATUS(mv_tld_init(t, &bad, BOX), MV_STATUS_STRIDE_TOO_SMALL);
    bad = frame;
    bad.data_size--;
    CHECK_STATUS(mv_tld_init(t, &bad, BOX), MV_STATUS_BUFFER_TOO_SMALL);
    CHECK_STATUS(mv_tld_init(t, &frame, rect(30, 20, 0, 16)), MV_STATUS_ZERO_SIZE);
    CHECK_STATUS(mv_tld_init(t, &frame, rect(30, 20, 20, -3)), MV_STATUS_ZERO_SIZE);
    CHECK_STATUS(mv_tld_init(t, &frame, rect(70, 20, 20, 16)), MV_STATUS_OUT_OF_BOUNDS);
    CHECK_STATUS(mv_tld_init(t, &frame, rect(-1, 20, 20, 16)), MV_STATUS_OUT_OF_BOUNDS);
    CHECK_STATUS(mv_tld_init(t, &frame, rect(100, 100, 20, 16)), MV_STATUS_OUT_OF_BOUNDS);
    /* None of those initialised it. */
    CHECK_UPDATE_FAILS(MV_STATUS_NOT_INITIALIZED, mv_tld_update(t, &frame, &box, &found, &conf));

    CHECK_OK(mv_tld_init(t, &frame, BOX));
    CHECK_OK(mv_tld_detections(t, NULL, 0, &count));
    CHECK(count == 0); /* no update yet */

    /* Bad update arguments: outputs untouched. */
    CHECK_STATUS(mv_tld_update(NULL, &frame, &box, &found, &conf), MV_STATUS_NULL_POINTER);
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_tld_update(t, NULL, &box, &found, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_tld_update(t, &frame, NULL, &found, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_tld_update(t, &frame, &box, NULL, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_tld_update(t, &frame, &box, &found, NULL));
    CHECK_UPDATE_FAILS(MV_STATUS_SIZE_MISMATCH, mv_tld_update(t, &small, &box, &found, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_UNSUPPORTED_FORMAT,
                       mv_tld_update(t, &u16, &box, &found, &conf));
    bad = frame;
    bad.data_size--;
    CHECK_UPDATE_FAILS(MV_STATUS_BUFFER_TOO_SMALL, mv_tld_update(t, &bad, &box, &found, &conf));

    /* The good path: the object moved by (2, 1). */
    frame.data = g_shifted;
    CHECK_OK(mv_tld_update(t, &frame, &box, &found, &conf));
    CHECK(found);
    CHECK(box.x > 30.0f && box.x < 34.0f && box.y > 19.0f && box.y < 23.0f);
    CHECK(box.width > 17.0f && box.width < 23.0f && box.height > 13.0f && box.height < 19.0f);
    CHECK(conf > 0.5f && conf <= 1.0f);

    CHECK_FAILS(MV_STATUS_NULL_POINTER, count, mv_tld_detections(NULL, dets, 4, &count));
    CHECK_STATUS(mv_tld_detections(t, dets, 4, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_NULL_POINTER, count, mv_tld_detections(t, NULL, 4, &count));
    CHECK_OK(mv_tld_detections(t, NULL, 0, &count));
    {
        /* A full copy agrees with the count, and every detection lies in the frame. */
        mv_rect all[1000];
        size_t n2 = 0, i;
        CHECK_OK(mv_tld_detections(t, all, 1000, &n2));
        CHECK(n2 == count && n2 <= 1000);
        for (i = 0; i < n2 && i < 1000; i++) {
            CHECK(all[i].x >= 0 && all[i].y >= 0 && all[i].x + all[i].width <= (int32_t)W &&
                  all[i].y + all[i].height <= (int32_t)H);
        }
    }

    /* Target absent: a success with found = false and zeroed box and confidence. */
    frame.data = g_flat;
    poison(&box, sizeof box);
    poison(&conf, sizeof conf);
    found = true;
    CHECK_OK(mv_tld_update(t, &frame, &box, &found, &conf));
    CHECK(!found);
    CHECK(box.x == 0.0f && box.y == 0.0f && box.width == 0.0f && box.height == 0.0f);
    CHECK(conf == 0.0f);
    /* And re-found by the detector when it comes back. */
    frame.data = g_frame;
    CHECK_OK(mv_tld_update(t, &frame, &box, &found, &conf));
    CHECK(found);
    CHECK(box.x > 28.0f && box.x < 32.0f && box.y > 18.0f && box.y < 22.0f);

    mv_tld_destroy(t);
}

/* The result of init on g_frame then update on g_shifted (packed or strided copies). */
typedef struct {
    mv_rectf box;
    bool found;
    float conf;
} result;

static int track(mv_tld *t, int strided, result *r)
{
    size_t stride = strided ? W + PAD : W;
    mv_image a = image(strided ? g_strided : g_frame, W, H, stride, MV_PIXEL_U8);
    mv_image b = image(strided ? g_strided2 : g_shifted, W, H, stride, MV_PIXEL_U8);
    memset(r, 0, sizeof *r);
    return mv_tld_init(t, &a, BOX) == MV_STATUS_OK &&
           mv_tld_update(t, &b, &r->box, &r->found, &r->conf) == MV_STATUS_OK;
}

static int same(const result *a, const result *b)
{
    return a->found == b->found && a->conf == b->conf && a->box.x == b->box.x &&
           a->box.y == b->box.y && a->box.width == b->box.width &&
           a->box.height == b->box.height;
}

static void test_placement_and_strides(void)
{
    mv_tld_params p;
    mv_tld *heap = NULL, *t = NULL;
    size_t size, offset;
    unsigned char *ws;
    result ref, r;

    mv_tld_params_init(&p);
    CHECK_OK(mv_tld_create(&p, W, H, &heap));
    CHECK(heap != NULL && track(heap, 0, &ref) && ref.found);
    mv_tld_destroy(heap);

    CHECK_OK(mv_tld_workspace_size(&p, W, H, &size));
    ws = (unsigned char *)malloc(size + 16);
    CHECK(ws != NULL);
    if (ws == NULL) {
        return;
    }
    /* Exactly the size, at every offset from an aligned block: any alignment works. */
    for (offset = 0; offset < 16; offset += 1) {
        t = NULL;
        CHECK_OK(mv_tld_create_in(ws + offset, size, &p, W, H, &t));
        CHECK(t != NULL && track(t, 0, &r) && same(&r, &ref));
        mv_tld_destroy(t); /* frees nothing: the workspace is ours */
    }
    /* Strides are honoured: the same frames with 13 bytes of padding per row. */
    CHECK_OK(mv_tld_create_in(ws + 3, size, &p, W, H, &t));
    CHECK(t != NULL && track(t, 1, &r) && same(&r, &ref));
    /* A restart on a new box re-initialises the same tracker. */
    CHECK(track(t, 0, &r) && same(&r, &ref));
    mv_tld_destroy(t);
    free(ws);
}

int main(void)
{
    uint32_t i;
    draw(g_frame, W, 30, 20);
    draw(g_shifted, W, 32, 21);
    draw(g_strided, W + PAD, 30, 20);
    draw(g_strided2, W + PAD, 32, 21);
    memset(g_flat, 128, sizeof g_flat);
    memcpy(g_small, g_frame, sizeof g_small);
    for (i = 0; i < W * H; i++) {
        g_frame16[i] = g_frame[i];
    }

    test_params();
    test_workspace_size();
    test_create_errors();
    test_init_update_errors();
    test_placement_and_strides();

    printf("%u passed, %u failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
