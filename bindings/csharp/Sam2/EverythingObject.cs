using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>One object found by <see cref="Sam2Segmenter.SegmentEverything"/>.</summary>
    public struct EverythingObject
    {
        /// <summary>Its value in <see cref="EverythingResult.Labels"/>: 1, 2, ... by predicted IoU, best first.</summary>
        public int Id;

        /// <summary>Box around the full mask (inclusive pixel indices as Left/Top and Right-1/Bottom-1: a Rectangle).</summary>
        public Rectangle Bounds;

        /// <summary>Pixels of the full mask (also those painted over by smaller objects in the label image).</summary>
        public long Area;

        /// <summary>The decoder's predicted IoU of the mask.</summary>
        public float PredictedIou;

        /// <summary>The mask's stability score.</summary>
        public float StabilityScore;

        /// <summary>The prompt point that gave the mask, in image pixels.</summary>
        public PointF Point;
    }
}
