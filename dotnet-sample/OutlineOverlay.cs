using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Drawing2D;
using System.Linq;
using Segrt;

namespace SegrtDemo
{
    /// <summary>
    /// The outlines of the mask shown, from segrt's Regions API: each region's outer outline and holes drawn as one
    /// GraphicsPath (OutlinePaths.ToGraphicsPath) over the composed picture, and its figures for the status bar.
    /// </summary>
    static class OutlineOverlay
    {
        /// <summary>The outline colour (the self-test looks for it on the outlines' points).</summary>
        internal static readonly Color OutlineColor = Color.FromArgb(0, 255, 255);

        /// <summary>The regions of a mask or label image (whichever is set); null when neither is.</summary>
        internal static IList<MaskRegion> Find(byte[] mask, ushort[] labels, int width, int height)
        {
            if (labels != null) return Regions.Find(labels, width, height);
            if (mask != null) return Regions.Find(mask, width, height);
            return null;
        }

        /// <summary>
        /// Draws every region's outline and holes, a pixel wide, into the picture: GDI+'s default PixelOffsetMode puts
        /// pixel centres on integer coordinates, so the points go as they are (pixelCentres: false) and the outline
        /// lands on the region's border pixels.
        /// </summary>
        internal static void Draw(Bitmap target, IList<MaskRegion> regions)
        {
            if (regions == null || regions.Count == 0) return;
            using (var g = Graphics.FromImage(target))
            using (GraphicsPath path = OutlinePaths.ToGraphicsPath(regions, pixelCentres: false))
            using (var pen = new Pen(OutlineColor, 1f))
            {
                g.SmoothingMode = SmoothingMode.None;
                g.DrawPath(pen, path);
            }
        }

        /// <summary>"3 parts, 1234 px, 1 hole (largest ...)": the area of the outlines, first in the status bar.</summary>
        internal static string Summary(IList<MaskRegion> regions)
        {
            if (regions == null || regions.Count == 0) return "no outline";
            MaskRegion largest = regions.OrderByDescending(r => r.Area).First();
            long area = regions.Sum(r => r.Area);
            int holes = regions.Sum(r => r.HoleCount);
            return string.Format("{0} part{1}, {2} px, {8} hole{9} (largest {3} px at ({4:F0}, {5:F0}), {6:F0}°, perimeter {7:F0} px)",
                regions.Count, regions.Count == 1 ? "" : "s", area, largest.Area, largest.Centroid.X, largest.Centroid.Y,
                largest.Orientation, largest.Perimeter, holes, holes == 1 ? "" : "s");
        }
    }
}
