using System;
using System.Collections.Generic;
using System.Drawing;
using Segrt.Native;

namespace Segrt
{
    /// <summary>Clicks and boxes as the C ABI takes them (label 1 = foreground, 0 = background; box corners).</summary>
    internal static class NativePrompts
    {
        /// <summary>The points, in an array of at least one element so that it can always be pinned.</summary>
        internal static SegPoint[] Points(IList<Sam2Point> points)
        {
            int n = points == null ? 0 : points.Count;
            var native = new SegPoint[Math.Max(n, 1)];
            for (int i = 0; i < n; i++)
            {
                native[i].x = points[i].X;
                native[i].y = points[i].Y;
                native[i].label = points[i].Foreground ? 1 : 0;
            }
            return native;
        }

        internal static SegBox Box(RectangleF? box)
        {
            SegBox native = default(SegBox);
            if (box.HasValue)
            {
                native.x1 = box.Value.Left;
                native.y1 = box.Value.Top;
                native.x2 = box.Value.Right;
                native.y2 = box.Value.Bottom;
            }
            return native;
        }
    }
}
