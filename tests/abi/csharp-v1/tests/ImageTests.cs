// InputImage, the one image type every call takes: its layouts and sizes, three separate planes, the implicit
// Bitmap conversion, what a call leaves behind (an unlocked Bitmap); and Sam2Annotator, the stateful click API,
// keeping its state apart from other annotators on the same segmenter.
using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Linq;
using System.Runtime.InteropServices;
using Segrt;

static partial class SegrtTests
{
    static void RunImageTests()
    {
        Test("InputImage: layouts and sizes of Bitmaps and buffers; a Bitmap converts implicitly and is unlocked after the call", InputImageBasics);
        Test("InputImage.FromPlanes: three separate padded planes give the interleaved mask", InputImagePlanes);
        Test("two Sam2Annotators on one segmenter keep their own images, prompts and previous masks", AnnotatorsKeepTheirOwnState);
    }

    static void InputImageBasics()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp24 = Load(Model("samples/lesion_04.png")))
        using (var bmp32 = To(bmp24, PixelFormat.Format32bppArgb))
        using (var indexed = ColourIndexed(bmp24))
        {
            byte[] reference = unet.Segment(InputImage.FromPixels(PackedBytes(bmp24, 3), bmp24.Width, bmp24.Height, 0, PixelLayout.Bgr24)).Mask;
            InputImage implicitImage = bmp24;
            var explicitImage = InputImage.FromBitmap(bmp24);
            Check(implicitImage.Width == 333 && implicitImage.Height == 777 && implicitImage.Layout == PixelLayout.Bgr24, "24bpp: " + implicitImage.Layout);
            Check(explicitImage.Width == implicitImage.Width && explicitImage.Layout == implicitImage.Layout, "FromBitmap == the implicit conversion");
            Check(InputImage.FromBitmap(bmp32).Layout == PixelLayout.Bgra32, "32bpp read as Bgra32");
            Check(InputImage.FromBitmap(indexed).Layout == PixelLayout.Bgr24, "8bpp with a colour palette converted to 24bpp");
            using (var gray = GrayBitmap(new byte[16 * 8], 16, 8))
                Check(InputImage.FromBitmap(gray).Layout == PixelLayout.Gray8 && InputImage.FromBitmap(gray).Width == 16, "8bpp gray palette read as Gray8");
            InputImage none = (Bitmap)null;
            Check(none == null, "a null Bitmap converts to null");
            Throws<ArgumentNullException>(() => InputImage.FromBitmap(null), "FromBitmap(null)");

            Check(Same(unet.Segment(explicitImage).Mask, reference), "Segment(FromBitmap)");
            // The call unlocked the Bitmap again: it can be locked (and drawn on) as soon as the call returned.
            var data = bmp24.LockBits(new Rectangle(0, 0, bmp24.Width, bmp24.Height), ImageLockMode.ReadWrite, bmp24.PixelFormat);
            bmp24.UnlockBits(data);
            // A converted format: read as the 24bpp drawing of it.
            using (var drawn = To(indexed, PixelFormat.Format24bppRgb))
                Check(Same(unet.Segment(indexed).Mask, unet.Segment(drawn).Mask), "a colour-palette Bitmap is read as its 24bpp drawing");

            byte[] bgr = PackedBytes(bmp24, 3);
            var packed = InputImage.FromPixels(bgr, 333, 777, 0, PixelLayout.Bgr24);
            Check(packed.Width == 333 && packed.Height == 777 && packed.Layout == PixelLayout.Bgr24, "byte[] image size and layout");
            Check(Same(unet.Segment(packed).Mask, reference) && Same(unet.Segment(packed).Mask, reference), "one byte[] image read by two calls");
        }
    }

    /// <summary>An 8bpp indexed copy with GDI+'s default colour palette (index = the green channel's top bits): not gray, so the wrapper converts it.</summary>
    static Bitmap ColourIndexed(Bitmap source)
    {
        byte[] bgr = PackedBytes(source, 3);
        var bmp = new Bitmap(source.Width, source.Height, PixelFormat.Format8bppIndexed);
        var data = bmp.LockBits(new Rectangle(0, 0, bmp.Width, bmp.Height), ImageLockMode.WriteOnly, PixelFormat.Format8bppIndexed);
        var row = new byte[bmp.Width];
        for (int y = 0; y < bmp.Height; y++)
        {
            for (int x = 0; x < bmp.Width; x++) row[x] = (byte)(bgr[3 * (y * bmp.Width + x) + 1] >> 2);
            Marshal.Copy(row, 0, data.Scan0 + y * data.Stride, row.Length);
        }
        bmp.UnlockBits(data);
        return bmp;
    }

    static void InputImagePlanes()
    {
        using (var unet = new UnetSegmenter(Model("demo_unet.onnx")))
        using (var bmp = Load(Model("samples/lesion_04.png")))
        {
            int w = bmp.Width, h = bmp.Height, stride = w + 5;
            byte[] bgr = PackedBytes(bmp, 3);
            byte[] reference = unet.Segment(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24)).Mask;
            var planes = new IntPtr[3];
            try
            {
                for (int c = 0; c < 3; c++)
                {
                    planes[c] = Marshal.AllocHGlobal(stride * h);
                    var plane = new byte[stride * h];
                    for (int y = 0; y < h; y++)
                        for (int x = 0; x < w; x++)
                            plane[y * stride + x] = bgr[3 * (y * w + x) + 2 - c]; // R, G, B
                    Marshal.Copy(plane, 0, planes[c], plane.Length);
                }
                var image = InputImage.FromPlanes(planes[0], planes[1], planes[2], w, h, stride);
                Check(image.Layout == PixelLayout.PlanarRgb8 && image.Width == w, "planes: layout and size");
                Check(Same(unet.Segment(image).Mask, reference), "three planes == interleaved");
                // Swapped planes are a different picture: the planes are really read from where they were given.
                Check(!Same(unet.Segment(InputImage.FromPlanes(planes[2], planes[1], planes[0], w, h, stride)).Mask, reference), "B and R swapped differ");
                Throws<ArgumentNullException>(() => InputImage.FromPlanes(planes[0], IntPtr.Zero, planes[2], w, h, stride), "a missing plane");
                Throws<ArgumentException>(() => InputImage.FromPlanes(planes[0], planes[1], planes[2], w, h, -stride), "negative plane stride");
                Throws<ArgumentException>(() => InputImage.FromPlanes(planes[0], planes[1], planes[2], w, h, w - 1), "stride smaller than a row");
            }
            finally
            {
                foreach (var p in planes) if (p != IntPtr.Zero) Marshal.FreeHGlobal(p);
            }
        }
    }

    static void AnnotatorsKeepTheirOwnState()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var seg = new Sam2Segmenter(Path.Combine(sam, "sam2_tiny_samexporter_encoder.onnx"), Path.Combine(sam, "sam2_tiny_samexporter_decoder.onnx")))
        using (var img = Load(Path.Combine(sam, "reference", "img0.png")))
        {
            int w = img.Width, h = img.Height;
            byte[] bgr = PackedBytes(img, 3);
            var mirrored = new byte[bgr.Length];
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    Buffer.BlockCopy(bgr, (y * w + x) * 3, mirrored, (y * w + (w - 1 - x)) * 3, 3);
            Func<Sam2Annotator, byte[], Sam2Result[]> alone = (a, pixels) =>
            {
                a.SetImage(InputImage.FromPixels(pixels, w, h, 0, PixelLayout.Bgr24));
                return new[] { a.Click(105, 105), a.Click(130, 110), a.Click(240, 140, false) };
            };
            // Each annotator's clicks on its own, one after the other.
            var refined = seg.CreateAnnotator();
            refined.RefineWithPreviousMask = true;
            var plain = seg.CreateAnnotator();
            var refA = alone(refined, bgr);
            var refB = alone(plain, mirrored);
            Check(!Same(refA[2].Mask, refB[2].Mask), "the two pictures give different masks");

            // The same clicks interleaved: every result is the one it had alone.
            refined.SetImage(InputImage.FromPixels(bgr, w, h, 0, PixelLayout.Bgr24));
            plain.SetImage(InputImage.FromPixels(mirrored, w, h, 0, PixelLayout.Bgr24));
            var a0 = refined.Click(105, 105);
            var b0 = plain.Click(105, 105);
            var a1 = refined.Click(130, 110);
            plain.ClearPrompts();
            Check(refined.Points.Count == 2 && plain.Points.Count == 0, "prompts are each annotator's own");
            plain.Click(105, 105);
            var b1 = plain.Click(130, 110);
            var a2 = refined.Click(240, 140, false);
            var b2 = plain.Click(240, 140, false);
            Check(SameResult(a0, refA[0]) && SameResult(a1, refA[1]) && SameResult(a2, refA[2]), "the refining annotator's results are its results alone");
            Check(SameResult(b0, refB[0]) && SameResult(b1, refB[1]) && SameResult(b2, refB[2]), "the other annotator's results are its results alone");
            Check(!a1.EncoderReused && !b0.EncoderReused, "each click on the other picture re-encoded its own image");
            Check(refined.ImageSize == new Size(w, h) && plain.Segmenter == seg, "image size, segmenter");
            Console.WriteLine(string.Format("      interleaved clicks of two annotators on two pictures: 6 of 6 results as alone; areas {0} and {1} px",
                a2.ForegroundPixels, b2.ForegroundPixels));
        }
    }
}
