using System.Drawing;

namespace Segrt
{
    /// <summary>One closed outline of a mask: a region's outer outline or one of its holes.</summary>
    public sealed class Contour
    {
        /// <summary>The points, pixel centres; the last joins the first.</summary>
        public Point[] Points { get; internal set; }

        /// <summary>True for a hole's outline.</summary>
        public bool IsHole { get; internal set; }

        /// <summary>The label of its region (1 in a binary mask).</summary>
        public int Label { get; internal set; }

        /// <summary>The index of its region in the list <see cref="Regions"/> returns.</summary>
        public int MaskRegion { get; internal set; }
    }
}
