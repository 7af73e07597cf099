using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using System.Windows.Forms;
using Segrt;

namespace SegrtDemo
{
    // The overlay: the image with the mask or labels composed with LockBits, and the prompts drawn on it.
    public sealed partial class MainForm
    {
        /// <summary>Image + translucent mask, composed with LockBits in one pass (never GetPixel).</summary>
        unsafe void Redraw()
        {
            if (_image == null) return;
            int w = _image.Width, h = _image.Height;
            var composed = new Bitmap(w, h, PixelFormat.Format24bppRgb);
            var src = _image.LockBits(new Rectangle(0, 0, w, h), ImageLockMode.ReadOnly, PixelFormat.Format24bppRgb);
            var dst = composed.LockBits(new Rectangle(0, 0, w, h), ImageLockMode.WriteOnly, PixelFormat.Format24bppRgb);
            try
            {
                byte cb = _maskColor.B, cg = _maskColor.G, cr = _maskColor.R;
                for (int y = 0; y < h; y++)
                {
                    byte* s = (byte*)src.Scan0 + (long)y * src.Stride;
                    byte* d = (byte*)dst.Scan0 + (long)y * dst.Stride;
                    for (int x = 0; x < w; x++, s += 3, d += 3)
                    {
                        int label = _labels != null ? _labels[y * w + x] : 0;
                        if (label != 0)
                        {
                            Color c = EverythingResult.ColorOf(label);
                            d[0] = (byte)((s[0] + c.B) / 2);
                            d[1] = (byte)((s[1] + c.G) / 2);
                            d[2] = (byte)((s[2] + c.R) / 2);
                        }
                        else if (_mask != null && _mask[y * w + x] != 0)
                        {
                            d[0] = (byte)((s[0] + 3 * cb) / 4);
                            d[1] = (byte)((s[1] + 3 * cg) / 4);
                            d[2] = (byte)((s[2] + 3 * cr) / 4);
                        }
                        else
                        {
                            d[0] = s[0]; d[1] = s[1]; d[2] = s[2];
                        }
                    }
                }
            }
            finally
            {
                _image.UnlockBits(src);
                composed.UnlockBits(dst);
            }
            _regions = OutlineOverlay.Find(_mask, _labels, w, h);
            OutlineOverlay.Draw(composed, _regions);
            DrawFound(composed);
            if (_mode == Mode.Sam2 && _annotator != null) DrawPrompts(composed);
            if (_mode == Mode.Volume && _volume.Slices != null) DrawClicks(composed, _volume.ClicksOf(_slice));
            var old = _picture.Image;
            _picture.Image = composed;
            if (old != null) old.Dispose();
        }

        void DrawPrompts(Bitmap target)
        {
            using (var g = Graphics.FromImage(target))
            {
                float r = Math.Max(3f, target.Width / 150f);
                if (_annotator.CurrentBox.HasValue)
                {
                    var box = _annotator.CurrentBox.Value;
                    using (var pen = new Pen(Color.Yellow, r / 2))
                        g.DrawRectangle(pen, box.X, box.Y, box.Width, box.Height);
                }
                foreach (var p in _annotator.Points)
                    using (var brush = new SolidBrush(p.Foreground ? Color.LimeGreen : Color.OrangeRed))
                        g.FillEllipse(brush, p.X - r, p.Y - r, 2 * r, 2 * r);
            }
        }

        static void DrawClicks(Bitmap target, System.Collections.Generic.IEnumerable<Sam2Point> clicks)
        {
            using (var g = Graphics.FromImage(target))
            {
                float r = Math.Max(3f, target.Width / 150f);
                foreach (var p in clicks)
                    using (var brush = new SolidBrush(p.Foreground ? Color.LimeGreen : Color.OrangeRed))
                        g.FillEllipse(brush, p.X - r, p.Y - r, 2 * r, 2 * r);
            }
        }
    }
}
