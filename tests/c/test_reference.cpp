// segrt::Reference (include/segrt.hpp): teach once, find the best match and every instance, save and
// load, cancellation through segrt::Control, and the errors a host can meet as segrt::Error. On the
// colour oracle encoder and the geometric oracle decoder (models/sam2/make_colour_oracle.py), as
// tests/reference_c_abi.rs: red discs are the taught object, a blue disc a distractor.
// Usage: test_reference_cpp REPO_DIR
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "segrt.hpp"

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);       \
            failures++;                                                       \
        }                                                                     \
    } while (0)

namespace {

const int W = 512, H = 512;
const unsigned char RED[3] = {220, 30, 30}, BLUE[3] = {30, 40, 220};

struct Disc {
    int x, y;
    const unsigned char *colour;
};

bool in_disc(int x, int y, int cx, int cy) { return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= 40 * 40; }

/// A gray 512x512 RGB image with discs of radius 40.
std::vector<unsigned char> scene(const std::vector<Disc> &discs) {
    std::vector<unsigned char> px(static_cast<std::size_t>(W) * H * 3, 128);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (const Disc &d : discs)
                if (in_disc(x, y, d.x, d.y)) std::memcpy(&px[(static_cast<std::size_t>(y) * W + x) * 3], d.colour, 3);
    return px;
}

segrt::Mask disc_mask(int cx, int cy) {
    segrt::Mask m;
    m.width = W;
    m.height = H;
    m.data.assign(static_cast<std::size_t>(W) * H, 0);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (in_disc(x, y, cx, cy)) m.data[static_cast<std::size_t>(y) * W + x] = 255;
    return m;
}

double iou(const std::vector<std::uint8_t> &a, const std::vector<std::uint8_t> &b) {
    std::size_t both = 0, any = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); i++) {
        both += a[i] != 0 && b[i] != 0;
        any += a[i] != 0 || b[i] != 0;
    }
    return any ? static_cast<double>(both) / static_cast<double>(any) : 0.0;
}

SegImage rgb(const std::vector<unsigned char> &px) { return segrt::image(px.data(), W, H, 0, SEG_FORMAT_RGB24); }

/// Runs `call`, which must throw segrt::Error with `want`; prints the message.
template <class Call>
int expect_status(SegStatus want, const char *what, Call call) {
    try {
        call();
    } catch (const segrt::Error &e) {
        std::printf("expected error (%s): %s\n", what, e.what());
        if (e.status() == want) return 0;
        std::printf("FAIL %s: status %d, wanted %d\n", what, static_cast<int>(e.status()), static_cast<int>(want));
        return 1;
    }
    std::printf("FAIL %s: no exception\n", what);
    return 1;
}

