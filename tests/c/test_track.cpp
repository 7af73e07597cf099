// SAM2 video tracking through the C++ layer (include/segrt.hpp: segrt::VideoModel, segrt::Tracker)
// on the committed reference clip: the 14 frames added, the clicks of index.json's events 0-2, every
// frame tracked, then the correction of event 3; each mask compared with the official
// SAM2VideoPredictor's (>= 99.5 % identical pixels, object-present flags equal). Then move
// semantics, exceptions, and streaming with next().
// Usage: test_track_cpp REPO_DIR INPUT_DIR [--quick]   (INPUT_DIR/video/ is written by make_inputs.py;
// --quick: the first click and two tracked frames only, for valgrind)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "segrt.hpp"

namespace {

int failures = 0, checks = 0;

void expect(bool ok, const std::string &what) {
    checks++;
    if (!ok) {
        failures++;
        std::fprintf(stderr, "FAIL: %s\n", what.c_str());
    }
}

struct Pnm {
    int w = 0, h = 0, channels = 0;
    std::vector<std::uint8_t> px;
};

Pnm read_pnm(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::string magic;
    int maxval = 0;
    Pnm p;
    if (!(f >> magic >> p.w >> p.h >> maxval) || maxval != 255) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        std::exit(2);
    }
    f.get();
    p.channels = magic == "P6" ? 3 : 1;
    p.px.resize(static_cast<std::size_t>(p.w) * p.h * p.channels);
    f.read(reinterpret_cast<char *>(p.px.data()), static_cast<std::streamsize>(p.px.size()));
    if (!f) {
        std::fprintf(stderr, "short %s\n", path.c_str());
        std::exit(2);
    }
    return p;
}

struct Expected {
    int frame = 0, object = 0, present = 0;
    std::vector<SegPoint> points;
    std::vector<int> objects, flags;  // per object of the frame (tracked records)
    std::vector<std::string> masks;
};

double identical_pct(const std::vector<std::uint8_t> &mask, const std::vector<std::uint8_t> &ref) {
    if (mask.size() != ref.size() || mask.empty()) return 0.0;
    std::size_t same = 0;
    for (std::size_t i = 0; i < mask.size(); i++) same += (mask[i] > 127) == (ref[i] > 127);
    return 100.0 * static_cast<double>(same) / static_cast<double>(mask.size());
}

// Records describe their masks: area and box counted here.
bool records_match(const segrt::TrackedFrame &f) {
    if (f.objects.size() != f.masks.size()) return false;
    for (std::size_t k = 0; k < f.objects.size(); k++) {
        unsigned long long area = 0;
        int x0 = f.width, y0 = f.height, x1 = -1, y1 = -1;
        for (int y = 0; y < f.height; y++)
            for (int x = 0; x < f.width; x++) {
                const std::uint8_t v = f.masks[k][static_cast<std::size_t>(y) * f.width + x];
                if (v != 0 && v != 255) return false;
                if (!v) continue;
                area++;
                x0 = x < x0 ? x : x0;
                x1 = x > x1 ? x : x1;
                y0 = y < y0 ? y : y0;
                y1 = y > y1 ? y : y1;
            }
        if (area == 0) x0 = y0 = x1 = y1 = 0;
        const SegTrackObject &o = f.objects[k];
        if (o.area != area || o.x0 != x0 || o.y0 != y0 || o.x1 != x1 || o.y1 != y1) return false;
    }
    return true;
}

