using System.Collections.Generic;
using System.Drawing;

namespace Segrt
{
    /// <summary>
    /// One connected region of a mask and its figures. Outlines are closed chains of pixel centres (the last point
    /// joins the first), as OpenCV's findContours gives them: <see cref="Outer"/> counter-clockwise and each hole
    /// clockwise as seen on screen. Angles are in degrees, counter-clockwise from the x axis as seen on screen.
    /// </summary>
    public sealed class MaskRegion
    {
        /// <summary>Its value in a label image; 1 in a binary mask.</summary>
        public int Label { get; internal set; }

        /// <summary>Pixels (holes under <see cref="RegionOptions.MinHoleArea"/> counted in).</summary>
        public long Area { get; internal set; }

        /// <summary>The axis-aligned box.</summary>
        public Rectangle Bounds { get; internal set; }

        /// <summary>The mean pixel position.</summary>
        public PointF Centroid { get; internal set; }

        /// <summary>The major axis' angle (from the central moments), in (-90, 90]; 0 for a region without one.</summary>
        public double Orientation { get; internal set; }

        /// <summary>The outer outline's length in pixels (OpenCV's arcLength); 0 without outlines.</summary>
        public double Perimeter { get; internal set; }

        /// <summary>Central moments mu20, mu11, mu02, mu30, mu21, mu12, mu03 (OpenCV's, of the region's pixels).</summary>
        public double[] CentralMoments { get; internal set; }

        /// <summary>The smallest rotated rectangle around the region.</summary>
        public RotatedBox RotatedBox { get; internal set; }

        /// <summary>The number of holes kept.</summary>
        public int HoleCount { get; internal set; }

        /// <summary>Pixels of the holes kept.</summary>
        public long HoleArea { get; internal set; }

        /// <summary>The outer outline (empty without outlines).</summary>
        public Point[] Outer { get; internal set; }

        /// <summary>The holes' outlines.</summary>
        public IList<Point[]> Holes { get; internal set; }

        /// <summary>The convex hull's corners when asked for (<see cref="RegionOptions.Hull"/>), else empty.</summary>
        public Point[] Hull { get; internal set; }
    }
}
