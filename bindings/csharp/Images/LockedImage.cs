using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.Runtime.InteropServices;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// An <see cref="InputImage"/> made readable for one native call: a Bitmap locked with LockBits (its real
    /// Stride, no GetPixel), a byte[] pinned, or unmanaged memory as it is, described as the native SegImage.
    /// Dispose unlocks/unpins.
    /// </summary>
    internal unsafe sealed class LockedImage : IDisposable
    {
        internal SegImage Desc;
        GCHandle _pin;
        Bitmap _locked;
        BitmapData _data;
        Bitmap _converted;

        internal int Width { get { return Desc.width; } }
        internal int Height { get { return Desc.height; } }

        internal LockedImage(InputImage image)
        {
            if (image.SourceBitmap != null)
            {
                try
                {
                    Lock(image.SourceBitmap);
                }
                catch
                {
                    Dispose();
                    throw;
                }
            }
            else if (image.SourcePixels != null)
            {
                _pin = GCHandle.Alloc(image.SourcePixels, GCHandleType.Pinned);
                byte* first = (byte*)_pin.AddrOfPinnedObject();
                // A bottom-up array keeps its top row last.
                if (image.Stride < 0) first += (long)(image.Height - 1) * -(long)image.Stride;
                Desc = Describe(first, image.Width, image.Height, image.Stride, image.Layout);
            }
            else
            {
                Desc = Describe((byte*)image.Data, image.Width, image.Height, image.Stride, image.Layout);
                if (image.Plane1 != IntPtr.Zero)
                {
                    Desc.plane1 = (byte*)image.Plane1;
                    Desc.plane2 = (byte*)image.Plane2;
                }
            }
        }

        /// <summary>How a Bitmap of this format is read: in place, or drawn into 24 bpp first (<see cref="PixelLayout.Bgr24"/>).</summary>
        internal static PixelLayout LayoutOf(Bitmap bitmap)
        {
            switch (bitmap.PixelFormat)
            {
                case PixelFormat.Format32bppArgb:
                case PixelFormat.Format32bppRgb:
                case PixelFormat.Format32bppPArgb: return PixelLayout.Bgra32;
                case PixelFormat.Format8bppIndexed: return IsGrayPalette(bitmap.Palette) ? PixelLayout.Gray8 : PixelLayout.Bgr24;
                default: return PixelLayout.Bgr24; // 24 bpp, or converted to it
            }
        }

        void Lock(Bitmap bitmap)
        {
            PixelLayout layout;
            Bitmap source = bitmap;
            PixelFormat pf = bitmap.PixelFormat;
            if (pf == PixelFormat.Format8bppIndexed && !IsGrayPalette(bitmap.Palette))
                pf = PixelFormat.Undefined; // a colour palette: converted below
            switch (pf)
            {
                case PixelFormat.Format24bppRgb: layout = PixelLayout.Bgr24; break;
                case PixelFormat.Format32bppArgb:
                case PixelFormat.Format32bppRgb:
                case PixelFormat.Format32bppPArgb: layout = PixelLayout.Bgra32; break;
                case PixelFormat.Format8bppIndexed: layout = PixelLayout.Gray8; break;
                default:
                    // Colour palettes, 16/48/64 bpp, 1/4 bpp: draw once into 24bpp (GDI+ converts).
                    _converted = new Bitmap(bitmap.Width, bitmap.Height, PixelFormat.Format24bppRgb);
                    using (var g = Graphics.FromImage(_converted))
                        g.DrawImage(bitmap, new Rectangle(0, 0, bitmap.Width, bitmap.Height));
                    source = _converted;
                    layout = PixelLayout.Bgr24;
                    break;
            }
            var rect = new Rectangle(0, 0, source.Width, source.Height);
            _data = source.LockBits(rect, ImageLockMode.ReadOnly, source.PixelFormat);
            _locked = source;
            // Scan0 is the top row for top-down and bottom-up bitmaps alike; a bottom-up one has a
            // negative Stride, which segrt takes as it is.
            Desc = Describe((byte*)_data.Scan0, _data.Width, _data.Height, _data.Stride, layout);
        }

        static bool IsGrayPalette(ColorPalette palette)
        {
            var e = palette.Entries;
            if (e.Length != 256) return false;
            for (int i = 0; i < 256; i++)
                if (e[i].R != i || e[i].G != i || e[i].B != i) return false;
            return true;
        }

        /// <summary>The pixels as packed rows (planar: three packed planes) in their own layout: what InputImage.FromPixels(copy, w, h, 0, layout) reads as the same image.</summary>
        internal byte[] CopyPacked()
        {
            var layout = (PixelLayout)Desc.format;
            long row = (long)Desc.width * InputImage.BytesPerPixel(layout);
            long stride = Desc.stride == 0 ? row : Desc.stride;
            int planes = InputImage.IsPlanar(layout) ? 3 : 1;
            var copy = new byte[row * Desc.height * planes];
            fixed (byte* dst = copy)
            {
                for (int p = 0; p < planes; p++)
                {
                    byte* src = p == 0 ? Desc.data : p == 1 ? Desc.plane1 : Desc.plane2;
                    for (int y = 0; y < Desc.height; y++)
                        Buffer.MemoryCopy(src + y * stride, dst + ((long)p * Desc.height + y) * row, row, row);
                }
            }
            return copy;
        }

        /// <summary>The native descriptor; planar pixels in one buffer get their G and B planes after the R plane.</summary>
        static SegImage Describe(byte* data, int width, int height, int stride, PixelLayout layout)
        {
            SegImage d = default(SegImage);
            d.data = data;
            d.width = width;
            d.height = height;
            d.stride = stride;
            d.format = (int)layout;
            if (InputImage.IsPlanar(layout))
            {
                long plane = (long)height * (stride == 0 ? (long)width * InputImage.ValueSize(layout) : stride);
                d.plane1 = data + plane;
                d.plane2 = data + 2 * plane;
            }
            return d;
        }

        public void Dispose()
        {
            if (_data != null)
            {
                _locked.UnlockBits(_data);
                _data = null;
            }
            if (_converted != null)
            {
                _converted.Dispose();
                _converted = null;
            }
            if (_pin.IsAllocated) _pin.Free();
        }
    }
}
