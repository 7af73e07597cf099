// segrt::regions and segrt::rle (include/segrt.hpp) from C++11: a mask with a hole and a 16-bit label
// image, outlines split into outer, holes and hull, objects of several parts, RLE both ways, bad input as
// segrt::Error.
#include <cstdio>
#include <string>
#include <vector>

#include "segrt.hpp"

static int failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } } while (0)

int main() {
    segrt::Mask mask;
    mask.width = 12;
    mask.height = 10;
    mask.data.assign(120, 0);
    for (int y = 1; y < 9; y++)
        for (int x = 1; x < 11; x++) mask.data[static_cast<std::size_t>(y * 12 + x)] = (y >= 3 && y < 6 && x >= 4 && x < 8) ? 0 : 255;
    SegRegionOptions o = segrt::region_options();
    o.hull = 1;
    std::vector<segrt::Region> rs = segrt::regions(mask, &o);
    CHECK(rs.size() == 1, "one region");
    CHECK(rs.size() == 1 && rs[0].holes.size() == 1 && rs[0].figures.hole_area == 12, "one hole of 12 pixels");
    CHECK(rs.size() == 1 && rs[0].outer.size() == 2 * (10 - 1) + 2 * (8 - 1), "outer outline: the 10x8 box's border pixels");
    CHECK(rs.size() == 1 && rs[0].hull.size() == 4, "hull: 4 corners");
    CHECK(rs.size() == 1 && rs[0].figures.area == 80 - 12, "area");

    std::vector<std::uint16_t> cells(12, 0);
    cells[1] = 7;
    cells[5] = 7;
    cells[11] = 65535;
    SegLabelImage labels = {cells.data(), 4, 3, 0};
    std::vector<segrt::Region> lr = segrt::regions(labels);
    CHECK(lr.size() == 2 && lr[0].figures.label == 7 && lr[0].figures.area == 2 && lr[1].figures.label == 65535, "labels 7 and 65535");

    // Objects: label 7 at (0, 0) and (2, 2), two parts apart; label 65535 at (3, 0).
    std::vector<std::uint16_t> apart = {7, 0, 0, 65535, 0, 0, 0, 0, 0, 0, 7, 0};
    SegLabelImage parts = {apart.data(), 4, 3, 0};
    std::vector<SegObjectFigures> objs = segrt::objects(parts);
    CHECK(objs.size() == 2 && objs[0].label == 7 && objs[0].parts == 2 && objs[0].area == 2 && objs[0].centroid_x == 1.0 &&
              objs[0].centroid_y == 1.0 && objs[1].label == 65535 && objs[1].parts == 1,
          "objects: label 7 of two parts centred at (1, 1), label 65535 of one");

    SegMask m = {mask.data.data(), mask.width, mask.height, 0};
    std::string text = segrt::rle(m);
    segrt::Mask back = segrt::rle_to_mask(text, mask.width, mask.height, 255);
    CHECK(back.data == mask.data, "RLE round trip");
    CHECK(segrt::rle(labels, 7) == "327", "label 7's RLE (pycocotools printed b'327')");

    SegRegionOptions bad = segrt::region_options();
    bad.tolerance = -1.0;
    bool threw = false;
    try {
        segrt::regions(mask, &bad);
    } catch (const segrt::Error &e) {
        threw = e.status() == SEG_INVALID_ARGUMENT;
    }
    CHECK(threw, "a negative tolerance throws SEG_INVALID_ARGUMENT");
    if (failures) {
        std::fprintf(stderr, "test_regions.cpp: %d failure(s)\n", failures);
        return 1;
    }
    std::printf("test_regions.cpp: regions, outlines, labels and RLE as expected\n");
    return 0;
}
