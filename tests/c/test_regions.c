/* The region and RLE exports from C99: a ring with a hole and a dot against OpenCV's findContours
 * chains, the size query and the filled call, arrays too small (counts given, nothing written), bad
 * input refused with nothing written, an object of two parts, COCO RLE against pycocotools' string and back.
 * Usage: test_regions (no arguments; no model, no ONNX Runtime). */
#include <stdio.h>
#include <string.h>

#include "segrt.h"

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static const char *last_error(void) {
    static char buf[1024];
    seg_last_error(buf, sizeof buf);
    return buf;
}

int main(void) {
    /* 10x8: a 6x4 ring around a 2x2 hole, and a dot at (9, 0). OpenCV printed these chains for it. */
    unsigned char m[8][10];
    memset(m, 0, sizeof m);
    for (int y = 2; y < 6; y++)
        for (int x = 2; x < 8; x++) m[y][x] = 255;
    for (int y = 3; y < 5; y++)
        for (int x = 4; x < 6; x++) m[y][x] = 0;
    m[0][9] = 255;
    const int outer[16][2] = {{2, 2}, {2, 3}, {2, 4}, {2, 5}, {3, 5}, {4, 5}, {5, 5}, {6, 5}, {7, 5}, {7, 4}, {7, 3}, {7, 2}, {6, 2}, {5, 2}, {4, 2}, {3, 2}};
    const int hole[8][2] = {{3, 3}, {4, 2}, {5, 2}, {6, 3}, {6, 4}, {5, 5}, {4, 5}, {3, 4}};
    SegMask mask = {&m[0][0], 10, 8, 0};
    SegRegionOptions o = {.struct_size = sizeof o};
    SegStatus st = seg_region_options_default(&o);
    CHECK(st == SEG_OK && o.connectivity == SEG_CONNECTIVITY_8 && o.outlines == 1, "defaults: %s", last_error());

    size_t nr = 0, nk = 0, np = 0;
    st = seg_mask_regions(&mask, NULL, &o, NULL, sizeof(SegRegion), 0, &nr, NULL, sizeof(SegRing), 0, &nk, NULL, 0, &np);
    CHECK(st == SEG_OK && nr == 2 && nk == 3 && np == 1 + 16 + 8, "size query: %s, %zu regions %zu rings %zu points", last_error(), nr, nk, np);

    SegRegion regions[2];
    SegRing rings[3];
    SegContourPoint points[25];
    memset(regions, 0x5A, sizeof regions);
    /* Too small: one ring short. Counts given, nothing written. */
    st = seg_mask_regions(&mask, NULL, &o, regions, sizeof(SegRegion), 2, &nr, rings, sizeof(SegRing), 2, &nk, points, 25, &np);
    CHECK(st == SEG_BUFFER_TOO_SMALL && nk == 3, "rings too small: %s %zu", seg_status_str(st), nk);
    CHECK(regions[0].label == 0x5A5A5A5Au, "a refused call wrote a region");

    st = seg_mask_regions(&mask, NULL, &o, regions, sizeof(SegRegion), 2, NULL, rings, sizeof(SegRing), 3, NULL, points, 25, NULL);
    CHECK(st == SEG_OK, "regions: %s", last_error());
    /* Raster order: the dot (row 0) first, then the ring. */
    CHECK(regions[0].area == 1 && regions[0].x == 9 && regions[0].y == 0 && regions[0].ring_count == 1, "the dot");
    const SegRegion *r = &regions[1];
    CHECK(r->label == 1 && r->area == 20 && r->hole_count == 1 && r->hole_area == 4 && r->ring_count == 2, "the ring's figures");
    /* cv2.moments of the ring: mu20 69, mu11 0, mu02 29; centroid (4.5, 3.5). */
    CHECK(r->mu20 == 69.0 && r->mu11 == 0.0 && r->mu02 == 29.0 && r->centroid_x == 4.5 && r->centroid_y == 3.5, "moments %g %g %g", r->mu20, r->mu11, r->mu02);
    CHECK(r->box_width == 5.0 && r->box_height == 3.0 && r->box_angle == 0.0, "rotated box %g x %g at %g", r->box_width, r->box_height, r->box_angle);
    const SegRing *ro = &rings[r->first_ring], *rh = &rings[r->first_ring + 1];
    CHECK(ro->kind == SEG_RING_OUTER && ro->point_count == 16 && rh->kind == SEG_RING_HOLE && rh->point_count == 8, "ring kinds and sizes");
    for (int i = 0; i < 16; i++)
        CHECK(points[ro->first_point + (size_t)i].x == outer[i][0] && points[ro->first_point + (size_t)i].y == outer[i][1], "outer point %d", i);
    for (int i = 0; i < 8; i++)
        CHECK(points[rh->first_point + (size_t)i].x == hole[i][0] && points[rh->first_point + (size_t)i].y == hole[i][1], "hole point %d", i);

    /* Bad input: nothing written. */
    SegRegionOptions bad = o;
    bad.tolerance = -0.5;
    size_t count = 777;
    st = seg_mask_regions(&mask, NULL, &bad, NULL, 0, 0, &count, NULL, 0, 0, NULL, NULL, 0, NULL);
    CHECK(st == SEG_INVALID_ARGUMENT && count == 777 && strstr(last_error(), "tolerance") != NULL, "negative tolerance: %s", last_error());
    SegMask narrow = {&m[0][0], 10, 8, 9};
    st = seg_mask_regions(&narrow, NULL, NULL, NULL, 0, 0, &count, NULL, 0, 0, NULL, NULL, 0, NULL);
    CHECK(st == SEG_INVALID_ARGUMENT && count == 777, "stride below width: %s", last_error());

    /* Figures per object: the ring and the dot as one object (a tracked object's mask of two parts). */
    SegObjectFigures obj[1];
    memset(obj, 0x5A, sizeof obj);
    size_t nobj = 0;
    st = seg_mask_objects(&mask, NULL, &o, obj, sizeof(SegObjectFigures), 0, &nobj);
    CHECK(st == SEG_BUFFER_TOO_SMALL && nobj == 1 && obj[0].label == 0x5A5A5A5Au, "objects too small: %s %zu", seg_status_str(st), nobj);
    st = seg_mask_objects(&mask, NULL, &o, obj, sizeof(SegObjectFigures), 1, NULL);
    CHECK(st == SEG_OK && obj[0].label == 1 && obj[0].parts == 2 && obj[0].area == 21 && obj[0].hole_count == 1, "the object: %s", last_error());
    CHECK(obj[0].x == 2 && obj[0].y == 0 && obj[0].width == 8 && obj[0].height == 6, "the object's box");
    /* The mean of its 21 pixels: (20 * 4.5 + 9) / 21, (20 * 3.5 + 0) / 21. */
    CHECK(obj[0].centroid_x > 4.7142857 && obj[0].centroid_x < 4.7142858 && obj[0].centroid_y > 3.3333333 && obj[0].centroid_y < 3.3333334,
          "the object's centroid (%g, %g)", obj[0].centroid_x, obj[0].centroid_y);

    /* COCO RLE: pycocotools.mask.encode of [[0,0,0,0],[1,0,0,0],[1,1,0,0]] printed b'122O4'. */
    unsigned char small[3][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {1, 1, 0, 0}};
    SegMask sm = {&small[0][0], 4, 3, 0};
    char text[16];
    size_t need = 0;
    st = seg_mask_rle(&sm, NULL, 0, NULL, 0, &need);
    CHECK(st == SEG_OK && need == 6, "RLE size query: %zu", need);
    st = seg_mask_rle(&sm, NULL, 0, text, sizeof text, NULL);
    CHECK(st == SEG_OK && strcmp(text, "122O4") == 0, "RLE %s", text);
    unsigned char back[3][4];
    memset(back, 7, sizeof back);
    SegMask bm = {&back[0][0], 4, 3, 0};
    st = seg_rle_to_mask(text, &bm, 1);
    CHECK(st == SEG_OK && memcmp(back, small, sizeof back) == 0, "RLE back: %s", last_error());
    memset(back, 7, sizeof back);
    st = seg_rle_to_mask("12", &bm, 1);
    CHECK(st == SEG_INVALID_ARGUMENT && back[0][0] == 7, "short RLE refused, mask untouched: %s", last_error());

    if (failures) {
        fprintf(stderr, "test_regions: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_regions: regions, rings, points, RLE and bad input as expected\n");
    return 0;
}