template <class F>
void expect_error(SegStatus want, const std::string &what, F call) {
    try {
        call();
        expect(false, what + ": no exception");
    } catch (const segrt::Error &e) {
        expect(e.status() == want, what + ": " + e.what());
        std::printf("expected error (%s): %s\n", what.c_str(), e.what());
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) return 2;
    const std::string repo = argv[1], video = std::string(argv[2]) + "/video/";
    const bool quick = argc == 4 && std::string(argv[3]) == "--quick";
    double worst = 100.0;
    try {
        // the reference: frames and the expected masks of each event and tracked frame
        std::ifstream idx(video + "reference.txt");
        std::string line, kind;
        int n_frames = 0, W = 0, H = 0;
        std::vector<Expected> events, tracked;
        while (std::getline(idx, line)) {
            std::istringstream in(line);
            in >> kind;
            if (kind == "frames") {
                in >> n_frames >> W >> H;
            } else if (kind == "event") {
                Expected e;
                int n = 0, m = 0;
                in >> e.frame >> e.object >> e.present >> n;
                for (int i = 0; i < n; i++) {
                    SegPoint p;
                    in >> p.x >> p.y >> p.label;
                    e.points.push_back(p);
                }
                in >> m;
                e.masks.resize(m);
                for (int i = 0; i < m; i++) in >> e.masks[i];
                events.push_back(e);
            } else if (kind == "track") {
                Expected e;
                int n = 0;
                in >> e.frame >> n;
                for (int i = 0; i < n; i++) {
                    int obj = 0, flag = 0;
                    std::string mask;
                    in >> obj >> flag >> mask;
                    e.objects.push_back(obj);
                    e.flags.push_back(flag);
                    e.masks.push_back(mask);
                }
                tracked.push_back(e);
            }
        }
        expect(n_frames == 14 && W == 320 && H == 240 && events.size() == 4 && tracked.size() == 14, "reference.txt read");
        std::vector<Pnm> frames;
        for (int i = 0; i < n_frames; i++) {
            char name[32];
            std::snprintf(name, sizeof name, "frame%02d.ppm", i);
            frames.push_back(read_pnm(video + name));
        }
        auto compare = [&](const segrt::TrackedFrame &f, const std::vector<std::string> &masks, const std::string &what) {
            expect(f.objects.size() == masks.size() && f.masks.size() == masks.size(), what + ": object count");
            expect(records_match(f), what + ": records describe the masks");
            for (std::size_t k = 0; k < masks.size() && k < f.masks.size(); k++) {
                const double p = identical_pct(f.masks[k], read_pnm(video + masks[k]).px);
                worst = p < worst ? p : worst;
                expect(p >= 99.5, what + ", object " + std::to_string(k) + ": " + std::to_string(p) + " % identical pixels");
            }
        };

        segrt::VideoModel model(repo + "/models/sam2/video");
        SegTrackOptions opt = segrt::track_options();
        opt.num_frames = static_cast<std::uint32_t>(n_frames);  // as the official predictor, which knows the video
        opt.keep_frames = 0;
        segrt::Tracker tracker(model, &opt);
        const int used = quick ? 2 : n_frames;
        for (int i = 0; i < used; i++) {
            SegTrackInfo info;
            const std::int64_t k = tracker.add_frame(segrt::image(frames[i].px.data(), W, H, 0, SEG_FORMAT_RGB24), &info);
            expect(k == i && info.frame == i && info.image_encoder_ms > 0.0, "add_frame " + std::to_string(i));
        }
        for (std::size_t n = 0; n < (quick ? 1u : 3u); n++) {
            const Expected &e = events[n];
            segrt::TrackedFrame f = tracker.add_prompt(e.frame, e.object, e.points);
            expect(f.frame == e.frame && f.width == W && f.height == H, "click " + std::to_string(n) + ": frame and size");
            std::size_t clicked = 0;
            while (clicked < f.objects.size() && f.objects[clicked].object_id != e.object) clicked++;
            expect(clicked < f.objects.size() && static_cast<int>(f.objects[clicked].present) == e.present,
                   "click " + std::to_string(n) + ": the clicked object is present");
            compare(f, e.masks, "click " + std::to_string(n));
        }
        for (int i = 0; i < used && !quick; i++) {
            const Expected &e = tracked[i];
            segrt::TrackedFrame f = tracker.track_frame(e.frame);
            expect(f.frame == e.frame && f.info.objects == 2, "track_frame " + std::to_string(i));
            for (std::size_t k = 0; k < f.objects.size() && k < e.flags.size(); k++)
                expect(f.objects[k].object_id == e.objects[k] && static_cast<int>(f.objects[k].present) == e.flags[k],
                       "frame " + std::to_string(i) + " object " + std::to_string(k) + ": id and present flag");
            compare(f, e.masks, "frame " + std::to_string(i));
        }
        if (quick) {
            segrt::TrackedFrame f = tracker.track_frame(1);
            expect(f.objects.size() == 1 && records_match(f) && f.info.memory_attention_ms > 0.0, "quick: track_frame 1");
        } else {
            const Expected &e = events[3];  // a correction on a tracked frame
            segrt::TrackedFrame f = tracker.add_prompt(e.frame, e.object, e.points);
            expect(f.objects.size() == 2 && f.objects[1].present == 1, "correction: object 2 present");
            compare(f, e.masks, "correction");
            std::printf("reference clip through segrt::Tracker: worst mask %.3f %% identical pixels to the official predictor\n", worst);
        }
        SegTrackState s = tracker.state();
        expect(s.objects == (quick ? 1u : 2u) && s.frames == used && s.width == W && s.height == H && s.tracking_started == 1,
               "state after the clip");

        // errors are exceptions with segrt's status; the tracker is unchanged by them
        std::vector<std::uint8_t> small(160 * 120 * 3, 50);
        expect_error(SEG_INVALID_ARGUMENT, "a 160x120 frame", [&] { tracker.add_frame(segrt::image(small.data(), 160, 120, 0, SEG_FORMAT_RGB24)); });
        expect_error(SEG_INVALID_ARGUMENT, "a prompt on frame 99", [&] { tracker.add_prompt(99, 1, {{10.0f, 10.0f, 1}}); });
        expect_error(SEG_INVALID_ARGUMENT, "track_frame 99", [&] { tracker.track_frame(99); });
        expect(tracker.state().frames == s.frames && tracker.state().objects == s.objects, "state unchanged by the errors");
        // a new object after tracking started (as SAM2's predictor allows); removed, then removed again
        {
            segrt::TrackedFrame f = tracker.add_prompt(0, 9, {{250.0f, 50.0f, 1}});
            expect(f.objects.size() == s.objects + 1u && f.objects.back().object_id == 9 && records_match(f), "a new object after tracking started");
            tracker.remove_object(9);
            expect(tracker.state().objects == s.objects, "remove_object");
            expect_error(SEG_INVALID_ARGUMENT, "remove_object of an object removed already", [&] { tracker.remove_object(9); });
        }

        // a volume: slices fed without encoding, the middle one clicked, propagated both ways
        {
            const int nv = quick ? 4 : n_frames, mid = nv / 2;
            SegTrackOptions vo = segrt::volume_options(static_cast<std::uint32_t>(nv), 2);
            segrt::Tracker volume(model, &vo);
            for (int i = 0; i < nv; i++) {
                SegTrackInfo info;
                volume.add_frame(segrt::image(frames[i].px.data(), W, H, 0, SEG_FORMAT_RGB24), &info);
                expect(info.image_encoder_ms == 0.0, "a volume's slice " + std::to_string(i) + " is encoded when needed");
            }
            expect(volume.state().volume == 1 && volume.state().held_frames == 0, "volume state");
            segrt::TrackedFrame clicked = volume.add_prompt(mid, 1, {{160.0f, 100.0f, 1}});
            expect(clicked.objects.size() == 1 && clicked.objects[0].present == 1, "the middle slice clicked");
            std::vector<std::int64_t> order;
            std::vector<std::vector<std::uint8_t>> masks(static_cast<std::size_t>(nv));
            SegTrackInfo summed;
            const std::size_t n = volume.propagate(
                segrt::propagation(SEG_TRACK_BOTH_WAYS, mid),
                [&](segrt::TrackedFrame &f) {
                    order.push_back(f.frame);
                    expect(f.objects.size() == 1 && f.width == W && f.height == H && records_match(f), "frame " + std::to_string(f.frame) + ": records");
                    if (!f.masks.empty()) masks[static_cast<std::size_t>(f.frame)] = std::move(f.masks[0]);
                    return true;
                },
                nullptr, &summed);
            std::vector<std::int64_t> want;
            for (int i = mid; i < nv; i++) want.push_back(i);
            for (int i = mid; i >= 0; i--) want.push_back(i);
            expect(n == want.size() && order == want, "both ways from the middle: the start slice to the last, then down to 0");
            expect(summed.frame == 0 && summed.memory_attention_ms > 0.0, "propagate's info: the last frame, summed times");
            expect(masks[static_cast<std::size_t>(mid)] == clicked.masks[0], "the conditioning slice keeps its clicked mask");
            // a stop from the callback: segrt::Cancelled, the frames delivered stay delivered
            std::size_t seen = 0;
            expect_error(SEG_CANCELLED, "on_frame returning false", [&] {
                volume.propagate(segrt::propagation(SEG_TRACK_FORWARD, 0), [&](segrt::TrackedFrame &) { return ++seen < 2; });
            });
            expect(seen == 2, "stopped after the second frame");
            // an exception of the callback comes back as itself
            try {
                volume.propagate(segrt::propagation(SEG_TRACK_REVERSE), [](segrt::TrackedFrame &) -> bool { throw std::logic_error("mine"); });
                expect(false, "the callback's exception was swallowed");
            } catch (const std::logic_error &e) {
                expect(std::string(e.what()) == "mine", "the callback's exception rethrown");
            }
            // a cancelled control: nothing delivered; progress reaches 1 in SEG_STAGE_PROPAGATION
            segrt::Control control;
            control.cancel();
            expect_error(SEG_CANCELLED, "a cancelled control", [&] { volume.propagate(segrt::propagation(SEG_TRACK_BOTH_WAYS), &control); });
            control.reset();
            float last = -1.0f;
            control.set_progress([&](SegStage stage, float fraction) {
                if (stage == SEG_STAGE_PROPAGATION) last = fraction;
                return true;
            });
            // a second object after tracking, on another slice; both ways from there, a frame budget
            const int other = nv - 1;
            segrt::TrackedFrame two = volume.add_prompt(other, 2, {{250.0f, 50.0f, 1}});
            expect(two.objects.size() == 2 && two.objects[1].object_id == 2, "a second object on slice " + std::to_string(other));
            std::vector<segrt::TrackedFrame> all = volume.propagate(segrt::propagation(SEG_TRACK_BOTH_WAYS, other, 2), &control);
            expect(all.size() == 4 && all[0].frame == other && all[1].frame == other && all[2].frame == other - 1 && all[3].frame == other - 2,
                   "both ways from the last slice, 2 frames: forward has only the start slice");
            for (const segrt::TrackedFrame &f : all) expect(f.objects.size() == 2 && records_match(f), "two objects per frame");
            expect(last == 1.0f, "progress ends at 1: " + std::to_string(last));
            // clear the second object's prompts on its slice, remove it
            segrt::TrackedFrame cleared = volume.clear_prompts(other, 2);
            expect(cleared.frame == other && cleared.objects.size() == 2, "clear_prompts returns the frame's objects");
            volume.remove_object(2);
            expect(volume.state().objects == 1, "object 2 removed");
            expect_error(SEG_INVALID_ARGUMENT, "clear_prompts of a removed object", [&] { volume.clear_prompts(other, 2); });
        }
        expect_error(SEG_MODEL_NOT_FOUND, "a missing models folder", [&] { segrt::VideoModel m("/no/such/folder"); });

        // move semantics: the moved-from tracker owns nothing, its calls are SEG_INVALID_HANDLE
        segrt::Tracker moved = std::move(tracker);
        expect(tracker.get() == nullptr && moved.get() != nullptr, "move leaves the source empty");
        expect_error(SEG_INVALID_HANDLE, "a moved-from tracker", [&] { tracker.state(); });
        expect(moved.state().frames == s.frames, "the moved-to tracker has the track");
        segrt::Tracker other(model);
        SegTrack *old = other.get();
        other = std::move(moved);  // frees the empty track `other` held
        expect(other.state().frames == s.frames, "move assignment takes the track");
        expect(seg_track_free(old) == SEG_INVALID_HANDLE, "move assignment freed the old track");

        // streaming with next() on a model moved away and then dropped: the tracker keeps it alive
        segrt::VideoModel model2 = std::move(model);
        expect(model.get() == nullptr, "moved-from model");
        segrt::Tracker stream(model2);
        { segrt::VideoModel gone = std::move(model2); }
        expect_error(SEG_INVALID_ARGUMENT, "next before any object", [&] { stream.next(segrt::image(frames[0].px.data(), W, H, 0, SEG_FORMAT_RGB24)); });
        stream.add_frame(segrt::image(frames[0].px.data(), W, H, 0, SEG_FORMAT_RGB24));
        SegBox box = {200.0f, 20.0f, 300.0f, 90.0f};
        segrt::TrackedFrame f = stream.add_prompt(-1, 7, {}, &box);
        expect(f.objects.size() == 1 && f.objects[0].object_id == 7 && records_match(f), "box prompt");
        for (int i = 1; i < (quick ? 2 : n_frames); i++) {
            f = stream.next(segrt::image(frames[i].px.data(), W, H, 0, SEG_FORMAT_RGB24));
            expect(f.frame == i && f.objects.size() == 1 && records_match(f) && f.info.image_encoder_ms > 0.0, "next " + std::to_string(i));
        }
        expect(stream.state().held_frames <= SEG_TRACK_DEFAULT_KEEP_FRAMES, "default keep_frames bounds held frames");
        stream.reset();
        expect(stream.state().frames == 0 && stream.state().objects == 0, "reset");
        expect_error(SEG_INVALID_ARGUMENT, "track_frame -1 after a reset", [&] { stream.track_frame(-1); });
    } catch (const segrt::Error &e) {
        std::printf("unexpected: %s\n", e.what());
        failures++;
    }
    std::printf("C++ tracking layer: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
