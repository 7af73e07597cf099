using System.Runtime.Serialization;

namespace Segrt
{
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
        [DataMember(Name = "releases_arena")] bool? _releasesArena;

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

        /// <summary>
        /// Whether this model's runs give ONNX Runtime's working buffers back when they end (the segmenter's
        /// <see cref="SegmenterOptions.Arena"/> applied to them); null from a segrt without the setting.
        /// </summary>
        public bool? ReleasesArena { get { return _releasesArena; } }
    }
}
