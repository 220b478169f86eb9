/*
 * libmvision from C99: track an object with the TLD tracker through a sequence this program
 * generates (a textured rectangle moving along a smooth loop and changing scale over a textured
 * background), in a workspace the caller allocates, and score it against the known truth.
 *
 * Prints the IoU every 10 frames and the mean over all frames; exits non-zero on any failed
 * call or when the mean IoU falls below MIN_MEAN_IOU. Uses no libm (a local sine), so it builds
 * with nothing but the library.
 */
#include <mvision.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"

#define WIDTH 160u
#define HEIGHT 120u
#define FRAMES 100u
#define OBJECT_W 36.0f /* object size at scale 1, pixels */
#define OBJECT_H 28.0f

/* Measured: found in 99 of 99 frames, mean IoU 0.933 (libmvision 0.1.0, default parameters,
 * x86-64). The run is deterministic (fixed seed, integer-hash noise); the margin allows for
 * float differences between compilers and targets and small tracker changes, not for a tracker
 * that loses the object. */
#define MIN_MEAN_IOU 0.85f

/* Frame `f` into `pixels` (tightly packed) and the object's true box into `*truth`. */
static void render(unsigned f, uint8_t *pixels, mv_rectf *truth)
{
    float t = (float)f / 25.0f;
    float s = 1.0f + 0.18f * sine(0.9f * t);            /* scale 0.82 .. 1.18 */
    float w = OBJECT_W * s, h = OBJECT_H * s;
    float cx = (float)WIDTH * (0.5f + 0.22f * sine(t + 1.5708f)); /* a Lissajous loop */
    float cy = (float)HEIGHT * (0.5f + 0.18f * sine(1.3f * t));
    float x0 = cx - w / 2.0f, y0 = cy - h / 2.0f;
    unsigned x, y;
    for (y = 0; y < HEIGHT; y++) {
        for (x = 0; x < WIDTH; x++) {
            float xf = (float)x, yf = (float)y;
            float u = (xf - x0) / s, v = (yf - y0) / s; /* object coordinates */
            float value;
            if (u >= 0.0f && u < OBJECT_W && v >= 0.0f && v < OBJECT_H) {
                /* The object's own texture, fixed in object coordinates: it scales with it. */
                float checker = (((int)(u / 6.0f) + (int)(v / 7.0f)) % 2 == 0) ? 50.0f : 210.0f;
                value = 0.55f * checker + 0.45f * value_noise(3, u, v, 4.0f);
            } else {
                value = 0.6f * value_noise(1, xf, yf, 9.0f) + 0.4f * value_noise(2, xf, yf, 3.0f);
            }
            pixels[y * WIDTH + x] = (uint8_t)(value + 0.5f);
        }
    }
    truth->x = x0;
    truth->y = y0;
    truth->width = w;
    truth->height = h;
}


int main(void)
{
    static uint8_t pixels[HEIGHT * WIDTH];
    mv_tld_params params;
    mv_tld *tld = NULL;
    void *workspace = NULL;
    size_t workspace_size = 0;
    mv_image frame;
    mv_rectf truth, box;
    mv_rect init_box;
    bool found = false;
    float confidence = 0.0f, sum_iou = 0.0f, mean_iou;
    unsigned f, found_frames = 0;

    printf("libmvision %s: TLD on a generated %ux%u sequence of %u frames\n", mv_version(), WIDTH,
           HEIGHT, FRAMES);
    MV_TRY(mv_tld_params_init(&params));
    MV_TRY(mv_tld_workspace_size(&params, WIDTH, HEIGHT, &workspace_size));
    printf("workspace: %lu bytes\n", (unsigned long)workspace_size);
    /* Caller memory: the tracker allocates nothing itself with mv_tld_create_in. */
    workspace = malloc(workspace_size);
    if (workspace == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    MV_TRY(mv_tld_create_in(workspace, workspace_size, &params, WIDTH, HEIGHT, &tld));
    MV_TRY(mv_image_init(pixels, sizeof pixels, WIDTH, HEIGHT, 0, MV_PIXEL_U8, &frame));

    render(0, pixels, &truth);
    init_box.x = (int32_t)(truth.x + 0.5f);
    init_box.y = (int32_t)(truth.y + 0.5f);
    init_box.width = (int32_t)(truth.width + 0.5f);
    init_box.height = (int32_t)(truth.height + 0.5f);
    MV_TRY(mv_tld_init(tld, &frame, init_box));

    for (f = 1; f < FRAMES; f++) {
        float overlap;
        render(f, pixels, &truth);
        MV_TRY(mv_tld_update(tld, &frame, &box, &found, &confidence));
        overlap = found ? iou(box, truth) : 0.0f;
        sum_iou += overlap;
        found_frames += found ? 1u : 0u;
        if (f % 10 == 0) {
            printf("frame %3u: truth (%6.1f %6.1f %5.1f %5.1f)  ", f, truth.x, truth.y,
                   truth.width, truth.height);
            if (found) {
                printf("box (%6.1f %6.1f %5.1f %5.1f) conf %.2f IoU %.3f\n", box.x, box.y,
                       box.width, box.height, confidence, overlap);
            } else {
                printf("not found\n");
            }
        }
    }
    mean_iou = sum_iou / (float)(FRAMES - 1);
    printf("found in %u of %u frames, mean IoU %.3f (minimum %.2f)\n", found_frames, FRAMES - 1,
           mean_iou, MIN_MEAN_IOU);

    mv_tld_destroy(tld); /* frees nothing: the workspace is ours */
    free(workspace);
    return mean_iou >= MIN_MEAN_IOU ? 0 : 1;

fail:
    mv_tld_destroy(tld);
    free(workspace);
    return 1;
}
