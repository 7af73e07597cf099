// segrt .NET wrapper: seg_session_info's JSON as typed objects (DataContractJsonSerializer, which
// .NET Framework 4.6.1 ships). Members segrt does not send are left at their defaults (null), and members
// this wrapper does not know are ignored, so the wrapper and the library can gain fields independently.
using System;
using System.IO;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Json;
using System.Text;

namespace Segrt
{
    /// <summary>
    /// What segrt reports about a session (<see cref="Segmenter.SessionInfo"/>). Figures segrt could not
    /// measure, and members of the other session kind, are null. <see cref="RawJson"/> has everything.
    /// </summary>
    [DataContract]
    public sealed class SessionInfo
    {
        [DataMember(Name = "kind")] string _kind;
        [DataMember(Name = "convention")] string _convention;
        [DataMember(Name = "provider")] ProviderReport _provider;
        [DataMember(Name = "inputs")] TensorInfo[] _inputs;
        [DataMember(Name = "outputs")] TensorInfo[] _outputs;
        [DataMember(Name = "encoder_inputs")] TensorInfo[] _encoderInputs;
        [DataMember(Name = "encoder_outputs")] TensorInfo[] _encoderOutputs;
        [DataMember(Name = "decoder_inputs")] TensorInfo[] _decoderInputs;
        [DataMember(Name = "decoder_outputs")] TensorInfo[] _decoderOutputs;
        [DataMember(Name = "intra_threads")] string _intraThreads;
        [DataMember(Name = "pool")] PoolInfo _pool;
        [DataMember(Name = "encoder_pool")] PoolInfo _encoderPool;
        [DataMember(Name = "decoder_pool")] PoolInfo _decoderPool;
        [DataMember(Name = "cache")] CacheInfo _cache;
        [DataMember(Name = "encoder_cache")] CacheInfo _encoderCache;
        [DataMember(Name = "decoder_cache")] CacheInfo _decoderCache;
        [DataMember(Name = "bytes_first_session")] long? _bytesFirstSession;
        [DataMember(Name = "bytes_first_sessions")] long? _bytesFirstSessions;
        [DataMember(Name = "model_bytes")] long? _modelBytes;
        [DataMember(Name = "image_cached")] bool? _imageCached;
        [DataMember(Name = "interpretation")] Interpretation _interpretation;
        [DataMember(Name = "onnxruntime")] RuntimeInfo _onnxRuntime;

        /// <summary>"unet" or "sam2".</summary>
        public string Kind { get { return _kind; } }

        /// <summary>SAM2: the export convention segrt recognised (e.g. "samexporter"); null for UNet.</summary>
        public string Convention { get { return _convention; } }

        /// <summary>The execution provider requested and in use, and why they differ.</summary>
        public ProviderReport Provider { get { return _provider; } }

        /// <summary>UNet: the model's inputs; null for SAM2.</summary>
        public TensorInfo[] Inputs { get { return _inputs; } }

        /// <summary>UNet: the model's outputs; null for SAM2.</summary>
        public TensorInfo[] Outputs { get { return _outputs; } }

        /// <summary>SAM2: the encoder's inputs; null for UNet.</summary>
        public TensorInfo[] EncoderInputs { get { return _encoderInputs; } }

        /// <summary>SAM2: the encoder's outputs; null for UNet.</summary>
        public TensorInfo[] EncoderOutputs { get { return _encoderOutputs; } }

        /// <summary>SAM2: the decoder's inputs; null for UNet.</summary>
        public TensorInfo[] DecoderInputs { get { return _decoderInputs; } }

        /// <summary>SAM2: the decoder's outputs; null for UNet.</summary>
        public TensorInfo[] DecoderOutputs { get { return _decoderOutputs; } }

        /// <summary>How the sessions' ONNX Runtime intra-op threads are set up, as segrt describes it (text).</summary>
        public string IntraThreads { get { return _intraThreads; } }

        /// <summary>UNet: the handle's pool of ONNX Runtime sessions; null for SAM2.</summary>
        public PoolInfo Pool { get { return _pool; } }

        /// <summary>SAM2: the pool of encoder sessions; null for UNet.</summary>
        public PoolInfo EncoderPool { get { return _encoderPool; } }

        /// <summary>SAM2: the pool of decoder sessions; null for UNet.</summary>
        public PoolInfo DecoderPool { get { return _decoderPool; } }

        /// <summary>UNet: what the model cache did (<see cref="SegmenterOptions.CacheMode"/>); null for SAM2.</summary>
        public CacheInfo Cache { get { return _cache; } }

        /// <summary>SAM2: what the model cache did for the encoder; null for UNet.</summary>
        public CacheInfo EncoderCache { get { return _encoderCache; } }

        /// <summary>SAM2: what the model cache did for the decoder; null for UNet.</summary>
        public CacheInfo DecoderCache { get { return _decoderCache; } }

        /// <summary>UNet: resident memory the first session added (including ONNX Runtime's one-time set-up).</summary>
        public long? BytesFirstSession { get { return _bytesFirstSession; } }

