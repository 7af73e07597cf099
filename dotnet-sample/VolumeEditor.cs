using System;
using System.Collections.Generic;
using System.Drawing;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

namespace SegrtDemo
{
    /// <summary>
    /// "Open volume...": the slices of a volume (a folder of pictures sorted by name, all of one size) in one
    /// <see cref="Sam2Tracker"/> made with <see cref="TrackerOptions.Volume"/>: every slice is added at once (segrt
    /// keeps their pixels and encodes a slice when it is first needed), a click on any slice prompts the object there
    /// (left: the object, right: not the object; the clicks of a slice add up), and "Propagate both ways" runs
    /// <see cref="Sam2Tracker.Propagate(PropagationDirection, long?, long, Action{TrackedFrame}, CancellationToken, IProgress{SegrtProgress})"/>
    /// from the slice shown on a pool thread, keeping every slice's mask as it arrives. A click on a propagated slice
    /// corrects it; propagating again from there carries the correction up and down the volume. Lives on the UI
    /// thread; the tracker's calls run on the thread pool, one at a time.
    /// </summary>
    internal sealed class VolumeEditor : IDisposable
    {
        /// <summary>The id the sample gives the clicked structure.</summary>
        internal const int ObjectId = 1;

        string _modelDir;
        Sam2VideoModel _model;
        Sam2Tracker _tracker;
        string[] _slices;
        byte[][] _masks;     // the object's mask per slice (null: none yet)
        readonly Dictionary<long, List<Sam2Point>> _clicks = new Dictionary<long, List<Sam2Point>>();

        internal VolumeEditor(string modelDir)
        {
            _modelDir = modelDir;
        }

        /// <summary>The volume's slice files in order; null before <see cref="OpenAsync"/>.</summary>
        internal string[] Slices { get { return _slices; } }

        /// <summary>The mask of <paramref name="slice"/> (0/255, slice size), or null when it has none yet.</summary>
        internal byte[] MaskOf(long slice)
        {
            return _masks == null || slice < 0 || slice >= _masks.Length ? null : _masks[slice];
        }

        /// <summary>The clicks given on <paramref name="slice"/>, in order (empty for none).</summary>
        internal IList<Sam2Point> ClicksOf(long slice)
        {
            List<Sam2Point> list;
            return _clicks.TryGetValue(slice, out list) ? list.AsReadOnly() : (IList<Sam2Point>)new Sam2Point[0];
        }

        /// <summary>The execution provider of the video model (empty before it is loaded).</summary>
        internal string Provider { get { return _model != null ? _model.ProviderInUse : ""; } }

        /// <summary>Another video model folder, used by the next <see cref="OpenAsync"/>.</summary>
        internal void UseModel(string dir)
        {
            Close();
            if (_model != null) { _model.Dispose(); _model = null; }
            _modelDir = dir;
        }

        /// <summary>Loads the model if needed and adds every slice to a new volume track (on the thread pool).</summary>
        internal async Task OpenAsync(string[] slices, CancellationToken token, IProgress<SegrtProgress> progress)
        {
            Close();
            if (_model == null)
            {
                string dir = _modelDir;
                _model = await Task.Run(() => new Sam2VideoModel(dir));
            }
            // CorrectionsAsConditioning: a click on a propagated slice stays as given when propagating again over it.
            var tracker = _model.CreateTracker(new TrackerOptions { NumFrames = slices.Length, Volume = true, CorrectionsAsConditioning = true });
            try
            {
                await Task.Run(() =>
                {
                    for (int i = 0; i < slices.Length; i++)
                    {
                        using (Bitmap b = ImageFiles.Load24(slices[i]))
                            tracker.AddFrame(b, token);
                        if (progress != null) progress.Report(new SegrtProgress(ProgressStage.Frames, (i + 1.0) / slices.Length));
                    }
                }, token);
            }
            catch
            {
                tracker.Dispose();
                throw;
            }
            _tracker = tracker;
            _slices = slices;
            _masks = new byte[slices.Length][];
        }

        /// <summary>
        /// A click on <paramref name="slice"/>: added to that slice's clicks, the object prompted there with all of them
        /// (a slice already propagated is corrected). Returns the slice's new mask.
        /// </summary>
        internal async Task<TrackedFrame> ClickAsync(long slice, PointF at, bool foreground)
        {
            Sam2Tracker tracker = Require();
            List<Sam2Point> list;
            if (!_clicks.TryGetValue(slice, out list)) _clicks[slice] = list = new List<Sam2Point>();
            list.Add(new Sam2Point(at.X, at.Y, foreground));
            Sam2Point[] points = list.ToArray();
            TrackedFrame f = await Task.Run(() => tracker.AddPoints(slice, ObjectId, points));
            if (tracker == _tracker) _masks[slice] = f.MaskOf(ObjectId);
            return f;
        }

        /// <summary>
        /// "Propagate both ways" from <paramref name="slice"/>: up to the last slice, then down to the first, every
        /// slice's mask kept as it arrives (<paramref name="onSlice"/> is called on the pool thread with each one).
        /// </summary>
        internal async Task<PropagationResult> PropagateAsync(long slice, Action<TrackedFrame> onSlice, CancellationToken token, IProgress<SegrtProgress> progress)
        {
            Sam2Tracker tracker = Require();
            byte[][] masks = _masks;
            return await Task.Run(() => tracker.Propagate(PropagationDirection.BothWays, slice, -1, f =>
            {
                masks[f.Frame] = f.MaskOf(ObjectId);
                if (onSlice != null) onSlice(f);
            }, token, progress), token);
        }

        Sam2Tracker Require()
        {
            if (_tracker == null) throw new InvalidOperationException("open a volume first");
            return _tracker;
        }

        /// <summary>Forgets the volume (its track, masks and clicks); the model stays loaded.</summary>
        internal void Close()
        {
            if (_tracker != null) { _tracker.Dispose(); _tracker = null; }
            _slices = null;
            _masks = null;
            _clicks.Clear();
        }

        public void Dispose()
        {
            Close();
            if (_model != null) { _model.Dispose(); _model = null; }
        }
    }
}
