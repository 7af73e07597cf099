using System;
using System.Collections.Generic;
using System.Drawing;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

namespace SegrtDemo
{
    /// <summary>
    /// "Track frames...": plays a folder of frames through SAM2 video tracking. A click on the first frame makes a
    /// new <see cref="Sam2Tracker"/>, adds the frame and prompts the clicked object; a WinForms Timer then feeds each
    /// next frame to <c>await Task.Run(() =&gt; tracker.Next(frame, token), token)</c>, skipping a tick while a frame is still running,
    /// and hands every tracked frame to the form (<see cref="FrameShown"/>). Lives on the UI thread; model loading
    /// and tracking run on the thread pool. Masks are not kept (a long video would fill the memory).
    /// </summary>
    internal sealed class FramePlayer : IDisposable
    {
        /// <summary>The id the sample gives the clicked object.</summary>
        internal const int TrackedObjectId = 1;

        readonly System.Windows.Forms.Timer _timer = new System.Windows.Forms.Timer { Interval = 40 };
        readonly List<double> _frameMs = new List<double>();
        string _modelDir;
        Sam2VideoModel _model;
        Sam2Tracker _tracker;
        string[] _frames;
        int _next;
        bool _playing;
        CancellationTokenSource _cancel;
        TaskCompletionSource<int> _done;

        internal FramePlayer(string modelDir)
        {
            _modelDir = modelDir;
            _timer.Tick += OnTick;
        }

        /// <summary>
        /// A frame was tracked: its result, its picture (null for the first frame, which the form already shows; else
        /// the handler owns the Bitmap) and a status line with its times.
        /// </summary>
        internal event Action<TrackedFrame, Bitmap, string> FrameShown;

        /// <summary>The play reached the last frame: a summary line (the mean time per frame).</summary>
        internal event Action<string> PlayEnded;

        /// <summary>Text for the status bar: loading the model, a failure.</summary>
        internal event Action<string> StatusChanged;

        /// <summary>The execution provider the video model runs on, once it is loaded.</summary>
        internal event Action<string> ProviderChanged;

        /// <summary>The folder's frames, in the order they are played; null before <see cref="Open"/>.</summary>
        internal string[] Frames { get { return _frames; } }

        /// <summary>True until a click started a play (the next click then tracks from the first frame).</summary>
        internal bool AtFirstFrame { get { return _next == 0; } }

        /// <summary>Completes with the number of frames shown when a play reaches the last frame.</summary>
        internal Task<int> PlayDone { get { return _done != null ? _done.Task : Task.FromResult(0); } }

        /// <summary>The click's result on the first frame.</summary>
        internal TrackedFrame FirstTracked { get; private set; }

        /// <summary>The last frame shown.</summary>
        internal TrackedFrame LastTracked { get; private set; }

        /// <summary>Where the click that started the play landed, in image pixels.</summary>
        internal PointF FirstClick { get; private set; }

        /// <summary>The indices of the frames shown, in order.</summary>
        internal readonly List<long> ShownFrames = new List<long>();

        /// <summary>Another video model folder (<c>video_metadata.json</c> + four .onnx), loaded at the next click.</summary>
        internal void UseModel(string dir)
        {
            Stop();
            _modelDir = dir;
            ReleaseModel();
        }

        /// <summary>Frees the video model (trackers already made keep it alive until they are disposed).</summary>
        internal void ReleaseModel()
        {
            if (_model != null) { _model.Dispose(); _model = null; }
        }

        /// <summary>A new folder of frames; the next click tracks from its first frame.</summary>
        internal void Open(string[] frames)
        {
            Stop();
            _frames = frames;
            _next = 0;
        }

        /// <summary>Back to the first frame: the form shows it again, and the next click starts a new play.</summary>
        internal void Rewind()
        {
            Stop();
            _next = 0;
        }

