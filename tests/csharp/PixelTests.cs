// 16-bit, signed 16-bit and float images through the wrapper (InputImage.FromPixels(ushort[]/short[]/float[]),
// FromPlanes with a wide layout) and the intensity stage (Segmenter.Intensity): each wide image, under the window
// that maps its values back to the 8-bit ones, gives the 8-bit image's masks in UNet, SAM2 clicks and tracking.
using System;
using System.Drawing;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using Segrt;

static partial class SegrtTests
{
    static void RunPixelTests()
    {
        Test("wide pixels: u16, i16 and float images through UnetSegmenter give the 8-bit mask under their window", PixelsUnet);
        Test("wide pixels: a SAM2 click on u16, i16 and float images gives the 8-bit image's mask", PixelsSam2Click);
        Test("wide pixels: a tracker fed u16, i16 and float frames gives the 8-bit frames' masks", PixelsTracker);
        Test("wide pixels: bad settings and bad images are refused (zero-width window, odd stride, wrong layout, NaN)", PixelsBadInputs);
        Test("wide pixels: IntensityOptions factories and copies hold what segrt is given", PixelsIntensityOptions);
    }

    /// <summary>
    /// The 8-bit B,G,R bytes of a picture as each wide format, with the window that maps the stored values back to
    /// the 8-bit ones exactly (powers-of-two scales, integer offsets): (name, image, window).
    /// </summary>
    static Tuple<string, InputImage, IntensityOptions>[] WideImages(byte[] bgr, int w, int h)
    {
        int n = w * h;
        // u16, interleaved R,G,B, rows padded by 3 values: v * 256 + 100.
        int strideU = (w * 3 + 3) * 2;
        var u16 = new ushort[strideU / 2 * h];
        // i16, three planes R, G, B: v * 16 - 2000.
        var i16 = new short[3 * n];
        // float, interleaved R,G,B, bottom-up (top row last): v / 256 - 0.5.
        var f32 = new float[3 * n];
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int c = 0; c < 3; c++)
                {
                    byte v = bgr[(y * w + x) * 3 + (2 - c)]; // channel c of R,G,B
                    u16[y * (strideU / 2) + x * 3 + c] = (ushort)(v * 256 + 100);
                    i16[c * n + y * w + x] = (short)(v * 16 - 2000);
                    f32[(h - 1 - y) * w * 3 + x * 3 + c] = v / 256f - 0.5f;
                }
        return new[]
        {
            Tuple.Create("u16 Rgb48, padded stride", InputImage.FromPixels(u16, w, h, strideU, PixelLayout.Rgb48), IntensityOptions.Range(100, 100 + 255 * 256)),
            Tuple.Create("i16 PlanarRgb16S", InputImage.FromPixels(i16, w, h, 0, PixelLayout.PlanarRgb16S), IntensityOptions.Range(-2000, -2000 + 255 * 16)),
            Tuple.Create("float Rgb96F, bottom-up", InputImage.FromPixels(f32, w, h, -w * 3 * 4, PixelLayout.Rgb96F), IntensityOptions.Range(-0.5, -0.5 + 255.0 / 256)),
        };
    }

    static void PixelsUnet()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Path.Combine(Repo, "models", "samples", "lesion_05.png")))
        {
            int w = bmp.Width, h = bmp.Height;
            byte[] bgr = PackedBytes(bmp, 3);
            var eight = InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24);
            byte[] plain = unet.Segment(eight).Mask;
            Check(unet.Intensity == null, "no setting by default");
            // The 8-bit picture through the stage, a window that keeps every value: the reference.
            unet.Intensity = IntensityOptions.Range(0, 255);
            byte[] reference = unet.Segment(eight).Mask;
            Check(reference.Count(v => v != 0) > 100, "the reference mask finds the lesion");
            foreach (var t in WideImages(bgr, w, h))
            {
                unet.Intensity = t.Item3;
                Check(ReferenceEquals(unet.Intensity, t.Item3), t.Item1 + ": the getter answers the options set");
                Check(Same(unet.Segment(t.Item2).Mask, reference), t.Item1 + ": the 8-bit image's mask");
            }
            // Three separate unmanaged float planes (HALCON real with three channels) through FromPlanes.
            int n = w * h;
            var planes = new[] { new float[n], new float[n], new float[n] };
            for (int i = 0; i < n; i++)
                for (int c = 0; c < 3; c++) planes[c][i] = bgr[i * 3 + (2 - c)] / 256f - 0.5f;
            var pins = planes.Select(p => GCHandle.Alloc(p, GCHandleType.Pinned)).ToArray();
            try
            {
                unet.Intensity = IntensityOptions.Range(-0.5, -0.5 + 255.0 / 256);
                var fromPlanes = InputImage.FromPlanes(pins[0].AddrOfPinnedObject(), pins[1].AddrOfPinnedObject(), pins[2].AddrOfPinnedObject(), w, h, 0, PixelLayout.PlanarRgb32F);
                Check(fromPlanes.Layout == PixelLayout.PlanarRgb32F && Same(unet.Segment(fromPlanes).Mask, reference), "FromPlanes, PlanarRgb32F");
            }
            finally
            {
                foreach (var p in pins) p.Free();
            }
            // Gray: u16 through Gray16 with 12 used bits (a Mono12 camera: v * 16) and a ushort[] via IntPtr.
            var gray8 = new byte[w * h];
            var gray12 = new ushort[w * h];
            for (int i = 0; i < w * h; i++)
            {
                gray8[i] = bgr[i * 3 + 1];
                gray12[i] = (ushort)(gray8[i] * 16);
            }
            unet.Intensity = IntensityOptions.Range(0, 255);
            byte[] grayReference = unet.Segment(InputImage.FromPixels(gray8, w, h, 0, PixelLayout.Gray8)).Mask;
            unet.Intensity = IntensityOptions.Range(0, 255 * 16).WithUsedBits(12);
            Check(Same(unet.Segment(InputImage.FromPixels(gray12, w, h, 0)).Mask, grayReference), "Gray16, 12 bits");
            var pin = GCHandle.Alloc(gray12, GCHandleType.Pinned);
            try
            {
                Check(Same(unet.Segment(InputImage.FromPixels(pin.AddrOfPinnedObject(), w, h, w * 2, PixelLayout.Gray16)).Mask, grayReference), "Gray16 via IntPtr");
            }
            finally
            {
                pin.Free();
            }
            // Back to the default: 8-bit exactly as before.
            unet.Intensity = null;
            Check(unet.Intensity == null && Same(unet.Segment(eight).Mask, plain), "null: the default again");
        }
    }

    static void PixelsSam2Click()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            int w = img.Width, h = img.Height;
            byte[] bgr = PackedBytes(img, 3);
            var click = new[] { new Sam2Point(105, 105, true) };
            seg.Intensity = IntensityOptions.Range(0, 255);
            byte[] reference = seg.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), click).Mask;
            var expected = LoadMask(Path.Combine(sam, "reference", "img0_point_mask.png"));
            Check(IoU(reference, expected) > 0.98, "the 8-bit click through the stage is the reference's: IoU " + IoU(reference, expected));
            foreach (var t in WideImages(bgr, w, h))
            {
                seg.Intensity = t.Item3;
                Check(Same(seg.Segment(t.Item2, click).Mask, reference), t.Item1 + ": Segment");
                var annotator = seg.CreateAnnotator();
                annotator.SetImage(t.Item2);
                Check(Same(annotator.Click(105, 105).Mask, reference), t.Item1 + ": annotator click (its packed copy of the wide pixels)");
            }
        }
    }

    static void PixelsTracker()
    {
        var clip = Clip();
        var frames = ClipFrames().Take(3).ToArray();
        try
        {
            var e = clip.Events[0];
            Func<Func<int, InputImage>, IntensityOptions, TrackedFrame[]> track = (frame, window) =>
            {
                using (var model = VideoModel())
                {
                    model.Intensity = window;
                    using (var t = model.CreateTracker(new TrackerOptions { NumFrames = frames.Length, KeepFrames = 0 }))
                    {
                        for (int i = 0; i < frames.Length; i++) t.AddFrame(frame(i));
                        var result = new TrackedFrame[frames.Length];
                        result[e.Frame] = t.AddPoints(e.Frame, e.ObjId, PointsOf(e));
                        for (int i = 0; i < frames.Length; i++)
                            if (i != e.Frame) result[i] = t.TrackFrame(i);
                        return result;
                    }
                }
            };
            var bgr = frames.Select(f => PackedBytes(f, 3)).ToArray();
            int w = frames[0].Width, h = frames[0].Height;
            var reference = track(i => InputImage.FromPixels(bgr[i], w, h, 0, PixelLayout.Bgr24), IntensityOptions.Range(0, 255));
            Check(reference.All(f => f.Masks.Count == 1) && reference[e.Frame].Masks[0].Any(v => v != 0), "the 8-bit frames track the clicked object");
            var wide = bgr.Select(b => WideImages(b, w, h)).ToArray();
            for (int k = 0; k < 3; k++)
            {
                var got = track(i => wide[i][k].Item2, wide[0][k].Item3);
                for (int i = 0; i < frames.Length; i++)
                    SameFrames(got[i], reference[i], wide[0][k].Item1 + ", frame " + i);
            }
        }
        finally
        {
            foreach (var f in frames) f.Dispose();
        }
    }

    static void PixelsBadInputs()
    {
        int w = 32, h = 24;
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        {
            var good = IntensityOptions.Window(1000, 2000);
            unet.Intensity = good;
            ThrowsSegrt(Status.InvalidArgument, () => unet.Intensity = IntensityOptions.Window(40, 0), "a zero-width window");
            ThrowsSegrt(Status.InvalidArgument, () => unet.Intensity = IntensityOptions.Range(10, 5), "a window upside down");
            ThrowsSegrt(Status.InvalidArgument, () => unet.Intensity = IntensityOptions.Percentiles(90, 10), "percentiles out of order");
            ThrowsSegrt(Status.InvalidArgument, () => unet.Intensity = IntensityOptions.MinMax().WithRescale(0, 5), "slope 0");
            ThrowsSegrt(Status.InvalidArgument, () => unet.Intensity = IntensityOptions.MinMax().WithUsedBits(17), "17 used bits");
            ThrowsSegrt(Status.InvalidArgument, () => unet.Intensity = IntensityOptions.MinMax().WithOutputRange(double.NaN, 1), "a NaN output");
            Check(ReferenceEquals(unet.Intensity, good), "a refused setting leaves the one in force");
            Throws<ArgumentOutOfRangeException>(() => IntensityOptions.MinMax().WithUsedBits(-1), "negative used bits");

            // Geometry, before anything reaches segrt.
            var u16 = new ushort[w * h * 3 + 8];
            Throws<ArgumentException>(() => InputImage.FromPixels(u16, w, h, w * 2 + 1, PixelLayout.Gray16), "an odd stride for 16-bit values");
            Throws<ArgumentException>(() => InputImage.FromPixels(new float[w * h + 8], w, h, w * 4 + 2, PixelLayout.Gray32F), "a float stride not a multiple of 4");
            Throws<ArgumentException>(() => InputImage.FromPixels(new byte[w * h * 4 + 8], w, h, w * 2 + 1, PixelLayout.Gray16), "an odd stride in a byte[] of 16-bit values");
            Throws<ArgumentException>(() => InputImage.FromPixels(IntPtr.Zero + 64, w, h, w * 2 + 1, PixelLayout.Gray16), "an odd stride via IntPtr");
            Throws<ArgumentException>(() => InputImage.FromPixels(u16, w, h, 0, PixelLayout.Gray32F), "a ushort[] as float pixels");
            Throws<ArgumentException>(() => InputImage.FromPixels(new short[w * h], w, h, 0, PixelLayout.Gray16), "a short[] as unsigned pixels");
            Throws<ArgumentException>(() => InputImage.FromPixels(new ushort[w * h - 1], w, h, 0), "a ushort[] too small");
            Throws<ArgumentException>(() => InputImage.FromPixels(new short[3 * w * h], w, h, -w * 2, PixelLayout.PlanarRgb16S), "bottom-up planes");
            Throws<ArgumentException>(() => InputImage.FromPlanes(IntPtr.Zero + 64, IntPtr.Zero + 64, IntPtr.Zero + 64, w, h, 0, PixelLayout.Rgb48), "FromPlanes with an interleaved layout");
            Throws<ArgumentNullException>(() => InputImage.FromPixels((float[])null, w, h, 0), "null float[]");

            // Pixels segrt refuses: a NaN, a value above the used bits; nothing is written.
            var f32 = new float[w * h];
            f32[5 * w + 7] = float.NaN;
            var mask = Enumerable.Repeat((byte)77, w * h).ToArray();
            var e = ThrowsSegrt(Status.InvalidArgument, () => unet.Segment(InputImage.FromPixels(f32, w, h, 0), mask), "a NaN pixel");
            Check(e.NativeMessage.Contains("7") && e.NativeMessage.Contains("5"), "the message names the pixel: " + e.NativeMessage);
            Check(mask.All(v => v == 77), "nothing written after a NaN pixel");
            var gray = new ushort[w * h];
            gray[3] = 4096;
            unet.Intensity = IntensityOptions.MinMax().WithUsedBits(12);
            ThrowsSegrt(Status.InvalidArgument, () => unet.Segment(InputImage.FromPixels(gray, w, h, 0), mask), "a value above 12 used bits");
            Check(mask.All(v => v == 77), "nothing written after a value above the used bits");
            gray[3] = 4095;
            unet.Segment(InputImage.FromPixels(gray, w, h, 0), mask);
        }
    }

    static unsafe void PixelsIntensityOptions()
    {
        var w = IntensityOptions.Window(40, 400);
        Check(w.Mode == IntensityRange.Window && w.Low == -160 && w.High == 240, "Window(40, 400): " + w);
        // The same as seg_intensity_set_window computes.
        var n = new Segrt.Native.SegIntensity { struct_size = (uint)sizeof(Segrt.Native.SegIntensity) };
        Check(Segrt.Native.NativeMethods.seg_intensity_default(&n) == Segrt.Native.SegStatus.SEG_OK, "native defaults");
        var d = IntensityOptions.Default.ToNative();
        Check(d.range == n.range && d.bits == n.bits && d.slope == n.slope && d.intercept == n.intercept && d.percentile_low == n.percentile_low
            && d.percentile_high == n.percentile_high && d.out_low == n.out_low && d.out_high == n.out_high, "Default is seg_intensity_default's");
        Check(Segrt.Native.NativeMethods.seg_intensity_set_window(&n, 40, 400) == Segrt.Native.SegStatus.SEG_OK, "native window");
        var wn = w.ToNative();
        Check(wn.range == n.range && wn.low == n.low && wn.high == n.high, "Window is seg_intensity_set_window's");
        var ct = w.WithRescale(1, -1024).WithUsedBits(12).WithOutputRange(0, 1);
        Check(ct.Slope == 1 && ct.Intercept == -1024 && ct.UsedBits == 12 && ct.OutputLow == 0 && ct.OutputHigh == 1 && ct.Low == -160, "With... copies: " + ct);
        Check(w.Slope == 1 && w.Intercept == 0 && w.UsedBits == 0 && w.OutputHigh == 255, "the original is unchanged");
        var p = IntensityOptions.Percentiles(1, 99);
        Check(p.Mode == IntensityRange.Percentiles && p.PercentileLow == 1 && p.PercentileHigh == 99 && p.ToNative().range == 3, "Percentiles");
        Check(IntensityOptions.None.Mode == IntensityRange.None && IntensityOptions.MinMax().Mode == IntensityRange.MinMax, "None, MinMax");
    }
}
