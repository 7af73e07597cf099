using System;
using System.Collections.Generic;
using System.Drawing;
using System.Text;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Regions, outlines and COCO RLE of masks: any mask segrt returned (UNet, SAM2, tracking, segment-everything's
    /// labels; see also the <c>Regions()</c> and <c>Contours()</c> methods on those results) or a host's own. Pure
    /// functions: any thread, no handle to dispose.
    /// </summary>
    public static unsafe class Regions
    {
        /// <summary>The regions of an 8-bit mask: every non-zero pixel foreground (or each value a label, <see cref="RegionOptions.Labels"/>).</summary>
        /// <param name="mask">Row-major mask bytes, at least <paramref name="stride"/> x (height - 1) + width.</param>
        /// <param name="width">Mask width in pixels.</param>
        /// <param name="height">Mask height in pixels.</param>
        /// <param name="options">null for the defaults.</param>
        /// <param name="stride">Bytes per row; 0 = width.</param>
        /// <returns>The regions, by label, then by first pixel in raster order.</returns>
        /// <exception cref="ArgumentNullException"><paramref name="mask"/> is null.</exception>
        /// <exception cref="ArgumentException">The array is too small for the sizes.</exception>
        /// <exception cref="SegrtException">segrt refused the sizes or the options (a negative or NaN tolerance: <see cref="Status.InvalidArgument"/>).</exception>
        public static IList<MaskRegion> Find(byte[] mask, int width, int height, RegionOptions options = null, int stride = 0)
        {
            CheckBuffer(mask, width, height, stride, nameof(mask));
            fixed (byte* p = mask)
            {
                var m = new SegMask { data = p, width = width, height = height, stride = stride };
                return Call(&m, null, options, false);
            }
        }

        /// <summary>The regions of a 16-bit label image (segment-everything's labels): each non-zero value a label.</summary>
        /// <param name="labels">Row-major labels.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The regions, by label, then by first pixel in raster order.</returns>
        public static IList<MaskRegion> Find(ushort[] labels, int width, int height, RegionOptions options = null)
        {
            CheckBuffer(labels, width, height, 0, nameof(labels));
            fixed (ushort* p = labels)
            {
                var l = new SegLabelImage { data = p, width = width, height = height, stride = 0 };
                return Call(null, &l, options, true);
            }
        }

        /// <summary>The outlines of a mask: every region's outer outline, then its holes.</summary>
        /// <param name="mask">Row-major mask bytes (every non-zero pixel foreground).</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="tolerance">Simplification in pixels (0: every border pixel).</param>
        /// <returns>The outlines.</returns>
        public static IList<Contour> Contours(byte[] mask, int width, int height, double tolerance = 0)
        {
            return ContoursOf(Find(mask, width, height, new RegionOptions { Tolerance = tolerance }));
        }

        /// <summary>The outlines of regions found before.</summary>
        /// <param name="regions">Regions from <see cref="Find(byte[], int, int, RegionOptions, int)"/>.</param>
        /// <returns>Each region's outer outline, then its holes.</returns>
        public static IList<Contour> ContoursOf(IList<MaskRegion> regions)
        {
            if (regions == null) throw new ArgumentNullException(nameof(regions));
            var list = new List<Contour>();
            for (int i = 0; i < regions.Count; i++)
            {
                MaskRegion r = regions[i];
                if (r.Outer.Length > 0) list.Add(new Contour { Points = r.Outer, IsHole = false, Label = r.Label, MaskRegion = i });
                foreach (Point[] h in r.Holes) list.Add(new Contour { Points = h, IsHole = true, Label = r.Label, MaskRegion = i });
            }
            return list;
        }

        /// <summary>COCO's RLE of a mask (pycocotools' compressed string, a COCO file's "counts"; "size" is [height, width]).</summary>
        /// <param name="mask">Row-major mask bytes.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="label">0: every non-zero pixel; else the pixels equal to it.</param>
        /// <returns>The compressed counts.</returns>
        public static string Rle(byte[] mask, int width, int height, int label = 0)
        {
            CheckBuffer(mask, width, height, 0, nameof(mask));
            fixed (byte* p = mask)
            {
                var m = new SegMask { data = p, width = width, height = height, stride = 0 };
                return RleOf(&m, null, label);
            }
        }

        /// <summary>COCO's RLE of one label of a 16-bit label image.</summary>
        /// <param name="labels">Row-major labels.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="label">The label (1..65535).</param>
        /// <returns>The compressed counts.</returns>
        public static string Rle(ushort[] labels, int width, int height, int label)
        {
            CheckBuffer(labels, width, height, 0, nameof(labels));
            fixed (ushort* p = labels)
            {
                var l = new SegLabelImage { data = p, width = width, height = height, stride = 0 };
                return RleOf(null, &l, label);
            }
        }

        /// <summary>A COCO RLE string as a mask: <paramref name="value"/> on its foreground, 0 elsewhere.</summary>
        /// <param name="rle">The compressed counts.</param>
        /// <param name="width">Width (COCO's size[1]).</param>
        /// <param name="height">Height (COCO's size[0]).</param>
        /// <param name="value">The foreground value.</param>
        /// <returns>A new Width x Height mask.</returns>
        public static byte[] RleToMask(string rle, int width, int height, byte value = 255)
        {
            if (rle == null) throw new ArgumentNullException(nameof(rle));
            if (width <= 0 || height <= 0) throw new ArgumentOutOfRangeException(nameof(width), "both sides must be positive");
            Interop.EnsureLoaded();
            var mask = new byte[(long)width * height];
            byte[] text = Interop.Utf8z(rle);
            fixed (byte* m = mask)
            fixed (byte* t = text)
            {
                var d = new SegMask { data = m, width = width, height = height, stride = 0 };
                Interop.Check(NativeMethods.seg_rle_to_mask(t, &d, value));
            }
            return mask;
        }

        static void CheckBuffer(Array data, int width, int height, int stride, string name)
        {
            if (data == null) throw new ArgumentNullException(name);
            if (width > 0 && height > 0 && stride >= 0)
            {
                long rowStep = stride == 0 ? width : stride;
                if (data.LongLength < rowStep * (height - 1) + width)
                    throw new ArgumentException(name + " holds " + data.LongLength + " values, a " + width + "x" + height + " mask with stride " + stride + " needs more", name);
            }
            // Other sizes go to segrt, which refuses them with its message.
        }

        static string RleOf(SegMask* m, SegLabelImage* l, int label)
        {
            if (label < 0) throw new ArgumentOutOfRangeException(nameof(label), "labels are 0..65535");
            Interop.EnsureLoaded();
            UIntPtr need;
            Interop.Check(NativeMethods.seg_mask_rle(m, l, (uint)label, null, UIntPtr.Zero, &need));
            var text = new byte[(int)need];
            fixed (byte* t = text)
                Interop.Check(NativeMethods.seg_mask_rle(m, l, (uint)label, t, need, null));
            return Encoding.ASCII.GetString(text, 0, text.Length - 1);
        }

        /// The C options of a call (labels: the input is a label image, read by label).
        static SegRegionOptions NativeOptions(RegionOptions options, bool labels)
        {
            Interop.EnsureLoaded();
            options = options ?? new RegionOptions();
            var o = new SegRegionOptions { struct_size = (uint)sizeof(SegRegionOptions) };
            Interop.Check(NativeMethods.seg_region_options_default(&o));
            o.connectivity = (int)options.Connectivity;
            o.labels = (labels || options.Labels) ? 1 : 0;
            o.outlines = options.Outlines ? 1 : 0;
            o.hull = options.Hull ? 1 : 0;
            o.tolerance = options.Tolerance;
            o.min_area = (ulong)Math.Max(0, options.MinArea);
            o.min_hole_area = (ulong)Math.Max(0, options.MinHoleArea);
            return o;
        }

        static IList<MaskRegion> Call(SegMask* m, SegLabelImage* l, RegionOptions options, bool labels)
        {
            SegRegionOptions o = NativeOptions(options, labels);
            UIntPtr nr, nk, np;
            UIntPtr rs = (UIntPtr)sizeof(SegRegion), ks = (UIntPtr)sizeof(SegRing);
            Interop.Check(NativeMethods.seg_mask_regions(m, l, &o, null, rs, UIntPtr.Zero, &nr, null, ks, UIntPtr.Zero, &nk, null, UIntPtr.Zero, &np));
            var records = new SegRegion[(int)nr];
            var rings = new SegRing[(int)nk];
            var points = new SegContourPoint[(long)np];
            // The same call with the arrays: segrt kept this thread's result, so it is not computed again.
            fixed (SegRegion* pr = records)
            fixed (SegRing* pk = rings)
            fixed (SegContourPoint* pp = points)
                Interop.Check(NativeMethods.seg_mask_regions(m, l, &o, records.Length > 0 ? pr : null, rs, nr, null,
                    rings.Length > 0 ? pk : null, ks, nk, null, points.Length > 0 ? pp : null, np, null));
            var list = new List<MaskRegion>(records.Length);
            for (int i = 0; i < records.Length; i++) list.Add(ToRegion(ref records[i]));
            foreach (SegRing ring in rings)
            {
                var pts = new Point[ring.point_count];
                for (long k = 0; k < ring.point_count; k++)
                {
                    SegContourPoint c = points[(long)ring.first_point + k];
                    pts[k] = new Point(c.x, c.y);
                }
                MaskRegion r = list[(int)ring.region];
                if (ring.kind == 0) r.Outer = pts;
                else if (ring.kind == 1) r.Holes.Add(pts);
                else r.Hull = pts;
            }
            return list;
        }

        // A SegRegion's or SegObjectFigures' rotated box: centre, sides, angle and the corners as (x, y) x 4.
        static RotatedBox BoxOf(double cx, double cy, double width, double height, double angle, double* corners)
        {
            var points = new PointF[4];
            for (int i = 0; i < 4; i++) points[i] = new PointF((float)corners[2 * i], (float)corners[2 * i + 1]);
            return new RotatedBox(new PointF((float)cx, (float)cy), width, height, angle, points);
        }

        static MaskRegion ToRegion(ref SegRegion s)
        {
            RotatedBox box;
            fixed (double* corners = s.box_corners)
                box = BoxOf(s.box_cx, s.box_cy, s.box_width, s.box_height, s.box_angle, corners);
            return new MaskRegion
            {
                Label = (int)s.label,
                Area = (long)s.area,
                Bounds = new Rectangle(s.x, s.y, s.width, s.height),
                Centroid = new PointF((float)s.centroid_x, (float)s.centroid_y),
                Orientation = s.orientation,
                Perimeter = s.perimeter,
                CentralMoments = new[] { s.mu20, s.mu11, s.mu02, s.mu30, s.mu21, s.mu12, s.mu03 },
                RotatedBox = box,
                HoleCount = (int)s.hole_count,
                HoleArea = (long)s.hole_area,
                Outer = new Point[0],
                Holes = new List<Point[]>(),
                Hull = new Point[0],
            };
        }

        /// <summary>The figures of each object of an 8-bit mask, its parts together: one for the whole mask (label 1), or one per value with <see cref="RegionOptions.Labels"/>.</summary>
        /// <param name="mask">Row-major mask bytes.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="options">null for the defaults (connectivity and minimum areas decide the parts and holes).</param>
        /// <param name="stride">Bytes per row; 0 = width.</param>
        /// <returns>The objects by label (none for an empty mask).</returns>
        public static IList<ObjectFigures> Objects(byte[] mask, int width, int height, RegionOptions options = null, int stride = 0)
        {
            CheckBuffer(mask, width, height, stride, nameof(mask));
            fixed (byte* p = mask)
            {
                var m = new SegMask { data = p, width = width, height = height, stride = stride };
                return CallObjects(&m, null, options, false);
            }
        }

        /// <summary>The figures of each label of a 16-bit label image (segment-everything's: object k is label k), its parts together.</summary>
        /// <param name="labels">Row-major labels.</param>
        /// <param name="width">Width in pixels.</param>
        /// <param name="height">Height in pixels.</param>
        /// <param name="options">null for the defaults.</param>
        /// <returns>The objects by label.</returns>
        public static IList<ObjectFigures> Objects(ushort[] labels, int width, int height, RegionOptions options = null)
        {
            CheckBuffer(labels, width, height, 0, nameof(labels));
            fixed (ushort* p = labels)
            {
                var l = new SegLabelImage { data = p, width = width, height = height, stride = 0 };
                return CallObjects(null, &l, options, true);
            }
        }

        static IList<ObjectFigures> CallObjects(SegMask* m, SegLabelImage* l, RegionOptions options, bool labels)
        {
            SegRegionOptions o = NativeOptions(options, labels);
            UIntPtr n, size = (UIntPtr)sizeof(SegObjectFigures);
            Interop.Check(NativeMethods.seg_mask_objects(m, l, &o, null, size, UIntPtr.Zero, &n));
            var records = new SegObjectFigures[(int)n];
            fixed (SegObjectFigures* p = records)
                Interop.Check(NativeMethods.seg_mask_objects(m, l, &o, records.Length > 0 ? p : null, size, n, null));
            var list = new List<ObjectFigures>(records.Length);
            for (int k = 0; k < records.Length; k++)
            {
                SegObjectFigures s = records[k];
                list.Add(new ObjectFigures
                {
                    Label = (int)s.label,
                    Parts = (int)s.parts,
                    Area = (long)s.area,
                    Bounds = new Rectangle(s.x, s.y, s.width, s.height),
                    Centroid = new PointF((float)s.centroid_x, (float)s.centroid_y),
                    Orientation = s.orientation,
                    Perimeter = s.perimeter,
                    CentralMoments = new[] { s.mu20, s.mu11, s.mu02, s.mu30, s.mu21, s.mu12, s.mu03 },
                    RotatedBox = BoxOf(s.box_cx, s.box_cy, s.box_width, s.box_height, s.box_angle, s.box_corners),
                    HoleCount = (int)s.hole_count,
                    HoleArea = (long)s.hole_area,
                });
            }
            return list;
        }
    }
}
