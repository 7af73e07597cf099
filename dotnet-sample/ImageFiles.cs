using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Linq;

namespace SegrtDemo
{
    /// <summary>Pictures on disk: loading one as a 24bpp Bitmap, listing a folder of frames.</summary>
    internal static class ImageFiles
    {
        /// <summary>The file types "Open image..." and "Track frames..." accept.</summary>
        internal static readonly string[] Extensions = { ".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff" };

        /// <summary>A picture file as a 24bpp Bitmap (the caller disposes it).</summary>
        internal static Bitmap Load24(string path)
        {
            using (var file = new Bitmap(path))
            {
                var copy = new Bitmap(file.Width, file.Height, PixelFormat.Format24bppRgb);
                using (var g = Graphics.FromImage(copy))
                    g.DrawImage(file, new Rectangle(0, 0, file.Width, file.Height));
                return copy;
            }
        }

        /// <summary>The pictures of a folder, sorted by name (ordinal: frame_0009 before frame_0010).</summary>
        internal static string[] InFolder(string folder)
        {
            return Directory.GetFiles(folder).Where(f => Extensions.Contains(Path.GetExtension(f).ToLowerInvariant()))
                .OrderBy(f => f, StringComparer.Ordinal).ToArray();
        }
    }
}
