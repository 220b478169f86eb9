/*
 * ctest suite of the KCF / KCFDP trackers' C API (mv_kcf_*), in C99 (-Wall -Wextra -Werror
 * -pedantic, run plain and under ASan + UBSan), every check in both modes:
 *
 * (a) every bad input returns the status include/mvision.h documents and leaves every output
 *     untouched (outputs are filled with a sentinel byte before each failing call and compared
 *     after it), the caller's workspace included;
 * (b) the contract of the good path: defaults, a workspace size that is a pure function, any
 *     workspace alignment, "lost" as a success with zeroed outputs, gray and packed RGB frames,
 *     strides honoured, and create / create_in trackers giving identical results.
 *
 * Prints one line per failed check and finally "N passed, N failed"; exits non-zero if anything
 * failed.
 */
#include <mvision.h>

#include <math.h> /* NAN and INFINITY only: no libm functions are called. */
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

static uint8_t g_frame[H * W];           /* textured background with a textured object */
static uint8_t g_shifted[H * W];         /* the same, object 2 px right and 1 px down */
static uint8_t g_strided[H * (W + PAD)]; /* g_frame with a stride of W + PAD bytes */
static uint8_t g_strided2[H * (W + PAD)];
static uint8_t g_rgb[H * W * 3];         /* g_frame as packed RGB, R = G = B */
static uint8_t g_rgb2[H * W * 3];
static uint8_t g_rgb_strided[H * (3 * W + PAD)]; /* g_rgb with a stride of 3W + PAD bytes */
static uint8_t g_rgb_strided2[H * (3 * W + PAD)];
static uint8_t g_flat[H * W];            /* nothing to track */
static uint16_t g_frame16[H * W];
static uint8_t g_small[(H - 1) * W];


/* Background: 4 x 4 blocks of hash noise; object (20 x 16 at (ox, oy)): 3 x 3 blocks. Each
 * value is written to `channels` consecutive bytes. */
static void draw(uint8_t *dst, size_t stride, unsigned channels, uint32_t ox, uint32_t oy)
{
    uint32_t x, y;
    unsigned c;
    for (y = 0; y < H; y++) {
        for (x = 0; x < W; x++) {
            uint8_t v = (uint8_t)(hash8(x / 4, y / 4, 1) / 2 + 40);
            if (x >= ox && x < ox + 20 && y >= oy && y < oy + 16) {
                v = hash8((x - ox) / 3, (y - oy) / 3, 2);
            }
            for (c = 0; c < channels; c++) {
                dst[y * stride + x * channels + c] = v;
            }
        }
    }
}


static mv_rectf rectf(float x, float y, float w, float h)
{
    mv_rectf r;
    r.x = x;
    r.y = y;
    r.width = w;
    r.height = h;
    return r;
}

#define BOX rectf(30.0f, 20.0f, 20.0f, 16.0f)

static const mv_kcf_mode k_modes[2] = {MV_KCF_MODE_KCF, MV_KCF_MODE_KCFDP};

/* ------------------------------------------------------------------------------------------ */
/* Tests                                                                                      */
/* ------------------------------------------------------------------------------------------ */

static void test_params(mv_kcf_mode mode)
{
    mv_kcf_params p, q;
    size_t i;
    int zero = 1;
    CHECK_STATUS(mv_kcf_params_init(NULL, mode), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, p, mv_kcf_params_init(&p, 0));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, p, mv_kcf_params_init(&p, 3));
    poison(&p, sizeof p);
    CHECK_OK(mv_kcf_params_init(&p, mode));
    CHECK(p.mode == mode && p.features == MV_KCF_FEATURES_FHOG_GRAY);
    CHECK(p.padding == 1.5f && p.kernel_sigma == 0.5f && p.interp_factor == 0.01f);
    CHECK(p.cell_px == 4 && p.template_cells == 16);
    CHECK(p.psr_lost == 5.0f && p.psr_found == 10.0f && p.search_expand_lost == 2.0f);
    CHECK(p.dp_window_scale == 1.4f && p.dp_proposal_window_px == 128);
    CHECK(p.dp_iou_min == 0.75f && p.dp_iou_max == 0.9f && p.dp_max_rescored == 20);
    CHECK(p.dp_damping == 0.7f);
    CHECK(p.eb_alpha == 0.65f && p.eb_beta == 0.75f && p.eb_max_boxes == 1000);
    CHECK(p.eb_kappa == 1.4f && p.eb_background_suppression == 1);
    CHECK(p.eb_max_window_px == 128 && p.eb_max_refined == 0);
    for (i = 0; i < MV_KCF_PARAMS_RESERVED; i++) {
        zero = zero && p.reserved[i] == 0;
    }
    CHECK(zero);
    /* The two modes' defaults differ only in `mode` (no padding bytes: compared whole). */
    mv_kcf_params_init(&q, mode == MV_KCF_MODE_KCF ? MV_KCF_MODE_KCFDP : MV_KCF_MODE_KCF);
    q.mode = mode;
    CHECK(memcmp(&p, &q, sizeof p) == 0);
}

