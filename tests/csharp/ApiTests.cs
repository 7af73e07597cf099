// Tests of the wrapper's API shape: enums mirrored from the generated bindings, the public naming and file
// rules, typed session info, async calls with cancellation, buffer reuse (with allocations per frame), planar
// input.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static partial class SegrtTests
{
    static void RunApiTests()
    {
        Test("hand-written enums mirror the generated bindings (names and values)", EnumsMirrorNative);
        Test("no public type or member exposes a pointer (consumers need no unsafe code)", NoPublicPointers);
        Test("typed SessionInfo: UNet, SAM2, unknown and missing members tolerated", TypedSessionInfo);
        Test("UNet buffer reuse: same masks, allocations per frame with and without", UnetBufferReuse);
        Test("PlanarRgb8 byte[] gives the interleaved mask", UnetPlanar);
        Test("SAM2 images from IntPtr and byte[] with a stride, mask buffers, FromBytes", Sam2RawOverloads);
        Test("background threads: the caller's Task.Run over the synchronous calls: results, cancellation before the run and between encoder and decoder; the wrapper has no Task-returning methods", AsyncCalls);
        Test("model cache: CacheMode/CacheDirectory reach segrt, a second start is a hit, bad combinations refused", ModelCache);
    }

    static void ModelCache()
    {
        string dir = Path.Combine(Path.GetTempPath(), "segrt-cs-cache-" + System.Diagnostics.Process.GetCurrentProcess().Id);
        if (Directory.Exists(dir)) Directory.Delete(dir, true);
        var options = new SegmenterOptions { CacheMode = ModelCacheMode.Dir, CacheDirectory = dir };
        try
        {
            byte[] reference;
            using (var plain = new UnetSegmenter(Model("demo_unet.onnx")))
            {
                Check(plain.SessionInfo.Cache.Status == "off" && plain.SessionInfo.Cache.File == null, "no cache by default");
                using (var bmp = new Bitmap(Path.Combine(Repo, "models", "samples", "lesion_01.png")))
                    reference = plain.Segment(bmp).Mask;
            }
            using (var first = new UnetSegmenter(Model("demo_unet.onnx"), options))
                Check(first.SessionInfo.Cache.Status == "miss" && File.Exists(first.SessionInfo.Cache.File), "first start writes the cache: " + first.SessionInfo.RawJson);
            using (var second = new UnetSegmenter(Model("demo_unet.onnx"), options))
            {
                var cache = second.SessionInfo.Cache;
                Check(cache.Status == "hit" && cache.File.StartsWith(dir) && cache.Note == null, "second start is a hit: " + second.SessionInfo.RawJson);
                using (var bmp = new Bitmap(Path.Combine(Repo, "models", "samples", "lesion_01.png")))
                    Check(second.Segment(bmp).Mask.SequenceEqual(reference), "same mask from the cached model");
            }
            var noDir = Throws<SegrtException>(() => new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { CacheMode = ModelCacheMode.Dir }), "Dir without a folder");
            Check(noDir.Status == Status.InvalidArgument && noDir.NativeMessage.Contains("cache_dir"), noDir.NativeMessage);
            var beside = Throws<SegrtException>(() => UnetSegmenter.FromBytes(File.ReadAllBytes(Model("demo_unet.onnx")), new SegmenterOptions { CacheMode = ModelCacheMode.BesideModel }), "BesideModel from bytes");
            Check(beside.Status == Status.InvalidArgument && beside.NativeMessage.Contains("BESIDE_MODEL"), beside.NativeMessage);
        }
        finally
        {
            if (Directory.Exists(dir)) Directory.Delete(dir, true);
        }
    }

    static string Normalize(string name)
    {
        return name.Replace("_", "").ToUpperInvariant();
    }

    /// <summary>Every (name, value) of a C enum in the generated header, prefix removed.</summary>
    static Dictionary<string, int> HeaderEnum(string header, string enumName, string prefix)
    {
        var m = Regex.Match(header, "enum " + enumName + "\\b[^{;]*\\{(.*?)\\}", RegexOptions.Singleline);
        Check(m.Success, enumName + " in segrt.h");
        var result = new Dictionary<string, int>();
        foreach (Match v in Regex.Matches(m.Groups[1].Value, "\\b(SEG_[A-Z0-9_]+)\\s*=\\s*(-?\\d+)"))
        {
            Check(v.Groups[1].Value.StartsWith(prefix), v.Groups[1].Value + " starts with " + prefix);
            result[Normalize(v.Groups[1].Value.Substring(prefix.Length))] = int.Parse(v.Groups[2].Value);
        }
        return result;
    }

    /// <summary>
    /// Members the wrapper carries ahead of the native library (announced, not yet in the generated bindings),
    /// with their announced values. Once segrt has them they are checked like every other member.
    /// </summary>
    static readonly Dictionary<string, int> Announced = new Dictionary<string, int> { { "OUTOFMEMORY", 8 } };

    static void SameMembers(Type managed, Dictionary<string, int> native, string what)
    {
        var mine = Enum.GetNames(managed).ToDictionary(Normalize, n => Convert.ToInt32(Enum.Parse(managed, n)));
        var missing = native.Where(kv => !mine.ContainsKey(kv.Key)).Select(kv => kv.Key).ToList();
        var extra = mine.Where(kv => !native.ContainsKey(kv.Key))
            .Where(kv => !(managed == typeof(Status) && Announced.ContainsKey(kv.Key) && Announced[kv.Key] == kv.Value
                           && !native.ContainsValue(kv.Value)))
            .Select(kv => kv.Key).ToList();
        foreach (var kv in mine.Where(kv => !native.ContainsKey(kv.Key)).Except(mine.Where(kv => extra.Contains(kv.Key))))
            Console.WriteLine("      " + managed.Name + "." + kv.Key + " = " + kv.Value + ": announced, not in " + what + " yet");
        var differ = native.Where(kv => mine.ContainsKey(kv.Key) && mine[kv.Key] != kv.Value).Select(kv => kv.Key).ToList();
        Check(missing.Count == 0 && extra.Count == 0 && differ.Count == 0, managed.Name + " vs " + what + ": missing " +
            string.Join(",", missing) + "; extra " + string.Join(",", extra) + "; different values " + string.Join(",", differ));
    }

    static void EnumsMirrorNative()
    {
        // Status: against the csbindgen enum compiled into this assembly.
        var generated = Enum.GetNames(typeof(Segrt.Native.SegStatus))
            .ToDictionary(n => Normalize(n.Substring("SEG_".Length)), n => (int)Enum.Parse(typeof(Segrt.Native.SegStatus), n));
        SameMembers(typeof(Status), generated, "Segrt.Native.SegStatus");
        // The others csbindgen does not emit (they cross as int): against the cbindgen header.
        string header = File.ReadAllText(Path.Combine(Repo, "include", "segrt.h"));
        SameMembers(typeof(Status), HeaderEnum(header, "SegStatus", "SEG_"), "segrt.h SegStatus");
        SameMembers(typeof(PixelLayout), HeaderEnum(header, "SegPixelFormat", "SEG_FORMAT_"), "segrt.h");
        SameMembers(typeof(ExecutionProvider), HeaderEnum(header, "SegProvider", "SEG_PROVIDER_"), "segrt.h");
        SameMembers(typeof(ProviderPolicy), HeaderEnum(header, "SegProviderPolicy", "SEG_PROVIDER_"), "segrt.h");
        SameMembers(typeof(ResizeFilter), HeaderEnum(header, "SegResizeFilter", "SEG_RESIZE_"), "segrt.h");
        SameMembers(typeof(ChannelOrder), HeaderEnum(header, "SegChannelOrder", "SEG_CHANNELS_"), "segrt.h");
        SameMembers(typeof(SigmoidMode), HeaderEnum(header, "SegSigmoid", "SEG_SIGMOID_"), "segrt.h");
        SameMembers(typeof(ThresholdMode), HeaderEnum(header, "SegThresholdMode", "SEG_THRESHOLD_"), "segrt.h");
        SameMembers(typeof(TilingMode), HeaderEnum(header, "SegTileMode", "SEG_TILE_"), "segrt.h");
        SameMembers(typeof(LogLevel), HeaderEnum(header, "SegLogLevel", "SEG_LOG_"), "segrt.h");
        SameMembers(typeof(ModelCacheMode), HeaderEnum(header, "SegCacheMode", "SEG_CACHE_"), "segrt.h");
        SameMembers(typeof(ArenaPolicy), HeaderEnum(header, "SegArena", "SEG_ARENA_"), "segrt.h");
        SameMembers(typeof(ConvSearch), HeaderEnum(header, "SegConvSearch", "SEG_CONV_SEARCH_"), "segrt.h");
        SameMembers(typeof(OpenVinoPrecision), HeaderEnum(header, "SegOvPrecision", "SEG_OV_PRECISION_"), "segrt.h");
        SameMembers(typeof(IntensityRange), HeaderEnum(header, "SegIntensityRange", "SEG_INTENSITY_"), "segrt.h");
        Console.WriteLine(string.Format("      {0} status codes, {1} pixel formats and 13 more enums match", generated.Count, Enum.GetNames(typeof(PixelLayout)).Length));
    }

    static void NoPublicPointers()
    {
        var flags = BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;
        var types = typeof(Segmenter).Assembly.GetTypes().Where(t => t.IsPublic && t.Namespace == "Segrt").ToList();
        int members = 0;
        var bad = new List<string>();
        foreach (var t in types)
        {
            foreach (var m in t.GetMethods(flags).Cast<MethodBase>().Concat(t.GetConstructors(flags)))
            {
                members++;
                var sig = m.GetParameters().Select(p => p.ParameterType).ToList();
                if (m is MethodInfo) sig.Add(((MethodInfo)m).ReturnType);
                if (sig.Any(x => x.IsPointer || (x.HasElementType && x.GetElementType().IsPointer))) bad.Add(t.Name + "." + m.Name);
            }
            foreach (var f in t.GetFields(flags)) { members++; if (f.FieldType.IsPointer) bad.Add(t.Name + "." + f.Name); }
        }
        Console.WriteLine(string.Format("      {0} public types, {1} public members, pointers in: {2}", types.Count, members, bad.Count == 0 ? "none" : string.Join(", ", bad)));
        Check(types.Count > 20 && bad.Count == 0, "public API without pointers");
        Check(typeof(Segrt.Native.NativeMethods).IsNotPublic, "the generated P/Invoke declarations stay internal");
    }

    static void TypedSessionInfo()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        {
            var info = unet.SessionInfo;
            Check(info.Kind == "unet" && Regex.IsMatch(info.RawJson, "\"kind\"\\s*:\\s*\"unet\""), "kind and raw JSON: " + info.RawJson);
            Check(info.Provider.InUse == "CPU" && info.Provider.Requested == "CPU" && info.Provider.FallbackReason == null, "provider report");
            Check(info.Inputs.Length == 1 && info.Inputs[0].Shape.Length == 4 && info.Outputs.Length >= 1, "inputs/outputs");
            Check(info.OnnxRuntime.Version.StartsWith("1.31") && File.Exists(info.OnnxRuntime.Path), "runtime " + info.OnnxRuntime.Path);
            Check(info.OnnxRuntime.Build == "CPU" && info.OnnxRuntime.ApiLevel == 31 && info.OnnxRuntime.Degraded.Count == 0,
                "runtime build " + info.OnnxRuntime.Build + ", API level " + info.OnnxRuntime.ApiLevel);
            Check(info.ModelBytes == new FileInfo(Model("demo_unet.onnx")).Length, "model bytes");
            Check(info.NativeBytes > 0 && info.EncoderInputs == null && info.Convention == null && info.EncoderPool == null, "UNet-only members");
            var pool = info.Pool;
            Check(pool != null && pool.MaxSessions >= 1 && pool.Sessions == 1 && pool.Created == 1 && pool.Busy == 0 && pool.Waits == 0
                && pool.BytesPerExtraSession == null && pool.BytesFirstSession == info.BytesFirstSession, "UNet pool after creation: " + info.RawJson);
            Check(!Regex.IsMatch(info.RawJson, "threads_with|sessions_created|bytes_per_extra_thread"), "segrt no longer reports per-thread sessions");
            Check(!string.IsNullOrEmpty(info.IntraThreads), "intra_threads text");
            Console.WriteLine(string.Format("      UNet: input {0} {1} [{2}], first session {3} bytes, pool {4}/{5} sessions, intra threads: {6}", info.Inputs[0].Name, info.Inputs[0].DataType,
                string.Join(",", info.Inputs[0].Shape), info.BytesFirstSession, pool.Sessions, pool.MaxSessions, info.IntraThreads));
        }
        using (var capped = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { MaxSessions = 3 }))
            Check(capped.SessionInfo.Pool.MaxSessions == 3, "MaxSessions reaches the pool");
        // The arena policy reaches every pool: UNet runs keep their buffers unless told, release when told.
        using (var kept = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var released = new UnetSegmenter(Model("demo_unet.onnx"), new SegmenterOptions { Arena = ArenaPolicy.Release }))
            Check(kept.SessionInfo.Pool.ReleasesArena == false && released.SessionInfo.Pool.ReleasesArena == true, "Arena reaches the pool");
        string sam = Path.Combine(Repo, "models", "sam2");
        // Auto: the SAM2 encoder gives its buffers back, the decoder keeps them for the next click; Keep: both keep.
        using (var auto = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var keep = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx"),
            new SegmenterOptions { Arena = ArenaPolicy.Keep }))
        {
            Check(auto.SessionInfo.EncoderPool.ReleasesArena == true && auto.SessionInfo.DecoderPool.ReleasesArena == false, "Arena Auto: the encoder releases, the decoder keeps");
            Check(keep.SessionInfo.EncoderPool.ReleasesArena == false && keep.SessionInfo.DecoderPool.ReleasesArena == false, "Arena Keep: both keep");
            // ReleaseMemory gives the arena back at once, segmenters in hand, and they go on working.
            SegrtLibrary.ReleaseMemory();
            Check(keep.SessionInfo.EncoderPool.Created == 1, "segmenters usable after ReleaseMemory");
        }
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx"),
            new SegmenterOptions { MaxSessions = 2 }))
        {
            var info = seg.SessionInfo;
            Check(info.Kind == "sam2" && info.Convention != null && info.EncoderInputs.Length >= 1 && info.DecoderInputs.Length >= 1, "SAM2 info");
            Check(info.ImageCached == false && info.Inputs == null && info.Pool == null, "no image cached yet");
            Check(info.EncoderPool.MaxSessions == 2 && info.DecoderPool.MaxSessions == 2 && info.EncoderPool.Created == 1 && info.DecoderPool.Created == 1,
                "SAM2 encoder and decoder pools: " + info.RawJson);
            Check(info.NativeBytes == Math.Max(0, info.BytesFirstSessions ?? 0), "SAM2 memory: both first sessions");
            Check(seg.LowResSize.Width > 0 && seg.LowResSize.Height > 0, "low-res logits size known: " + seg.LowResSize);
        }
        // Where the nodes ran: ONNX Runtime's count per provider (all 45 of the demo UNet on the CPU).
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        {
            var nodes = unet.SessionInfo.Provider.Nodes;
            Check(nodes.Count == 1 && nodes[0].Provider == "CPUExecutionProvider" && nodes[0].Nodes == 45 && nodes[0].Operators["Conv"] == 18, "nodes per provider: " + unet.SessionInfoJson);
            Check(Segmenter.ParseProvider("OpenVINO (partly: 3 of 9 nodes on the CPU)") == ExecutionProvider.OpenVino, "a partly-placed provider's name parses");
        }
        // A newer segrt may add members and an older one may lack some.
        var future = SessionInfo.Parse("{\"kind\":\"unet\",\"new_member\":{\"x\":[1,2]},\"provider\":{\"requested\":\"CPU\",\"in_use\":\"CPU\"," +
            "\"fallback_reason\":null,\"later\":1},\"pool\":{\"sessions\":2,\"busy\":1,\"created\":3,\"waits\":7,\"max_sessions\":4," +
            "\"bytes_first_session\":5000,\"bytes_per_extra_session\":1000,\"idle_released\":1}}");
        Check(future.Kind == "unet" && future.Provider.InUse == "CPU" && future.BytesFirstSession == null && future.Inputs == null, "unknown/missing members");
        Check(future.Pool.Sessions == 2 && future.Pool.Waits == 7 && future.Pool.MaxSessions == 4 && future.Pool.BytesPerExtraSession == 1000
            && future.Pool.BytesFirstSession == 5000 && future.Pool.Created == 3 && future.Pool.Busy == 1, "pool members");
        Check(future.NativeBytes == 6000, "memory: first session + one extra session alive (" + future.NativeBytes + ")");
        Check(SessionInfo.Parse("{\"kind\":\"unet\"}").NativeBytes == 0, "nothing measured: no memory declared");
        // A session being built counts in "sessions" before "created" (and before its memory is measured):
        // the wrapper must not take such a reading as the pool's final size.
        var building = SessionInfo.Parse("{\"kind\":\"unet\",\"pool\":{\"max_sessions\":4,\"sessions\":2,\"created\":1,\"bytes_first_session\":5000}}");
        Check(!building.PoolsSettled && future.PoolsSettled && building.NativeBytes == 5000, "a pool still building a session is not settled");
        Throws<System.Runtime.Serialization.SerializationException>(() => SessionInfo.Parse("not json"), "malformed JSON");
    }

    /// <summary>Bytes allocated by this thread so far: GC.GetAllocatedBytesForCurrentThread where the runtime has it (Mono does), else the GC heap size.</summary>
    static long AllocatedBytes()
    {
        var m = typeof(GC).GetMethod("GetAllocatedBytesForCurrentThread", BindingFlags.Static | BindingFlags.Public);
        return m != null ? (long)m.Invoke(null, null) : GC.GetTotalMemory(false);
    }

    static void UnetBufferReuse()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            int w = bmp.Width, h = bmp.Height;
            byte[] bgr = PackedBytes(bmp, 3);
            var mask = new byte[w * h];
            var prob = new float[w * h];
            var r = unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), mask, prob);
            Check(ReferenceEquals(r.Mask, mask) && ReferenceEquals(r.Probability, prob), "the result holds the caller's buffers");
            Check(Same(mask, s_reference.Mask), "same mask as the allocating call");
            var fromBitmap = unet.Segment(bmp, new byte[w * h + 10]);
            Check(fromBitmap.Mask.Take(w * h).SequenceEqual(s_reference.Mask) && fromBitmap.Probability == null, "Bitmap overload, larger buffer");
            Throws<ArgumentException>(() => unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), new byte[w * h - 1]), "mask buffer too small");
            Throws<ArgumentException>(() => unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), mask, new float[10]), "probability buffer too small");
            Throws<ArgumentNullException>(() => unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), (byte[])null), "null mask buffer");

            const int frames = 20;
            long a0 = AllocatedBytes();
            for (int i = 0; i < frames; i++) unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), withProbability: true);
            long allocating = (AllocatedBytes() - a0) / frames;
            a0 = AllocatedBytes();
            for (int i = 0; i < frames; i++) unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24), mask, prob);
            long reusing = (AllocatedBytes() - a0) / frames;
            Console.WriteLine(string.Format("      {0}x{1} with probability, {2} frames: {3} bytes allocated per frame without buffer reuse, {4} with",
                w, h, frames, allocating, reusing));
            Check(allocating >= 5L * w * h, "the allocating call allocates mask + probability (" + allocating + ")");
            Check(reusing < w * h, "buffer reuse allocates less than one mask per frame (" + reusing + ")");
        }
    }

    static void UnetPlanar()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            int w = bmp.Width, h = bmp.Height, n = w * h;
            byte[] bgr = PackedBytes(bmp, 3);
            var planar = new byte[3 * n];
            for (int i = 0; i < n; i++)
            {
                planar[i] = bgr[3 * i + 2];
                planar[n + i] = bgr[3 * i + 1];
                planar[2 * n + i] = bgr[3 * i];
            }
            Check(Same(unet.Segment(InputImage.FromPixels(planar, w, h, 0, PixelLayout.PlanarRgb8)).Mask, s_reference.Mask), "planar == interleaved");
            Throws<ArgumentException>(() => unet.Segment(InputImage.FromPixels(planar, w, h + 1, 0, PixelLayout.PlanarRgb8)), "three planes must fit");
            Throws<ArgumentException>(() => unet.Segment(InputImage.FromPixels(planar, w, h, -w, PixelLayout.PlanarRgb8)), "negative planar stride");
        }
    }

    static void Sam2RawOverloads()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        string refs = Path.Combine(sam, "reference");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(refs, "img0.png")))
        {
            int w = img.Width, h = img.Height, stride = StrideOf(img);
            byte[] packed = PackedBytes(img, 3);
            var padded = new byte[stride * h];
            for (int y = 0; y < h; y++) Buffer.BlockCopy(packed, y * w * 3, padded, y * stride, w * 3);
            var expected = LoadMask(Path.Combine(refs, "img0_point_mask.png"));
            var clicks = seg.CreateAnnotator();
            var pin = GCHandle.Alloc(padded, GCHandleType.Pinned);
            try
            {
                clicks.SetImage(InputImage.FromPixels(pin.AddrOfPinnedObject(), w, h, stride, PixelLayout.Bgr24));
                var viaPointer = clicks.Click(105, 105);
                Check(IoU(viaPointer.Mask, expected) > 0.99, "SetImage(IntPtr, stride) + Click");
                var buffer = new byte[w * h];
                var viaBytes = seg.Segment(InputImage.FromPixels(padded, w, h, stride, PixelLayout.Bgr24), new[] { new Sam2Point(105, 105, true) }, maskBuffer: buffer);
                Check(ReferenceEquals(viaBytes.Mask, buffer) && Same(buffer, viaPointer.Mask), "Segment(byte[], stride) into a buffer");
                var viaIntPtr = seg.Segment(InputImage.FromPixels(pin.AddrOfPinnedObject(), w, h, stride, PixelLayout.Bgr24), new[] { new Sam2Point(105, 105, true) });
                Check(Same(viaIntPtr.Mask, viaPointer.Mask), "Segment(IntPtr, stride)");
                clicks.ClearPrompts();
                var clickBuffer = new byte[w * h];
                Check(ReferenceEquals(clicks.Click(105, 105, true, clickBuffer).Mask, clickBuffer) && Same(clickBuffer, viaPointer.Mask), "Click into a buffer");
                Throws<ArgumentException>(() => clicks.Click(105, 105, true, new byte[10]), "click buffer too small");
                Check(clicks.Points.Count == 1, "a click refused for its buffer is not kept");
            }
            finally
            {
                pin.Free();
            }
        }
        byte[] encoder = File.ReadAllBytes(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"));
        byte[] decoder = File.ReadAllBytes(Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx"));
        using (var fromBytes = Sam2Segmenter.FromBytes(encoder, decoder))
        using (var img = Load(Path.Combine(refs, "img0.png")))
        {
            var clicks = fromBytes.CreateAnnotator();
            clicks.SetImage(img);
            Check(IoU(clicks.Click(105, 105).Mask, LoadMask(Path.Combine(refs, "img0_point_mask.png"))) > 0.99, "SAM2 from bytes");
            Check(fromBytes.MemoryBytes >= encoder.Length + decoder.Length, "declared at least the model bytes");
        }
        Throws<ArgumentException>(() => Sam2Segmenter.FromBytes(encoder, new byte[0]), "empty decoder bytes");
        ThrowsSegrt(Status.ModelInvalid, () => Sam2Segmenter.FromBytes(encoder, new byte[] { 1, 2, 3 }), "garbage decoder bytes");
    }

    static T Await<T>(Task<T> task)
    {
        try
        {
            return task.GetAwaiter().GetResult();
        }
        catch (OperationCanceledException)
        {
            throw;
        }
    }

    static void AsyncCalls()
    {
        // No Task.Run wrappers pretending to be asynchronous: every public method of the wrapper is synchronous.
        var taskMethods = typeof(Segmenter).Assembly.GetExportedTypes()
            .SelectMany(t => t.GetMethods(System.Reflection.BindingFlags.Public | System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.Static | System.Reflection.BindingFlags.DeclaredOnly))
            .Where(m => typeof(Task).IsAssignableFrom(m.ReturnType) || m.Name.EndsWith("Async"))
            .Select(m => m.DeclaringType.Name + "." + m.Name).ToArray();
        Check(taskMethods.Length == 0, "no Task-returning or *Async public methods: " + string.Join(", ", taskMethods));

        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            Check(Same(Task.Run(() => unet.Segment(bmp)).Result.Mask, s_reference.Mask), "Task.Run(Segment(Bitmap))");
            byte[] bgr = PackedBytes(bmp, 3);
            Check(Same(Task.Run(() => unet.Segment(InputImage.FromPixels(bgr, bmp.Width, bmp.Height, 0, PixelLayout.Bgr24))).Result.Mask, s_reference.Mask), "Task.Run(Segment(byte[]))");
            var cancelled = new CancellationTokenSource();
            cancelled.Cancel();
            var t = Task.Run(() => unet.Segment(bmp, false, cancelled.Token), cancelled.Token);
            Throws<OperationCanceledException>(() => Await(t), "cancelled before the run");
            Check(t.IsCanceled, "the task is cancelled, not faulted");
            // The token reaches the call even when Task.Run is not given it: awaiting still throws OperationCanceledException.
            var t2 = Task.Run(() => unet.Segment(bmp, false, cancelled.Token));
            Throws<OperationCanceledException>(() => Await(t2), "cancelled inside the task");
            Check(Same(unet.Segment(bmp).Mask, s_reference.Mask), "the segmenter works after a cancelled call");
        }
        string sam = Path.Combine(Repo, "models", "sam2");
        string refs = Path.Combine(sam, "reference");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(refs, "img0.png")))
        {
            var expected = LoadMask(Path.Combine(refs, "img0_point_mask.png"));
            var clicks = seg.CreateAnnotator();
            double encoderMs = Task.Run(() => clicks.SetImage(img)).Result;
            Check(encoderMs > 0, "Task.Run(SetImage) runs the encoder");
            var click = Task.Run(() => clicks.Click(105, 105)).Result;
            Check(IoU(click.Mask, expected) > 0.99 && clicks.Points.Count == 1, "Task.Run(Click)");
            var cts = new CancellationTokenSource();
            cts.Cancel();
            var cancelledClick = Task.Run(() => clicks.Click(200, 100, true, null, cts.Token), cts.Token);
            Throws<OperationCanceledException>(() => Await(cancelledClick), "a click cancelled before the decoder");
            Check(cancelledClick.IsCanceled && clicks.Points.Count == 1, "a cancelled click is not kept");

            // Cancelled between the encoder and the decoder: the caller's own two steps (SetImage, then Segment on
            // the image set last), the token fired in between.
            clicks.ForgetImage();
            var between = new CancellationTokenSource();
            double midEncoderMs = 0;
            var mid = Task.Run(() =>
            {
                midEncoderMs = seg.SetImage(img, between.Token);
                between.Cancel();
                return seg.Segment(null, new[] { new Sam2Point(105, 105, true) }, null, null, null, between.Token);
            }, between.Token);
            Throws<OperationCanceledException>(() => Await(mid), "cancelled between encoder and decoder");
            Check(mid.IsCanceled && midEncoderMs > 0, "cancelled after the encoder ran");
            Check(seg.SessionInfo.ImageCached == true, "the embedding computed before the cancellation stays cached");
            var after = Task.Run(() => seg.Segment(img, new[] { new Sam2Point(105, 105, true) })).Result;
            Check(after.EncoderReused && IoU(after.Mask, expected) > 0.99, "the session is usable and reuses the embedding");
            var onLast = seg.Segment(null, new[] { new Sam2Point(105, 105, true) });
            Check(onLast.EncoderReused && Same(onLast.Mask, after.Mask), "Segment(null, ...) segments the image set last");
            Console.WriteLine(string.Format("      SAM2 on the caller's Task.Run: encoder {0:F1} ms; cancelled before start and between encoder and decoder; then decoder only ({1:F1} ms)",
                encoderMs, after.DecoderMs));
        }
    }
}
