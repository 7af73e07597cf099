namespace Segrt
{
    /// <summary>What a track holds (the C header's <c>SegTrackState</c>), read when asked (<see cref="Sam2Tracker.State"/>).</summary>
    public readonly struct TrackerState
    {
        internal TrackerState(int objects, long frames, int width, int height, int heldFrames, int heldOutputs,
            int numFrames, int keepFrames, bool trackingStarted, bool volume, bool correctionsAsConditioning)
        {
            Objects = objects;
            Frames = frames;
            Width = width;
            Height = height;
            HeldFrames = heldFrames;
            HeldOutputs = heldOutputs;
            NumFrames = numFrames;
            KeepFrames = keepFrames;
            TrackingStarted = trackingStarted;
            Volume = volume;
            CorrectionsAsConditioning = correctionsAsConditioning;
        }

        /// <summary>Objects prompted so far.</summary>
        public int Objects { get; }

        /// <summary>Frames added so far (the next frame gets this index).</summary>
        public long Frames { get; }

        /// <summary>Frame width in pixels (0 before the first frame).</summary>
        public int Width { get; }

        /// <summary>Frame height in pixels (0 before the first frame).</summary>
        public int Height { get; }

        /// <summary>Frames whose encoder outputs are held (bounded by <see cref="KeepFrames"/>).</summary>
        public int HeldFrames { get; }

        /// <summary>Per-frame object outputs held in the memory bank (bounded by <see cref="KeepFrames"/>).</summary>
        public int HeldOutputs { get; }

        /// <summary>The <see cref="TrackerOptions.NumFrames"/> the track was created with.</summary>
        public int NumFrames { get; }

        /// <summary>The <see cref="TrackerOptions.KeepFrames"/> the track was created with.</summary>
        public int KeepFrames { get; }

        /// <summary>True once a frame was tracked (objects can still be added, as in SAM2's predictor).</summary>
        public bool TrackingStarted { get; }

        /// <summary>The <see cref="TrackerOptions.Volume"/> the track was created with.</summary>
        public bool Volume { get; }

        /// <summary>The <see cref="TrackerOptions.CorrectionsAsConditioning"/> the track was created with.</summary>
        public bool CorrectionsAsConditioning { get; }
    }
}
