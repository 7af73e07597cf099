using System;
using System.Runtime.Serialization;
using System.Security;

namespace Segrt
{
    /// <summary>
    /// A segrt call failed. <see cref="Status"/> says what kind of failure; <see cref="NativeMessage"/>
    /// is segrt's own explanation (e.g. every path searched for ONNX Runtime, or the model's inputs).
    /// Serializable: both survive a round trip (e.g. across an AppDomain or a remoting boundary).
    /// </summary>
    /// <remarks>
    /// Mistakes the wrapper can see before calling into segrt (a null argument, a buffer too small for the
    /// image, a stride smaller than a row) are the usual <see cref="ArgumentException"/>s instead, and a call on
    /// a disposed object is an <see cref="ObjectDisposedException"/>.
    /// </remarks>
    [Serializable]
    public class SegrtException : Exception
    {
        const string StatusKey = "Segrt.Status";
        const string NativeMessageKey = "Segrt.NativeMessage";

        /// <summary>What kind of failure segrt reported.</summary>
        public Status Status { get; private set; }

        /// <summary>segrt's message for the failure (the text of <c>seg_last_error</c>).</summary>
        public string NativeMessage { get; private set; }

        /// <summary>Creates the exception for a failed call.</summary>
        /// <param name="status">The status segrt returned.</param>
        /// <param name="nativeMessage">segrt's message for the failure.</param>
        public SegrtException(Status status, string nativeMessage)
            : base(StatusName(status) + ": " + nativeMessage)
        {
            Status = status;
            NativeMessage = nativeMessage;
        }

        /// <summary>Restores a serialized exception, with its <see cref="Status"/> and <see cref="NativeMessage"/>.</summary>
        /// <param name="info">The serialized data.</param>
        /// <param name="context">The source of the data.</param>
        /// <exception cref="ArgumentNullException"><paramref name="info"/> is null.</exception>
        protected SegrtException(SerializationInfo info, StreamingContext context)
            : base(info, context)
        {
            Status = (Status)info.GetInt32(StatusKey);
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

        /// <summary>The C name of a status ("SEG_MODEL_NOT_FOUND"), as segrt's own messages and logs say it.</summary>
        static string StatusName(Status status)
        {
            return Enum.IsDefined(typeof(Status), status) ? "SEG_" + ToUpperSnake(status.ToString()) : "status " + (int)status;
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
