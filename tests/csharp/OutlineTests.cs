// Outlines, regions and RLE through the wrapper (Regions.Find, Regions.Rle, the Regions()/Contours() methods on
// mask results, OutlinePaths.ToGraphicsPath): OpenCV's chains for a ring with a hole, areas adding up to a UNet
// mask's foreground, segment-everything's objects by id, the GDI+ path leaving holes open, bad input.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Drawing2D;
using System.IO;
using System.Linq;
using Segrt;

static partial class SegrtTests
{
    static void RunOutlineTests()
    {
        Test("outlines: a ring with a hole gives OpenCV's chains, figures and RLE; a padded stride reads the same", OutlinesOfARing);
        Test("outlines: Regions() and Contours() on UNet and segment-everything results; the GDI+ path leaves holes open", OutlinesOnResults);
        Test("outlines: Figures of a many-prompts result's prompt i and of a tracked frame's object id are that mask's", FiguresOfPromptsAndTracks);
        Test("outlines: bad input is an ArgumentException or a SegrtException, nothing returned", OutlinesBadInput);
    }

    /// 10x8: a 6x4 ring around a 2x2 hole, and a dot at (9, 0) (cv2.findContours printed these chains).
    static byte[] RingMask()
    {
        var m = new byte[80];
        for (int y = 2; y < 6; y++)
            for (int x = 2; x < 8; x++)
                m[y * 10 + x] = (byte)((y >= 3 && y < 5 && x >= 4 && x < 6) ? 0 : 255);
        m[9] = 255;
        return m;
    }

    static void OutlinesOfARing()
    {
        byte[] m = RingMask();
        var rs = Regions.Find(m, 10, 8, new RegionOptions { Hull = true });
        Check(rs.Count == 2 && rs[0].Area == 1 && rs[0].Bounds == new Rectangle(9, 0, 1, 1), "the dot first (raster order)");
        var ring = rs[1];
        var outer = new[] { 2, 2, 2, 3, 2, 4, 2, 5, 3, 5, 4, 5, 5, 5, 6, 5, 7, 5, 7, 4, 7, 3, 7, 2, 6, 2, 5, 2, 4, 2, 3, 2 };
        var hole = new[] { 3, 3, 4, 2, 5, 2, 6, 3, 6, 4, 5, 5, 4, 5, 3, 4 };
        Check(ring.Outer.SelectMany(p => new[] { p.X, p.Y }).SequenceEqual(outer), "outer outline: OpenCV's chain");
        Check(ring.Holes.Count == 1 && ring.Holes[0].SelectMany(p => new[] { p.X, p.Y }).SequenceEqual(hole), "hole: OpenCV's chain");
        Check(ring.Area == 20 && ring.HoleCount == 1 && ring.HoleArea == 4 && ring.Centroid == new PointF(4.5f, 3.5f), "area, holes, centroid");
        Check(ring.CentralMoments[0] == 69 && ring.CentralMoments[1] == 0 && ring.CentralMoments[2] == 29, "mu20, mu11, mu02 as cv2.moments");
        Check(ring.RotatedBox.Width == 5 && ring.RotatedBox.Height == 3 && ring.RotatedBox.Corners.Length == 4, "rotated box 5 x 3");
        Check(ring.Hull.Length == 4, "hull: 4 corners");
        var contours = Regions.ContoursOf(rs);
        Check(contours.Count == 3 && contours.Count(c => c.IsHole) == 1 && contours.All(c => c.Label == 1), "contours: 2 outer, 1 hole");
        // The same mask in rows of 16 bytes (padding 0xEE, never read as pixels).
        var padded = Enumerable.Repeat((byte)0xEE, 16 * 8).ToArray();
        for (int y = 0; y < 8; y++) Array.Copy(m, y * 10, padded, y * 16, 10);
        var rp = Regions.Find(padded, 10, 8, new RegionOptions { Hull = true }, 16);
        Check(rp.Count == 2 && rp[1].Outer.SequenceEqual(ring.Outer) && rp[1].Area == 20, "a padded stride gives the same regions");
        // pycocotools.mask.encode of [[0,0,0,0],[1,0,0,0],[1,1,0,0]] printed b'122O4'.
        var small = new byte[] { 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0 };
        Check(Regions.Rle(small, 4, 3) == "122O4", "RLE as pycocotools: " + Regions.Rle(small, 4, 3));
        Check(Regions.RleToMask("122O4", 4, 3, 1).SequenceEqual(small), "RLE back to the mask");
        var simplified = Regions.Find(m, 10, 8, new RegionOptions { Tolerance = 1.0 });
        Check(simplified[1].Outer.Length < ring.Outer.Length && simplified[1].Outer.All(p => ring.Outer.Contains(p)), "simplified: fewer points, all on the outline");
    }