        /// <summary>The click on the first frame: a new track, the frame added and the object prompted (off the UI thread), then the play.</summary>
        internal async Task StartAsync(Bitmap firstFrame, PointF click)
        {
            Stop();
            if (_model == null)
            {
                if (StatusChanged != null) StatusChanged("Loading the SAM2 video model...");
                string dir = _modelDir;
                _model = await Task.Run(() => new Sam2VideoModel(dir));
                if (ProviderChanged != null) ProviderChanged(_model.ProviderInUse);
            }
            // The folder's frame count is known: SAM2 uses it (for clips under 16 frames) as the official predictor does.
            FirstClick = click;
            var tracker = _model.CreateTracker(new TrackerOptions { NumFrames = _frames.Length });
            _tracker = tracker;
            var sw = System.Diagnostics.Stopwatch.StartNew();
            TrackedFrame f = await Task.Run(() =>
            {
                tracker.AddFrame(firstFrame);
                return tracker.AddPoints(0, TrackedObjectId, new Sam2Point(click.X, click.Y, true));
            });
            FirstTracked = f;
            ShownFrames.Clear();
            _frameMs.Clear();
            Show(f, null, string.Format("Frame 1/{0}: first frame encoded and clicked in {1:F0} ms", _frames.Length, sw.Elapsed.TotalMilliseconds));
            _next = 1;
            _cancel = new CancellationTokenSource();
            _done = new TaskCompletionSource<int>();
            _timer.Start();
        }

        /// <summary>Stops a play: no further frame starts; a frame already running finishes in the background.</summary>
        internal void Stop()
        {
            _timer.Stop();
            if (_cancel != null) { _cancel.Cancel(); _cancel = null; }
            if (_tracker != null) { _tracker.Dispose(); _tracker = null; }
            if (_done != null) _done.TrySetCanceled();
        }

        public void Dispose()
        {
            Stop();
            _timer.Dispose();
            ReleaseModel();
        }

        /// <summary>One Timer tick: the next frame through Sam2Tracker.Next on a pool thread, unless the previous one is still running.</summary>
        async void OnTick(object sender, EventArgs e)
        {
            if (_playing || _tracker == null) return;
            if (_next >= _frames.Length)
            {
                _timer.Stop();
                if (PlayEnded != null)
                    PlayEnded(string.Format("Tracked {0} frames: {1:F0} ms per frame on average (encoder + memory attention + decoder + memory encoder)",
                        _frames.Length, _frameMs.Count > 0 ? _frameMs.Average() : 0));
                _done.TrySetResult(ShownFrames.Count);
                return;
            }
            _playing = true;
            Sam2Tracker tracker = _tracker;
            CancellationToken token = _cancel.Token;
            string path = _frames[_next];
            try
            {
                Bitmap frame = await Task.Run(() => ImageFiles.Load24(path), token);
                TrackedFrame f;
                try
                {
                    // Next blocks while the video models run: on a pool thread, with the play's token (Stop/Cancel
                    // stops it in the middle).
                    f = await Task.Run(() => tracker.Next(frame, token), token);
                }
                catch
                {
                    frame.Dispose();
                    throw;
                }
                if (tracker != _tracker) { frame.Dispose(); return; } // stopped while it ran
                _next++;
                _frameMs.Add(f.TotalMs);
                Show(f, frame, string.Format("Frame {0}/{1}: {2:F0} ms (encoder {3:F0} | memory attention {4:F0} | decoder {5:F0} | memory encoder {6:F0})",
                    f.Frame + 1, _frames.Length, f.TotalMs, f.ImageEncoderMs, f.MemoryAttentionMs, f.MaskDecoderMs, f.MemoryEncoderMs));
            }
            catch (OperationCanceledException) { }   // Stop (or Cancel) before or during the call: the tracker is as before it
            catch (ObjectDisposedException) { }      // Stop while the call was queued: the track is gone
            catch (Exception ex)
            {
                var done = _done;
                if (done != null) done.TrySetException(ex);
                Stop();
                if (StatusChanged != null) StatusChanged("Error: " + ex.Message);
            }
            finally
            {
                _playing = false;
            }
        }

        void Show(TrackedFrame f, Bitmap frame, string text)
        {
            LastTracked = f;
            ShownFrames.Add(f.Frame);
            if (FrameShown != null) FrameShown(f, frame, text);
            else if (frame != null) frame.Dispose();
        }
    }
}
