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
    // "Track frames": a folder of frames, one click on the first, the play (FramePlayer).
    public sealed partial class MainForm
    {
        /// <summary>"Track frames...": lists the folder's pictures (sorted by name) and shows the first one for the click.</summary>
        internal async Task OpenFramesAsync(string folder)
        {
            string[] files = ImageFiles.InFolder(folder);
            if (files.Length == 0)
            {
                _player.Stop();
                _status.Text = "No pictures in " + folder;
                return;
            }
            _player.Open(files);
            SetMode(Mode.Track);
            await OpenImageAsync(files[0]);
            _status.Text = string.Format("{0} frames in {1} ({2} x {3}). Click the object to track on the first frame.",
                files.Length, Path.GetFileName(folder), _image.Width, _image.Height);
        }

        /// <summary>A click in Track mode: on the first frame it starts the play; on a later frame it goes back to the first one.</summary>
        async Task StartTrackingAsync(PointF click)
        {
            _busy = true;
            try
            {
                if (!_player.AtFirstFrame)
                {
                    _player.Rewind();
                    string firstPath = _player.Frames[0];
                    Bitmap first = await Task.Run(() => ImageFiles.Load24(firstPath));
                    _image.Dispose();
                    _image = first;
                    _mask = null;
                    Redraw();
                    _status.Text = "Back at the first frame: click the object to track.";
                    return;
                }
                await _player.StartAsync(_image, click);
            }
            finally
            {
                _busy = false;
            }
        }

        /// <summary>A tracked frame from the player: its picture replaces the one shown (none for the first frame), its mask is drawn.</summary>
        void ShowTracked(TrackedFrame f, Bitmap frame, string text)
        {
            if (f != null && _player.Frames != null && _player.Frames.Length > 0)
                _progressBar.Value = Math.Max(0, Math.Min(100, (int)(100 * (f.Frame + 1) / _player.Frames.Length)));
            if (frame != null)
            {
                _image.Dispose();
                _image = frame;
            }
            _mask = f.MaskOf(FramePlayer.TrackedObjectId);
            _labels = null;
            _maskColor = Sam2Color;
            Redraw();
            TrackedObject? o = f.ObjectOf(FramePlayer.TrackedObjectId);
            _frameStatus.Text = text + (o.HasValue ? string.Format(" | object: {0}, {1} px, score {2:F2}", o.Value.Present ? "present" : "hidden", o.Value.Area, o.Value.Score) : "");
        }
    }
}
