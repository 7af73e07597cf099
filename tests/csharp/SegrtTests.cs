// Tests of the segrt .NET wrapper on a real CLR (Mono, compiled against the .NET Framework 4.6.1
// reference assemblies). Run by tests/csharp/run.sh; argument: the repository root.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static partial class SegrtTests
{
    static string Repo;
    static int Failures;
    static int Passed;
    static int Skipped;
    /// <summary>Runs only the tests whose names contain it (a developer's quick loop); unset in CI.</summary>
    static readonly string Filter = Environment.GetEnvironmentVariable("SEGRT_TEST_FILTER");

    static int Main(string[] args)
    {
        Repo = Path.GetFullPath(args.Length > 0 ? args[0] : "../..");
        Console.WriteLine("CLR: " + (Type.GetType("Mono.Runtime") != null ? "Mono " : ".NET ") + Environment.Version + ", 64-bit process: " + Environment.Is64BitProcess);

        // Must run first: ONNX Runtime is not loaded yet in this process.
        Test("a missing ONNX Runtime is a SegrtException listing the path, and a later call works", MissingRuntimeIsReported);
        Test("version and ABI", VersionAndAbi);
        Test("SegmenterOptions defaults are seg_options_default's", OptionsDefaultsMatchNative);
        Test("UNet on a 24bpp Bitmap with a padded stride matches ground truth", Unet24bppPaddedStride);
        Test("32bpp ARGB, byte[] BGR, IntPtr and bottom-up buffers give the 24bpp mask", UnetOtherLayoutsAgree);
        Test("8bpp indexed gray Bitmap equals Gray8 bytes", Unet8bppGray);
        Test("a bottom-up Bitmap (negative Stride) gives the top-down mask", UnetBottomUpBitmap);
        Test("probabilities, mask Bitmap, multi-class model", UnetProbabilityAndMulticlass);
        Test("tiled inference at full resolution: tiles, IoU, bad tiling options", UnetTiled);
        Test("a model under a Chinese path, and from bytes", ChinesePathAndBytes);
        Test("SAM2 clicks, box and background point match the PyTorch reference", Sam2Fixtures);
        Test("SAM2 click lands where clicked on a 1920x1080 image (geometric oracle)", Sam2OracleCoordinates);
        Test("SegmentEverything on the oracle: 16 discs at the 4x4 grid points, labels, async, bad options", Sam2Everything);
        Test("native errors surface as SegrtException with status and message", NativeErrors);
        Test("argument mistakes are caught before crossing into native code", ArgumentErrors);
        Test("Log event: session created, provider fallback, failures", LogEvent);
        Test("Dispose twice, use after Dispose", DisposeRules);
        Test("undisposed segmenters are freed by the finalizer without a crash", FinalizerFrees);
        Test("several threads on one segmenter give the single-thread masks", ThreadsShareOneSegmenter);
        RunBugTests();
        RunApiTests();
        RunRuleTests();
        RunImageTests();
        RunPixelTests();
        RunPoolTests();
        RunTrackTests();
        RunDisposedTests();
        RunCancelTests();
        RunEncodeAheadTests();
        RunPromptsTests();
        RunOutlineTests();
        RunReferenceTests();
        RunRealModelTests();

        if (Skipped > 0) Console.WriteLine(Skipped + " tests skipped: their names do not contain SEGRT_TEST_FILTER=\"" + Filter + "\"");
        Console.WriteLine(string.Format("{0} passed, {1} failed", Passed, Failures));
        return Failures == 0 ? 0 : 1;
    }

    static void Test(string name, Action body)
    {
        if (!string.IsNullOrEmpty(Filter) && name.IndexOf(Filter, StringComparison.OrdinalIgnoreCase) < 0)
        {
            Skipped++;
            return;
        }
        var clock = System.Diagnostics.Stopwatch.StartNew();
        try
        {
            body();
            Passed++;
            Console.WriteLine(string.Format("PASS  {0} ({1:F0} ms)", name, clock.Elapsed.TotalMilliseconds));
        }
        catch (Exception e)
        {
            Failures++;
            Console.WriteLine("FAIL  " + name + "\n      " + e.ToString().Replace("\n", "\n      "));
        }
    }

    static void Check(bool ok, string what)
    {
        if (!ok) throw new Exception("check failed: " + what);
    }

    static T Throws<T>(Action body, string what) where T : Exception
    {
        try
        {
            body();
        }
        catch (T e)
        {
            return e;
        }
        catch (Exception e)
        {
            throw new Exception(what + ": expected " + typeof(T).Name + ", got " + e.GetType().Name + ": " + e.Message);
        }
        throw new Exception(what + ": expected " + typeof(T).Name + ", nothing was thrown");
    }

    static SegrtException ThrowsSegrt(Status status, Action body, string what)
    {
        var e = Throws<SegrtException>(body, what);
        Check(e.Status == status, what + ": status " + e.Status + ", expected " + status + " (" + e.NativeMessage + ")");
        Check(!string.IsNullOrEmpty(e.NativeMessage) && e.Message.Contains(e.NativeMessage), what + ": native message carried");
        return e;
    }

    // ---- image helpers (LockBits only; no GetPixel) ----

    static string Model(string name) { return Path.Combine(Repo, "models", name); }

    static Bitmap Load(string path)
    {
        using (var b = new Bitmap(path))
            return To(b, PixelFormat.Format24bppRgb);
    }

    static Bitmap To(Bitmap source, PixelFormat format)
    {
        var dst = new Bitmap(source.Width, source.Height, format);
        using (var g = Graphics.FromImage(dst))
            g.DrawImage(source, new Rectangle(0, 0, source.Width, source.Height));
        return dst;
    }

    /// <summary>Packed rows (no padding) of a bitmap in its own format.</summary>
    static byte[] PackedBytes(Bitmap b, int bytesPerPixel)
    {
        var data = b.LockBits(new Rectangle(0, 0, b.Width, b.Height), ImageLockMode.ReadOnly, b.PixelFormat);
        try
        {
            int row = b.Width * bytesPerPixel;
            var packed = new byte[row * b.Height];
            for (int y = 0; y < b.Height; y++)
                Marshal.Copy(data.Scan0 + y * data.Stride, packed, y * row, row);
            return packed;
        }
        finally
        {
            b.UnlockBits(data);
        }
    }

    static int StrideOf(Bitmap b)
    {
        var data = b.LockBits(new Rectangle(0, 0, b.Width, b.Height), ImageLockMode.ReadOnly, b.PixelFormat);
        b.UnlockBits(data);
        return data.Stride;
    }

    /// <summary>A PNG mask as 0/1 per pixel (any channel above 127).</summary>
    static byte[] LoadMask(string path)
    {
        using (var b = Load(path))
        {
            var bgr = PackedBytes(b, 3);
            var m = new byte[b.Width * b.Height];
            for (int i = 0; i < m.Length; i++) m[i] = (byte)(bgr[3 * i + 1] > 127 ? 1 : 0);
            return m;
        }
    }

    static double IoU(byte[] mask, byte[] truth)
    {
        long inter = 0, union = 0;
        for (int i = 0; i < mask.Length; i++)
        {
            bool a = mask[i] != 0, b = truth[i] != 0;
            if (a && b) inter++;
            if (a || b) union++;
        }
        return union == 0 ? 1.0 : (double)inter / union;
    }

    static bool Same(byte[] a, byte[] b) { return a.Length == b.Length && a.SequenceEqual(b); }

    // ---- tests ----

    static void MissingRuntimeIsReported()
    {
        string missing = Path.Combine(Path.GetTempPath(), "segrt-no-such-dir", "libonnxruntime.so.1.31.1");
        var e = ThrowsSegrt(Status.RuntimeNotFound, () => SegrtLibrary.Initialize(missing), "missing runtime");
        Check(e.NativeMessage.Contains(missing), "message lists the path tried: " + e.NativeMessage);
        ThrowsSegrt(Status.InvalidArgument, () => SegrtLibrary.Initialize("relative/libonnxruntime.so"), "relative path");
        SegrtLibrary.Initialize(); // the default search (beside libsegrt.so) now succeeds
        Check(SegrtLibrary.Version.Contains("ONNX Runtime 1.31"), SegrtLibrary.Version);
    }

    static void VersionAndAbi()
    {
        Console.WriteLine("      " + SegrtLibrary.Version);
        Check(SegrtLibrary.Version.StartsWith("segrt "), "version text");
        Check(SegrtLibrary.AbiVersion == 1, "ABI 1");
        string providers = SegrtLibrary.ProbeProvidersJson();
        Check(providers.Contains("\"CPUExecutionProvider\"") && providers.Contains("CUDA:0 could not be initialised"), "provider probe: " + providers);
    }

    static unsafe void OptionsDefaultsMatchNative()
    {
        var native = new SegmenterOptions().ToNative(null, null, null);
        var d = new Segrt.Native.SegOptions { struct_size = (uint)sizeof(Segrt.Native.SegOptions) };
        Check(Segrt.Native.NativeMethods.seg_options_default(&d) == Segrt.Native.SegStatus.SEG_OK, "seg_options_default");
        Check(native.struct_size == (uint)sizeof(Segrt.Native.SegOptions) && d.struct_size == native.struct_size, "struct_size declared by the wrapper and kept by segrt");
        Check(native.provider == d.provider && native.device_id == d.device_id
            && native.provider_policy == d.provider_policy && native.intra_threads == d.intra_threads
            && native.input_width == d.input_width && native.input_height == d.input_height
            && native.size_multiple == d.size_multiple && native.resize_filter == d.resize_filter
            && native.channel_order == d.channel_order && native.scale == d.scale && native.sigmoid == d.sigmoid
            && native.threshold_mode == d.threshold_mode && native.threshold == d.threshold && native.min_area == d.min_area
            && native.close_kernel == d.close_kernel && native.fill_holes == d.fill_holes && native.max_pixels == d.max_pixels
            && native.tile_mode == d.tile_mode && native.tile_width == d.tile_width && native.tile_height == d.tile_height
            && native.tile_overlap == d.tile_overlap && native.tile_batch == d.tile_batch
            && native.max_sessions == d.max_sessions && native.max_model_bytes == d.max_model_bytes
            && native.max_memory_bytes == d.max_memory_bytes && native.output_name == d.output_name && native.ort_path == d.ort_path
            && native.cache_mode == d.cache_mode && native.cache_dir == d.cache_dir
            && native.gpu_mem_limit == d.gpu_mem_limit && native.conv_search == d.conv_search
            && native.require_all_nodes == d.require_all_nodes && native.trt_cache_dir == d.trt_cache_dir
            && native.trt_fp16 == d.trt_fp16,
            "every scalar field equals the native default");
        for (int i = 0; i < 3; i++) Check(native.mean[i] == d.mean[i] && native.std[i] == d.std[i], "mean/std " + i);
        // The appended fields reach the native struct: strings as pinned UTF-8, numbers as they are.
        var set = new SegmenterOptions { MaxSessions = 3, MaxModelBytes = 5L << 30, MaxMemoryBytes = 1L << 20, OutputName = "логиты" };
        fixed (byte* ort = new byte[] { 0x2f, 0 })
        fixed (byte* output = Segrt.Interop.Utf8z(set.OutputName))
        {
            var o = set.ToNative(ort, output, null);
            Check(o.max_sessions == 3 && o.max_model_bytes == 5UL << 30 && o.max_memory_bytes == 1UL << 20, "MaxSessions/MaxModelBytes/MaxMemoryBytes mapped");
            Check(o.output_name == output && o.ort_path == ort && Segrt.Interop.FromUtf8z(o.output_name) == "логиты", "OutputName as UTF-8");
        }
        // The GPU fields: numbers and flags as they are, the TensorRT cache folder as pinned UTF-8.
        var gpu = new SegmenterOptions { GpuMemoryLimit = 2L << 30, ConvSearch = ConvSearch.Exhaustive, RequireAllNodes = true, TensorRtCacheDirectory = "кэш", TensorRtFp16 = true };
        fixed (byte* trt = Segrt.Interop.Utf8z(gpu.TensorRtCacheDirectory))
        {
            var o = gpu.ToNative(null, null, null, trt);
            Check(o.gpu_mem_limit == 2UL << 30 && o.conv_search == 2 /* SEG_CONV_SEARCH_EXHAUSTIVE */
                && o.require_all_nodes == 1 && o.trt_fp16 == 1 && Segrt.Interop.FromUtf8z(o.trt_cache_dir) == "кэш", "GPU options mapped");
        }
        Throws<ArgumentOutOfRangeException>(() => new SegmenterOptions { GpuMemoryLimit = -1 }.ToNative(null, null, null), "negative GpuMemoryLimit");
        Check(new SegmenterOptions().ToNative(null, null, null).decoder_provider == 0 /* SEG_DECODER_PROVIDER_SAME */, "DecoderProvider null: as Provider");
        Check(new SegmenterOptions { DecoderProvider = ExecutionProvider.Cpu }.ToNative(null, null, null).decoder_provider == 1 /* SEG_DECODER_PROVIDER_CPU */
            && new SegmenterOptions { DecoderProvider = ExecutionProvider.Cuda }.ToNative(null, null, null).decoder_provider == 2 /* SEG_DECODER_PROVIDER_CUDA */, "DecoderProvider mapped");
        Check(new SegmenterOptions().ToNative(null, null, null).trt_profiles == 0 /* SEG_TRT_PROFILES_AUTO */
            && new SegmenterOptions { TensorRtShapeProfiles = false }.ToNative(null, null, null).trt_profiles == 1 /* SEG_TRT_PROFILES_OFF */, "TensorRtShapeProfiles mapped");
        // The OpenVINO fields: strings as pinned UTF-8, the rest as they are; the defaults are segrt's (CPU, the
        // device's precision, no cache, OpenVINO's threads and streams).
        var defaultsOv = new SegmenterOptions().ToNative(null, null, null);
        Check(defaultsOv.ov_device == null && defaultsOv.ov_precision == 0 && defaultsOv.ov_cache_dir == null
            && defaultsOv.ov_threads == 0 && defaultsOv.ov_streams == 0 && defaultsOv.reserved4 == 0, "OpenVINO defaults");
        var ov = new SegmenterOptions { OpenVinoDevice = "AUTO:GPU,CPU", OpenVinoPrecision = OpenVinoPrecision.Accuracy,
            OpenVinoCacheDirectory = "/var/cache/ov-кэш", OpenVinoThreads = 2, OpenVinoStreams = 1 };
        fixed (byte* dev = Segrt.Interop.Utf8z(ov.OpenVinoDevice))
        fixed (byte* ovCache = Segrt.Interop.Utf8z(ov.OpenVinoCacheDirectory))
        {
            var o = ov.ToNative(null, null, null, null, dev, ovCache);
            Check(Segrt.Interop.FromUtf8z(o.ov_device) == "AUTO:GPU,CPU" && o.ov_precision == 3 /* SEG_OV_PRECISION_ACCURACY */
                && Segrt.Interop.FromUtf8z(o.ov_cache_dir) == "/var/cache/ov-кэш" && o.ov_threads == 2 && o.ov_streams == 1, "OpenVINO options mapped");
        }
        Throws<ArgumentOutOfRangeException>(() => new SegmenterOptions { OpenVinoThreads = -1 }.ToNative(null, null, null), "negative OpenVinoThreads");
        // They reach segrt: FP16 on OpenVINO's CPU is refused in segrt's words before any provider loads; on
        // the GPU it is accepted (this CPU build of ONNX Runtime has no OpenVINO: the fallback policy runs the CPU).
        var ovModel = Model("demo_unet.onnx");
        var fp16Cpu = Throws<SegrtException>(() => new UnetSegmenter(ovModel, new SegmenterOptions { Provider = ExecutionProvider.OpenVino,
            ProviderPolicy = ProviderPolicy.Fallback, OpenVinoPrecision = OpenVinoPrecision.Fp16 }), "FP16 on OpenVINO's CPU");
        Check(fp16Cpu.Status == Status.InvalidArgument && fp16Cpu.NativeMessage.Contains("not FP16"), fp16Cpu.NativeMessage);
        using (var onGpu = new UnetSegmenter(ovModel, new SegmenterOptions { Provider = ExecutionProvider.OpenVino,
            ProviderPolicy = ProviderPolicy.Fallback, OpenVinoDevice = "GPU", OpenVinoPrecision = OpenVinoPrecision.Fp16 }))
            Check(onGpu.ProviderInUse == "CPU", "OpenVINO GPU + FP16 accepted, fallen back here: " + onGpu.ProviderInUse);
        var badDevice = Throws<SegrtException>(() => new UnetSegmenter(ovModel, new SegmenterOptions { OpenVinoDevice = "TPU" }), "unknown OpenVINO device");
        Check(badDevice.Status == Status.InvalidArgument && badDevice.NativeMessage.Contains("ov_device"), badDevice.NativeMessage);
        // segrt checks the values: an unknown ConvSearch is refused naming the field.
        var badSearch = Throws<SegrtException>(() => new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { ConvSearch = (ConvSearch)9 }), "unknown ConvSearch");
        Check(badSearch.Status == Status.InvalidArgument && badSearch.NativeMessage.Contains("conv_search"), badSearch.NativeMessage);
        Throws<ArgumentOutOfRangeException>(() => new SegmenterOptions { MaxSessions = -1 }.ToNative(null, null, null), "negative MaxSessions");
        Throws<ArgumentOutOfRangeException>(() => new SegmenterOptions { MaxMemoryBytes = -1 }.ToNative(null, null, null), "negative MaxMemoryBytes");

        // ABI 1: every *_default reads the caller's struct_size first. Without it (a zeroed struct) segrt refuses
        // and writes nothing, so the wrapper must declare it (ToNative above succeeded, so it does).
        var zeroed = default(Segrt.Native.SegOptions);
        Check(Segrt.Native.NativeMethods.seg_options_default(&zeroed) == Segrt.Native.SegStatus.SEG_INVALID_ARGUMENT, "seg_options_default without struct_size is refused");
        Check(AllZero(&zeroed, sizeof(Segrt.Native.SegOptions)), "seg_options_default wrote into a refused struct");
        var zeroedEverything = default(Segrt.Native.SegEverythingOptions);
        Check(Segrt.Native.NativeMethods.seg_everything_options_default(&zeroedEverything) == Segrt.Native.SegStatus.SEG_INVALID_ARGUMENT, "seg_everything_options_default without struct_size is refused");
        Check(AllZero(&zeroedEverything, sizeof(Segrt.Native.SegEverythingOptions)), "seg_everything_options_default wrote into a refused struct");
        var everything = new EverythingOptions().ToNative();
        Check(everything.struct_size == (uint)sizeof(Segrt.Native.SegEverythingOptions) && everything.points_per_side > 0, "EverythingOptions.ToNative: size declared, defaults read");
    }

    static unsafe bool AllZero(void* p, int bytes)
    {
        for (int i = 0; i < bytes; i++) if (((byte*)p)[i] != 0) return false;
        return true;
    }

    static UnetResult s_reference; // lesion_04 through a 24bpp Bitmap, reused by later tests

    static void Unet24bppPaddedStride()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            Check(bmp.Width == 333 && StrideOf(bmp) == 1000, "333 px wide 24bpp rows are padded to 1000 bytes, got " + StrideOf(bmp));
            var r = unet.Segment(bmp);
            double iou = IoU(r.Mask, LoadMask(Model("samples/lesion_04_gt.png")));
            Console.WriteLine(string.Format("      IoU {0:F3}; pre {1:F1} ms, inference {2:F1} ms, post {3:F1} ms, total {4:F1} ms; provider {5}",
                iou, r.PreprocessMs, r.InferenceMs, r.PostprocessMs, r.TotalMs, unet.ProviderInUse));
            Check(r.Width == 333 && r.Height == 777 && r.Mask.Length == 333 * 777, "mask at the image's size");
            Check(iou > 0.95, "IoU with ground truth " + iou);
            Check(r.NumClasses == 1 && r.Threshold == 0.5f && r.InferenceMs > 0 && r.ForegroundPixels == r.Mask.Count(v => v != 0), "run info");
            Check(r.Mask.All(v => v == 0 || v == 255), "binary mask is 0/255");
            Check(unet.ProviderInUse == "CPU" && unet.Provider == ExecutionProvider.Cpu && unet.FallbackReason == null, "provider");
            s_reference = r;
        }
    }

    static void UnetTiled()
    {
        // 333x777 at full resolution in 256x256 tiles (2 x 4 with the default 64-pixel overlap).
        var options = new SegmenterOptions { TileMode = TilingMode.On };
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), options))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            var r = unet.Segment(bmp);
            double iou = IoU(r.Mask, LoadMask(Model("samples/lesion_04_gt.png")));
            Console.WriteLine(string.Format("      {0} tiles, IoU {1:F3}, {2:F1} ms", r.Tiles, iou, r.TotalMs));
            Check(r.Tiles == 8 && r.ModelWidth == 256 && r.Width == 333 && r.Height == 777, "8 tiles of 256x256, mask at the image's size");
            // the demo model: 0.9498 (models/README.md); scale-blind models 0.38-0.86
            Check(iou > 0.94, "tiled IoU with ground truth " + iou);
        }
        var bad = new SegmenterOptions { TileMode = TilingMode.On, TileBatch = 0 };
        try { using (new UnetSegmenter(Model("demo_unet.onnx"), bad)) { } Check(false, "TileBatch 0 accepted"); }
        catch (SegrtException e) { Check(e.Status == Status.InvalidArgument && e.Message.Contains("tile_batch"), "TileBatch 0 refused: " + e.Message); }
    }

    static void UnetOtherLayoutsAgree()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp24 = Load(Model("samples/lesion_04.png")))
        using (var bmp32 = To(bmp24, PixelFormat.Format32bppArgb))
        {
            int w = bmp24.Width, h = bmp24.Height;
            Check(Same(unet.Segment(bmp32).Mask, s_reference.Mask), "32bpp ARGB Bitmap");
            byte[] bgr = PackedBytes(bmp24, 3);
            Check(Same(unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24)).Mask, s_reference.Mask), "packed byte[] BGR");
            // RGB order: swap B and R, tell segrt so.
            var rgb = (byte[])bgr.Clone();
            for (int i = 0; i < rgb.Length; i += 3) { byte t = rgb[i]; rgb[i] = rgb[i + 2]; rgb[i + 2] = t; }
            Check(Same(unet.Segment(InputImage.FromPixels(rgb, w, h, 0, PixelLayout.Rgb24)).Mask, s_reference.Mask), "byte[] RGB");
            // Bottom-up buffer: the top row is stored last, stride negative.
            int row = w * 3;
            var bottomUp = new byte[bgr.Length];
            for (int y = 0; y < h; y++) Buffer.BlockCopy(bgr, y * row, bottomUp, (h - 1 - y) * row, row);
            Check(Same(unet.Segment(InputImage.FromPixels(bottomUp, w, h, -row, PixelLayout.Bgr24)).Mask, s_reference.Mask), "bottom-up byte[]");
            // Unmanaged memory.
            IntPtr p = Marshal.AllocHGlobal(bgr.Length);
            try
            {
                Marshal.Copy(bgr, 0, p, bgr.Length);
                Check(Same(unet.Segment(InputImage.FromPixels(p, w, h, row, PixelLayout.Bgr24)).Mask, s_reference.Mask), "IntPtr");
            }
            finally
            {
                Marshal.FreeHGlobal(p);
            }
        }
    }

    static Bitmap GrayBitmap(byte[] gray, int w, int h)
    {
        var bmp = new Bitmap(w, h, PixelFormat.Format8bppIndexed);
        var pal = bmp.Palette;
        for (int i = 0; i < 256; i++) pal.Entries[i] = Color.FromArgb(i, i, i);
        bmp.Palette = pal;
        var data = bmp.LockBits(new Rectangle(0, 0, w, h), ImageLockMode.WriteOnly, PixelFormat.Format8bppIndexed);
        for (int y = 0; y < h; y++) Marshal.Copy(gray, y * w, data.Scan0 + y * data.Stride, w);
        bmp.UnlockBits(data);
        return bmp;
    }

    static void Unet8bppGray()
    {
        // The gray test model takes one channel; segrt feeds 8bpp gray to it without conversion.
        using (var unet = new UnetSegmenter(Model("test/unet_gray.onnx")))
        using (var bmp24 = Load(Model("samples/lesion_04.png")))
        {
            int w = bmp24.Width, h = bmp24.Height;
            byte[] bgr = PackedBytes(bmp24, 3);
            var gray = new byte[w * h];
            for (int i = 0; i < gray.Length; i++)
                gray[i] = (byte)((bgr[3 * i + 2] * 299 + bgr[3 * i + 1] * 587 + bgr[3 * i] * 114 + 500) / 1000);
            using (var bmp8 = GrayBitmap(gray, w, h))
            {
                Check(StrideOf(bmp8) == 336, "8bpp rows padded to 336 bytes, got " + StrideOf(bmp8));
                var fromBitmap = unet.Segment(bmp8);
                var fromBytes = unet.Segment(InputImage.FromPixels(gray, w, h, 0, PixelLayout.Gray8));
                Check(Same(fromBitmap.Mask, fromBytes.Mask), "8bpp Bitmap == Gray8 bytes");
                double iou = IoU(fromBitmap.Mask, LoadMask(Model("samples/lesion_04_gt.png")));
                Console.WriteLine(string.Format("      gray model on the 8bpp Bitmap: IoU with ground truth {0:F3}", iou));
                Check(iou > 0.5, "the (weak) gray model finds the lesion: IoU " + iou);
            }
        }
    }

    static void UnetBottomUpBitmap()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp24 = Load(Model("samples/lesion_04.png")))
        {
            int w = bmp24.Width, h = bmp24.Height, stride = StrideOf(bmp24);
            byte[] bgr = PackedBytes(bmp24, 3);
            // A bottom-up buffer as a DIB has it: the top row is stored last.
            var buffer = new byte[stride * h];
            for (int y = 0; y < h; y++) Buffer.BlockCopy(bgr, y * w * 3, buffer, (h - 1 - y) * stride, w * 3);
            var pin = GCHandle.Alloc(buffer, GCHandleType.Pinned);
            try
            {
                IntPtr top = pin.AddrOfPinnedObject() + (h - 1) * stride;
                // What LockBits gives for such a bitmap on Windows GDI+: Scan0 = top row, Stride < 0.
                Check(Same(unet.Segment(InputImage.FromPixels(top, w, h, -stride, PixelLayout.Bgr24)).Mask, s_reference.Mask), "Scan0 + negative Stride");
                using (var bottomUp = new Bitmap(w, h, -stride, PixelFormat.Format24bppRgb, top))
                {
                    int seen = StrideOf(bottomUp);
                    if (seen < 0)
                        Check(Same(unet.Segment(bottomUp).Mask, s_reference.Mask), "bottom-up Bitmap mask");
                    else // libgdiplus (Mono) drops the sign, so such a Bitmap is not what GDI+ makes of it.
                        Console.WriteLine("      this GDI+ (" + (Type.GetType("Mono.Runtime") != null ? "libgdiplus" : "?") +
                            ") reports Stride " + seen + " for a bottom-up bitmap; the negative-stride path was checked through Scan0 above");
                }
            }
            finally
            {
                pin.Free();
            }
        }
    }

    static void UnetProbabilityAndMulticlass()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_06.png")))
        {
            var r = unet.Segment(bmp, withProbability: true);
            Check(r.Probability != null && r.Probability.Length == r.Mask.Length, "probability at the image's size");
            Check(r.Probability.All(p => p >= 0f && p <= 1f), "probabilities in [0, 1]");
            int agree = 0;
            for (int i = 0; i < r.Mask.Length; i++) if ((r.Probability[i] > 0.5f) == (r.Mask[i] != 0)) agree++;
            Check(agree == r.Mask.Length, "mask == probability > 0.5 (no clean-up options set)");
            using (var maskBmp = r.ToBitmap())
            {
                Check(maskBmp.PixelFormat == PixelFormat.Format8bppIndexed && maskBmp.Width == bmp.Width, "mask Bitmap 8bpp");
                Check(Same(PackedBytes(maskBmp, 1), r.Mask), "mask Bitmap pixels == mask bytes");
            }
        }
        using (var multi = new UnetSegmenter(Model("test/unet_multiclass.onnx")))
        using (var bmp = Load(Model("test/multiclass_01.png")))
        {
            var r = multi.Segment(bmp);
            Check(r.NumClasses == 3 && float.IsNaN(r.Threshold), "3 classes, no threshold");
            var labels = LoadLabels(Model("test/multiclass_01_labels.png"));
            for (int c = 1; c < 3; c++)
            {
                double iou = IoU(r.Mask.Select(v => (byte)(v == c ? 1 : 0)).ToArray(), labels.Select(v => (byte)(v == c ? 1 : 0)).ToArray());
                Console.WriteLine(string.Format("      class {0}: IoU {1:F3}", c, iou));
                Check(iou > 0.9, "class " + c + " IoU " + iou);
            }
        }
    }

    static byte[] LoadLabels(string path)
    {
        using (var b = Load(path))
        {
            var bgr = PackedBytes(b, 3);
            var m = new byte[b.Width * b.Height];
            for (int i = 0; i < m.Length; i++) m[i] = bgr[3 * i];
            return m;
        }
    }

    static void ChinesePathAndBytes()
    {
        string dir = Path.Combine(Path.GetTempPath(), "segrt 测试", "模型 文件夹");
        Directory.CreateDirectory(dir);
        string path = Path.Combine(dir, "分割模型.onnx");
        File.Copy(Model("demo_unet.onnx"), path, true);
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            using (var unet = new UnetSegmenter(path))
                Check(Same(unet.Segment(bmp).Mask, s_reference.Mask), "model from a Chinese path");
            using (var unet = UnetSegmenter.FromBytes(File.ReadAllBytes(path)))
                Check(Same(unet.Segment(bmp).Mask, s_reference.Mask), "model from bytes");
        }
        var e = ThrowsSegrt(Status.ModelNotFound, () => new UnetSegmenter(Path.Combine(dir, "不存在.onnx")), "missing file under a Chinese path");
        Check(e.NativeMessage.Contains("不存在.onnx"), "the message names the file in its own script: " + e.NativeMessage);
        Directory.Delete(Path.Combine(Path.GetTempPath(), "segrt 测试"), true);
    }

    static void Sam2Fixtures()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        string refs = Path.Combine(sam, "reference");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(refs, "img0.png")))
        {
            var clicks = seg.CreateAnnotator();
            Throws<InvalidOperationException>(() => clicks.Click(1, 1), "Click before SetImage");
            double encoderMs = clicks.SetImage(img);
            Check(encoderMs > 0, "the first SetImage runs the encoder");
            Check(clicks.SetImage(img) == 0, "the same pixels again use the cache");

            var click = clicks.Click(105, 105);
            double iou = IoU(click.Mask, LoadMask(Path.Combine(refs, "img0_point_mask.png")));
            Console.WriteLine(string.Format("      click IoU {0:F4}, score {1:F3}, decoder {2:F1} ms, encoder {3:F1} ms", iou, click.Score, click.DecoderMs, encoderMs));
            Check(iou > 0.99 && click.EncoderReused && click.Scores.Length == 3, "one click");

            clicks.Click(240, 140, foreground: false);
            Check(clicks.Points.Count == 2, "points accumulate");
            Check(clicks.Click(240, 140, false).Mask.Length == 320 * 240, "a repeated click is still a valid prompt");
            clicks.ClearPrompts();
            clicks.Click(105, 105);
            var withNeg = clicks.Click(240, 140, false);
            double iouNeg = IoU(withNeg.Mask, LoadMask(Path.Combine(refs, "img0_point_neg_mask.png")));
            Check(iouNeg > 0.99, "foreground + background point IoU " + iouNeg);

            clicks.ClearPrompts();
            var box = clicks.Box(185, 75, 295, 205);
            double iouBox = IoU(box.Mask, LoadMask(Path.Combine(refs, "img0_box_mask.png")));
            Check(iouBox > 0.99, "box IoU " + iouBox);
            var boxPoint = clicks.Click(240, 140);
            double iouBp = IoU(boxPoint.Mask, LoadMask(Path.Combine(refs, "img0_box_point_mask.png")));
            Console.WriteLine(string.Format("      IoU: background point {0:F4}, box {1:F4}, box + point {2:F4}", iouNeg, iouBox, iouBp));
            Check(iouBp > 0.99, "box + point IoU " + iouBp);

            // Stateless call with the image: same answer.
            var again = seg.Segment(img, new[] { new Sam2Point(105, 105, true) });
            Check(Same(again.Mask, click.Mask), "Segment(image, points) == Click");
            clicks.ForgetImage();
            Throws<InvalidOperationException>(() => clicks.Click(1, 1), "Click after ForgetImage");
        }
    }

    static void Sam2OracleCoordinates()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx")))
        using (var img = new Bitmap(1920, 1080, PixelFormat.Format24bppRgb))
        {
            var clicks = seg.CreateAnnotator();
            clicks.SetImage(img);
            foreach (var p in new[] { new PointF(1500, 300), new PointF(200, 900) })
            {
                clicks.ClearPrompts();
                var r = clicks.Click(p.X, p.Y);
                double sx = 0, sy = 0;
                long n = 0;
                for (int y = 0; y < r.Height; y++)
                    for (int x = 0; x < r.Width; x++)
                        if (r.Mask[y * r.Width + x] != 0) { sx += x + 0.5; sy += y + 0.5; n++; }
                double cx = sx / n, cy = sy / n;
                Console.WriteLine(string.Format("      click ({0}, {1}) -> mask centroid ({2:F2}, {3:F2}), {4} px", p.X, p.Y, cx, cy, n));
                Check(n > 0 && Math.Abs(cx - p.X) < 1.0 && Math.Abs(cy - p.Y) < 1.0, "centroid within 1 px of the click");
            }
        }
    }

    static void Sam2Everything()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx")))
        using (var img = new Bitmap(1024, 1024, PixelFormat.Format24bppRgb))
        {
            var clicks = seg.CreateAnnotator();
            Throws<InvalidOperationException>(() => clicks.SegmentEverything(), "SegmentEverything before SetImage");
            clicks.SetImage(img);
            // the oracle's r=20 disc (predicted IoU 0.9, stability 0.819) at each of the 4x4 points
            var o = new EverythingOptions { PointsPerSide = 4, StabilityScoreThreshold = 0.8f };
            var r = clicks.SegmentEverything(o);
            var direct = seg.SegmentEverything(img, o);
            Check(direct.Labels.SequenceEqual(r.Labels) && direct.Objects.SequenceEqual(r.Objects) && direct.EncoderReused,
                "SegmentEverything(image) on the same picture gives the annotator's objects, from the cached embedding");
            Console.WriteLine(string.Format("      {0} objects, {1} prompts in {2} runs, decoder {3:F1} ms", r.Objects.Count, r.Prompts, r.DecoderRuns, r.DecoderMs));
            Check(r.Objects.Count == 16 && r.Prompts == 16 && r.EncoderReused, "16 objects from the cached embedding");
            for (int k = 0; k < r.Objects.Count; k++)
            {
                var ob = r.Objects[k];
                float cx = 128 + 256 * (k % 4), cy = 128 + 256 * (k / 4);
                Check(ob.Id == k + 1 && ob.Point.X == cx && ob.Point.Y == cy, "object " + k + " comes from grid point " + k);
                Check(Math.Abs(ob.Bounds.Left + ob.Bounds.Width / 2.0 - cx) <= 1 && Math.Abs(ob.Bounds.Width - 160) <= 2, "object " + k + " box");
                Check(r.Labels[(int)cy * 1024 + (int)cx] == ob.Id, "label at grid point " + k);
            }
            Check(r.Labels[0] == 0, "background is 0");
            var background = Task.Run(() => clicks.SegmentEverything(o)).Result;
            Check(background.Objects.Count == 16, "on a background thread: the same objects");
            using (var overlay = r.ToOverlay(img))
                Check(overlay.GetPixel(128, 128).ToArgb() != Color.Black.ToArgb() && overlay.GetPixel(2, 2).ToArgb() == Color.Black.ToArgb(), "overlay colours objects only");
            ThrowsSegrt(Status.InvalidArgument, () => clicks.SegmentEverything(new EverythingOptions { PointsPerSide = 0 }), "0 points per side");
            ThrowsSegrt(Status.InvalidArgument, () => clicks.SegmentEverything(new EverythingOptions { PredIouThreshold = float.NaN }), "NaN threshold");
        }
    }

    static void NativeErrors()
    {
        var e = ThrowsSegrt(Status.ModelNotFound, () => new UnetSegmenter("/no/such/model.onnx"), "missing model");
        Check(e.NativeMessage.Contains("/no/such/model.onnx"), "names the file");
        ThrowsSegrt(Status.ModelInvalid, () => UnetSegmenter.FromBytes(new byte[] { 1, 2, 3, 4, 5 }), "garbage bytes");
        string sam = Path.Combine(Repo, "models", "sam2");
        ThrowsSegrt(Status.ModelUnsupported, () => new Sam2Segmenter(Model("demo_unet.onnx"), Model("demo_unet.onnx")), "a UNet given as SAM2");
        ThrowsSegrt(Status.ModelUnsupported, () => new UnetSegmenter(Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")), "a SAM2 decoder given as UNet");
        ThrowsSegrt(Status.InvalidArgument, () => new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { Threshold = 2f }), "threshold 2");
        var cuda = ThrowsSegrt(Status.ProviderUnavailable, () => new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { Provider = ExecutionProvider.Cuda }), "CUDA required");
        Check(cuda.NativeMessage.Contains("CUDA:0 could not be initialised"), cuda.NativeMessage);
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxPixels = 1000 }))
        using (var bmp = Load(Model("samples/lesion_06.png")))
        {
            ThrowsSegrt(Status.ImageTooLarge, () => unet.Segment(bmp), "over MaxPixels");
        }
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            var clicks = seg.CreateAnnotator();
            clicks.SetImage(img);
            ThrowsSegrt(Status.InvalidArgument, () => clicks.Click(float.NaN, 3), "NaN click");
            ThrowsSegrt(Status.InvalidArgument, () => clicks.Box(200, 10, 100, 50), "box with x2 < x1");
            clicks.ClearPrompts();
            Check(clicks.Click(105, 105).ForegroundPixels > 0, "the segmenter still works after errors");
        }
    }

    static void ArgumentErrors()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        {
            Throws<ArgumentNullException>(() => unet.Segment((Bitmap)null), "null Bitmap");
            Throws<ArgumentNullException>(() => unet.Segment(InputImage.FromPixels((byte[])null, 4, 4, 0, PixelLayout.Bgr24)), "null pixels");
            Throws<ArgumentException>(() => unet.Segment(InputImage.FromPixels(new byte[100], 10, 10, 20, PixelLayout.Bgr24)), "stride smaller than a row");
            Throws<ArgumentException>(() => unet.Segment(InputImage.FromPixels(new byte[100], 10, 10, 0, PixelLayout.Bgr24)), "buffer too small");
            Throws<ArgumentOutOfRangeException>(() => unet.Segment(InputImage.FromPixels(new byte[100], 0, 10, 0, PixelLayout.Gray8)), "zero width");
            Throws<ArgumentOutOfRangeException>(() => unet.Segment(InputImage.FromPixels(new byte[100], 10, 10, 0, (PixelLayout)77)), "unknown format");
            Throws<ArgumentNullException>(() => unet.Segment(InputImage.FromPixels(IntPtr.Zero, 10, 10, 0, PixelLayout.Gray8)), "null pointer");
        }
        Throws<ArgumentNullException>(() => new UnetSegmenter(null), "null model path");
        Throws<ArgumentException>(() => new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { Mean = new float[2] }), "Mean with 2 values");
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
            Throws<ArgumentException>(() => seg.Segment(img, new Sam2Point[0]), "no points and no box");
    }

    static void LogEvent()
    {
        var seen = new List<LogEventArgs>();
        EventHandler<LogEventArgs> handler = (s, e) => { lock (seen) seen.Add(e); };
        EventHandler<LogEventArgs> thrower = (s, e) => { throw new InvalidOperationException("a buggy handler"); };
        SegrtLibrary.Log += handler;
        SegrtLibrary.Log += thrower; // must not take the process down
        try
        {
            using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { Provider = ExecutionProvider.Cuda, ProviderPolicy = ProviderPolicy.Fallback }))
            {
                Check(unet.ProviderInUse == "CPU" && unet.Provider == ExecutionProvider.Cpu, "fell back to the CPU");
                Check(unet.FallbackReason != null && unet.FallbackReason.Contains("CUDA:0 could not be initialised"), "typed fallback reason: " + unet.FallbackReason);
                Check(unet.SessionInfo.Provider.Requested == "CUDA:0", "requested provider in the typed info");
                Check(unet.SessionInfoJson.Contains("CUDA:0 could not be initialised"), "fallback reason in the session info");
            }
            // The SAM2 decoder on a provider of its own: CUDA asked for it alone, the encoder stays on the CPU.
            var sam = Path.Combine(Repo, "models", "sam2");
            var own = new SegmenterOptions { DecoderProvider = ExecutionProvider.Cuda, ProviderPolicy = ProviderPolicy.Fallback };
            using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx"), own))
            {
                var info = seg.SessionInfo;
                Check(info.Provider.Requested == "CPU" && info.Provider.FallbackReason == null, "encoder on Provider: " + info.Provider.Requested);
                Check(info.DecoderProvider.Requested == "CUDA:0" && info.DecoderProvider.InUse == "CPU"
                    && info.DecoderProvider.FallbackReason.Contains("CUDA:0 could not be initialised"), "decoder on its own provider, fallen back: " + info.DecoderProvider.InUse);
            }
            Throws<SegrtException>(() => new UnetSegmenter("/no/such/model.onnx"), "missing model");
        }
        finally
        {
            SegrtLibrary.Log -= thrower;
            SegrtLibrary.Log -= handler;
        }
        lock (seen)
        {
            foreach (var e in seen) Console.WriteLine("      log " + e.Level + ": " + e.Message.Split('\n')[0]);
            Check(seen.Any(e => e.Level == LogLevel.Warn && e.Message.Contains("CUDA:0 could not be initialised")), "fallback warning");
            Check(seen.Any(e => e.Level == LogLevel.Info && e.Message.Contains("session")), "session created");
            Check(seen.Any(e => e.Level == LogLevel.Error && e.Message.Contains("/no/such/model.onnx")), "failure");
            int before = seen.Count;
            Throws<SegrtException>(() => new UnetSegmenter("/no/such/model.onnx"), "after unsubscribing");
            Check(seen.Count == before, "nothing arrives after unsubscribing");
        }
    }

    static void DisposeRules()
    {
        var unet = new UnetSegmenter(Model("demo_unet.onnx"));
        Check(!unet.IsDisposed, "IsDisposed before Dispose");
        unet.Dispose();
        Check(unet.IsDisposed, "IsDisposed after Dispose");
        unet.Dispose();
        using (var bmp = Load(Model("samples/lesion_06.png")))
            Throws<ObjectDisposedException>(() => unet.Segment(bmp), "Segment after Dispose");
        Throws<ObjectDisposedException>(() => { var s = unet.SessionInfoJson; }, "info after Dispose");
        Throws<ObjectDisposedException>(() => { var s = unet.SessionInfo; }, "typed info after Dispose");
        string sam = Path.Combine(Repo, "models", "sam2");
        var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx"));
        var clicks = seg.CreateAnnotator();
        seg.Dispose();
        seg.Dispose();
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            Throws<ObjectDisposedException>(() => clicks.SetImage(img), "an annotator's SetImage after its segmenter's Dispose");
            Throws<ObjectDisposedException>(() => seg.Segment(img, new[] { new Sam2Point(1, 1, true) }), "Segment after Dispose");
        }
        Throws<ObjectDisposedException>(() => seg.CreateAnnotator(), "CreateAnnotator after Dispose");
    }

    static void FinalizerFrees()
    {
        // A log callback alive while finalizers free sessions once crashed Mono. Subscribe on purpose.
        EventHandler<LogEventArgs> handler = (s, e) => { };
        SegrtLibrary.Log += handler;
        byte[] model = File.ReadAllBytes(Model("demo_unet.onnx"));
        string sam = Path.Combine(Repo, "models", "sam2");
        for (int i = 0; i < 24; i++)
        {
            new UnetSegmenter(Model("demo_unet.onnx"));
            UnetSegmenter.FromBytes(model);
            if (i % 6 == 0) new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx"));
        }
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        SegrtLibrary.Log -= handler;
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_04.png")))
            Check(Same(unet.Segment(bmp).Mask, s_reference.Mask), "a new segmenter works after the finalizers ran");
    }

    static void ThreadsShareOneSegmenter()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { IntraThreads = 1 }))
        {
            var images = new[] { "lesion_04", "lesion_06", "lesion_02" }.Select(n => Load(Model("samples/" + n + ".png"))).ToArray();
            var expected = images.Select(b => unet.Segment(b).Mask).ToArray();
            var inputs = images.Select(b => PackedBytes(b, 3)).ToArray();
            int mismatches = 0, runs = 0;
            Exception failure = null;
            var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
            {
                try
                {
                    for (int i = 0; i < 6; i++)
                    {
                        int k = (t + i) % images.Length;
                        var r = unet.Segment(InputImage.FromPixels(inputs[k], images[k].Width, images[k].Height, 0, PixelLayout.Bgr24));
                        Interlocked.Increment(ref runs);
                        if (!Same(r.Mask, expected[k])) Interlocked.Increment(ref mismatches);
                    }
                }
                catch (Exception e)
                {
                    failure = e;
                }
            })).ToList();
            threads.ForEach(t => t.Start());
            threads.ForEach(t => t.Join());
            foreach (var b in images) b.Dispose();
            if (failure != null) throw failure;
            Console.WriteLine(string.Format("      {0} runs on 4 threads, {1} mismatches", runs, mismatches));
            Check(runs == 24 && mismatches == 0, "every thread's mask equals the single-thread mask");
        }
    }
}
