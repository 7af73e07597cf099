// segrt.hpp: a small header-only C++11 layer over segrt.h (hand-written; segrt.h is generated).
//
// - Sessions are move-only RAII objects; the destructor calls seg_free.
// - Every failing call throws segrt::Error carrying the SegStatus and segrt's message.
// - Buffers are std::vector; images are borrowed for the duration of a call only.
// - Versioned structs (options, infos, results, states) get `struct_size = sizeof` here: options made
//   by default_options() / everything_options() / track_options() carry it, and every struct this
//   layer hands segrt to fill is sized before the call. Record arrays are passed with sizeof a record.
// - The long calls (UNet runs, SAM2 encodes, clicks and segment-everything, the Tracker calls that
//   run models, Reference::teach/add/find) take an optional segrt::Control* last (nullptr: not
//   cancellable, no progress); a cancelled call throws segrt::Cancelled (a segrt::Error with status SEG_CANCELLED), writes nothing
//   and leaves the Session, Tracker or Reference as before the call.
// Thread safety is segrt's: one Session or Reference may be used from several threads at once; the calls of one
// Tracker are serialised by segrt (one at a time, in the order they take the track's lock). A Control
// may be cancelled from any thread.
#ifndef SEGRT_HPP
#define SEGRT_HPP

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "segrt.h"

namespace segrt {

/// A failed segrt call: the status and the message of seg_last_error.
class Error : public std::runtime_error {
public:
    Error(SegStatus status, const std::string &message)
        : std::runtime_error(std::string(seg_status_str(status)) + ": " + message), status_(status) {}
    SegStatus status() const { return status_; }

private:
    SegStatus status_;
};

/// A call stopped through its segrt::Control (Control::cancel, or a progress callback returning
/// false): status SEG_CANCELLED. Nothing was written and the Session or Tracker is as before the call.
class Cancelled : public Error {
public:
    explicit Cancelled(const std::string &message) : Error(SEG_CANCELLED, message) {}
};

/// The calling thread's last error message.
inline std::string last_error() {
    std::vector<char> buf(seg_last_error(nullptr, 0));
    seg_last_error(buf.data(), buf.size());
    return std::string(buf.data());
}

/// Throws segrt::Error (segrt::Cancelled for SEG_CANCELLED) unless `status` is SEG_OK.
inline void check(SegStatus status) {
    if (status == SEG_CANCELLED) throw Cancelled(last_error());
    if (status != SEG_OK) throw Error(status, last_error());
}

/// Move-only owner of a SegCallControl: cancellation and progress of the long calls given it as
/// their last argument. One Control may serve several calls (on several threads) at once;
/// cancel() stops them all, and every later call under it, until reset(). cancel() and reset() may
/// be called from any thread. Destroy (or move from) a Control only once no call runs under it: it
/// owns the progress function segrt calls.
class Control {
public:
    /// Called on the thread running the call, between its steps, with the stage and the fraction done
    /// in [0, 1]; return false to stop the call (as cancel()). An exception thrown by it stops the
    /// call too (it never crosses into segrt; the call throws segrt::Cancelled).
    typedef std::function<bool(SegStage, float)> Progress;

    Control() : handle_(nullptr) { check(seg_control_create(&handle_)); }
    Control(Control &&other) noexcept : handle_(other.handle_), progress_(std::move(other.progress_)) {
        other.handle_ = nullptr;
    }
    Control &operator=(Control &&other) noexcept {
        if (this != &other) {
            seg_control_free(handle_);
            handle_ = other.handle_;
            other.handle_ = nullptr;
            progress_ = std::move(other.progress_);
        }
        return *this;
    }
    Control(const Control &) = delete;
    Control &operator=(const Control &) = delete;
    ~Control() { seg_control_free(handle_); }

    /// Stops every call running under this control (they throw segrt::Cancelled shortly after, on
    /// their threads) and every later one until reset(). Returns at once; any thread.
    void cancel() const { check(seg_control_cancel(handle_)); }

    /// Makes a cancelled control usable for new calls.
    void reset() const { check(seg_control_reset(handle_)); }

    /// Installs the progress function (an empty one removes it). Every function installed stays
    /// alive until the Control is destroyed, so a call already running may still use the one before.
    void set_progress(Progress progress) {
        if (!progress) {
            check(seg_control_set_progress(handle_, nullptr, nullptr));
            return;
        }
        std::unique_ptr<Progress> p(new Progress(std::move(progress)));
        progress_.reserve(progress_.size() + 1);  // the push_back below cannot throw after segrt holds p
        check(seg_control_set_progress(handle_, &Control::trampoline, p.get()));
        progress_.push_back(std::move(p));
    }

    SegCallControl *get() const { return handle_; }

private:
    static std::int32_t trampoline(std::int32_t stage, float fraction, void *user_data) {
        try {
            return (*static_cast<const Progress *>(user_data))(static_cast<SegStage>(stage), fraction) ? 1 : 0;
        } catch (...) {
            return 0;  // stop the call: an exception must not unwind into segrt
        }
    }

