// segrt .NET wrapper: errors. Hand-written; compiles with C# 7.2 (mcs) against .NET Framework 4.6.1.
using System;

namespace Segrt
{
    /// <summary>segrt's status codes (the C header's <c>SegStatus</c>); values never change.</summary>
    public enum SegStatus
    {
        Ok = 0,
        InvalidArgument = 1,
        NullPointer = 2,
        InvalidHandle = 3,
        BufferTooSmall = 4,
        ImageTooLarge = 5,
        UnsupportedFormat = 6,
        WrongSessionKind = 7,
        RuntimeNotFound = 10,
        RuntimeInitFailed = 11,
        ModelNotFound = 20,
        ModelInvalid = 21,
        ModelUnsupported = 22,
        ProviderUnavailable = 30,
        InferenceFailed = 40,
        Panic = 90,
        Internal = 91,
    }

    /// <summary>
    /// A segrt call failed. <see cref="Status"/> says what kind of failure; <see cref="NativeMessage"/>
    /// is segrt's own explanation (e.g. every path searched for ONNX Runtime, or the model's inputs).
    /// </summary>
    [Serializable]
    public class SegException : Exception
    {
        public SegStatus Status { get; private set; }
        public string NativeMessage { get; private set; }

        public SegException(SegStatus status, string nativeMessage)
            : base(StatusName(status) + ": " + nativeMessage)
        {
            Status = status;
            NativeMessage = nativeMessage;
        }

        protected SegException(System.Runtime.Serialization.SerializationInfo info, System.Runtime.Serialization.StreamingContext context)
            : base(info, context) { }

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
