// segrt .NET wrapper: errors. Hand-written; compiles with C# 7.2 (mcs) against .NET Framework 4.6.1.
using System;
using System.Runtime.Serialization;
using System.Security;

namespace Segrt
{
    /// <summary>
    /// segrt's status codes (the C header's <c>SegStatus</c>, mirrored by hand; a test checks every name
    /// and value against the generated bindings). Values never change.
    /// </summary>
    public enum SegStatus
    {
        /// <summary>Success (never carried by a <see cref="SegException"/>).</summary>
        Ok = 0,
        /// <summary>An argument has a value the function cannot accept (see the message).</summary>
        InvalidArgument = 1,
        /// <summary>A required pointer argument was NULL.</summary>
        NullPointer = 2,
        /// <summary>The session handle is NULL, already freed, or was never a handle.</summary>
        InvalidHandle = 3,
        /// <summary>A caller-owned output buffer is too small (the message says how big it must be).</summary>
        BufferTooSmall = 4,
        /// <summary>The image is larger than <see cref="SegmenterOptions.MaxPixels"/>, or its byte size overflows.</summary>
        ImageTooLarge = 5,
        /// <summary>The pixel format value is unknown, or not allowed for this call.</summary>
        UnsupportedFormat = 6,
        /// <summary>The session is of another kind (e.g. a SAM2 session used as a UNet).</summary>
        WrongSessionKind = 7,
        /// <summary>
        /// segrt could not allocate the memory a call needs (e.g. another ONNX Runtime session); the message says
        /// how much. Returned by segrt versions with a bounded session pool; older ones never return it.
        /// </summary>
        OutOfMemory = 8,
        /// <summary>No ONNX Runtime library could be loaded; the message lists every path tried and why each failed.</summary>
        RuntimeNotFound = 10,
        /// <summary>An ONNX Runtime library was loaded but could not be used (wrong version, environment creation failed).</summary>
        RuntimeInitFailed = 11,
        /// <summary>The model file does not exist or cannot be read.</summary>
        ModelNotFound = 20,
        /// <summary>The model bytes are not a valid ONNX model (empty, truncated, corrupt).</summary>
        ModelInvalid = 21,
        /// <summary>The model is valid ONNX but not one segrt can run as asked (the message lists its inputs/outputs).</summary>
        ModelUnsupported = 22,
        /// <summary>The requested execution provider could not be initialised (the message carries ONNX Runtime's reason).</summary>
        ProviderUnavailable = 30,
        /// <summary>ONNX Runtime failed while running the model.</summary>
        InferenceFailed = 40,
        /// <summary>A panic inside segrt was caught at the boundary; the host process is unharmed.</summary>
        Panic = 90,
        /// <summary>An internal invariant failed; please report it with the message.</summary>
        Internal = 91,
    }

    /// <summary>
    /// A segrt call failed. <see cref="Status"/> says what kind of failure; <see cref="NativeMessage"/>
    /// is segrt's own explanation (e.g. every path searched for ONNX Runtime, or the model's inputs).
    /// Serializable: both survive a round trip (e.g. across an AppDomain or a remoting boundary).
    /// </summary>
    [Serializable]
    public class SegException : Exception
    {
        const string StatusKey = "Segrt.Status";
        const string NativeMessageKey = "Segrt.NativeMessage";

        /// <summary>What kind of failure segrt reported.</summary>
        public SegStatus Status { get; private set; }

        /// <summary>segrt's message for the failure (the text of <c>seg_last_error</c>).</summary>
        public string NativeMessage { get; private set; }

        /// <summary>Creates the exception for a failed call.</summary>
        /// <param name="status">The status segrt returned.</param>
        /// <param name="nativeMessage">segrt's message for the failure.</param>
        public SegException(SegStatus status, string nativeMessage)
            : base(StatusName(status) + ": " + nativeMessage)
        {
            Status = status;
            NativeMessage = nativeMessage;
        }

        /// <summary>Restores a serialized exception, with its <see cref="Status"/> and <see cref="NativeMessage"/>.</summary>
        /// <param name="info">The serialized data.</param>
        /// <param name="context">The source of the data.</param>
        /// <exception cref="ArgumentNullException"><paramref name="info"/> is null.</exception>
        protected SegException(SerializationInfo info, StreamingContext context)
            : base(info, context)
        {
            Status = (SegStatus)info.GetInt32(StatusKey);
            NativeMessage = info.GetString(NativeMessageKey);
        }

        /// <summary>Writes the exception, its <see cref="Status"/> and <see cref="NativeMessage"/> for serialization.</summary>
        /// <param name="info">Receives the data.</param>
        /// <param name="context">The destination.</param>
        /// <exception cref="ArgumentNullException"><paramref name="info"/> is null.</exception>
        [SecurityCritical]
        public override void GetObjectData(SerializationInfo info, StreamingContext context)
        {
            if (info == null) throw new ArgumentNullException(nameof(info));
            info.AddValue(StatusKey, (int)Status);
            info.AddValue(NativeMessageKey, NativeMessage);
            base.GetObjectData(info, context);
        }

        static string StatusName(SegStatus status)
        {
            return Enum.IsDefined(typeof(SegStatus), status) ? "SEG_" + ToUpperSnake(status.ToString()) : "status " + (int)status;
        }

        static string ToUpperSnake(string pascal)
        {
            var sb = new System.Text.StringBuilder();
            for (int i = 0; i < pascal.Length; i++)
            {
                if (i > 0 && char.IsUpper(pascal[i])) sb.Append('_');
                sb.Append(char.ToUpperInvariant(pascal[i]));
            }
            return sb.ToString();
        }
    }
}