    SegCallControl *handle_;
    std::vector<std::unique_ptr<Progress>> progress_;
};

/// The SegCallControl of an optional Control (nullptr: none).
inline SegCallControl *control_handle(const Control *control) { return control ? control->get() : nullptr; }

/// segrt's default session options, `struct_size` set (start every SegOptions here).
inline SegOptions default_options() {
    SegOptions o = SegOptions();
    o.struct_size = sizeof(SegOptions);
    check(seg_options_default(&o));
    return o;
}

/// Gives ONNX Runtime's unused working memory back to the system now (`seg_release_memory`), for a
/// host that knows it goes idle; sessions stay usable, also while other threads run them.
inline void release_memory() { check(seg_release_memory()); }

/// An 8-bit mask at the image's size (0/255, or the class index for multi-class UNets).
struct Mask {
    int width = 0, height = 0;
    std::vector<std::uint8_t> data;
};

/// Describes caller-owned pixels; `stride` in bytes (0 = tightly packed).
inline SegImage image(const void *pixels, int width, int height, int stride, SegPixelFormat format) {
    SegImage img;
    img.data = static_cast<const std::uint8_t *>(pixels);
    img.width = width;
    img.height = height;
    img.stride = stride;
    img.format = static_cast<std::int32_t>(format);
    img.plane1 = nullptr;
    img.plane2 = nullptr;
    return img;
}

/// Three 8-bit planes R, G, B (HALCON get_image_pointer3), each `stride` bytes per row.
inline SegImage planar_image(const void *r, const void *g, const void *b, int width, int height, int stride) {
    SegImage img = image(r, width, height, stride, SEG_FORMAT_PLANAR_RGB8);
    img.plane1 = static_cast<const std::uint8_t *>(g);
    img.plane2 = static_cast<const std::uint8_t *>(b);
    return img;
}

/// Unsigned 16-bit pixels (camera Mono10/12/16 words, HALCON uint2, 16-bit PNG/TIFF): SEG_FORMAT_GRAY16 or
/// SEG_FORMAT_RGB48. `stride` in BYTES (0 = packed), a multiple of 2. How the values reach the model is the
/// session's Intensity (default: each image's min-max to 0..255).
inline SegImage image(const std::uint16_t *pixels, int width, int height, int stride, SegPixelFormat format = SEG_FORMAT_GRAY16) {
    if (format != SEG_FORMAT_GRAY16 && format != SEG_FORMAT_RGB48)
        throw Error(SEG_INVALID_ARGUMENT, "uint16_t pixels are SEG_FORMAT_GRAY16 or SEG_FORMAT_RGB48 (planes: planar_image)");
    return image(static_cast<const void *>(pixels), width, height, stride, format);
}

/// Signed 16-bit pixels (CT, HALCON int2): SEG_FORMAT_GRAY16S or SEG_FORMAT_RGB48S; `stride` in bytes.
inline SegImage image(const std::int16_t *pixels, int width, int height, int stride, SegPixelFormat format = SEG_FORMAT_GRAY16S) {
    if (format != SEG_FORMAT_GRAY16S && format != SEG_FORMAT_RGB48S)
        throw Error(SEG_INVALID_ARGUMENT, "int16_t pixels are SEG_FORMAT_GRAY16S or SEG_FORMAT_RGB48S (planes: planar_image)");
    return image(static_cast<const void *>(pixels), width, height, stride, format);
}

/// 32-bit float pixels (HALCON real, HU): SEG_FORMAT_GRAY32F or SEG_FORMAT_RGB96F; `stride` in bytes, a
/// multiple of 4. NaN and infinity are refused by the call (SEG_INVALID_ARGUMENT).
inline SegImage image(const float *pixels, int width, int height, int stride, SegPixelFormat format = SEG_FORMAT_GRAY32F) {
    if (format != SEG_FORMAT_GRAY32F && format != SEG_FORMAT_RGB96F)
        throw Error(SEG_INVALID_ARGUMENT, "float pixels are SEG_FORMAT_GRAY32F or SEG_FORMAT_RGB96F (planes: planar_image)");
    return image(static_cast<const void *>(pixels), width, height, stride, format);
}

/// Three unsigned 16-bit planes (HALCON uint2 with three channels): SEG_FORMAT_PLANAR_RGB16.
inline SegImage planar_image(const std::uint16_t *r, const std::uint16_t *g, const std::uint16_t *b, int width, int height, int stride) {
    SegImage img = image(static_cast<const void *>(r), width, height, stride, SEG_FORMAT_PLANAR_RGB16);
    img.plane1 = reinterpret_cast<const std::uint8_t *>(g);
    img.plane2 = reinterpret_cast<const std::uint8_t *>(b);
    return img;
}

/// Three signed 16-bit planes (HALCON int2 with three channels): SEG_FORMAT_PLANAR_RGB16S.
inline SegImage planar_image(const std::int16_t *r, const std::int16_t *g, const std::int16_t *b, int width, int height, int stride) {
    SegImage img = image(static_cast<const void *>(r), width, height, stride, SEG_FORMAT_PLANAR_RGB16S);
    img.plane1 = reinterpret_cast<const std::uint8_t *>(g);
    img.plane2 = reinterpret_cast<const std::uint8_t *>(b);
    return img;
}

/// Three float planes (HALCON real with three channels): SEG_FORMAT_PLANAR_RGB32F.
inline SegImage planar_image(const float *r, const float *g, const float *b, int width, int height, int stride) {
    SegImage img = image(static_cast<const void *>(r), width, height, stride, SEG_FORMAT_PLANAR_RGB32F);
    img.plane1 = reinterpret_cast<const std::uint8_t *>(g);
    img.plane2 = reinterpret_cast<const std::uint8_t *>(b);
    return img;
}

/// The intensity stage (SegIntensity, `struct_size` set), built step by step:
/// `segrt::Intensity::window(40, 400).rescale(1, -1024)`; set it with Session::set_intensity. The named
/// constructors start from seg_intensity_default; segrt checks the values when they are set
/// (segrt::Error with SEG_INVALID_ARGUMENT), window() already checks its width.
class Intensity {
public:
    /// segrt's default: each image's min-max to 0..255, all bits, no rescale.
    static Intensity min_max() { return Intensity(); }
    /// A window given as centre and width (seg_intensity_set_window: low = c - w/2, high = c + w/2);
    /// throws segrt::Error (SEG_INVALID_ARGUMENT) for a width that is not positive.
    static Intensity window(double centre, double width) {
        Intensity i;
        check(seg_intensity_set_window(&i.value_, centre, width));
        return i;
    }
    /// A window given by its ends: low..high map onto the output range, values outside are clipped.
    static Intensity range(double low, double high) {
        Intensity i;
        i.value_.range = SEG_INTENSITY_WINDOW;
        i.value_.low = low;
        i.value_.high = high;
        return i;
    }
    /// Each image's percentiles `low`..`high` (0..100) map onto the output range.
    static Intensity percentiles(double low, double high) {
        Intensity i;
        i.value_.range = SEG_INTENSITY_PERCENTILES;
        i.value_.percentile_low = low;
        i.value_.percentile_high = high;
        return i;
    }
    /// No mapping: the rescaled values pass through (float models that take raw HU).
    static Intensity none() {
        Intensity i;
        i.value_.range = SEG_INTENSITY_NONE;
        return i;
    }
    /// The modality rescale v = stored * slope + intercept (DICOM), before the range.
    Intensity &rescale(double slope, double intercept) {
        value_.slope = slope;
        value_.intercept = intercept;
        return *this;
    }
    /// Used bits of integer images (e.g. 12 for Mono12 or a HALCON uint2 image with 12 bits); 0 = all.
    Intensity &bits(std::uint32_t used_bits) {
        value_.bits = used_bits;
        return *this;
    }
    /// The output range (default 0..255).
    Intensity &output(double low, double high) {
        value_.out_low = low;
        value_.out_high = high;
        return *this;
    }
    const SegIntensity &get() const { return value_; }

private:
    Intensity() : value_() {
        value_.struct_size = sizeof(SegIntensity);
        check(seg_intensity_default(&value_));
    }
    SegIntensity value_;
};

/// A SAM2 prediction: the mask, its predicted IoU, and the chosen low-res logits for refinement.
struct Sam2Prediction {
    Mask mask;
    float score = 0.0f;
    std::vector<float> low_res;
};

/// One prompt of Session::sam2_segment_prompts: clicks and/or a box, in image pixels.
struct Sam2Prompt {
    std::vector<SegPoint> points;
    bool has_box;
    SegBox box;
    Sam2Prompt() : has_box(false), box() {}
    /// A prompt of one box (a detector's box).
    static Sam2Prompt from_box(const SegBox &b) {
        Sam2Prompt p;
        p.has_box = true;
        p.box = b;
        return p;
    }
    /// A prompt of clicks (label 1 = include, 0 = exclude).
    static Sam2Prompt from_points(const std::vector<SegPoint> &points) {
        Sam2Prompt p;
        p.points = points;
        return p;
    }
};

/// Every object of an image (seg_sam2_everything): a 16-bit label image (0 = background, object
/// k = k; larger objects painted first, so smaller ones on top) and one record per object, best
/// predicted IoU first.
struct Everything {
    int width = 0;
    int height = 0;
    std::vector<std::uint16_t> labels;
    std::vector<SegEverythingObject> objects;
    SegEverythingInfo info = SegEverythingInfo();
};

/// The defaults of SAM2's automatic mask generator, `struct_size` set.
inline SegEverythingOptions everything_options() {
    SegEverythingOptions o = SegEverythingOptions();
    o.struct_size = sizeof(SegEverythingOptions);
    check(seg_everything_options_default(&o));
    return o;
}

/// Move-only owner of a SegSession.
class Session {
public:
    Session(Session &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    Session &operator=(Session &&other) noexcept {
        if (this != &other) {
            seg_free(handle_);
            handle_ = other.handle_;
            other.handle_ = nullptr;
        }
        return *this;
    }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
    ~Session() { seg_free(handle_); }

    /// A UNet session from a UTF-8 model path; `options`: nullptr (defaults) or from default_options().
    static Session unet(const std::string &model_path, const SegOptions *options = nullptr) {
        SegSession *s = nullptr;
        check(seg_create(model_path.c_str(), options, &s));
        return Session(s);
    }

    /// A SAM2 session from an encoder and a decoder model (`options` as for unet()).
    static Session sam2(const std::string &encoder, const std::string &decoder, const SegOptions *options = nullptr) {
        SegSession *s = nullptr;
        check(seg_create_sam2(encoder.c_str(), decoder.c_str(), options, &s));
        return Session(s);
    }

    /// Sets the intensity stage for every later call on this session, from any thread (segrt::Error with
    /// SEG_INVALID_ARGUMENT for a bad setting, the one in force kept); a call already running keeps its own.
    void set_intensity(const Intensity &intensity) const { check(seg_set_intensity(handle_, &intensity.get())); }
    /// Back to segrt's default stage (8-bit images as without it, 16-bit and float by per-image min-max).
    void reset_intensity() const { check(seg_set_intensity(handle_, nullptr)); }

    /// Runs a UNet session; `info` (optional) receives timings and classes; `control` (optional)
    /// cancels it or receives its progress (SEG_STAGE_RUN, or SEG_STAGE_TILES when tiled).
    Mask run_unet(const SegImage &img, SegRunInfo *info = nullptr, const Control *control = nullptr) const {
        Mask m;
        m.width = img.width;
        m.height = img.height;
        m.data.assign(static_cast<std::size_t>(img.width > 0 ? img.width : 0) * static_cast<std::size_t>(img.height > 0 ? img.height : 0), 0);
        SegMask out = {m.data.data(), img.width, img.height, 0};
        if (info) info->struct_size = sizeof(SegRunInfo);
        check(seg_run_unet(handle_, &img, &out, nullptr, 0, info, control_handle(control)));
        return m;
    }

    /// Encodes an image now so that later clicks only run the decoder; returns the time spent.
    double sam2_set_image(const SegImage &img, const Control *control = nullptr) const {
        double ms = 0.0;
        check(seg_sam2_set_image(handle_, &img, &ms, control_handle(control)));
        return ms;
    }

    /// One SAM2 prediction on the image set last (`img` == nullptr) or on `img`.
    Mask sam2_click(const SegImage *img, int width, int height, const std::vector<SegPoint> &points,
                    const SegBox *box = nullptr, bool refine = false, float *score = nullptr,
                    const Control *control = nullptr) const {
        Mask m;
        m.width = width;
        m.height = height;
        m.data.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), 0);
        SegMask out = {m.data.data(), width, height, 0};
        check(seg_run_sam2_points(handle_, img, points.empty() ? nullptr : points.data(), points.size(), box, nullptr, 0,
                                  refine ? SEG_SAM2_REFINE : 0u, &out, score, nullptr, control_handle(control)));
        return m;
    }