        /// <summary>SAM2: resident memory the first encoder and decoder sessions added.</summary>
        public long? BytesFirstSessions { get { return _bytesFirstSessions; } }

        /// <summary>UNet: size of the model segrt holds in memory.</summary>
        public long? ModelBytes { get { return _modelBytes; } }

        /// <summary>SAM2: whether an image embedding is cached.</summary>
        public bool? ImageCached { get { return _imageCached; } }

        /// <summary>The ONNX Runtime in use: version and path.</summary>
        public RuntimeInfo OnnxRuntime { get { return _onnxRuntime; } }

        /// <summary>The JSON text this object was read from (segrt's <c>seg_session_info</c>).</summary>
        public string RawJson { get; private set; }

        /// <summary>
        /// The native memory this segmenter is known to hold, in bytes: for each pool (UNet: <see cref="Pool"/>;
        /// SAM2: <see cref="EncoderPool"/> + <see cref="DecoderPool"/>) the resident memory its first session
        /// added plus <see cref="PoolInfo.BytesPerExtraSession"/> for each further session alive now, and for a
        /// UNet at least the model's size (segrt keeps a copy). These are process-wide measurements, so they
        /// can read low when freed memory is reused; 0 when nothing is known.
        /// </summary>
        public long NativeBytes
        {
            get
            {
                long pools;
                if (_pool != null || _encoderPool != null || _decoderPool != null)
                    pools = PoolBytes(_pool) + PoolBytes(_encoderPool) + PoolBytes(_decoderPool);
                else
                    pools = _bytesFirstSession ?? _bytesFirstSessions ?? 0;
                return Math.Max(Math.Max(pools, _modelBytes ?? 0), 0);
            }
        }

        static long PoolBytes(PoolInfo pool)
        {
            if (pool == null) return 0;
            long extra = Math.Max(0, (pool.Sessions ?? 1) - 1) * (pool.BytesPerExtraSession ?? 0);
            return (pool.BytesFirstSession ?? 0) + extra;
        }

        /// <summary>The most ONNX Runtime sessions any pool of this segmenter may build (0 when not reported).</summary>
        internal int MaxSessions
        {
            get { return Math.Max(Math.Max(Cap(_pool), Cap(_encoderPool)), Cap(_decoderPool)); }
        }

        /// <summary>The ONNX Runtime sessions alive now in its largest pool (0 when not reported).</summary>
        internal int LiveSessions
        {
            get { return Math.Max(Math.Max(Live(_pool), Live(_encoderPool)), Live(_decoderPool)); }
        }

        /// <summary>False while a pool is still building a session (counted in Sessions, not yet in Created, its memory not yet measured).</summary>
        internal bool PoolsSettled
        {
            get { return Settled(_pool) && Settled(_encoderPool) && Settled(_decoderPool); }
        }

        static bool Settled(PoolInfo p)
        {
            return p == null || (p.Created ?? 0) >= (p.Sessions ?? 0);
        }

        static int Cap(PoolInfo p) { return p != null && p.MaxSessions.HasValue ? p.MaxSessions.Value : 0; }

        static int Live(PoolInfo p) { return p != null && p.Sessions.HasValue ? p.Sessions.Value : 0; }

        /// <summary>SAM2: (width, height) of the decoder's low-res mask logits (its mask_input); null when not reported.</summary>
        internal System.Drawing.Size? LowResSize
        {
            get
            {
                var size = _interpretation != null ? _interpretation.MaskInputSize : null; // [height, width]
                if (size == null || size.Length != 2 || size[0] <= 0 || size[1] <= 0) return null;
                return new System.Drawing.Size(size[1], size[0]);
            }
        }

        /// <summary>Reads segrt's session-info JSON.</summary>
        /// <param name="json">The text of <see cref="Segmenter.SessionInfoJson"/>.</param>
        /// <returns>The typed info, with <see cref="RawJson"/> set to <paramref name="json"/>.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="json"/> is null.</exception>
        /// <exception cref="SerializationException"><paramref name="json"/> is not a JSON object of this shape.</exception>
        public static SessionInfo Parse(string json)
        {
            if (json == null) throw new ArgumentNullException(nameof(json));
            var info = Json.Read<SessionInfo>(json);
            info.RawJson = json;
            return info;
        }
    }

    /// <summary>The execution provider a session asked for, the one it got, and why they differ.</summary>
    [DataContract]
    public sealed class ProviderReport
    {
        [DataMember(Name = "requested")] string _requested;
        [DataMember(Name = "in_use")] string _inUse;
        [DataMember(Name = "fallback_reason")] string _fallbackReason;

        /// <summary>The provider the options asked for, e.g. "CUDA:0".</summary>
        public string Requested { get { return _requested; } }

        /// <summary>The provider running the model, e.g. "CPU".</summary>
        public string InUse { get { return _inUse; } }

        /// <summary>Why <see cref="InUse"/> differs from <see cref="Requested"/>; null when it does not.</summary>
        public string FallbackReason { get { return _fallbackReason; } }
    }

