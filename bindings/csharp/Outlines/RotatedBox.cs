using System.Drawing;

namespace Segrt
{
    /// <summary>
    /// The smallest rectangle, at any angle, around a region's pixel centres (OpenCV's minAreaRect). Width is the long
    /// side; Angle is its direction in degrees, counter-clockwise from the x axis as seen on screen, in (-90, 90].
    /// </summary>
    public struct RotatedBox
    {
        // Readonly fields behind get-only properties: Mono's compiler gives get-only auto-properties a setter.
        readonly PointF center;
        readonly double width, height, angle;
        readonly PointF[] corners;

        internal RotatedBox(PointF center, double width, double height, double angle, PointF[] corners)
        {
            this.center = center;
            this.width = width;
            this.height = height;
            this.angle = angle;
            this.corners = corners;
        }

        /// <summary>The centre.</summary>
        public PointF Center { get { return center; } }

        /// <summary>The long side's length in pixels.</summary>
        public double Width { get { return width; } }

        /// <summary>The short side's length in pixels.</summary>
        public double Height { get { return height; } }

        /// <summary>The long side's angle in degrees, counter-clockwise as seen on screen.</summary>
        public double Angle { get { return angle; } }

        /// <summary>The four corners around the box, the first the one with the smallest y.</summary>
        public PointF[] Corners { get { return corners; } }
    }
}
