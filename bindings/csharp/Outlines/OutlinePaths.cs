using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Drawing2D;

namespace Segrt
{
    /// <summary>
    /// Outlines as GDI+ paths for WinForms: <c>e.Graphics.DrawPath(pen, path)</c> draws them, <c>FillPath</c> fills
    /// the regions with their holes left open (alternate fill). Points are pixel centres: add 0.5 to each coordinate
    /// (<paramref name="pixelCentres"/>) where a pixel covers the unit square from its coordinates (WPF, GDI+ with
    /// <c>PixelOffsetMode.Half</c>); leave them (false) to draw into the bitmap itself with GDI+'s default
    /// PixelOffsetMode, where pixel centres are the integer coordinates (the outline then lands on the border pixels).
    /// WPF: see the book's Outlines page for a PathGeometry built the same way.
    /// </summary>
    public static class OutlinePaths
    {
        /// <summary>A region's outer outline and holes as one closed-figure path (the caller disposes it).</summary>
        /// <param name="region">A region from <see cref="Regions.Find(byte[], int, int, RegionOptions, int)"/>.</param>
        /// <param name="pixelCentres">Shift every point by half a pixel, onto the pixel's centre.</param>
        /// <returns>A new GraphicsPath with FillMode.Alternate.</returns>
        public static GraphicsPath ToGraphicsPath(MaskRegion region, bool pixelCentres = true)
        {
            if (region == null) throw new ArgumentNullException(nameof(region));
            return ToGraphicsPath(new[] { region }, pixelCentres);
        }

        /// <summary>Every region's outlines in one path (the caller disposes it).</summary>
        /// <param name="regions">Regions.</param>
        /// <param name="pixelCentres">Shift every point by half a pixel, onto the pixel's centre.</param>
        /// <returns>A new GraphicsPath with FillMode.Alternate.</returns>
        public static GraphicsPath ToGraphicsPath(IEnumerable<MaskRegion> regions, bool pixelCentres = true)
        {
            if (regions == null) throw new ArgumentNullException(nameof(regions));
            var path = new GraphicsPath(FillMode.Alternate);
            float d = pixelCentres ? 0.5f : 0f;
            foreach (MaskRegion r in regions)
            {
                AddRing(path, r.Outer, d);
                foreach (Point[] h in r.Holes) AddRing(path, h, d);
            }
            return path;
        }

        static void AddRing(GraphicsPath path, Point[] ring, float d)
        {
            if (ring == null || ring.Length == 0) return;
            var pts = new PointF[ring.Length];
            for (int i = 0; i < ring.Length; i++) pts[i] = new PointF(ring[i].X + d, ring[i].Y + d);
            if (pts.Length <= 2)
            {
                // A region of one or two pixels: a pixel-sized square per pixel, so that it can be seen, hit and
                // filled (GDI+ takes no polygon of fewer than 3 points: InvalidParameter).
                foreach (PointF p in pts) path.AddRectangle(new RectangleF(p.X - 0.5f, p.Y - 0.5f, 1f, 1f));
                return;
            }
            path.AddPolygon(pts);
        }
    }
}
