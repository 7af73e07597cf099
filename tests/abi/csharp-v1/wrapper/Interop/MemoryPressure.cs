using System;
using System.Threading;

namespace Segrt
{
    /// <summary>
    /// GC.AddMemoryPressure / RemoveMemoryPressure for native sessions, with a running total that tests
    /// (and a curious debugger) can read.
    /// </summary>
    internal static class MemoryPressure
    {
        static long s_outstanding;

        /// <summary>Bytes currently declared to the GC by live sessions of this process.</summary>
        internal static long Outstanding
        {
            get { return Interlocked.Read(ref s_outstanding); }
        }

        internal static void Add(long bytes)
        {
            GC.AddMemoryPressure(bytes);
            Interlocked.Add(ref s_outstanding, bytes);
        }

        internal static void Remove(long bytes)
        {
            GC.RemoveMemoryPressure(bytes);
            Interlocked.Add(ref s_outstanding, -bytes);
        }
    }
}