/* Invalid variants of the defaults, each with the status every params-taking call returns.
 * The KCFDP and EdgeBoxes fields are validated in KCF mode too. */
typedef struct {
    mv_kcf_params p;
    uint32_t status;
    const char *what;
} bad_params;

static int make_bad_params(mv_kcf_mode mode, bad_params *out)
{
    int n = 0;
    mv_kcf_params b;
#define ADD_BAD(stmt)                          \
    do {                                       \
        mv_kcf_params_init(&b, mode);          \
        stmt;                                  \
        out[n].p = b;                          \
        out[n].status = MV_STATUS_INVALID_ARGUMENT; \
        out[n].what = #stmt;                   \
        n++;                                   \
    } while (0)
    ADD_BAD(memset(&b, 0, sizeof b)); /* never initialised: mode 0 */
    ADD_BAD(b.mode = 0);
    ADD_BAD(b.mode = 3);
    ADD_BAD(b.features = 0);
    ADD_BAD(b.features = 4);
    ADD_BAD(b.reserved[0] = 1);
    ADD_BAD(b.reserved[MV_KCF_PARAMS_RESERVED - 1] = 7);
    ADD_BAD(b.padding = NAN);
    ADD_BAD(b.padding = 11.0f);
    ADD_BAD(b.lambda = 0.0f);
    ADD_BAD(b.kernel_sigma = INFINITY);
    ADD_BAD(b.interp_factor = 1.5f);
    ADD_BAD(b.cell_px = 0);
    ADD_BAD(b.cell_px = 17);
    ADD_BAD(b.template_cells = 24);
    ADD_BAD(b.template_cells = 128);
    ADD_BAD(b.psr_lost = -1.0f);
    ADD_BAD(b.psr_found = 4.0f);
    ADD_BAD(b.search_expand_lost = 3.0f);
    ADD_BAD(b.dp_window_scale = 0.5f);
    ADD_BAD(b.dp_proposal_window_px = 8);
    ADD_BAD(b.dp_proposal_window_px = 300); /* above eb_max_window_px */
    ADD_BAD(b.dp_iou_min = 0.95f);          /* above dp_iou_max */
    ADD_BAD(b.dp_iou_max = 1.5f);
    ADD_BAD(b.dp_max_rescored = 0);
    ADD_BAD(b.dp_max_rescored = 1001);
    ADD_BAD(b.dp_damping = NAN);
    ADD_BAD(b.eb_alpha = 1.0f);
    ADD_BAD(b.eb_beta = 0.0f);
    ADD_BAD(b.eb_min_score = -1.0f);
    ADD_BAD(b.eb_max_boxes = 0);
    ADD_BAD(b.eb_kappa = 5.0f);
    ADD_BAD(b.eb_background_suppression = 2);
    ADD_BAD(b.eb_max_window_px = 8);
#undef ADD_BAD
    return n;
}

static void test_workspace_size(mv_kcf_mode mode)
{
    mv_kcf_params p;
    bad_params bad[48];
    size_t size, again;
    int i, n = make_bad_params(mode, bad);

    mv_kcf_params_init(&p, mode);
    CHECK_FAILS(MV_STATUS_NULL_POINTER, size, mv_kcf_workspace_size(NULL, W, H, &size));
    CHECK_STATUS(mv_kcf_workspace_size(&p, W, H, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, size, mv_kcf_workspace_size(&p, 0, H, &size));
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, size, mv_kcf_workspace_size(&p, W, 0, &size));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, size, mv_kcf_workspace_size(&p, 70000, H, &size));
    for (i = 0; i < n; i++) {
        poison(&size, sizeof size);
        if (mv_kcf_workspace_size(&bad[i].p, W, H, &size) != (mv_status)bad[i].status ||
            !untouched(&size, sizeof size)) {
            fprintf(stderr, "  bad params (mode %u): %s\n", (unsigned)mode, bad[i].what);
            CHECK(0);
        } else {
            CHECK(1);
        }
    }
    /* A pure function of its arguments; it grows with the grid, not the frame. */
    CHECK_OK(mv_kcf_workspace_size(&p, W, H, &size));
    CHECK_OK(mv_kcf_workspace_size(&p, W, H, &again));
    CHECK(size == again && size > 0);
    CHECK_OK(mv_kcf_workspace_size(&p, 4 * W, 4 * H, &again));
    CHECK(again == size);
    p.template_cells = 32;
    CHECK_OK(mv_kcf_workspace_size(&p, W, H, &again));
    CHECK(again > size);
    if (mode == MV_KCF_MODE_KCFDP) {
        size_t kcf_size;
        mv_kcf_params_init(&p, MV_KCF_MODE_KCF);
        CHECK_OK(mv_kcf_workspace_size(&p, W, H, &kcf_size));
        CHECK(kcf_size < size);
    }
}