    /// <summary>One input or output of a model.</summary>
    [DataContract]
    public sealed class TensorInfo
    {
        [DataMember(Name = "name")] string _name;
        [DataMember(Name = "dtype")] string _dtype;
        [DataMember(Name = "shape")] long[] _shape;

        /// <summary>The tensor's name in the model.</summary>
        public string Name { get { return _name; } }

        /// <summary>Its element type, e.g. "f32".</summary>
        public string DataType { get { return _dtype; } }

        /// <summary>Its shape; -1 marks a dynamic axis.</summary>
        public long[] Shape { get { return _shape; } }
    }

    /// <summary>The ONNX Runtime library a session runs on.</summary>
    [DataContract]
    public sealed class RuntimeInfo
    {
        [DataMember(Name = "version")] string _version;
        [DataMember(Name = "path")] string _path;

        /// <summary>e.g. "1.31.1".</summary>
        public string Version { get { return _version; } }

        /// <summary>The file it was loaded from.</summary>
        public string Path { get { return _path; } }
    }

    /// <summary>What the model cache did when a session was built (<see cref="SessionInfo.Cache"/>).</summary>
    [DataContract]
    public sealed class CacheInfo
    {
        [DataMember(Name = "status")] string _status;
        [DataMember(Name = "file")] string _file;
        [DataMember(Name = "note")] string _note;

        /// <summary>
        /// "off" (no cache asked for), "hit" (loaded from the cache), "miss" (optimised and written),
        /// "rebuilt" (a stale or damaged file was replaced), "unwritable" (the folder could not be written:
        /// the session runs without the cache) or "bypassed" (the provider cannot use it).
        /// </summary>
        public string Status { get { return _status; } }

        /// <summary>The cache file; null when the cache is off.</summary>
        public string File { get { return _file; } }

        /// <summary>Why the cache was rebuilt, not written or not used; null when all went well.</summary>
        public string Note { get { return _note; } }
    }

    /// <summary>
    /// A pool of ONNX Runtime sessions of one model (segrt's "pool", "encoder_pool", "decoder_pool"): a call
    /// borrows an idle session, or builds one while fewer than <see cref="MaxSessions"/> exist, or waits for one.
    /// Sessions are never bound to threads.
    /// </summary>
    [DataContract]
    public sealed class PoolInfo
    {
        [DataMember(Name = "max_sessions")] int? _maxSessions;
        [DataMember(Name = "sessions")] int? _sessions;
        [DataMember(Name = "busy")] int? _busy;
        [DataMember(Name = "created")] int? _created;
        [DataMember(Name = "waits")] long? _waits;
        [DataMember(Name = "bytes_first_session")] long? _bytesFirstSession;
        [DataMember(Name = "bytes_per_extra_session")] long? _bytesPerExtraSession;
        [DataMember(Name = "shared_graph_bytes")] long? _sharedGraphBytes;
        [DataMember(Name = "shared_initializers")] long? _sharedInitializers;

        /// <summary>The pool's bound (<see cref="SegmenterOptions.MaxSessions"/>, resolved: 0 became the physical core count).</summary>
        public int? MaxSessions { get { return _maxSessions; } }

        /// <summary>Sessions alive now, idle or busy.</summary>
        public int? Sessions { get { return _sessions; } }

        /// <summary>Sessions running a call now.</summary>
        public int? Busy { get { return _busy; } }

        /// <summary>Sessions built so far.</summary>
        public int? Created { get { return _created; } }

        /// <summary>Calls that had to wait for a free session.</summary>
        public long? Waits { get { return _waits; } }

        /// <summary>Resident memory the first session added (includes ONNX Runtime's one-time set-up).</summary>
        public long? BytesFirstSession { get { return _bytesFirstSession; } }

        /// <summary>Resident memory one more session added, measured when the second was built; null before.</summary>
        public long? BytesPerExtraSession { get { return _bytesPerExtraSession; } }

        /// <summary>
        /// Bytes of the optimised graph that further sessions read their weights from in place (saved by the first
        /// session of a CPU pool whose <see cref="MaxSessions"/> is above 1); null when sessions load the model
        /// themselves (a GPU provider, <c>MaxSessions = 1</c>, or the graph could not be saved).
        /// </summary>
        public long? SharedGraphBytes { get { return _sharedGraphBytes; } }

        /// <summary>
        /// Weight tensors of the shared graph that every session uses as one shared value, so that the forms ONNX
        /// Runtime pre-packs from them also exist once; 0 when ONNX Runtime refused that for this model (fp16 or
        /// quantised kernels), null without a shared graph.
        /// </summary>
        public long? SharedInitializers { get { return _sharedInitializers; } }
    }

    /// <summary>The part of segrt's "interpretation" the wrapper reads (SAM2's low-res mask size).</summary>
    [DataContract]
    internal sealed class Interpretation
    {
        [DataMember(Name = "mask_input_size")] internal int[] MaskInputSize;
    }

    internal static class Json
    {
        internal static T Read<T>(string json)
        {
            var serializer = new DataContractJsonSerializer(typeof(T));
            using (var stream = new MemoryStream(Encoding.UTF8.GetBytes(json)))
                return (T)serializer.ReadObject(stream);
        }
    }
}
