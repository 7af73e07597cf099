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
    // "Volume": a folder of slices, clicks on a slice, propagation both ways (VolumeEditor).
    public sealed partial class MainForm
    {
        /// <summary>
        /// "Open > Volume...": every slice of the folder into a new volume track (on the thread pool, with the progress
        /// bar and the Cancel button), then the middle slice is shown for the first click.
        /// </summary>
        internal async Task OpenVolumeAsync(string folder)
        {
            string[] files = ImageFiles.InFolder(folder);
            if (files.Length == 0)
            {
                _status.Text = "No pictures in " + folder;
                return;
            }
            if (_busy) return;
            _busy = true;
            CancellationToken token = StartWork();
            try
            {
                _player.Stop();
                _status.Text = string.Format("Adding {0} slices (encoded when first needed)...", files.Length);
                await _volume.OpenAsync(files, token, ProgressBarReporter());
                _provider.Text = "Provider: " + _volume.Provider;
                _sliceBar.Maximum = files.Length - 1;
                SetMode(Mode.Volume);
                ShowSlice(files.Length / 2);
                _status.Text = string.Format("{0} slices from {1} ({2} x {3}). Click the structure on this slice, then Propagate both ways.",
                    files.Length, Path.GetFileName(folder), _image.Width, _image.Height);
            }
            catch (OperationCanceledException)
            {
                _status.Text = "Opening the volume cancelled.";
            }
            finally
            {
                EndWork(token);
                _busy = false;
            }
        }

        /// <summary>Shows slice <paramref name="slice"/> with its mask (the slider moves with it).</summary>
        internal void ShowSlice(long slice)
        {
            string[] files = _volume.Slices;
            if (files == null) return;
            _slice = Math.Max(0, Math.Min(files.Length - 1, slice));
            if (_sliceBar.Value != _slice) _sliceBar.Value = (int)_slice;
            Bitmap b = ImageFiles.Load24(files[_slice]);
            if (_image != null) _image.Dispose();
            _image = b;
            _mask = _volume.MaskOf(_slice);
            _labels = null;
            _maskColor = Sam2Color;
            Redraw();
            _sliceLabel.Text = string.Format("Slice {0}/{1}", _slice + 1, files.Length);
        }

        /// <summary>A click on the slice shown (through the mouse handlers): the structure prompted there with the slice's clicks.</summary>
        async Task VolumeClickAsync(PointF at, bool foreground)
        {
            _busy = true;
            try
            {
                long slice = _slice;
                TrackedFrame f = await _volume.ClickAsync(slice, at, foreground);
                if (slice == _slice) ShowSlice(slice);
                TrackedObject? o = f.ObjectOf(VolumeEditor.ObjectId);
                _status.Text = string.Format("Slice {0}: {1} px ({2:F0} ms). Propagate both ways to carry it through the volume.",
                    slice + 1, o.HasValue ? o.Value.Area : 0, f.TotalMs);
            }
            finally
            {
                _busy = false;
            }
        }

        /// <summary>"Propagate both ways" from the slice shown: every slice's mask, with the progress bar and the Cancel button.</summary>
        internal async Task PropagateBothWaysAsync()
        {
            if (_volume.Slices == null || _busy) return;
            _busy = true;
            CancellationToken token = StartWork();
            try
            {
                _status.Text = string.Format("Propagating from slice {0} both ways...", _slice + 1);
                PropagationResult r = await _volume.PropagateAsync(_slice, null, token, ProgressBarReporter());
                _progressBar.Value = 100;
                ShowSlice(_slice);
                _status.Text = string.Format("Propagated through {0} slices in {1:F0} ms (encoder {2:F0} | memory attention {3:F0} | decoder {4:F0} | memory encoder {5:F0}). Move the slider; click a slice to correct it.",
                    r.FrameCount, r.TotalMs, r.ImageEncoderMs, r.MemoryAttentionMs, r.MaskDecoderMs, r.MemoryEncoderMs);
            }
            catch (OperationCanceledException)
            {
                ShowSlice(_slice);
                _status.Text = "Propagation stopped: the slices done so far keep their masks.";
            }
            finally
            {
                EndWork(token);
                _busy = false;
            }
        }
    }
}
