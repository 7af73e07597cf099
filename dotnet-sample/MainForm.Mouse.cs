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
    // The picture's mouse handlers: clicks and boxes, in every mode that takes them.
    public sealed partial class MainForm
    {
        void OnPictureMouseDown(object sender, MouseEventArgs e)
        {
            if ((_mode == Mode.Sam2 || _mode == Mode.Track || _mode == Mode.Volume) && _image != null) { _dragStart = e.Location; _dragNow = e.Location; }
        }

        void OnPictureMouseUp(object sender, MouseEventArgs e)
        {
            if (!_dragStart.HasValue) return;
            Point start = _dragStart.Value;
            _dragStart = null;
            if (_mode == Mode.Volume)
            {
                // A click on the slice shown: left = the structure, right = not it (a correction on a propagated slice).
                var at = ZoomMapping.ToImage(e.Location, _picture.ClientSize, _image.Size);
                if (at.HasValue && !_busy && _volume.Slices != null) Track(VolumeClickAsync(at.Value, e.Button != MouseButtons.Right));
                _picture.Invalidate();
                return;
            }
            if (_mode == Mode.Track)
            {
                // One left click on the first frame starts the play (a click during a play starts it again).
                var at = ZoomMapping.ToImage(e.Location, _picture.ClientSize, _image.Size);
                if (at.HasValue && e.Button == MouseButtons.Left && !_busy && _player.Frames != null) Track(StartTrackingAsync(at.Value));
                _picture.Invalidate();
                return;
            }
            if (_annotator == null || _busy) return;
            var a = ZoomMapping.ToImage(start, _picture.ClientSize, _image.Size);
            var b = ZoomMapping.ToImage(e.Location, _picture.ClientSize, _image.Size);
            bool isDrag = Math.Abs(e.X - start.X) + Math.Abs(e.Y - start.Y) > 6;
            if (isDrag && a.HasValue && b.HasValue && e.Button == MouseButtons.Left)
            {
                float x1 = Math.Min(a.Value.X, b.Value.X), y1 = Math.Min(a.Value.Y, b.Value.Y);
                float x2 = Math.Max(a.Value.X, b.Value.X), y2 = Math.Max(a.Value.Y, b.Value.Y);
                Track(RunSam2Async(s => s.Box(x1, y1, x2, y2)));
            }
            else if (!isDrag && b.HasValue)
            {
                PointF p = b.Value;
                bool foreground = e.Button != MouseButtons.Right;
                Track(RunSam2Async(s => s.Click(p.X, p.Y, foreground)));
            }
            _picture.Invalidate();
        }

        void OnPicturePaint(object sender, PaintEventArgs e)
        {
            if (!_dragStart.HasValue) return;
            var a = _dragStart.Value;
            using (var pen = new Pen(Color.Yellow) { DashStyle = System.Drawing.Drawing2D.DashStyle.Dash })
                e.Graphics.DrawRectangle(pen, Math.Min(a.X, _dragNow.X), Math.Min(a.Y, _dragNow.Y), Math.Abs(_dragNow.X - a.X), Math.Abs(_dragNow.Y - a.Y));
        }

        /// <summary>Feeds a mouse click through the same handlers a real click goes through.</summary>
        internal void SimulateClick(Point controlPoint, MouseButtons button)
        {
            OnPictureMouseDown(_picture, new MouseEventArgs(button, 1, controlPoint.X, controlPoint.Y, 0));
            OnPictureMouseUp(_picture, new MouseEventArgs(button, 1, controlPoint.X, controlPoint.Y, 0));
        }
    }
}
