using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>seg_session_info's text (sized by a first call without a buffer).</summary>
    internal static unsafe class SessionInfoReader
    {
        internal static string Read(SegSession* session)
        {
            UIntPtr needed;
            Interop.Check(NativeMethods.seg_session_info(session, null, UIntPtr.Zero, &needed));
            var buf = new byte[(int)needed];
            fixed (byte* p = buf)
            {
                Interop.Check(NativeMethods.seg_session_info(session, p, (UIntPtr)buf.Length, &needed));
                return Interop.FromUtf8z(p);
            }
        }
    }
}
