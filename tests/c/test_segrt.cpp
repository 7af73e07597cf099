// The C++ layer (include/segrt.hpp): RAII sessions, exceptions with status and message.
// Usage: test_segrt_cpp REPO_DIR [--quick]   (--quick: the small dynamic UNet and no SAM2, for valgrind)
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "segrt.hpp"

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) return 2;
    const std::string repo = argv[1];
    const bool quick = argc == 3 && std::string(argv[2]) == "--quick";
    int failures = 0;
    try {
        // The options helpers declare struct_size for their users (segrt refuses a struct without it).
        const SegOptions options = segrt::default_options();
        if (options.struct_size != sizeof(SegOptions) || options.max_pixels != SEG_DEFAULT_MAX_PIXELS) failures++;
        if (segrt::everything_options().struct_size != sizeof(SegEverythingOptions)) failures++;
        if (segrt::track_options().struct_size != sizeof(SegTrackOptions)) failures++;
        const std::string model = repo + (quick ? "/models/test/unet_dynamic.onnx" : "/models/demo_unet.onnx");
        segrt::Session unet = segrt::Session::unet(model, &options);
        std::vector<unsigned char> gray(64 * 48, 120);
        SegRunInfo info;  // run_unet sets its struct_size
        segrt::Mask m = unet.run_unet(segrt::image(gray.data(), 64, 48, 0, SEG_FORMAT_GRAY8), &info);
        if (m.data.size() != 64u * 48u || info.num_classes != 1) failures++;
        segrt::Session moved = std::move(unet);  // the moved-from session frees nothing
        if (moved.info().find("\"kind\": \"unet\"") == std::string::npos) failures++;
        try {
            moved.run_unet(segrt::image(gray.data(), 64, 48, 10, SEG_FORMAT_GRAY8));  // stride < row
            failures++;
        } catch (const segrt::Error &e) {
            if (e.status() != SEG_INVALID_ARGUMENT) failures++;
            std::printf("expected error: %s\n", e.what());
        }
        if (!quick) {
            segrt::Session sam = segrt::Session::sam2(repo + "/models/sam2/sam2_tiny_sam2onnx_encoder.onnx",
                                                      repo + "/models/sam2/sam2_tiny_sam2onnx_decoder.onnx");
            std::vector<unsigned char> rgb(96 * 80 * 3, 90);
            SegImage img = segrt::image(rgb.data(), 96, 80, 0, SEG_FORMAT_RGB24);
            sam.sam2_set_image(img);
            float score = -1.0f;
            std::vector<SegPoint> clicks = {{40.0f, 30.0f, 1}};
            segrt::Mask s = sam.sam2_click(nullptr, 96, 80, clicks, nullptr, false, &score);
            if (s.data.size() != 96u * 80u || score < 0.0f) failures++;
            // Refinement with the caller's own state: the low-res logits of one call fed to the next.
            segrt::Sam2Prediction first = sam.sam2_predict(nullptr, 96, 80, clicks);
            segrt::Sam2Prediction refined = sam.sam2_predict(nullptr, 96, 80, clicks, nullptr, &first.low_res);
            if (first.low_res.empty() || refined.mask.data.size() != 96u * 80u) failures++;
            // Segment everything on the cached image: no filter, no NMS -> 3 masks per prompt.
            SegEverythingOptions eo = segrt::everything_options();
            eo.points_per_side = 3;
            eo.pred_iou_thresh = 0.0f;
            eo.stability_score_thresh = 0.0f;
            eo.box_nms_thresh = 1.0f;
            segrt::Everything all = sam.sam2_everything(nullptr, 96, 80, &eo);
            if (all.objects.size() != 27u || all.info.cached != 1 || all.info.encoder_reused != 1) failures++;
            if (all.labels.size() != 96u * 80u || all.objects[0].id != 1u) failures++;
            for (std::size_t i = 0; i < all.labels.size(); i++)
                if (all.labels[i] > 27u) failures++;
            eo.points_per_side = 0;
            try {
                sam.sam2_everything(nullptr, 96, 80, &eo);
                failures++;
            } catch (const segrt::Error &e) {
                if (e.status() != SEG_INVALID_ARGUMENT) failures++;
                std::printf("expected error: %s\n", e.what());
            }
        }
        try {
            segrt::Session::unet("/no/such/model.onnx");
            failures++;
        } catch (const segrt::Error &e) {
            if (e.status() != SEG_MODEL_NOT_FOUND) failures++;
        }
    } catch (const std::exception &e) {
        std::printf("unexpected: %s\n", e.what());
        failures++;
    }
    std::printf("C++ layer: %d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
