using System;

namespace Segrt
{
    /// <summary>One diagnostics message from segrt (<see cref="SegrtLibrary.Log"/>).</summary>
    public sealed class LogEventArgs : EventArgs
    {
        internal LogEventArgs(LogLevel level, string message)
        {
            Level = level;
            Message = message;
        }

        /// <summary>The message's severity.</summary>
        public LogLevel Level { get; }

        /// <summary>segrt's text.</summary>
        public string Message { get; }
    }
}
