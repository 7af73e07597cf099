// A program as a segrt user writes it: only the public API of Segrt.Net.dll, compiled WITHOUT
// AllowUnsafeBlocks / -unsafe (the wrapper keeps its unsafe code internal). tests/csharp/run.sh builds it
// against the wrapper project's output and, as a NuGet consumer, against the Segrt.Net package.
// Usage: Consumer.exe <image.png> <ground-truth.png> <model.onnx>; exit 0 when the mask matches (IoU >= 0.9).
using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static class Program
{
    static int Main(string[] args)
    {
        try
        {
            using (var unet = new UnetSegmenter(args[2], new SegmenterOptions { IntraThreads = 1 }))
            using (var image = new Bitmap(args[0]))
            using (var truth = new Bitmap(args[1]))
            {
                Console.WriteLine(SegrtLibrary.Version); // after the first segmenter: names the ONNX Runtime loaded
                UnetResult first = Task.Run(() => unet.Segment(image, false, CancellationToken.None)).Result;
                var mask = new byte[first.Width * first.Height];
                UnetResult again = unet.Segment(image, mask);
                byte[] gt = Gray(truth);
                long inter = 0, union = 0;
                for (int i = 0; i < mask.Length; i++)
                {
                    bool a = mask[i] != 0, b = gt[i] > 127;
                    if (a && b) inter++;
                    if (a || b) union++;
                }
                double iou = union == 0 ? 1 : (double)inter / union;
                Console.WriteLine(string.Format("provider {0} ({1}); {2}x{3}; IoU {4:F3}; session {5} MB; disposed {6}",
                    unet.ProviderInUse, unet.Provider, again.Width, again.Height, iou,
                    unet.SessionInfo.NativeBytes / 1048576, unet.IsDisposed));
                return iou >= 0.9 && first.ForegroundPixels == again.ForegroundPixels ? 0 : 1;
            }
        }
        catch (Exception e)
        {
            Console.Error.WriteLine(e);
            return 2;
        }
    }

    /// <summary>The green channel of a mask image, one byte per pixel.</summary>
    static byte[] Gray(Bitmap b)
    {
        using (var rgb = new Bitmap(b.Width, b.Height, PixelFormat.Format24bppRgb))
        {
            using (var g = Graphics.FromImage(rgb)) g.DrawImage(b, new Rectangle(0, 0, b.Width, b.Height));
            var data = rgb.LockBits(new Rectangle(0, 0, b.Width, b.Height), ImageLockMode.ReadOnly, PixelFormat.Format24bppRgb);
            var row = new byte[data.Stride];
            var gray = new byte[b.Width * b.Height];
            for (int y = 0; y < b.Height; y++)
            {
                Marshal.Copy(data.Scan0 + y * data.Stride, row, 0, row.Length);
                for (int x = 0; x < b.Width; x++) gray[y * b.Width + x] = row[3 * x + 1];
            }
            rgb.UnlockBits(data);
            return gray;
        }
    }
}