    /// One SAM2 prediction with the chosen mask's low-res logits: pass them back as `refine_from` to
    /// refine (the caller's own refinement state: threads refining different objects never mix).
    Sam2Prediction sam2_predict(const SegImage *img, int width, int height, const std::vector<SegPoint> &points,
                                const SegBox *box = nullptr, const std::vector<float> *refine_from = nullptr,
                                const Control *control = nullptr) const {
        Sam2Prediction p;
        p.mask.width = width;
        p.mask.height = height;
        p.mask.data.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), 0);
        p.low_res.assign(256u * 256u, 0.0f);  // the largest low-res size of released SAM2 exports
        SegMask out = {p.mask.data.data(), width, height, 0};
        SegSam2Result r = SegSam2Result();
        r.struct_size = sizeof(SegSam2Result);
        r.low_res_logits = p.low_res.data();
        r.low_res_len = p.low_res.size();
        const float *mask_input = refine_from && !refine_from->empty() ? refine_from->data() : nullptr;
        const std::size_t mask_input_len = mask_input ? refine_from->size() : 0;
        check(seg_run_sam2_points(handle_, img, points.empty() ? nullptr : points.data(), points.size(), box, mask_input,
                                  mask_input_len, 0u, &out, &p.score, &r, control_handle(control)));
        p.low_res.resize(static_cast<std::size_t>(r.low_res_width) * static_cast<std::size_t>(r.low_res_height));
        return p;
    }

    /// Many objects in one call (seg_sam2_segment_prompts): one mask per prompt, in order, each equal
    /// to a sam2_click with that prompt. `img` nullptr: the image set last, of `width` x `height`.
    /// `scores` (optional) receives each mask's predicted IoU, `info` (optional) the decoder runs, the
    /// batch size and the times. 1 to 4096 prompts; a bad prompt throws before anything runs.
    std::vector<Mask> sam2_segment_prompts(const SegImage *img, int width, int height, const std::vector<Sam2Prompt> &prompts,
                                           std::vector<float> *scores = nullptr, SegSam2PromptsInfo *info = nullptr,
                                           const Control *control = nullptr) const {
        const std::size_t n = prompts.size();
        std::vector<Mask> masks(n);
        std::vector<SegMask> out(n > 0 ? n : 1);
        std::vector<SegSam2Prompt> records(n > 0 ? n : 1);
        for (std::size_t i = 0; i < n; i++) {
            masks[i].width = width;
            masks[i].height = height;
            masks[i].data.assign(static_cast<std::size_t>(width > 0 ? width : 0) * static_cast<std::size_t>(height > 0 ? height : 0), 0);
            SegMask m = {masks[i].data.data(), width, height, 0};
            out[i] = m;
            SegSam2Prompt r = SegSam2Prompt();
            r.points = prompts[i].points.empty() ? nullptr : prompts[i].points.data();
            r.n_points = prompts[i].points.size();
            r.bbox = prompts[i].box;
            r.has_box = prompts[i].has_box ? 1u : 0u;
            records[i] = r;
        }
        std::vector<float> s(n > 0 ? n : 1, 0.0f);
        if (info) info->struct_size = sizeof(SegSam2PromptsInfo);
        check(seg_sam2_segment_prompts(handle_, img, records.data(), sizeof(SegSam2Prompt), n, out.data(), s.data(), info,
                                       control_handle(control)));
        if (scores) scores->assign(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
        return masks;
    }

    /// Segments everything in `img` (nullptr: the image set last, of `width` x `height`); `options`:
    /// nullptr (defaults) or from everything_options(). The session keeps its last result, so the
    /// size query and the call that fills the buffers decode once.
    Everything sam2_everything(const SegImage *img, int width, int height, const SegEverythingOptions *options = nullptr,
                               const Control *control = nullptr) const {
        Everything e;
        std::size_t n = 0;
        SegCallControl *c = control_handle(control);
        check(seg_sam2_everything(handle_, img, options, nullptr, nullptr, sizeof(SegEverythingObject), 0, &n, nullptr, c));
        e.width = width;
        e.height = height;
        e.labels.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), 0);
        e.objects.resize(n);
        SegLabelImage labels = {e.labels.data(), width, height, 0};
        e.info.struct_size = sizeof(SegEverythingInfo);
        check(seg_sam2_everything(handle_, img, options, &labels, n ? e.objects.data() : nullptr, sizeof(SegEverythingObject), n,
                                  &n, &e.info, c));
        return e;
    }

    void sam2_reset() const { check(seg_sam2_reset(handle_)); }

    /// seg_session_info as a JSON string.
    std::string info() const {
        std::size_t needed = 0;
        check(seg_session_info(handle_, nullptr, 0, &needed));
        std::vector<char> buf(needed);
        check(seg_session_info(handle_, buf.data(), buf.size(), &needed));
        return std::string(buf.data());
    }

    SegSession *get() const { return handle_; }

