using System.Drawing;

namespace Segrt
{
    /// <summary>
    /// One object's figures, all its parts together (<see cref="Regions.Objects(byte[], int, int, RegionOptions, int)"/>):
    /// a segment-everything object's (by id), a class's, a tracked object's or a prompt's mask's. Angles in degrees,
    /// counter-clockwise from the x axis as seen on screen, as <see cref="MaskRegion"/>'s.
    /// </summary>
    public sealed class ObjectFigures
    {
        /// <summary>Its value in a label image (a segment-everything object's id); 1 for a mask.</summary>
        public int Label { get; internal set; }

        /// <summary>The connected regions it has.</summary>
        public int Parts { get; internal set; }

        /// <summary>Pixels of all its parts.</summary>
        public long Area { get; internal set; }

        /// <summary>The axis-aligned box around all its parts.</summary>
        public Rectangle Bounds { get; internal set; }

        /// <summary>The mean pixel position.</summary>
        public PointF Centroid { get; internal set; }

        /// <summary>The major axis' angle (from the central moments), in (-90, 90].</summary>
        public double Orientation { get; internal set; }

        /// <summary>The parts' outer outlines' lengths added up.</summary>
        public double Perimeter { get; internal set; }

        /// <summary>Central moments mu20, mu11, mu02, mu30, mu21, mu12, mu03 of all its pixels.</summary>
        public double[] CentralMoments { get; internal set; }

        /// <summary>The smallest rotated rectangle around all its pixels.</summary>
        public RotatedBox RotatedBox { get; internal set; }

        /// <summary>Holes in all its parts.</summary>
        public int HoleCount { get; internal set; }

        /// <summary>Pixels of those holes.</summary>
        public long HoleArea { get; internal set; }
    }
}
