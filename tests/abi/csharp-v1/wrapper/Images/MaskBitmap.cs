using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.Runtime.InteropServices;

namespace Segrt
{
    /// <summary>Turns masks into 8bpp gray Bitmaps.</summary>
    public static class MaskBitmap
    {
        /// <summary>An 8bpp indexed Bitmap with a gray palette (value v shows as gray level v).</summary>
        /// <param name="mask">Row-major mask bytes, at least width x height.</param>
        /// <param name="width">Mask width in pixels.</param>
        /// <param name="height">Mask height in pixels.</param>
        /// <returns>A new Bitmap (the caller disposes it).</returns>
        /// <exception cref="ArgumentNullException"><paramref name="mask"/> is null.</exception>
        /// <exception cref="ArgumentException">The size is not positive or the mask holds fewer than width x height bytes.</exception>
        public static Bitmap FromMask(byte[] mask, int width, int height)
        {
            if (mask == null) throw new ArgumentNullException(nameof(mask));
            if (width <= 0 || height <= 0 || mask.Length < (long)width * height)
                throw new ArgumentException("mask must hold width x height bytes", nameof(mask));
            var bmp = new Bitmap(width, height, PixelFormat.Format8bppIndexed);
            var palette = bmp.Palette;
            for (int i = 0; i < 256; i++) palette.Entries[i] = Color.FromArgb(i, i, i);
            bmp.Palette = palette;
            var data = bmp.LockBits(new Rectangle(0, 0, width, height), ImageLockMode.WriteOnly, PixelFormat.Format8bppIndexed);
            try
            {
                for (int y = 0; y < height; y++)
                    Marshal.Copy(mask, y * width, data.Scan0 + y * data.Stride, width);
            }
            finally
            {
                bmp.UnlockBits(data);
            }
            return bmp;
        }
    }
}
