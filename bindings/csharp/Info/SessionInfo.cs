// seg_session_info's JSON as typed objects (DataContractJsonSerializer, which .NET Framework 4.6.1 ships).
// Members segrt does not send are left at their defaults (null), and members this wrapper does not know are
// ignored, so the wrapper and the library can gain fields independently.
using System;
using System.Runtime.Serialization;

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
        [DataMember(Name = "decoder_provider")] ProviderReport _decoderProvider;
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

        /// <summary>
        /// SAM2 (and video models): the prompt decoder's provider, which differs from <see cref="Provider"/> (the
        /// encoder's) with <see cref="SegmenterOptions.DecoderProvider"/> or when one of them fell back to the CPU;
        /// null for UNet.
        /// </summary>
        public ProviderReport DecoderProvider { get { return _decoderProvider; } }

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
}
