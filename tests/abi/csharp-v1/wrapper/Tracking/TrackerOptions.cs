using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>Options of a <see cref="Sam2Tracker"/> (the C header's <c>SegTrackOptions</c>).</summary>
    public sealed class TrackerOptions
    {
        /// <summary>
        /// Frames the video has, when known (0 = unknown: streaming, the default). SAM2 scales the distance of
        /// object pointers by min(NumFrames, 16) - 1: give it for videos or volumes of fewer than 16 frames to
        /// match the official predictor exactly.
        /// </summary>
        public int NumFrames { get; set; }

        /// <summary>
        /// The encoder outputs of this many most recent frames are kept (0 = every frame, as the official
        /// predictor does: memory grows with the video). Default 8 (segrt's default): memory stays bounded;
        /// prompts and <see cref="Sam2Tracker.TrackFrame"/> reach only the frames still held.
        /// </summary>
        public int KeepFrames { get; set; } = 8;

        internal unsafe SegTrackOptions ToNative()
        {
            if (NumFrames < 0 || KeepFrames < 0)
                throw new ArgumentOutOfRangeException(nameof(NumFrames) + "/" + nameof(KeepFrames), "NumFrames and KeepFrames must not be negative (0 = unknown / every frame)");
            var o = new SegTrackOptions { struct_size = (uint)sizeof(SegTrackOptions) };
            Interop.Check(NativeMethods.seg_track_options_default(&o));
            o.num_frames = (uint)NumFrames;
            o.keep_frames = (uint)KeepFrames;
            return o;
        }
    }
}
