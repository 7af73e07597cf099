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
    // SAM2 on the image shown: its encode ahead of any click, clicks and boxes, "Segment everything".
    public sealed partial class MainForm
    {
        /// <summary>
        /// Loads the SAM2 pair if needed (on a worker thread), then encodes the image shown ahead of any click:
        /// <c>Task.Run(() =&gt; annotator.SetImage(pixels, token, progress))</c>, with the progress bar and the Cancel
        /// button. The annotator records the image before its encoder runs, so clicks made meanwhile segment it,
        /// waiting in segrt for the rest of the encode. A newer image cancels this encode (here through its token,
        /// and in segrt by the newer SetImage itself).
        /// </summary>
        internal Task PrepareSam2Async()
        {
            if (_image == null) return Task.FromResult(0);
            if (_encodeWork != null) _encodeWork.Cancel();
            var cts = new CancellationTokenSource();
            _encodeWork = cts;
            UpdateCancelButton();
            var imageSet = new TaskCompletionSource<bool>();
            _imageSet = imageSet.Task;
            Task t = EncodeAheadAsync(_image, cts, imageSet);
            _encoding = t;
            return t;
        }

        async Task EncodeAheadAsync(Bitmap image, CancellationTokenSource cts, TaskCompletionSource<bool> imageSet)
        {
            CancellationToken token = cts.Token;
            try
            {
                if (_sam2 == null)
                {
                    if (_sam2Loading == null)
                    {
                        _status.Text = "Loading SAM2...";
                        string enc = _encoderPath, dec = _decoderPath;
                        _sam2Loading = Task.Run(() => new Sam2Segmenter(enc, dec));
                    }
                    Task<Sam2Segmenter> loading = _sam2Loading;
                    Sam2Segmenter loaded = await loading;
                    if (_sam2Loading == loading && _sam2 == null)
                    {
                        _sam2 = loaded;
                        _annotator = _sam2.CreateAnnotator();
                    }
                }
                token.ThrowIfCancellationRequested();
                _status.Text = "Encoding the image... (clicks are accepted already)";
                _progressBar.Value = 0;
                // The pixels are copied here, on the UI thread, so the worker never touches the Bitmap the form draws.
                InputImage pixels = Pixels(image);
                Sam2Annotator annotator = _annotator;
                string provider = _sam2.ProviderInUse; // before the await, as in RunUnetAsync
                var bar = ProgressBarReporter();
                // The annotator holds the image from its first Encode report on (or once SetImage returns, when the
                // pixels were cached): clicks wait for that, then wait in segrt for the rest of the encode.
                var reporter = new FirstReport(imageSet, bar);
                double ms = await Task.Run(() => annotator.SetImage(pixels, token, reporter), token);
                if (_encodeWork != cts) return; // a newer image is shown
                _progressBar.Value = 100;
                _status.Text = string.Format("Image encoded in {0:F0} ms. Left click: object, right click: not object, drag: box.", ms);
                _provider.Text = "Provider: " + provider;
            }
            catch (OperationCanceledException)
            {
                if (_encodeWork == cts) _status.Text = "Encoding cancelled.";
            }
            finally
            {
                imageSet.TrySetResult(true);
                if (_encodeWork == cts)
                {
                    _encodeWork = null;
                    UpdateCancelButton();
                }
                cts.Dispose();
            }
        }

        /// <summary>A packed BGR copy of <paramref name="image"/> (24bpp) for a worker thread.</summary>
        static InputImage Pixels(Bitmap image)
        {
            int w = image.Width, h = image.Height;
            var bytes = new byte[w * 3 * h];
            var data = image.LockBits(new Rectangle(0, 0, w, h), ImageLockMode.ReadOnly, PixelFormat.Format24bppRgb);
            try
            {
                for (int y = 0; y < h; y++)
                    System.Runtime.InteropServices.Marshal.Copy(data.Scan0 + y * data.Stride, bytes, y * w * 3, w * 3);
            }
            finally
            {
                image.UnlockBits(data);
            }
            return InputImage.FromPixels(bytes, w, h, 0, PixelLayout.Bgr24);
        }

        /// <summary>Passes reports on to the progress bar and signals the first one (SetImage has recorded its image by then).</summary>
        sealed class FirstReport : IProgress<SegrtProgress>
        {
            readonly TaskCompletionSource<bool> _first;
            readonly IProgress<SegrtProgress> _next;
            internal FirstReport(TaskCompletionSource<bool> first, IProgress<SegrtProgress> next) { _first = first; _next = next; }
            public void Report(SegrtProgress value)
            {
                _first.TrySetResult(true);
                _next.Report(value);
            }
        }

        /// <summary>
        /// A click or a box, on a worker thread. During the encode of the image shown it is accepted: once the
        /// annotator holds the image, the prompt waits in segrt for the rest of the encode.
        /// </summary>
        async Task RunSam2Async(Func<Sam2Annotator, Sam2Result> prompt)
        {
            _busy = true;
            try
            {
                Sam2Annotator annotator = _annotator;
                await _imageSet;
                if (annotator != _annotator || annotator.ImageSize.Width == 0) return;
                if (!_encoding.IsCompleted) _status.Text = "Waiting for the rest of the encode...";
                Sam2Result r;
                try
                {
                    r = await Task.Run(() => prompt(annotator));
                }
                catch (OperationCanceledException e)
                {
                    // The encode it waited for was cancelled (Cancel, or another image): the click is not kept.
                    _status.Text = "Click cancelled: " + e.Message;
                    return;
                }
                _mask = r.Mask;
                _labels = null;
                _maskColor = Sam2Color;
                Redraw();
                _status.Text = string.Format("{6} | SAM2: decoder {0:F1} ms | post-processing {1:F1} ms | encoder {2} | predicted IoU {3:F3} | {4} points{5}",
                    r.DecoderMs, r.PostprocessMs, r.EncoderReused ? "cached" : r.EncoderMs.ToString("F0") + " ms", r.Score,
                    annotator.Points.Count, annotator.CurrentBox.HasValue ? " + box" : "", OutlineOverlay.Summary(_regions));
            }
            finally
            {
                _busy = false;
            }
        }

        /// <summary>"Segment everything": loads and encodes for SAM2 if needed, then colours every object found.</summary>
        internal async Task SegmentEverythingAsync()
        {
            if (_image == null || _busy) return;
            // The image shown is being encoded, or was: everything waits in segrt for the rest of its encode.
            if (_annotator == null || (_encodeWork == null && _annotator.ImageSize != _image.Size)) Track(PrepareSam2Async());
            await _imageSet;
            if (_annotator == null || _busy || _annotator.ImageSize.Width == 0) return;
            _busy = true;
            CancellationToken token = StartWork();
            try
            {
                _status.Text = "Segmenting everything...";
                Sam2Annotator annotator = _annotator;
                EverythingOptions options = EverythingOptions;
                IProgress<SegrtProgress> progress = ProgressBarReporter();
                EverythingResult r = await Task.Run(() => annotator.SegmentEverything(options, token, progress), token);
                _progressBar.Value = 100;
                _mask = null;
                _labels = r.Labels;
                Redraw();
                _status.Text = string.Format("Everything: {0} objects, {6} | {1} prompts in {2} decoder runs, {3:F0} ms | post-processing {4:F0} ms | encoder {5}",
                    r.Objects.Count, r.Prompts, r.DecoderRuns, r.DecoderMs, r.PostprocessMs, r.EncoderReused ? "cached" : r.EncoderMs.ToString("F0") + " ms",
                    OutlineOverlay.Summary(_regions));
            }
            catch (OperationCanceledException)
            {
                _status.Text = "Segment everything cancelled.";
            }
            finally
            {
                EndWork(token);
                _busy = false;
            }
        }
    }
}