static void test_create_errors(mv_kcf_mode mode)
{
    mv_kcf_params p;
    bad_params bad[48];
    mv_kcf *t;
    size_t size;
    unsigned char *ws;
    int i, n = make_bad_params(mode, bad);

    mv_kcf_params_init(&p, mode);
    CHECK_OK(mv_kcf_workspace_size(&p, W, H, &size));
    ws = (unsigned char *)malloc(size + 1);
    CHECK(ws != NULL);
    if (ws == NULL) {
        return;
    }
    CHECK_FAILS(MV_STATUS_NULL_POINTER, t, mv_kcf_create_in(NULL, size, &p, W, H, &t));
    CHECK_FAILS(MV_STATUS_NULL_POINTER, t, mv_kcf_create_in(ws, size, NULL, W, H, &t));
    CHECK_STATUS(mv_kcf_create_in(ws, size, &p, W, H, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, t, mv_kcf_create_in(ws, size, &p, 0, H, &t));
    /* Too small by one byte: neither *out nor the workspace is written. */
    poison(ws, size + 1);
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, t, mv_kcf_create_in(ws, size - 1, &p, W, H, &t));
    CHECK(untouched(ws, size + 1));
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, t, mv_kcf_create_in(ws, 0, &p, W, H, &t));
    for (i = 0; i < n; i++) {
        poison(&t, sizeof t);
        if (mv_kcf_create_in(ws, size, &bad[i].p, W, H, &t) != (mv_status)bad[i].status ||
            !untouched(&t, sizeof t) ||
            mv_kcf_create(&bad[i].p, W, H, &t) != (mv_status)bad[i].status ||
            !untouched(&t, sizeof t)) {
            fprintf(stderr, "  bad params (mode %u): %s\n", (unsigned)mode, bad[i].what);
            CHECK(0);
        } else {
            CHECK(1);
        }
    }
    CHECK(untouched(ws, size + 1));
    CHECK_FAILS(MV_STATUS_NULL_POINTER, t, mv_kcf_create(NULL, W, H, &t));
    CHECK_STATUS(mv_kcf_create(&p, W, H, NULL), MV_STATUS_NULL_POINTER);
    CHECK_FAILS(MV_STATUS_ZERO_SIZE, t, mv_kcf_create(&p, W, 0, &t));
    CHECK_FAILS(MV_STATUS_INVALID_ARGUMENT, t, mv_kcf_create(&p, W, 65536, &t));
    mv_kcf_destroy(NULL); /* accepted, does nothing */
    free(ws);
}

