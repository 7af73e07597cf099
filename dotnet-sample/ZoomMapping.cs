using System;
using System.Drawing;

namespace SegrtDemo
{
    /// <summary>Maps between PictureBox (SizeMode = Zoom) coordinates and image pixels.</summary>
    public static class ZoomMapping
    {
        /// <summary>Zoom mode scales uniformly to fit and centres the image (letterbox bars on two sides).</summary>
        static void Fit(Size control, Size image, out float scale, out float offsetX, out float offsetY)
        {
            scale = Math.Min((float)control.Width / image.Width, (float)control.Height / image.Height);
            offsetX = (control.Width - image.Width * scale) / 2f;
            offsetY = (control.Height - image.Height * scale) / 2f;
        }

        /// <summary>Image pixel coordinates (continuous: pixel i spans [i, i+1)) of a control point; null on the bars.</summary>
        public static PointF? ToImage(Point p, Size control, Size image)
        {
            float s, ox, oy;
            Fit(control, image, out s, out ox, out oy);
            // The mouse reports the control pixel p; its centre is p + 0.5.
            float x = (p.X + 0.5f - ox) / s, y = (p.Y + 0.5f - oy) / s;
            if (x < 0 || y < 0 || x >= image.Width || y >= image.Height) return null;
            return new PointF(x, y);
        }

        /// <summary>The control pixel showing an image point.</summary>
        public static Point ToControl(PointF p, Size control, Size image)
        {
            float s, ox, oy;
            Fit(control, image, out s, out ox, out oy);
            return new Point((int)Math.Floor(p.X * s + ox), (int)Math.Floor(p.Y * s + oy));
        }
    }
}
