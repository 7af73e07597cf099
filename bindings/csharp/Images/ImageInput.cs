// segrt .NET wrapper: host pixels → the native SegImage descriptor, without copying where possible.
using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.Runtime.InteropServices;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Pixels made readable for one native call: a Bitmap locked with LockBits (its real Stride, no
    /// GetPixel), or a byte[] pinned. Dispose unlocks/unpins.
    /// </summary>
    internal unsafe sealed class ImageInput : IDisposable
    {
        internal SegImage Desc;
        GCHandle _pin;
        Bitmap _locked;
        BitmapData _data;
        Bitmap _converted;

        internal int Width { get { return Desc.width; } }
        internal int Height { get { return Desc.height; } }

        internal static int BytesPerPixel(SegPixelFormat f)
        {
            switch (f)
            {
                case SegPixelFormat.Gray8:
                case SegPixelFormat.PlanarRgb8: return 1; // per plane
                case SegPixelFormat.Bgr24:
                case SegPixelFormat.Rgb24: return 3;
                case SegPixelFormat.Bgra32:
                case SegPixelFormat.Rgba32: return 4;
                default: throw new ArgumentOutOfRangeException("format", f, "unknown pixel format");
            }
        }

        /// <summary>Checks a caller's buffer geometry; returns |stride| (0 means tightly packed).</summary>
        static int CheckGeometry(long available, int width, int height, int stride, SegPixelFormat format)
        {
            if (width <= 0 || height <= 0) throw new ArgumentOutOfRangeException("width/height", width + "x" + height + " must be positive");
            long row = (long)width * BytesPerPixel(format);
            long absStride = stride == 0 ? row : Math.Abs((long)stride);
            if (absStride < row) throw new ArgumentException("stride " + stride + " is smaller than a row of " + row + " bytes", "stride");
            if (format == SegPixelFormat.PlanarRgb8 && stride < 0)
                throw new ArgumentException("PlanarRgb8 planes must be top-down (stride " + stride + " is negative)", "stride");
            long rows = format == SegPixelFormat.PlanarRgb8 ? 3L * height : height;
            long needed = (rows - 1) * absStride + row;
            if (available >= 0 && available < needed)
                throw new ArgumentException("the buffer has " + available + " bytes but " + width + "x" + height + " " + format + " with stride " + stride + " needs " + needed, "pixels");
            return (int)absStride;
        }

        /// <summary>
        /// A byte[] of rows. A negative stride means a bottom-up buffer: the top row is the LAST row in
        /// the array (as in a BMP file), and segrt walks it backwards.
        /// </summary>
        internal static ImageInput FromBytes(byte[] pixels, int width, int height, int stride, SegPixelFormat format)
        {
            if (pixels == null) throw new ArgumentNullException(nameof(pixels));
            int absStride = CheckGeometry(pixels.LongLength, width, height, stride, format);
            var input = new ImageInput();
            input._pin = GCHandle.Alloc(pixels, GCHandleType.Pinned);
            byte* first = (byte*)input._pin.AddrOfPinnedObject();
            if (stride < 0) first += (long)(height - 1) * absStride;
            input.Desc = Describe(first, width, height, stride, format);
            return input;
        }

        /// <summary>Unmanaged pixels (e.g. an OpenCV Mat's data, or BitmapData.Scan0): only read during the call.</summary>
        internal static ImageInput FromPointer(IntPtr topRow, int width, int height, int stride, SegPixelFormat format)
        {
            if (topRow == IntPtr.Zero) throw new ArgumentNullException(nameof(topRow));
            CheckGeometry(-1, width, height, stride, format);
            var input = new ImageInput();
            input.Desc = Describe((byte*)topRow, width, height, stride, format);
            return input;
        }

        internal static ImageInput FromBitmap(Bitmap bitmap)
        {
            if (bitmap == null) throw new ArgumentNullException("image");
            var input = new ImageInput();
            try
            {
                input.Lock(bitmap);
            }
            catch
            {
                input.Dispose();
                throw;
            }
            return input;
        }

        void Lock(Bitmap bitmap)
        {
            SegPixelFormat format;
            Bitmap source = bitmap;
            PixelFormat pf = bitmap.PixelFormat;
            if (pf == PixelFormat.Format8bppIndexed && !IsGrayPalette(bitmap.Palette))
                pf = PixelFormat.Undefined; // a colour palette: converted below
            switch (pf)
            {
                case PixelFormat.Format24bppRgb: format = SegPixelFormat.Bgr24; break;
                case PixelFormat.Format32bppArgb:
                case PixelFormat.Format32bppRgb:
                case PixelFormat.Format32bppPArgb: format = SegPixelFormat.Bgra32; break;
                case PixelFormat.Format8bppIndexed: format = SegPixelFormat.Gray8; break;
                default:
                    // Colour palettes, 16/48/64 bpp, 1/4 bpp: draw once into 24bpp (GDI+ converts).
                    _converted = new Bitmap(bitmap.Width, bitmap.Height, PixelFormat.Format24bppRgb);
                    using (var g = Graphics.FromImage(_converted))
                        g.DrawImage(bitmap, new Rectangle(0, 0, bitmap.Width, bitmap.Height));
                    source = _converted;
                    format = SegPixelFormat.Bgr24;
                    break;
            }
            var rect = new Rectangle(0, 0, source.Width, source.Height);
            _data = source.LockBits(rect, ImageLockMode.ReadOnly, source.PixelFormat);
            _locked = source;
            // Scan0 is the top row for top-down and bottom-up bitmaps alike; a bottom-up one has a
            // negative Stride, which segrt takes as it is.
            Desc = Describe((byte*)_data.Scan0, _data.Width, _data.Height, _data.Stride, format);
        }

        static bool IsGrayPalette(ColorPalette palette)
        {
            var e = palette.Entries;
            if (e.Length != 256) return false;
            for (int i = 0; i < 256; i++)
                if (e[i].R != i || e[i].G != i || e[i].B != i) return false;
            return true;
        }

        /// <summary>The pixels as packed rows (planar: three packed planes) in their own format: what FromBytes(copy, w, h, 0, format) reads as the same image.</summary>
        internal byte[] CopyPacked()
        {
            var format = (SegPixelFormat)Desc.format;
            long row = (long)Desc.width * BytesPerPixel(format);
            long stride = Desc.stride == 0 ? row : Desc.stride;
            int planes = format == SegPixelFormat.PlanarRgb8 ? 3 : 1;
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

        static SegImage Describe(byte* data, int width, int height, int stride, SegPixelFormat format)
        {
            SegImage d = default(SegImage);
            d.data = data;
            d.width = width;
            d.height = height;
            d.stride = stride;
            d.format = (int)format;
            if (format == SegPixelFormat.PlanarRgb8)
            {
                long plane = (long)height * (stride == 0 ? width : stride);
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