bool same_records(const std::vector<SegFound> &a, const std::vector<SegFound> &b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); i++)
        if (a[i].id != b[i].id || a[i].present != b[i].present || a[i].score != b[i].score || a[i].x0 != b[i].x0 ||
            a[i].y0 != b[i].y0 || a[i].x1 != b[i].x1 || a[i].y1 != b[i].y1 || a[i].area != b[i].area)
            return false;
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    const std::string repo = argv[1];
    int failures = 0;
    try {
        segrt::Session sam = segrt::Session::sam2(repo + "/models/sam2/sam2_colour_oracle_encoder.onnx",
                                                  repo + "/models/sam2/sam2_oracle_decoder.onnx");
        const std::vector<unsigned char> teach_px = scene({{150, 150, RED}, {380, 380, BLUE}});
        segrt::Reference part = segrt::Reference::teach(sam, rgb(teach_px), disc_mask(150, 150));
        EXPECT(part.get() != nullptr);

        // The best match: present, its mask on the moved disc, its record around it, refined.
        const std::vector<unsigned char> moved = scene({{340, 300, RED}, {120, 400, BLUE}});
        const segrt::Found best = part.find(sam, rgb(moved));
        EXPECT(best.present() && best.found.size() == 1u && best.found[0].id == 1u);
        EXPECT(best.labels.empty());
        EXPECT(best.info.found == 1u && best.info.refinement == SEG_REFINEMENT_DONE && best.info.decoder_runs == 2u);
        const double moved_iou = iou(best.mask.data, disc_mask(340, 300).data);
        EXPECT(moved_iou > 0.8);
        if (!best.found.empty()) {
            const SegFound &r = best.found[0];
            EXPECT(r.x0 < 340 && r.x1 > 340 && r.y0 < 300 && r.y1 > 300);
            std::printf("best match: IoU %.3f with the moved disc, score %.3f, box %d,%d..%d,%d, %u decoder runs\n", moved_iou,
                        static_cast<double>(r.score), r.x0, r.y0, r.x1, r.y1, best.info.decoder_runs);
        }

        // Without the object: one record, not present, an all-0 mask.
        const std::vector<unsigned char> without = scene({{120, 400, BLUE}});
        const segrt::Found absent = part.find(sam, rgb(without));
        EXPECT(!absent.present() && absent.found.size() == 1u);
        bool all_zero = true;
        for (std::uint8_t v : absent.mask.data) all_zero = all_zero && v == 0;
        EXPECT(all_zero);

        // Every instance: four red discs labelled, the blue one not.
        const std::vector<Disc> many = {{100, 100, RED}, {300, 120, RED}, {200, 330, RED}, {420, 420, RED}, {420, 200, BLUE}};
        const std::vector<unsigned char> many_px = scene(many);
        const SegFindOptions all_options = segrt::find_options(SEG_FIND_ALL);
        EXPECT(all_options.struct_size == sizeof(SegFindOptions) && all_options.mode == SEG_FIND_ALL && all_options.refine == 1u);
        const segrt::Found all = part.find(sam, rgb(many_px), &all_options);
        EXPECT(all.found.size() == 4u && all.info.found == 4u && all.labels.size() == static_cast<std::size_t>(W) * H);
        for (std::size_t i = 0; i + 1 < many.size() && all.labels.size() == static_cast<std::size_t>(W) * H; i++) {
            const std::uint16_t at = all.labels[static_cast<std::size_t>(many[i].y) * W + many[i].x];
            EXPECT(at > 0 && at <= all.found.size());
            if (at > 0 && at <= all.found.size()) EXPECT(all.found[at - 1u].id == at && all.found[at - 1u].present == 1u);
        }
        if (all.labels.size() == static_cast<std::size_t>(W) * H) EXPECT(all.labels[200u * W + 420u] == 0);
        std::printf("every instance: %u found\n", static_cast<unsigned>(all.found.size()));

        // Saved, loaded: the same masks and records; the moved-from reference frees nothing.
        const std::string path = "tests/c/build/part.segrtref";
        part.save(path);
        segrt::Reference loaded = segrt::Reference::load(sam, path);
        const segrt::Found again = loaded.find(sam, rgb(moved));
        EXPECT(again.mask.data == best.mask.data && same_records(again.found, best.found));
        const segrt::Found all_again = loaded.find(sam, rgb(many_px), &all_options);
        EXPECT(all_again.labels == all.labels && same_records(all_again.found, all.found));
        segrt::Reference taken = std::move(loaded);
        EXPECT(loaded.get() == nullptr && taken.get() != nullptr);

        // A second example is accepted; the object is still found.
        taken.add(sam, rgb(scene({{300, 200, RED}})), disc_mask(300, 200));
        EXPECT(taken.find(sam, rgb(moved)).present());

        // Cancellation and progress through segrt::Control: a cancelled control throws
        // segrt::Cancelled; once reset, the find runs and reports progress.
        segrt::Control control;
        control.cancel();
        failures += expect_status(SEG_CANCELLED, "cancelled find", [&] { part.find(sam, rgb(many_px), &all_options, &control); });
        failures += expect_status(SEG_CANCELLED, "cancelled add", [&] { taken.add(sam, rgb(teach_px), disc_mask(150, 150), &control); });
        control.reset();
        int progress_calls = 0;
        control.set_progress([&](SegStage, float) {
            progress_calls++;
            return true;
        });
        const segrt::Found controlled = part.find(sam, rgb(without), nullptr, &control);  // another image: the encoder runs
        EXPECT(!controlled.present() && progress_calls > 0);
        std::printf("find under a control: %d progress calls\n", progress_calls);

        // Bad input: segrt::Error with the status, the reference usable after.
        segrt::Reference empty;
        failures += expect_status(SEG_INVALID_ARGUMENT, "find before any example", [&] { empty.find(sam, rgb(moved)); });
        failures += expect_status(SEG_INVALID_ARGUMENT, "save before any example", [&] { empty.save("tests/c/build/never.segrtref"); });
        segrt::Mask nothing = disc_mask(150, 150);
        nothing.data.assign(nothing.data.size(), 0);
        failures += expect_status(SEG_INVALID_ARGUMENT, "empty mask", [&] { empty.add(sam, rgb(teach_px), nothing); });
        segrt::Mask half = disc_mask(150, 150);
        half.width = W / 2;
        half.data.resize(static_cast<std::size_t>(W / 2) * H);
        failures += expect_status(SEG_INVALID_ARGUMENT, "mask of another size", [&] { segrt::Reference::teach(sam, rgb(teach_px), half); });
        failures += expect_status(SEG_MODEL_NOT_FOUND, "missing file", [&] { segrt::Reference::load(sam, "tests/c/build/missing.segrtref"); });
        segrt::Session other = segrt::Session::sam2(repo + "/models/sam2/sam2_oracle_encoder.onnx", repo + "/models/sam2/sam2_oracle_decoder.onnx");
        failures += expect_status(SEG_MODEL_UNSUPPORTED, "file of another model", [&] { segrt::Reference::load(other, path); });
        failures += expect_status(SEG_MODEL_UNSUPPORTED, "find on another model", [&] { part.find(other, rgb(moved)); });
        SegFindOptions reserved = segrt::find_options();
        reserved.reserved[0] = 1;
        failures += expect_status(SEG_INVALID_ARGUMENT, "reserved option", [&] { part.find(sam, rgb(moved), &reserved); });
        EXPECT(part.find(sam, rgb(moved)).mask.data == best.mask.data);
        std::remove(path.c_str());
    } catch (const segrt::Error &e) {
        std::printf("FAIL: unexpected segrt::Error: %s\n", e.what());
        failures++;
    }
    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
