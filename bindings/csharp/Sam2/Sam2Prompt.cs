using System.Collections.Generic;
using System.Collections.ObjectModel;
using System.Drawing;

namespace Segrt
{
    /// <summary>
    /// One object's prompt for <see cref="Sam2Segmenter.SegmentPrompts"/>: clicks and/or a box, in image pixels
    /// (e.g. a detector's box). Immutable.
    /// </summary>
    public sealed class Sam2Prompt
    {
        /// <summary>Creates a prompt of clicks and an optional box; at least one of them must be given.</summary>
        /// <param name="points">Clicks in image pixels (copied); null or empty when a box is given.</param>
        /// <param name="box">Optional box in image pixels.</param>
        public Sam2Prompt(IEnumerable<Sam2Point> points, RectangleF? box = null)
        {
            Points = new ReadOnlyCollection<Sam2Point>(points == null ? new List<Sam2Point>() : new List<Sam2Point>(points));
            Box = box;
        }

        /// <summary>A prompt of one box.</summary>
        /// <param name="box">The box in image pixels.</param>
        /// <returns>The prompt.</returns>
        public static Sam2Prompt FromBox(RectangleF box)
        {
            return new Sam2Prompt(null, box);
        }

        /// <summary>A prompt of one click.</summary>
        /// <param name="x">Column in image pixels.</param>
        /// <param name="y">Row in image pixels.</param>
        /// <param name="foreground">True for "this object", false for "not this".</param>
        /// <returns>The prompt.</returns>
        public static Sam2Prompt FromPoint(float x, float y, bool foreground = true)
        {
            return new Sam2Prompt(new[] { new Sam2Point(x, y, foreground) });
        }

        /// <summary>The clicks (may be empty when <see cref="Box"/> is given).</summary>
        public IReadOnlyList<Sam2Point> Points { get; }

        /// <summary>The box, or null.</summary>
        public RectangleF? Box { get; }
    }
}