    static void OutlinesOnResults()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            var r = unet.Segment(bmp);
            var regions = r.Regions();
            Check(regions.Count > 0 && regions.Sum(x => x.Area) == r.ForegroundPixels, "UNet: the regions' areas add up to the foreground (" + regions.Count + " regions)");
            var contours = r.Contours(1.0);
            Check(contours.Count(c => !c.IsHole) == regions.Count, "UNet: one outer outline per region");
            var big = regions.OrderByDescending(x => x.Area).First();
            double iou;
            using (GraphicsPath path = OutlinePaths.ToGraphicsPath(regions))
            {
                bool[] filled = Filled(path, r.Width, r.Height);
                long both = 0, either = 0;
                for (int i = 0; i < filled.Length; i++)
                {
                    bool m = r.Mask[i] != 0;
                    if (m && filled[i]) both++;
                    if (m || filled[i]) either++;
                }
                iou = (double)both / either;
            }
            Check(iou > 0.97, "the path filled covers the mask: IoU " + iou);
            Console.WriteLine(string.Format("      UNet lesion_04: {0} regions, largest {1} px, perimeter {2:F1}, orientation {3:F1} deg; path filled vs mask IoU {4:F4}",
                regions.Count, big.Area, big.Perimeter, big.Orientation, iou));
        }
        // A ring's path: inside the ring filled, the hole open (alternate fill). (Mono's GraphicsPath.IsVisible
        // answers false for paths of several figures, so the path is filled onto a bitmap and read.)
        var square = new byte[30 * 30];
        for (int y = 3; y < 27; y++)
            for (int x = 3; x < 27; x++) square[y * 30 + x] = (byte)((x >= 10 && x < 20 && y >= 10 && y < 20) ? 0 : 255);
        var ring = Regions.Find(square, 30, 30)[0];
        using (GraphicsPath path = OutlinePaths.ToGraphicsPath(ring))
        {
            bool[] f = Filled(path, 30, 30);
            Check(f[6 * 30 + 6] && f[23 * 30 + 23] && !f[15 * 30 + 15] && !f[1 * 30 + 1] && !f[28 * 30 + 28], "ring filled, hole open");
        }
        // Regions of one and two pixels (a pair side by side, a diagonal pair, rings of 1 and 2 points): every one
        // gets a figure in the path, drawn over its pixels (GDI+ refuses polygons of fewer than 3 points).
        var specks = new byte[12 * 12];
        specks[1 * 12 + 1] = 255;
        specks[4 * 12 + 4] = specks[4 * 12 + 5] = 255;
        specks[8 * 12 + 8] = specks[9 * 12 + 9] = 255;
        var small = Regions.Find(specks, 12, 12);
        Check(small.Select(r => r.Outer.Length).SequenceEqual(new[] { 1, 2, 2 }), "specks: outlines of 1, 2 and 2 points");
        using (GraphicsPath path = OutlinePaths.ToGraphicsPath(small))
        {
            bool[] f = Filled(path, 12, 12);
            var want = new[] { 1 * 12 + 1, 4 * 12 + 4, 4 * 12 + 5, 8 * 12 + 8, 9 * 12 + 9 };
            // Each speck's pixels filled, nothing more than a pixel away from one (GDI+ may round a square's edge
            // onto the next pixel).
            for (int i = 0; i < f.Length; i++)
            {
                bool near = want.Any(k => Math.Abs(k % 12 - i % 12) <= 1 && Math.Abs(k / 12 - i / 12) <= 1);
                Check(want.Contains(i) ? f[i] : (!f[i] || near), "specks: pixel (" + i % 12 + ", " + i / 12 + ") " + (f[i] ? "filled" : "left out"));
            }
        }
        // The specks as one object: its three parts together.
        var speckObjects = Regions.Objects(specks, 12, 12);
        Check(speckObjects.Count == 1 && speckObjects[0].Parts == 3 && speckObjects[0].Area == 5 && speckObjects[0].Bounds == new Rectangle(1, 1, 9, 9),
            "specks as one object: 3 parts, 5 px, box (1,1) 9x9");
        Check(Math.Abs(speckObjects[0].Centroid.X - (1 + 4 + 5 + 8 + 9) / 5f) < 1e-4 && Math.Abs(speckObjects[0].Centroid.Y - (1 + 4 + 4 + 8 + 9) / 5f) < 1e-4,
            "specks as one object: the mean of its pixels");
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx")))
        using (var img = new Bitmap(1024, 1024, System.Drawing.Imaging.PixelFormat.Format24bppRgb))
        {
            var e = seg.SegmentEverything(img, new EverythingOptions { PointsPerSide = 4, StabilityScoreThreshold = 0.8f });
            var objs = e.Regions();
            Check(objs.Select(x => x.Label).SequenceEqual(e.Objects.Select(o => (int)o.Id)), "everything: one region per object, labelled by id, in id order");
            Check(objs.All(x => Math.Abs(x.Centroid.X - e.Objects[x.Label - 1].Point.X) <= 1.5 && x.HoleCount == 0), "everything: each disc's centroid at its prompt point");
            Check(e.Contours().Count == 16, "everything: 16 outlines");
            var figures = e.Figures();
            Check(figures.Select(f => f.Label).SequenceEqual(objs.Select(x => x.Label)) && figures.All(f => f.Parts == 1),
                "everything: one record of figures per object, by id, each disc one part");
            Check(figures.Zip(objs, (f, x) => f.Area == x.Area && f.Centroid == x.Centroid && f.RotatedBox.Width == x.RotatedBox.Width).All(ok => ok),
                "everything: a one-part object's figures are its region's");
        }
    }

    /// Pixels and box (x, y, width, height) of a 0/255 mask's non-zero pixels.
    static Tuple<long, Rectangle> AreaAndBox(byte[] mask, int w, int h)
    {
        long n = 0;
        int x0 = w, y0 = h, x1 = -1, y1 = -1;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (mask[y * w + x] != 0)
                {
                    n++;
                    x0 = Math.Min(x0, x); y0 = Math.Min(y0, y); x1 = Math.Max(x1, x); y1 = Math.Max(y1, y);
                }
        return Tuple.Create(n, n == 0 ? Rectangle.Empty : Rectangle.FromLTRB(x0, y0, x1 + 1, y1 + 1));
    }

    static void FiguresOfPromptsAndTracks()
    {
        // Many prompts on the geometric oracle: a disc at each click, so prompt i's figures sit at click i.
        string sam = Path.Combine(Repo, "models", "sam2");
        var clicks = new[] { new PointF(200, 200), new PointF(700, 300), new PointF(400, 800) };
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx")))
        using (var img = new Bitmap(1024, 1024, System.Drawing.Imaging.PixelFormat.Format24bppRgb))
        {
            var many = seg.SegmentPrompts(img, clicks.Select(c => Sam2Prompt.FromPoint(c.X, c.Y)).ToList());
            for (int i = 0; i < clicks.Length; i++)
            {
                var f = many.Figures(i);
                var truth = AreaAndBox(many.Masks[i], many.Width, many.Height);
                Check(f != null && f.Parts == 1 && f.Area == truth.Item1 && f.Bounds == truth.Item2,
                    "prompt " + i + ": one part, area " + (f == null ? -1 : f.Area) + " and box " + (f == null ? "" : f.Bounds.ToString()) + " of its mask (" + truth.Item1 + ", " + truth.Item2 + ")");
                Check(f != null && Math.Abs(f.Centroid.X - clicks[i].X) <= 1.5 && Math.Abs(f.Centroid.Y - clicks[i].Y) <= 1.5,
                    "prompt " + i + ": centroid at its click");
            }
        }
        // Tracking: two objects on the reference clip's first frame, each object's figures from its own mask and
        // equal to its native record (area, box).
        var frames = ClipFrames();
        try
        {
            using (var model = VideoModel())
            using (var t = model.CreateTracker())
            {
                Check(t.AddFrame(frames[0]) == 0, "first frame index");
                t.AddPoints(-1, 1, new Sam2Point(60, 100, true));
                var frame = t.AddPoints(-1, 2, new Sam2Point(250, 150, true));
                Check(frame.Objects.Count == 2, "two objects on the frame");
                var areas = new List<long>();
                foreach (int id in new[] { 1, 2 })
                {
                    var f = frame.Figures(id);
                    var truth = AreaAndBox(frame.MaskOf(id), frame.Width, frame.Height);
                    var record = frame.ObjectOf(id).Value;
                    Check(truth.Item1 > 0 && f != null, "object " + id + ": a mask and its figures");
                    Check(f.Area == truth.Item1 && f.Bounds == truth.Item2 && f.Area == record.Area && f.Bounds == record.Bounds,
                        "object " + id + ": area " + f.Area + ", box " + f.Bounds + " = its mask's (" + truth.Item1 + ", " + truth.Item2 + ") and its record's (" + record.Area + ", " + record.Bounds + ")");
                    areas.Add(f.Area);
                }
                Check(areas[0] != areas[1], "the two objects' masks differ in area (else the test could not tell them apart)");
                Throws<ArgumentException>(() => frame.Figures(99), "no object 99 on the frame");
            }
        }
        finally
        {
            foreach (var b in frames) b.Dispose();
        }
    }

    /// The pixels a path covers when filled at 1 pixel per unit.
    static bool[] Filled(GraphicsPath path, int w, int h)
    {
        using (var bmp = new Bitmap(w, h, System.Drawing.Imaging.PixelFormat.Format32bppArgb))
        {
            using (var g = Graphics.FromImage(bmp)) g.FillPath(Brushes.Black, path);
            var data = bmp.LockBits(new Rectangle(0, 0, w, h), System.Drawing.Imaging.ImageLockMode.ReadOnly, System.Drawing.Imaging.PixelFormat.Format32bppArgb);
            var bytes = new byte[data.Stride * h];
            System.Runtime.InteropServices.Marshal.Copy(data.Scan0, bytes, 0, bytes.Length);
            bmp.UnlockBits(data);
            var f = new bool[w * h];
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) f[y * w + x] = bytes[y * data.Stride + 4 * x + 3] > 127;
            return f;
        }
    }

    static void OutlinesBadInput()
    {
        byte[] m = RingMask();
        Throws<ArgumentNullException>(() => Regions.Find((byte[])null, 10, 8), "null mask");
        Throws<ArgumentException>(() => Regions.Find(m, 10, 9), "the array too small for 10x9");
        ThrowsSegrt(Status.InvalidArgument, () => Regions.Find(m, 10, 8, new RegionOptions { Tolerance = -1 }), "negative tolerance");
        ThrowsSegrt(Status.InvalidArgument, () => Regions.Find(m, 10, 8, new RegionOptions { Tolerance = double.NaN }), "NaN tolerance");
        ThrowsSegrt(Status.InvalidArgument, () => Regions.Find(m, 10, 8, new RegionOptions { Connectivity = (Connectivity)6 }), "connectivity 6");
        ThrowsSegrt(Status.InvalidArgument, () => Regions.Find(m, 10, 8, null, 9), "stride below the width");
        ThrowsSegrt(Status.InvalidArgument, () => Regions.RleToMask("12", 4, 3), "RLE counts that do not add up");
        var labels = new ushort[256 * 256];
        for (int i = 0; i < labels.Length; i++) labels[i] = (ushort)i;
        var all = Regions.Find(labels, 256, 256, new RegionOptions { Outlines = false });
        Check(all.Count == 65535 && all[65534].Label == 65535 && all.All(x => x.Area == 1), "65535 labels: 65535 one-pixel regions");
    }
}
