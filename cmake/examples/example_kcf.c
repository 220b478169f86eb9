/*
 * libmvision from C99: track an object with the KCF and the KCFDP trackers through a sequence
 * this program generates (a textured rectangle that drifts across a textured background while it
 * grows and changes aspect ratio: 30 x 24 px to 60 x 36 px over 100 frames of 160 x 120),
 * each in a workspace the caller allocates, and score both against the known truth.
 *
 * KCF keeps the box at its initial size, so its IoU falls as the object grows; KCFDP re-sizes
 * the box from EdgeBoxes proposals. Prints the mean IoU of each; exits non-zero on any failed
 * call, when a mean IoU falls below its floor, or when KCFDP does not beat KCF. Uses no libm,
 * so it builds with nothing but the library.
 */
#include <mvision.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_util.h"

#define WIDTH 160u
#define HEIGHT 120u
#define FRAMES 100u
#define OBJECT_W 30.0f /* object size in frame 0, pixels */
#define OBJECT_H 24.0f

/* Measured (libmvision 0.1.0, default parameters, x86-64): found in 99 of 99 frames by both;
 * mean IoU KCF 0.572 (its box stays 30 x 24), KCFDP 0.870 (box 52.5 x 31.9 at frame 80, truth
 * 54.2 x 33.7). Workspaces: KCF 270 638 bytes, KCFDP 7 370 381 bytes. The run is deterministic (integer-hash noise); the floors allow for float
 * differences between compilers and targets and small tracker changes, not for a tracker that
 * loses the object or a KCFDP that stops following the size. */
#define MIN_MEAN_IOU_KCF 0.50f
#define MIN_MEAN_IOU_KCFDP 0.80f

/* Frame `f` into `pixels` (tightly packed) and the object's true box into `*truth`: the object
 * (a bright, softly textured rectangle with a dark outline, its texture stretched with it) drifts
 * right and down while its width doubles and its height grows by half (aspect 1.25 -> 1.67),
 * over a soft textured background. */
static void render(unsigned f, uint8_t *pixels, mv_rectf *truth)
{
    float t = (float)f / (float)(FRAMES - 1);
    float w = OBJECT_W * (1.0f + 1.0f * t), h = OBJECT_H * (1.0f + 0.5f * t);
    float cx = 60.0f + 30.0f * t, cy = 60.0f + 5.0f * sine(3.0f * t);
    float x0 = cx - w / 2.0f, y0 = cy - h / 2.0f;
    unsigned x, y;
    for (y = 0; y < HEIGHT; y++) {
        for (x = 0; x < WIDTH; x++) {
            float xf = (float)x + 0.5f, yf = (float)y + 0.5f;
            float u = (xf - x0) / w, v = (yf - y0) / h; /* object coordinates in [0, 1) */
            float value = 70.0f + 0.35f * value_noise(5, xf, yf, 11.0f);
            if (u >= 0.0f && u < 1.0f && v >= 0.0f && v < 1.0f) {
                int outline = u < 0.06f || u > 0.94f || v < 0.07f || v > 0.93f;
                value = outline ? 20.0f : 150.0f + 0.4f * value_noise(9, u * 24.0f, v * 16.0f, 3.0f);
            }
            pixels[y * WIDTH + x] = (uint8_t)(value + 0.5f);
        }
    }
    truth->x = x0;
    truth->y = y0;
    truth->width = w;
    truth->height = h;
}


/* Tracks the whole sequence with a tracker of `mode` in caller memory; the mean IoU over frames
 * 1.. into `*mean_iou` (a lost frame scores 0). 0 on success, 1 on a failed call. */
static int track(mv_kcf_mode mode, const char *name, float *mean_iou)
{
    static uint8_t pixels[HEIGHT * WIDTH];
    mv_kcf_params params;
    mv_kcf *kcf = NULL;
    void *workspace = NULL;
    size_t workspace_size = 0;
    mv_image frame;
    mv_rectf truth, box;
    bool found = false;
    float psr = 0.0f, sum_iou = 0.0f;
    unsigned f, found_frames = 0;

    MV_TRY(mv_kcf_params_init(&params, mode));
    MV_TRY(mv_kcf_workspace_size(&params, WIDTH, HEIGHT, &workspace_size));
    /* Caller memory: with mv_kcf_create_in the tracker allocates nothing itself. */
    workspace = malloc(workspace_size);
    if (workspace == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    MV_TRY(mv_kcf_create_in(workspace, workspace_size, &params, WIDTH, HEIGHT, &kcf));
    MV_TRY(mv_image_init(pixels, sizeof pixels, WIDTH, HEIGHT, 0, MV_PIXEL_U8, &frame));

    render(0, pixels, &truth);
    MV_TRY(mv_kcf_init(kcf, &frame, truth));
    for (f = 1; f < FRAMES; f++) {
        float overlap;
        render(f, pixels, &truth);
        MV_TRY(mv_kcf_update(kcf, &frame, &box, &found, &psr));
        overlap = found ? iou(box, truth) : 0.0f;
        sum_iou += overlap;
        found_frames += found ? 1u : 0u;
        if (f % 20 == 0) {
            printf("%-5s frame %3u: truth (%5.1f %5.1f %4.1f %4.1f)  ", name, f, truth.x, truth.y,
                   truth.width, truth.height);
            if (found) {
                printf("box (%5.1f %5.1f %4.1f %4.1f) PSR %5.1f IoU %.3f\n", box.x, box.y,
                       box.width, box.height, psr, overlap);
            } else {
                printf("lost\n");
            }
        }
    }
    *mean_iou = sum_iou / (float)(FRAMES - 1);
    printf("%-5s workspace %lu bytes, found in %u of %u frames, mean IoU %.3f\n", name,
           (unsigned long)workspace_size, found_frames, FRAMES - 1, *mean_iou);
    mv_kcf_destroy(kcf); /* frees nothing: the workspace is ours */
    free(workspace);
    return 0;

fail:
    mv_kcf_destroy(kcf);
    free(workspace);
    return 1;
}

int main(void)
{
    float kcf_iou = 0.0f, kcfdp_iou = 0.0f;
    printf("libmvision %s: KCF and KCFDP on a generated %ux%u sequence of %u frames\n",
           mv_version(), WIDTH, HEIGHT, FRAMES);
    if (track(MV_KCF_MODE_KCF, "KCF", &kcf_iou) != 0 ||
        track(MV_KCF_MODE_KCFDP, "KCFDP", &kcfdp_iou) != 0) {
        return 1;
    }
    printf("mean IoU: KCF %.3f (minimum %.2f), KCFDP %.3f (minimum %.2f)\n", kcf_iou,
           MIN_MEAN_IOU_KCF, kcfdp_iou, MIN_MEAN_IOU_KCFDP);
    return kcf_iou >= MIN_MEAN_IOU_KCF && kcfdp_iou >= MIN_MEAN_IOU_KCFDP && kcfdp_iou > kcf_iou
               ? 0
               : 1;
}
