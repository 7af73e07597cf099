namespace Segrt
{
    /// <summary>
    /// segrt's status codes (the C header's <c>SegStatus</c>, mirrored by hand; a test checks every name
    /// and value against the generated bindings). Values never change.
    /// </summary>
    public enum Status
    {
        /// <summary>Success (never carried by a <see cref="SegrtException"/>).</summary>
        Ok = 0,
        /// <summary>An argument has a value the function cannot accept (see the message).</summary>
        InvalidArgument = 1,
        /// <summary>A required pointer argument was NULL.</summary>
        NullPointer = 2,
        /// <summary>The native handle is NULL, already freed, or was never a handle.</summary>
        InvalidHandle = 3,
        /// <summary>A caller-owned output buffer is too small (the message says how big it must be).</summary>
        BufferTooSmall = 4,
        /// <summary>The image is larger than <see cref="SegmenterOptions.MaxPixels"/>, or its byte size overflows.</summary>
        ImageTooLarge = 5,
        /// <summary>The pixel layout value is unknown, or not allowed for this call.</summary>
        UnsupportedFormat = 6,
        /// <summary>The model is of another kind (e.g. a SAM2 pair used as a UNet).</summary>
        WrongSessionKind = 7,
        /// <summary>
        /// segrt could not allocate the memory a call needs (e.g. another ONNX Runtime session), or the call would
        /// need more than <see cref="SegmenterOptions.MaxMemoryBytes"/>; the message says how much.
        /// </summary>
        OutOfMemory = 8,
        /// <summary>No ONNX Runtime library could be loaded; the message lists every path tried and why each failed.</summary>
        RuntimeNotFound = 10,
        /// <summary>An ONNX Runtime library was loaded but could not be used (wrong version, environment creation failed).</summary>
        RuntimeInitFailed = 11,
        /// <summary>The model file does not exist or cannot be read.</summary>
        ModelNotFound = 20,
        /// <summary>The model bytes are not a valid ONNX model (empty, truncated, corrupt, over <see cref="SegmenterOptions.MaxModelBytes"/>).</summary>
        ModelInvalid = 21,
        /// <summary>The model is valid ONNX but not one segrt can run as asked (the message lists its inputs/outputs).</summary>
        ModelUnsupported = 22,
        /// <summary>The requested execution provider could not be initialised (the message carries ONNX Runtime's reason).</summary>
        ProviderUnavailable = 30,
        /// <summary>ONNX Runtime failed while running the model.</summary>
        InferenceFailed = 40,
        /// <summary>
        /// The call was cancelled and wrote no output (the session or tracker is as before the call). The wrapper
        /// never throws a <see cref="SegrtException"/> with this status: it throws an
        /// <see cref="System.OperationCanceledException"/>, carrying the caller's
        /// <see cref="System.Threading.CancellationToken"/> when that fired, or segrt's reason when segrt cancelled the
        /// call itself (a newer image set on a <see cref="Sam2Segmenter"/>, or its reset, cancels the older encode).
        /// </summary>
        Cancelled = 50,
        /// <summary>A panic inside segrt was caught at the boundary; the host process is unharmed.</summary>
        Panic = 90,
        /// <summary>An internal invariant failed; please report it with the message.</summary>
        Internal = 91,
    }
}