/* Init and update errors on one tracker; the good path runs in between. */
static void test_init_update_errors(mv_kcf_mode mode)
{
    mv_kcf_params p;
    mv_kcf *t = NULL;
    mv_image frame = image(g_frame, W, H, W, MV_PIXEL_U8);
    mv_image small = image(g_small, W, H - 1, W, MV_PIXEL_U8);
    mv_image wide = image(g_strided, W + 1, H, W + PAD, MV_PIXEL_U8);
    mv_image u16 = image(g_frame16, W, H, 2 * W, MV_PIXEL_U16);
    mv_image rgb_small = image(g_rgb, W - 1, H, 3 * W, MV_PIXEL_RGB8);
    mv_image bad;
    mv_rectf box;
    bool found;
    float conf;

    mv_kcf_params_init(&p, mode);
    CHECK_OK(mv_kcf_create(&p, W, H, &t));
    if (t == NULL) {
        return;
    }
    set_context("mode %u", (unsigned)mode);
    /* Before init. */
    CHECK_UPDATE_FAILS(MV_STATUS_NOT_INITIALIZED, mv_kcf_update(t, &frame, &box, &found, &conf));

    /* Bad init arguments. */
    CHECK_STATUS(mv_kcf_init(NULL, &frame, BOX), MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_kcf_init(t, NULL, BOX), MV_STATUS_NULL_POINTER);
    CHECK_STATUS(mv_kcf_init(t, &small, BOX), MV_STATUS_SIZE_MISMATCH);
    CHECK_STATUS(mv_kcf_init(t, &wide, BOX), MV_STATUS_SIZE_MISMATCH);
    CHECK_STATUS(mv_kcf_init(t, &rgb_small, BOX), MV_STATUS_SIZE_MISMATCH);
    CHECK_STATUS(mv_kcf_init(t, &u16, BOX), MV_STATUS_UNSUPPORTED_FORMAT);
    bad = frame;
    bad.format = 99;
    CHECK_STATUS(mv_kcf_init(t, &bad, BOX), MV_STATUS_UNSUPPORTED_FORMAT);
    bad = frame;
    bad.data = NULL;
    CHECK_STATUS(mv_kcf_init(t, &bad, BOX), MV_STATUS_NULL_POINTER);
    bad = frame;
    bad.stride = W - 1;
    CHECK_STATUS(mv_kcf_init(t, &bad, BOX), MV_STATUS_STRIDE_TOO_SMALL);
    bad = frame;
    bad.data_size--;
    CHECK_STATUS(mv_kcf_init(t, &bad, BOX), MV_STATUS_BUFFER_TOO_SMALL);
    bad = image(g_rgb, W, H, 3 * W, MV_PIXEL_RGB8);
    bad.stride = 3 * W - 1;
    CHECK_STATUS(mv_kcf_init(t, &bad, BOX), MV_STATUS_STRIDE_TOO_SMALL);
    bad = image(g_rgb, W, H, 3 * W, MV_PIXEL_RGB8);
    bad.data_size--;
    CHECK_STATUS(mv_kcf_init(t, &bad, BOX), MV_STATUS_BUFFER_TOO_SMALL);
    bad = image(g_rgb, W, H, 3 * W, MV_PIXEL_RGB8);
    bad.height = 0;
    CHECK_STATUS(mv_kcf_init(t, &bad, BOX), MV_STATUS_ZERO_SIZE);
    CHECK_STATUS(mv_kcf_init(t, &frame, rectf(30, 20, 0, 16)), MV_STATUS_ZERO_SIZE);
    CHECK_STATUS(mv_kcf_init(t, &frame, rectf(30, 20, 20, -3)), MV_STATUS_ZERO_SIZE);
    CHECK_STATUS(mv_kcf_init(t, &frame, rectf(70, 20, 20, 16)), MV_STATUS_OUT_OF_BOUNDS);
    CHECK_STATUS(mv_kcf_init(t, &frame, rectf(-0.5f, 20, 20, 16)), MV_STATUS_OUT_OF_BOUNDS);
    CHECK_STATUS(mv_kcf_init(t, &frame, rectf(100, 100, 20, 16)), MV_STATUS_OUT_OF_BOUNDS);
    CHECK_STATUS(mv_kcf_init(t, &frame, rectf(NAN, 20, 20, 16)), MV_STATUS_OUT_OF_BOUNDS);
    CHECK_STATUS(mv_kcf_init(t, &frame, rectf(30, 20, INFINITY, 16)), MV_STATUS_OUT_OF_BOUNDS);
    /* None of those initialised it. */
    CHECK_UPDATE_FAILS(MV_STATUS_NOT_INITIALIZED, mv_kcf_update(t, &frame, &box, &found, &conf));

    CHECK_OK(mv_kcf_init(t, &frame, BOX));

    /* Bad update arguments: outputs untouched. */
    CHECK_STATUS(mv_kcf_update(NULL, &frame, &box, &found, &conf), MV_STATUS_NULL_POINTER);
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_kcf_update(t, NULL, &box, &found, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_kcf_update(t, &frame, NULL, &found, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_kcf_update(t, &frame, &box, NULL, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_NULL_POINTER, mv_kcf_update(t, &frame, &box, &found, NULL));
    CHECK_UPDATE_FAILS(MV_STATUS_SIZE_MISMATCH, mv_kcf_update(t, &small, &box, &found, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_SIZE_MISMATCH,
                       mv_kcf_update(t, &rgb_small, &box, &found, &conf));
    CHECK_UPDATE_FAILS(MV_STATUS_UNSUPPORTED_FORMAT,
                       mv_kcf_update(t, &u16, &box, &found, &conf));
    bad = frame;
    bad.format = 0;
    CHECK_UPDATE_FAILS(MV_STATUS_UNSUPPORTED_FORMAT,
                       mv_kcf_update(t, &bad, &box, &found, &conf));
    bad = frame;
    bad.data_size--;
    CHECK_UPDATE_FAILS(MV_STATUS_BUFFER_TOO_SMALL, mv_kcf_update(t, &bad, &box, &found, &conf));

    /* The good path: the object moved by (2, 1). */
    frame.data = g_shifted;
    CHECK_OK(mv_kcf_update(t, &frame, &box, &found, &conf));
    CHECK(found);
    CHECK(box.x > 31.0f && box.x < 33.0f && box.y > 20.0f && box.y < 22.0f);
    CHECK(box.width > 17.0f && box.width < 23.0f && box.height > 13.0f && box.height < 19.0f);
    CHECK(conf >= p.psr_lost);

    /* Target lost: a success with found = false and zeroed box and confidence. */
    frame.data = g_flat;
    poison(&box, sizeof box);
    poison(&conf, sizeof conf);
    found = true;
    CHECK_OK(mv_kcf_update(t, &frame, &box, &found, &conf));
    CHECK(!found);
    CHECK(box.x == 0.0f && box.y == 0.0f && box.width == 0.0f && box.height == 0.0f);
    CHECK(conf == 0.0f);
    /* And found again when it comes back (near its last position). */
    frame.data = g_shifted;
    CHECK_OK(mv_kcf_update(t, &frame, &box, &found, &conf));
    CHECK(found);
    CHECK(box.x > 31.0f && box.x < 33.0f && box.y > 20.0f && box.y < 22.0f);

    set_context("%s", "");
    mv_kcf_destroy(t);
}

/* The result of init on the first frame then update on the shifted one. */
typedef struct {
    mv_rectf box;
    bool found;
    float conf;
} result;

enum layout { GRAY, GRAY_STRIDED, RGB, RGB_STRIDED };

static int track(mv_kcf *t, enum layout l, result *r)
{
    mv_image a, b;
    switch (l) {
    case GRAY:
        a = image(g_frame, W, H, W, MV_PIXEL_U8);
        b = image(g_shifted, W, H, W, MV_PIXEL_U8);
        break;
    case GRAY_STRIDED:
        a = image(g_strided, W, H, W + PAD, MV_PIXEL_U8);
        b = image(g_strided2, W, H, W + PAD, MV_PIXEL_U8);
        break;
    case RGB:
        a = image(g_rgb, W, H, 3 * W, MV_PIXEL_RGB8);
        b = image(g_rgb2, W, H, 3 * W, MV_PIXEL_RGB8);
        break;
    default:
        a = image(g_rgb_strided, W, H, 3 * W + PAD, MV_PIXEL_RGB8);
        b = image(g_rgb_strided2, W, H, 3 * W + PAD, MV_PIXEL_RGB8);
        break;
    }
    memset(r, 0, sizeof *r);
    return mv_kcf_init(t, &a, BOX) == MV_STATUS_OK &&
           mv_kcf_update(t, &b, &r->box, &r->found, &r->conf) == MV_STATUS_OK;
}

static int same(const result *a, const result *b)
{
    return a->found == b->found && a->conf == b->conf && a->box.x == b->box.x &&
           a->box.y == b->box.y && a->box.width == b->box.width &&
           a->box.height == b->box.height;
}

/* As `same`, up to float rounding: FHOG takes the strongest of the three channels' gradients,
 * computed apart, so an RGB frame with R = G = B matches its gray twin to about 1e-5. */
static int near(const result *a, const result *b)
{
    float d = 1e-3f;
    return a->found == b->found && a->conf > b->conf - 1e-2f && a->conf < b->conf + 1e-2f &&
           a->box.x > b->box.x - d && a->box.x < b->box.x + d && a->box.y > b->box.y - d &&
           a->box.y < b->box.y + d && a->box.width > b->box.width - d &&
           a->box.width < b->box.width + d && a->box.height > b->box.height - d &&
           a->box.height < b->box.height + d;
}

static void test_placement_layouts(mv_kcf_mode mode)
{
    mv_kcf_params p;
    mv_kcf *heap = NULL, *t = NULL;
    size_t size, offset;
    unsigned char *ws;
    result ref, ref_rgb, r;

    mv_kcf_params_init(&p, mode);
    CHECK_OK(mv_kcf_create(&p, W, H, &heap));
    CHECK(heap != NULL && track(heap, GRAY, &ref) && ref.found);
    mv_kcf_destroy(heap);

    CHECK_OK(mv_kcf_workspace_size(&p, W, H, &size));
    ws = (unsigned char *)malloc(size + 16);
    CHECK(ws != NULL);
    if (ws == NULL) {
        return;
    }
    /* Exactly the size, at every offset from an aligned block: any alignment works. */
    for (offset = 0; offset < 16; offset += 1) {
        t = NULL;
        CHECK_OK(mv_kcf_create_in(ws + offset, size, &p, W, H, &t));
        CHECK(t != NULL && track(t, GRAY, &r) && same(&r, &ref));
        mv_kcf_destroy(t); /* frees nothing: the workspace is ours */
    }
    /* Strides are honoured (gray and RGB), an RGB frame with R = G = B tracks as its gray twin,
     * and a restart re-initialises the same tracker. */
    CHECK_OK(mv_kcf_create_in(ws + 3, size, &p, W, H, &t));
    set_context("mode %u", (unsigned)mode);
    CHECK(t != NULL && track(t, GRAY_STRIDED, &r) && same(&r, &ref));
    CHECK(t != NULL && track(t, RGB, &ref_rgb) && near(&ref_rgb, &ref));
    CHECK(t != NULL && track(t, RGB_STRIDED, &r) && same(&r, &ref_rgb));
    CHECK(t != NULL && track(t, GRAY, &r) && same(&r, &ref));
    set_context("%s", "");
    mv_kcf_destroy(t);
    free(ws);
}

/* MV_PIXEL_RGB8 through the generic image functions. */
static void test_rgb8_images(void)
{
    mv_image im, roi;
    CHECK_INT(mv_pixel_format_size(MV_PIXEL_RGB8), 3);
    CHECK_OK(mv_image_init(g_rgb, sizeof g_rgb, W, H, 0, MV_PIXEL_RGB8, &im));
    CHECK(im.stride == 3 * W && im.format == MV_PIXEL_RGB8);
    CHECK_FAILS(MV_STATUS_STRIDE_TOO_SMALL, im,
                mv_image_init(g_rgb, sizeof g_rgb, W, H, 3 * W - 1, MV_PIXEL_RGB8, &im));
    CHECK_FAILS(MV_STATUS_BUFFER_TOO_SMALL, im,
                mv_image_init(g_rgb, sizeof g_rgb - 1, W, H, 0, MV_PIXEL_RGB8, &im));
    /* Any stride: RGB8 has no alignment requirement. */
    CHECK_OK(mv_image_init(g_rgb_strided, sizeof g_rgb_strided, W, H, 3 * W + PAD,
                           MV_PIXEL_RGB8, &im));
    CHECK_OK(mv_image_roi(&im, rect(5, 7, 10, 4), &roi));
    CHECK(roi.data == (void *)(g_rgb_strided + 7 * (3 * W + PAD) + 5 * 3));
    CHECK(roi.stride == 3 * W + PAD && roi.width == 10 && roi.height == 4 &&
          roi.format == MV_PIXEL_RGB8);
    CHECK_FAILS(MV_STATUS_OUT_OF_BOUNDS, roi, mv_image_roi(&im, rect(75, 0, 10, 4), &roi));
}

int main(void)
{
    uint32_t i;
    int m;
    draw(g_frame, W, 1, 30, 20);
    draw(g_shifted, W, 1, 32, 21);
    draw(g_strided, W + PAD, 1, 30, 20);
    draw(g_strided2, W + PAD, 1, 32, 21);
    draw(g_rgb, 3 * W, 3, 30, 20);
    draw(g_rgb2, 3 * W, 3, 32, 21);
    draw(g_rgb_strided, 3 * W + PAD, 3, 30, 20);
    draw(g_rgb_strided2, 3 * W + PAD, 3, 32, 21);
    memset(g_flat, 128, sizeof g_flat);
    memcpy(g_small, g_frame, sizeof g_small);
    for (i = 0; i < W * H; i++) {
        g_frame16[i] = g_frame[i];
    }

    for (m = 0; m < 2; m++) {
        test_params(k_modes[m]);
        test_workspace_size(k_modes[m]);
        test_create_errors(k_modes[m]);
        test_init_update_errors(k_modes[m]);
        test_placement_layouts(k_modes[m]);
    }
    test_rgb8_images();

    printf("%u passed, %u failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
