using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;

namespace Segrt
{
    /// <summary>Every object of an image: a label image and one record per object.</summary>
    public sealed class EverythingResult
    {
        /// <summary>Width of the image and of <see cref="Labels"/>.</summary>
        public int Width { get; internal set; }

        /// <summary>Height of the image and of <see cref="Labels"/>.</summary>
        public int Height { get; internal set; }

        /// <summary>
        /// Row-major Width x Height labels: 0 = background, object k = k. Larger objects are painted first, so a
        /// smaller object lying on a larger one stays visible. At most 65535 objects (the best by predicted IoU).
        /// </summary>
        public ushort[] Labels { get; internal set; }

        /// <summary>The objects, best predicted IoU first (Objects[k - 1].Id == k).</summary>
        public IList<EverythingObject> Objects { get; internal set; }

        /// <summary>Prompts decoded (PointsPerSide²).</summary>
        public int Prompts { get; internal set; }

        /// <summary>Decoder runs: Prompts for decoders without a prompt batch axis, fewer for batched ones.</summary>
        public int DecoderRuns { get; internal set; }

        /// <summary>True when the cached image embedding was used (no encoder run).</summary>
        public bool EncoderReused { get; internal set; }

        /// <summary>Encoder time in milliseconds (0 when the cached embedding was used).</summary>
        public double EncoderMs { get; internal set; }

        /// <summary>Decoder time in milliseconds, all prompts together.</summary>
        public double DecoderMs { get; internal set; }

        /// <summary>Filters, NMS and masks in milliseconds.</summary>
        public double PostprocessMs { get; internal set; }

        /// <summary>The image with each object in its own colour (the caller disposes it).</summary>
        /// <param name="image">The picture segmented (same size).</param>
        /// <returns>A new 24bpp Bitmap.</returns>
        public Bitmap ToOverlay(Bitmap image)
        {
            if (image == null) throw new ArgumentNullException(nameof(image));
            if (image.Width != Width || image.Height != Height) throw new ArgumentException("the image is not the segmented one's size", nameof(image));
            var bmp = new Bitmap(Width, Height, PixelFormat.Format24bppRgb);
            using (var g = Graphics.FromImage(bmp))
                g.DrawImage(image, 0, 0, Width, Height);
            var data = bmp.LockBits(new Rectangle(0, 0, Width, Height), ImageLockMode.ReadWrite, PixelFormat.Format24bppRgb);
            try
            {
                var row = new byte[data.Stride];
                for (int y = 0; y < Height; y++)
                {
                    IntPtr p = data.Scan0 + y * data.Stride;
                    System.Runtime.InteropServices.Marshal.Copy(p, row, 0, data.Stride);
                    for (int x = 0; x < Width; x++)
                    {
                        int l = Labels[y * Width + x];
                        if (l == 0) continue;
                        Color c = ColorOf(l);
                        row[3 * x] = (byte)((row[3 * x] + c.B) / 2);
                        row[3 * x + 1] = (byte)((row[3 * x + 1] + c.G) / 2);
                        row[3 * x + 2] = (byte)((row[3 * x + 2] + c.R) / 2);
                    }
                    System.Runtime.InteropServices.Marshal.Copy(row, 0, p, data.Stride);
                }
            }
            finally
            {
                bmp.UnlockBits(data);
            }
            return bmp;
        }

        /// <summary>The colour <see cref="ToOverlay"/> gives object <paramref name="id"/> (hues a golden-ratio step apart).</summary>
        /// <param name="id">An object id.</param>
        /// <returns>A saturated colour.</returns>
        public static Color ColorOf(int id)
        {
            double hue = (id * 0.618034) % 1.0 * 6.0;
            double x = 1.0 - Math.Abs(hue % 2.0 - 1.0);
            double r, g, b;
            switch ((int)hue)
            {
                case 0: r = 1; g = x; b = 0; break;
                case 1: r = x; g = 1; b = 0; break;
                case 2: r = 0; g = 1; b = x; break;
                case 3: r = 0; g = x; b = 1; break;
                case 4: r = x; g = 0; b = 1; break;
                default: r = 1; g = 0; b = x; break;
            }
            return Color.FromArgb((int)(r * 255), (int)(g * 255), (int)(b * 255));
        }
    }
}
