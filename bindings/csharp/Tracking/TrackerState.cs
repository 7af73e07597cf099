using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>What a track holds (the C header's <c>SegTrackState</c>), read when asked.</summary>
    public struct TrackerState
    {
        /// <summary>Objects prompted so far.</summary>
        public int Objects;

        /// <summary>Frames added so far (the next frame gets this index).</summary>
        public long Frames;

        /// <summary>Frame width in pixels (0 before the first frame).</summary>
        public int Width;

        /// <summary>Frame height in pixels (0 before the first frame).</summary>
        public int Height;

        /// <summary>Frames whose encoder outputs are held (bounded by <see cref="KeepFrames"/>).</summary>
        public int HeldFrames;

        /// <summary>Per-frame object outputs held in the memory bank (bounded by <see cref="KeepFrames"/>).</summary>
        public int HeldOutputs;

        /// <summary>The <see cref="TrackerOptions.NumFrames"/> the track was created with.</summary>
        public int NumFrames;

        /// <summary>The <see cref="TrackerOptions.KeepFrames"/> the track was created with.</summary>
        public int KeepFrames;

        /// <summary>True once a frame was tracked: new objects can no longer be added (<see cref="Sam2Tracker.Reset"/> for that).</summary>
        public bool TrackingStarted;
    }
}
