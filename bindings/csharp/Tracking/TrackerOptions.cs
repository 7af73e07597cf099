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
        /// prompts and <see cref="Sam2Tracker.TrackFrame"/> reach only the frames still held. A <see cref="Volume"/>
        /// keeps the most recently used encodings instead and encodes any other slice again when it is needed.
        /// </summary>
        public int KeepFrames { get; set; } = 8;

        /// <summary>
        /// True: the track is a volume (or a video known in full): every frame's pixels are kept (8-bit RGB after the
        /// intensity stage: 0.75 MB per 512x512 slice), frames are encoded when first needed with the
        /// <see cref="KeepFrames"/> most recently used encodings cached, and every frame stays reachable both ways by
        /// <see cref="Sam2Tracker.Propagate(PropagationDirection, long?, long, System.Threading.CancellationToken, IProgress{SegrtProgress})"/>.
        /// False (the default): a streamed track, each frame encoded when added.
        /// </summary>
        public bool Volume { get; set; }

        /// <summary>
        /// True: a click on a frame already tracked makes it a conditioning frame, so a later propagation over it keeps
        /// the correction (SAM2's <c>add_all_frames_to_correct_as_cond</c>). False (the default, as SAM2's own
        /// configurations): the correction guides the frames tracked after it, and a propagation that passes over its
        /// frame computes that frame again.
        /// </summary>
        public bool CorrectionsAsConditioning { get; set; }

        internal unsafe SegTrackOptions ToNative()
        {
            if (NumFrames < 0 || KeepFrames < 0)
                throw new ArgumentOutOfRangeException(nameof(NumFrames) + "/" + nameof(KeepFrames), "NumFrames and KeepFrames must not be negative (0 = unknown / every frame)");
            var o = new SegTrackOptions { struct_size = (uint)sizeof(SegTrackOptions) };
            Interop.Check(NativeMethods.seg_track_options_default(&o));
            o.num_frames = (uint)NumFrames;
            o.keep_frames = (uint)KeepFrames;
            o.volume = Volume ? 1u : 0u;
            o.corrections_as_conditioning = CorrectionsAsConditioning ? 1u : 0u;
            return o;
        }
    }
}