private:
    explicit Session(SegSession *h) : handle_(h) {}
    SegSession *handle_;
};

/// seg_reference_find's defaults (the best match, threshold 0.6, refined, colour on), `struct_size` set.
inline SegFindOptions find_options(SegFindMode mode = SEG_FIND_BEST) {
    SegFindOptions o = SegFindOptions();
    o.struct_size = sizeof(SegFindOptions);
    check(seg_find_options_default(&o));
    o.mode = static_cast<std::int32_t>(mode);
    return o;
}

/// What Reference::find found: the mask (0/255: the best match when present, all 0 when not; with
/// SEG_FIND_ALL every instance), the label image (SEG_FIND_ALL only: 0 = background, instance k = k,
/// best first; empty otherwise), one record per match (SEG_FIND_BEST: exactly one, present or not)
/// and what ran.
struct Found {
    Mask mask;
    std::vector<std::uint16_t> labels;
    std::vector<SegFound> found;
    SegFindInfo info = SegFindInfo();
    /// The best match is present (SEG_FIND_BEST), or at least one instance was found (SEG_FIND_ALL).
    bool present() const { return !found.empty() && found[0].present != 0; }
};

/// Move-only owner of a SegReference: a taught object ("teach once, find it in every image"). It
/// holds embeddings, not images, and is used with SAM2 image Sessions of the model it was taught with
/// (another model throws segrt::Error with SEG_MODEL_UNSUPPORTED). Any number of threads may find on
/// one Reference at once; an add() meanwhile takes effect for the finds that start after it.
class Reference {
public:
    /// An empty reference: add() an example before save() or find().
    Reference() : handle_(nullptr) { check(seg_reference_create(&handle_)); }
    Reference(Reference &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    Reference &operator=(Reference &&other) noexcept {
        if (this != &other) {
            seg_reference_free(handle_);
            handle_ = other.handle_;
            other.handle_ = nullptr;
        }
        return *this;
    }
    Reference(const Reference &) = delete;
    Reference &operator=(const Reference &) = delete;
    ~Reference() { seg_reference_free(handle_); }

    /// A reference taught from `img` and the object's `mask` on it (the image's size, non-zero = the
    /// object), encoded on `sam`. An empty mask, one covering the whole image or one of another size
    /// throws segrt::Error (SEG_INVALID_ARGUMENT).
    static Reference teach(const Session &sam, const SegImage &img, const Mask &mask, const Control *control = nullptr) {
        Reference r;
        r.add(sam, img, mask, control);
        return r;
    }

    /// Loads a reference saved by save(), for `sam`'s model: a missing file throws segrt::Error with
    /// SEG_MODEL_NOT_FOUND, a damaged one SEG_MODEL_INVALID, one of another model or a newer format
    /// SEG_MODEL_UNSUPPORTED.
    static Reference load(const Session &sam, const std::string &path) {
        SegReference *r = nullptr;
        check(seg_reference_load(sam.get(), path.c_str(), &r));
        return Reference(r);
    }

    /// Teaches one more example (another view, another copy); later finds use all of them. On an
    /// error or a cancellation the reference is as before the call.
    void add(const Session &sam, const SegImage &img, const SegMask &mask, const Control *control = nullptr) {
        check(seg_reference_add(handle_, sam.get(), &img, &mask, control_handle(control)));
    }
    /// add() with a segrt::Mask (only read).
    void add(const Session &sam, const SegImage &img, const Mask &mask, const Control *control = nullptr) {
        const SegMask m = {const_cast<std::uint8_t *>(mask.data.data()), mask.width, mask.height, 0};
        add(sam, img, m, control);
    }

    /// Saves the reference (UTF-8 path), written whole or not at all.
    void save(const std::string &path) const { check(seg_reference_save(handle_, path.c_str())); }

    /// Finds the taught object in `img` on `sam` (its cached encoding when `img` is the image encoded
    /// last); `options`: nullptr (find_options()) or from find_options().
    Found find(const Session &sam, const SegImage &img, const SegFindOptions *options = nullptr, const Control *control = nullptr) const {
        const SegFindOptions o = options ? *options : find_options();
        const bool all = o.mode == SEG_FIND_ALL;
        const std::size_t pixels = static_cast<std::size_t>(img.width > 0 ? img.width : 0) * static_cast<std::size_t>(img.height > 0 ? img.height : 0);
        Found f;
        f.mask.width = img.width;
        f.mask.height = img.height;
        f.mask.data.assign(pixels, 0);
        SegMask m = {f.mask.data.data(), img.width, img.height, 0};
        if (all) f.labels.assign(pixels, 0);
        SegLabelImage l = {f.labels.data(), img.width, img.height, 0};
        // max_instances records are always enough (SEG_FIND_BEST writes exactly one).
        const std::size_t capacity = all ? (o.max_instances > 0 ? o.max_instances : 1u) : 1u;
        f.found.resize(capacity);
        f.info.struct_size = sizeof(SegFindInfo);
        std::size_t count = 0;
        check(seg_reference_find(handle_, sam.get(), &img, &o, &m, all ? &l : nullptr, f.found.data(), sizeof(SegFound), capacity,
                                 &count, &f.info, control_handle(control)));
        f.found.resize(count);
        return f;
    }

    SegReference *get() const { return handle_; }

private:
    explicit Reference(SegReference *h) : handle_(h) {}
    SegReference *handle_;
};

/// The default track options, `struct_size` set.
inline SegTrackOptions track_options() {
    SegTrackOptions o = SegTrackOptions();
    o.struct_size = sizeof(SegTrackOptions);
    check(seg_track_options_default(&o));
    return o;
}

/// The default options of a volume track (SegTrackOptions::volume = 1, `struct_size` set): every
/// slice's pixels kept, slices encoded when first needed with the `keep_frames` most recently used
/// encodings cached, every slice reachable both ways by Tracker::propagate. `num_frames`: the slices
/// of the volume when known (0 = unknown).
inline SegTrackOptions volume_options(std::uint32_t num_frames = 0, std::uint32_t keep_frames = SEG_TRACK_DEFAULT_KEEP_FRAMES) {
    SegTrackOptions o = track_options();
    o.volume = 1u;
    o.num_frames = num_frames;
    o.keep_frames = keep_frames;
    return o;
}

/// A propagation request (SegPropagation, `struct_size` set): `direction` from the earliest conditioning
/// frame of any object, prompts not yet propagated included (as the official predictor), to the end. Set `max_frames` on the result for a
/// frame budget from there.
inline SegPropagation propagation(SegTrackDirection direction = SEG_TRACK_FORWARD) {
    SegPropagation p = SegPropagation();
    p.struct_size = sizeof(SegPropagation);
    check(seg_propagation_default(&p));
    p.direction = static_cast<std::int32_t>(direction);
    return p;
}

/// A propagation request from frame `start_frame` (an index; negative counts from the end, -1 = the last
/// frame), `max_frames` frames past it in each direction (-1 = to the end):
/// `propagation(SEG_TRACK_BOTH_WAYS, 40)` goes both ways from slice 40.
inline SegPropagation propagation(SegTrackDirection direction, std::int64_t start_frame, std::int64_t max_frames = -1) {
    SegPropagation p = propagation(direction);
    p.use_start_frame = 1u;
    p.start_frame = start_frame;
    p.max_frames = max_frames;
    return p;
}

/// Every object of one frame after a track call: one record and one mask per object, in the
/// order the objects were first prompted. Masks are `width` x `height`, 0/255, tightly packed.
struct TrackedFrame {
    std::int64_t frame = 0;
    int width = 0, height = 0;
    std::vector<SegTrackObject> objects;
    std::vector<std::vector<std::uint8_t>> masks;
    SegTrackInfo info = SegTrackInfo();  ///< the call's per-stage times
};

/// Move-only owner of a SAM2 video session (seg_create_sam2_video): the four video modules,
/// loaded once and shared by every Tracker made from it. A Tracker keeps the model alive, so the
/// VideoModel may be destroyed first.
class VideoModel {
public:
    explicit VideoModel(const std::string &models_dir, const SegOptions *options = nullptr) : handle_(nullptr) {
        check(seg_create_sam2_video(models_dir.c_str(), options, &handle_));
    }
    VideoModel(VideoModel &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    VideoModel &operator=(VideoModel &&other) noexcept {
        if (this != &other) {
            seg_free(handle_);
            handle_ = other.handle_;
            other.handle_ = nullptr;
        }
        return *this;
    }
    VideoModel(const VideoModel &) = delete;
    VideoModel &operator=(const VideoModel &) = delete;
    ~VideoModel() { seg_free(handle_); }

    /// The intensity stage for the frames every track of this model adds later (a fixed window: min-max
    /// stretches each frame on its own; keep the output range 0..255).
    void set_intensity(const Intensity &intensity) const { check(seg_set_intensity(handle_, &intensity.get())); }
    /// Back to segrt's default stage.
    void reset_intensity() const { check(seg_set_intensity(handle_, nullptr)); }

    SegSession *get() const { return handle_; }

private:
    SegSession *handle_;
};

/// Move-only owner of a SegTrack: one video (or volume) being tracked. segrt serialises the calls
/// of one track (a lock per track), so several threads may share one Tracker; each call sees the
/// track as the previous call left it, so feed frames from one thread or order the calls yourself.
/// The outputs are sized from seg_track_state (plus one record for an object new to add_prompt)
/// and the call is repeated with the count segrt reports if another thread added an object in
/// between (SEG_BUFFER_TOO_SMALL is never thrown).
class Tracker {
public:
    explicit Tracker(const VideoModel &model, const SegTrackOptions *options = nullptr) : handle_(nullptr) {
        check(seg_track_create(model.get(), options, &handle_));
    }
    Tracker(Tracker &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    Tracker &operator=(Tracker &&other) noexcept {
        if (this != &other) {
            seg_track_free(handle_);
            handle_ = other.handle_;
            other.handle_ = nullptr;
        }
        return *this;
    }
    Tracker(const Tracker &) = delete;
    Tracker &operator=(const Tracker &) = delete;
    ~Tracker() { seg_track_free(handle_); }

    /// Adds the next frame and encodes it (no tracking); returns its index (0, 1, ...).
    std::int64_t add_frame(const SegImage &frame, SegTrackInfo *info = nullptr, const Control *control = nullptr) {
        std::int64_t index = -1;
        if (info) info->struct_size = sizeof(SegTrackInfo);
        check(seg_track_add_frame(handle_, &frame, &index, info, control_handle(control)));
        return index;
    }

    /// Prompts `object_id` on frame `frame` (an index, or -1 for the last frame added) with clicks
    /// and/or a box; returns every object of that frame.
    TrackedFrame add_prompt(std::int64_t frame, std::int32_t object_id, const std::vector<SegPoint> &points,
                            const SegBox *box = nullptr, const Control *control = nullptr) {
        const SegTrackState s = state();
        const SegPoint *p = points.empty() ? nullptr : points.data();
        const std::size_t np = points.size();
        SegTrack *t = handle_;
        SegCallControl *c = control_handle(control);
        return collect(s.objects + 1u, s.width, s.height,
                       [&](SegTrackObject *o, const SegMask *m, std::size_t cap, std::size_t *n, SegTrackInfo *i) {
                           return seg_track_add_prompt(t, frame, object_id, p, np, box, o, sizeof(SegTrackObject), m, cap, n, i, c);
                       });
    }

    /// Tracks frame `frame` (an index, or -1 for the last frame added) for every object.
    TrackedFrame track_frame(std::int64_t frame, const Control *control = nullptr) {
        const SegTrackState s = state();
        SegTrack *t = handle_;
        SegCallControl *c = control_handle(control);
        return collect(s.objects, s.width, s.height, [&](SegTrackObject *o, const SegMask *m, std::size_t cap, std::size_t *n, SegTrackInfo *i) {
            return seg_track_frame(t, frame, o, sizeof(SegTrackObject), m, cap, n, i, c);
        });
    }

    /// Streaming: adds `frame` and tracks it (needs an object prompted first).
    TrackedFrame next(const SegImage &frame, const Control *control = nullptr) {
        const SegTrackState s = state();
        SegTrack *t = handle_;
        SegCallControl *c = control_handle(control);
        const int w = s.width > 0 ? s.width : frame.width, h = s.height > 0 ? s.height : frame.height;
        return collect(s.objects, w, h, [&](SegTrackObject *o, const SegMask *m, std::size_t cap, std::size_t *n, SegTrackInfo *i) {
            return seg_track_next(t, &frame, o, sizeof(SegTrackObject), m, cap, n, i, c);
        });
    }

    /// Called by propagate() with each frame as soon as it is tracked, on the calling thread; return
    /// false to stop (propagate then throws segrt::Cancelled). The TrackedFrame is refilled for the
    /// next frame: copy or move out what you keep. Its `info` carries the frame and the object count
    /// only (propagate's `info` sums the times). It must not call this Tracker: segrt holds the track
    /// while it runs, so such a call would wait for the propagation that waits for it.
    typedef std::function<bool(TrackedFrame &)> FrameCallback;

    /// Propagates every object through the frames (seg_track_propagate; `request` from propagation()):
    /// forward, in reverse or both ways from a start frame, each frame handed to `on_frame` as soon as
    /// it is tracked (both ways: the start frame to the last, then the start frame again down to 0).
    /// Returns the frames delivered. Stopping (`on_frame` returning false or throwing, `control`
    /// cancelled) throws segrt::Cancelled, an exception of `on_frame` is rethrown as it was; either way
    /// the frames delivered stay tracked. `info` (optional) receives the summed times and the last frame.
    std::size_t propagate(const SegPropagation &request, const FrameCallback &on_frame, const Control *control = nullptr,
                          SegTrackInfo *info = nullptr) {
        for (;;) {
            const SegTrackState s = state();
            const std::size_t n = s.objects;
            Delivery d;
            d.on_frame = &on_frame;
            d.frame.width = s.width;
            d.frame.height = s.height;
            d.capacity = n;
            const std::size_t pixels = static_cast<std::size_t>(s.width > 0 ? s.width : 0) * static_cast<std::size_t>(s.height > 0 ? s.height : 0);
            d.pixels = pixels;
            d.records.resize(n > 0 ? n : 1);
            d.storage.assign(n, std::vector<std::uint8_t>(pixels, 0));
            d.masks.resize(n > 0 ? n : 1);
            for (std::size_t i = 0; i < n; i++) {
                d.masks[i].data = d.storage[i].data();
                d.masks[i].width = s.width;
                d.masks[i].height = s.height;
                d.masks[i].stride = 0;
            }
            SegTrackInfo summed = SegTrackInfo();
            summed.struct_size = sizeof(SegTrackInfo);
            std::size_t count = 0;
            const SegStatus st = seg_track_propagate(handle_, &request, d.records.data(), sizeof(SegTrackObject), d.masks.data(), n,
                                                     &count, &Tracker::frame_trampoline, &d, &summed, control_handle(control));
            if (st == SEG_BUFFER_TOO_SMALL && count > n && d.delivered == 0) continue;  // an object added in between
            if (d.error) std::rethrow_exception(d.error);
            check(st);
            if (info) *info = summed;
            return d.delivered;
        }
    }

    /// propagate() collecting every frame (a volume's masks: width x height bytes per object and slice).
    std::vector<TrackedFrame> propagate(const SegPropagation &request = propagation(), const Control *control = nullptr) {
        std::vector<TrackedFrame> frames;
        propagate(
            request,
            [&frames](TrackedFrame &f) {
                frames.push_back(std::move(f));
                return true;
            },
            control);
        return frames;
    }

    /// Removes object `object_id` (its prompts, outputs and memory; SAM2's remove_object). An id not
    /// in the track (removed already) throws segrt::Error with SEG_INVALID_ARGUMENT.
    void remove_object(std::int32_t object_id) { check(seg_track_remove_object(handle_, object_id)); }

    /// Clears `object_id`'s prompts on frame `frame` (SAM2's clear_all_prompts_in_frame): a
    /// conditioning frame of the object becomes a tracked one; returns every object of that frame.
    TrackedFrame clear_prompts(std::int64_t frame, std::int32_t object_id) {
        const SegTrackState s = state();
        SegTrack *t = handle_;
        return collect(s.objects, s.width, s.height, [&](SegTrackObject *o, const SegMask *m, std::size_t cap, std::size_t *n, SegTrackInfo *i) {
            return seg_track_clear_prompts(t, frame, object_id, o, sizeof(SegTrackObject), m, cap, n, i);
        });
    }

    /// Forgets every frame, object and memory: the track is as new (same model and options).
    void reset() { check(seg_track_reset(handle_)); }

    SegTrackState state() const {
        SegTrackState s = SegTrackState();
        s.struct_size = sizeof(SegTrackState);
        check(seg_track_state(handle_, &s));
        return s;
    }

    SegTrack *get() const { return handle_; }

private:
    /// Runs `call` with outputs for `n` objects of `w` x `h`; again with more if segrt asks for more.
    template <class Call>
    static TrackedFrame collect(std::size_t n, int w, int h, Call call) {
        const std::size_t pixels = static_cast<std::size_t>(w > 0 ? w : 0) * static_cast<std::size_t>(h > 0 ? h : 0);
        for (;;) {
            TrackedFrame f;
            f.width = w;
            f.height = h;
            f.objects.resize(n > 0 ? n : 1);  // never NULL: a track with objects answers SEG_BUFFER_TOO_SMALL
            f.masks.assign(n, std::vector<std::uint8_t>(pixels, 0));
            std::vector<SegMask> m(n > 0 ? n : 1);
            for (std::size_t i = 0; i < n; i++) {
                m[i].data = f.masks[i].data();
                m[i].width = w;
                m[i].height = h;
                m[i].stride = 0;
            }
            f.info.struct_size = sizeof(SegTrackInfo);
            std::size_t count = 0;
            const SegStatus st = call(f.objects.data(), m.data(), n, &count, &f.info);
            if (st == SEG_BUFFER_TOO_SMALL && count > n) {
                n = count;
                continue;
            }
            check(st);
            f.objects.resize(count);
            f.masks.resize(count);
            f.frame = f.info.frame;
            return f;
        }
    }

    /// What propagate() hands seg_track_propagate as `user_data`: the buffers and the callback.
    struct Delivery {
        const FrameCallback *on_frame = nullptr;
        TrackedFrame frame;
        std::size_t capacity = 0, pixels = 0, delivered = 0;
        std::vector<SegTrackObject> records;
        std::vector<std::vector<std::uint8_t>> storage;
        std::vector<SegMask> masks;
        std::exception_ptr error;
    };

    static std::int32_t frame_trampoline(std::int64_t frame, std::size_t count, void *user_data) {
        Delivery &d = *static_cast<Delivery *>(user_data);
        try {
            TrackedFrame &f = d.frame;
            f.frame = frame;
            f.objects.assign(d.records.begin(), d.records.begin() + static_cast<std::ptrdiff_t>(count < d.capacity ? count : d.capacity));
            f.masks.assign(d.storage.begin(), d.storage.begin() + static_cast<std::ptrdiff_t>(f.objects.size()));
            f.info = SegTrackInfo();
            f.info.struct_size = sizeof(SegTrackInfo);
            f.info.objects = static_cast<std::uint32_t>(f.objects.size());
            f.info.frame = frame;
            d.delivered++;
            return (*d.on_frame)(f) ? 1 : 0;
        } catch (...) {
            d.error = std::current_exception();  // rethrown by propagate(): it must not unwind into segrt
            return 0;
        }
    }

    SegTrack *handle_;
};

/// seg_mask_regions' defaults (8-connected, binary, pixel-exact outlines, no hull), `struct_size` set.
inline SegRegionOptions region_options() {
    SegRegionOptions o = SegRegionOptions();
    o.struct_size = sizeof(SegRegionOptions);
    check(seg_region_options_default(&o));
    return o;
}

/// One region of a mask: its figures (the C record; angles in degrees, counter-clockwise on screen)
/// and its closed outlines as points (pixel centres): the outer one, the holes, the hull when asked.
struct Region {
    SegRegion figures;
    std::vector<SegContourPoint> outer;
    std::vector<std::vector<SegContourPoint>> holes;
    std::vector<SegContourPoint> hull;
};

namespace detail {
inline std::vector<Region> regions(const SegMask *mask, const SegLabelImage *labels, const SegRegionOptions *options) {
    std::size_t nr = 0, nk = 0, np = 0;
    check(seg_mask_regions(mask, labels, options, nullptr, sizeof(SegRegion), 0, &nr, nullptr, sizeof(SegRing), 0, &nk, nullptr, 0, &np));
    std::vector<SegRegion> records(nr);
    std::vector<SegRing> rings(nk);
    std::vector<SegContourPoint> points(np);
    // The same call again: segrt kept this thread's last result, so it is not computed twice.
    check(seg_mask_regions(mask, labels, options, nr ? records.data() : nullptr, sizeof(SegRegion), nr, nullptr,
                           nk ? rings.data() : nullptr, sizeof(SegRing), nk, nullptr, np ? points.data() : nullptr, np, nullptr));
    std::vector<Region> out(nr);
    for (std::size_t i = 0; i < nr; i++) out[i].figures = records[i];
    for (std::size_t k = 0; k < nk; k++) {
        const SegRing &ring = rings[k];
        std::vector<SegContourPoint> pts(points.begin() + static_cast<std::ptrdiff_t>(ring.first_point),
                                         points.begin() + static_cast<std::ptrdiff_t>(ring.first_point + ring.point_count));
        Region &r = out[ring.region];
        if (ring.kind == SEG_RING_OUTER) r.outer.swap(pts);
        else if (ring.kind == SEG_RING_HOLE) r.holes.push_back(std::move(pts));
        else r.hull.swap(pts);
    }
    return out;
}
}  // namespace detail

/// The regions of an 8-bit mask (`options`: nullptr for region_options(); `labels = 1` there reads
/// each value as a label), by label then raster order. Throws segrt::Error on bad input.
inline std::vector<Region> regions(const SegMask &mask, const SegRegionOptions *options = nullptr) {
    return detail::regions(&mask, nullptr, options);
}
/// The regions of a 16-bit label image (segment-everything's), each value a label unless the
/// options say binary; `options` nullptr: labels, else as given.
inline std::vector<Region> regions(const SegLabelImage &labels, const SegRegionOptions *options = nullptr) {
    SegRegionOptions o = options ? *options : region_options();
    if (!options) o.labels = 1;
    return detail::regions(nullptr, &labels, &o);
}
/// The regions of a segrt::Mask (a UNet's, a click's).
inline std::vector<Region> regions(Mask &mask, const SegRegionOptions *options = nullptr) {
    SegMask m = {mask.data.data(), mask.width, mask.height, 0};
    return regions(m, options);
}
/// The objects of segment-everything: one region set per label.
inline std::vector<Region> regions(Everything &e, const SegRegionOptions *options = nullptr) {
    SegLabelImage l = {e.labels.data(), e.width, e.height, 0};
    return regions(l, options);
}

namespace detail {
inline std::vector<SegObjectFigures> objects(const SegMask *mask, const SegLabelImage *labels, const SegRegionOptions *options) {
    std::size_t n = 0;
    check(seg_mask_objects(mask, labels, options, nullptr, sizeof(SegObjectFigures), 0, &n));
    std::vector<SegObjectFigures> out(n);
    // The same call again: segrt kept this thread's last result, so it is not computed twice.
    check(seg_mask_objects(mask, labels, options, n ? out.data() : nullptr, sizeof(SegObjectFigures), n, nullptr));
    return out;
}
}  // namespace detail

/// The figures of a mask's object, its parts together (a tracked object's or a prompt's mask): one
/// record (label 1), none for an empty mask; with `options->labels` one per value.
inline std::vector<SegObjectFigures> objects(const SegMask &mask, const SegRegionOptions *options = nullptr) {
    return detail::objects(&mask, nullptr, options);
}
/// The figures of each object of a 16-bit label image (segment-everything's: record k is object k),
/// its parts together; `options` nullptr: by label, else as given.
inline std::vector<SegObjectFigures> objects(const SegLabelImage &labels, const SegRegionOptions *options = nullptr) {
    SegRegionOptions o = options ? *options : region_options();
    if (!options) o.labels = 1;
    return detail::objects(nullptr, &labels, &o);
}

/// COCO's RLE of a mask (pycocotools' compressed string): every non-zero pixel (`label` 0) or the
/// pixels equal to `label`.
inline std::string rle(const SegMask &mask, std::uint32_t label = 0) {
    std::size_t n = 0;
    check(seg_mask_rle(&mask, nullptr, label, nullptr, 0, &n));
    std::vector<char> text(n);
    check(seg_mask_rle(&mask, nullptr, label, text.data(), n, nullptr));
    return std::string(text.data());
}
/// COCO's RLE of one label of a 16-bit label image.
inline std::string rle(const SegLabelImage &labels, std::uint32_t label) {
    std::size_t n = 0;
    check(seg_mask_rle(nullptr, &labels, label, nullptr, 0, &n));
    std::vector<char> text(n);
    check(seg_mask_rle(nullptr, &labels, label, text.data(), n, nullptr));
    return std::string(text.data());
}
/// A COCO RLE string drawn into a width x height mask: `value` on its foreground.
inline Mask rle_to_mask(const std::string &text, int width, int height, std::uint8_t value = 255) {
    Mask m;
    m.width = width;
    m.height = height;
    m.data.assign(static_cast<std::size_t>(width > 0 ? width : 0) * static_cast<std::size_t>(height > 0 ? height : 0), 0);
    SegMask out = {m.data.data(), width, height, 0};
    check(seg_rle_to_mask(text.c_str(), &out, value));
    return m;
}

}  // namespace segrt

#endif  // SEGRT_HPP
