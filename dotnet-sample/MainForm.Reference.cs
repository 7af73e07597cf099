using System;
using System.Drawing;
using System.Threading;
using System.Threading.Tasks;
using System.Windows.Forms;
using Segrt;

namespace SegrtDemo
{
    // "Teach once, find": "Teach" keeps the SAM2 mask shown as a reference (Sam2Reference), "Find" finds the taught
    // object in the image shown, without a click, and shows its mask, outline and score.
    public sealed partial class MainForm
    {
        Sam2Reference _reference;   // taught on _sam2 (released with it: a reference belongs to its model)
        FindResult _found;          // the last find, drawn while _mask is its mask

        /// <summary>The taught reference (the self-test checks that "Teach" made one).</summary>
        internal Sam2Reference Reference { get { return _reference; } }

        /// <summary>The last find's result.</summary>
        internal FindResult LastFind { get { return _found; } }

        /// <summary>
        /// "Teach": the image shown and its SAM2 mask (the object clicked) become the reference, on a worker thread
        /// (the encoder runs unless the image is cached, and a few decoder runs choose how finds prompt it).
        /// </summary>
        internal async Task TeachAsync()
        {
            if (_image == null || _busy) return;
            if (_mode != Mode.Sam2 || _sam2 == null || _mask == null || _labels != null)
            {
                _status.Text = "Teach: in SAM2 mode, click the object first; its mask is what is taught.";
                return;
            }
            _busy = true;
            CancellationToken token = StartWork();
            try
            {
                _status.Text = "Teaching the object clicked...";
                Sam2Segmenter sam = _sam2;
                InputImage pixels = Pixels(_image);
                byte[] mask = (byte[])_mask.Clone();
                IProgress<SegrtProgress> progress = ProgressBarReporter();
                Sam2Reference taught = await Task.Run(() => Sam2Reference.Teach(sam, pixels, mask, token, progress), token);
                if (_sam2 != sam)
                {
                    taught.Dispose(); // other models were picked meanwhile
                    return;
                }
                if (_reference != null) _reference.Dispose();
                _reference = taught;
                _progressBar.Value = 100;
                _status.Text = "Taught. Open another image and press Find: the object is found there without a click.";
            }
            catch (OperationCanceledException)
            {
                _status.Text = "Teach cancelled.";
            }
            finally
            {
                EndWork(token);
                _busy = false;
            }
        }

        /// <summary>
        /// "Find": the taught object in the image shown (SAM2 mode), on a worker thread: its mask (nothing when it is
        /// absent), its outline, and its score and presence in the status bar and beside its box.
        /// </summary>
        internal async Task FindAsync()
        {
            if (_image == null || _busy) return;
            if (_reference == null)
            {
                _status.Text = "Find: teach an object first (SAM2 mode: click it, then Teach).";
                return;
            }
            if (_mode != Mode.Sam2) SetMode(Mode.Sam2);
            await _imageSet;
            Sam2Segmenter sam = _sam2;
            Sam2Reference reference = _reference;
            if (sam == null || reference == null || _busy) return;
            _busy = true;
            CancellationToken token = StartWork();
            try
            {
                _status.Text = "Finding the taught object...";
                InputImage pixels = Pixels(_image);
                IProgress<SegrtProgress> progress = ProgressBarReporter();
                FindResult r = await Task.Run(() => reference.Find(sam, pixels, null, token, progress), token);
                _progressBar.Value = 100;
                if (_annotator != null) _annotator.ClearPrompts();
                _found = r;
                _mask = r.Mask;
                _labels = null;
                _maskColor = Sam2Color;
                Redraw();
                FoundObject best = r.Found[0];
                _status.Text = string.Format("Find: {0}, score {1:F2} | {2} | {3} decoder runs, {4:F0} ms, maps {5:F1} ms, encoder {6}",
                    r.Present ? "found" : "not found", best.Score, OutlineOverlay.Summary(_regions), r.DecoderRuns, r.DecoderMs, r.MapsMs,
                    r.EncoderReused ? "cached" : r.EncoderMs.ToString("F0") + " ms");
            }
            catch (OperationCanceledException)
            {
                _status.Text = "Find cancelled.";
            }
            finally
            {
                EndWork(token);
                _busy = false;
            }
        }

        /// <summary>The found object's box and score over the overlay, while the mask shown is the find's.</summary>
        void DrawFound(Bitmap target)
        {
            if (_found == null || _mask != _found.Mask || !_found.Present) return;
            FoundObject best = _found.Found[0];
            using (var g = Graphics.FromImage(target))
            using (var pen = new Pen(Color.Yellow, Math.Max(1f, target.Width / 400f)))
            using (var font = new Font(FontFamily.GenericSansSerif, Math.Max(8f, target.Width / 50f), GraphicsUnit.Pixel))
            {
                Rectangle box = best.Bounds;
                int gap = (int)Math.Ceiling(pen.Width) + 2;   // outside the outline, which stays visible
                box.Inflate(gap, gap);
                g.DrawRectangle(pen, box);
                g.DrawString("score " + best.Score.ToString("F2"), font, Brushes.Yellow, box.Left, Math.Max(0, box.Top - font.Height));
            }
        }

        void DisposeReference()
        {
            if (_reference != null) { _reference.Dispose(); _reference = null; }
            _found = null;
        }
    }
}
