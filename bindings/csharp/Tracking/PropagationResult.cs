using System.Collections.Generic;

namespace Segrt
{
    /// <summary>What one <see cref="Sam2Tracker"/> propagation did: its frames (when collected), the last frame done and the call's
    /// summed times (<see cref="TrackTimings"/>, of the whole call).</summary>
    public sealed class PropagationResult : TrackTimings
    {
        /// <summary>Every frame in the order it was tracked (both ways: the start frame twice), one <see cref="TrackedFrame"/> each;
        /// empty when a per-frame delegate received them instead.</summary>
        public IList<TrackedFrame> Frames { get; internal set; }

        /// <summary>The number of frames tracked and delivered.</summary>
        public int FrameCount { get; internal set; }

        /// <summary>The last frame done (both ways: 0, unless a frame budget stopped the reverse pass earlier).</summary>
        public long LastFrame { get; internal set; }
    }
}
