using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>One diagnostics message from segrt.</summary>
    public sealed class SegLogEventArgs : EventArgs
    {
        /// <summary>The message's severity.</summary>
        public LogLevel Level { get; private set; }

        /// <summary>segrt's text.</summary>
        public string Message { get; private set; }
        internal SegLogEventArgs(LogLevel level, string message) { Level = level; Message = message; }
    }
}
