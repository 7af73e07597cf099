// segrt WinForms sample: an "upper computer" style window that runs a UNet on an image, or segments
// the object you click with SAM2. Shows how to use the wrapper from a UI: long work (model loading,
// the SAM2 encoder) on a worker thread, results drawn as an overlay without GetPixel, clicks mapped
// from a zoomed PictureBox to image pixels; "Track frames..." opens a folder of frames, takes one click on
// the first and plays the tracked masks (SAM2 video tracking, a Timer feeding NextAsync).
//
//   SegrtDemo.exe                         interactive
//   SegrtDemo.exe --selftest shot.png     load the bundled image and models, run UNet and one SAM2 click
//                                         through the same UI code, track a clip of frames from one click,
//                                         save screenshots, exit 0 on success
using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using System.Windows.Forms;
using Segrt;

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

        public static Point ToControl(PointF p, Size control, Size image)
        {
            float s, ox, oy;
            Fit(control, image, out s, out ox, out oy);
            return new Point((int)Math.Floor(p.X * s + ox), (int)Math.Floor(p.Y * s + oy));
        }
    }

    enum Mode { Unet, Sam2, Track }

    public sealed class MainForm : Form
    {
        readonly PictureBox _picture = new PictureBox { Dock = DockStyle.Fill, SizeMode = PictureBoxSizeMode.Zoom, BackColor = Color.FromArgb(40, 40, 40) };
        readonly ToolStripStatusLabel _status = new ToolStripStatusLabel { Spring = true, TextAlign = ContentAlignment.MiddleLeft };
        readonly ToolStripStatusLabel _provider = new ToolStripStatusLabel();
        readonly ToolStripStatusLabel _frameStatus = new ToolStripStatusLabel();   // tracking: the frame shown and its times
        readonly ToolStripComboBox _modeBox = new ToolStripComboBox { DropDownStyle = ComboBoxStyle.DropDownList };
        readonly ToolStrip _tools = new ToolStrip();

        Bitmap _image;             // 24bpp copy of the opened picture
        byte[] _mask;              // last mask, image size
        ushort[] _labels;          // last "Segment everything" labels, image size (0 = background)
        Color _maskColor;
        Mode _mode = Mode.Unet;
        string _unetPath, _encoderPath, _decoderPath;
        UnetSegmenter _unet;
        Sam2Segmenter _sam2;
        // Tracking: a folder of frames, the video model, the track of the current play, a Timer feeding NextAsync.
        string _videoModelDir;
        string[] _framePaths;
        int _nextFrame;
        bool _playing;
        Sam2VideoModel _video;
        Sam2Tracker _tracker;
        CancellationTokenSource _playCancel;
        TaskCompletionSource<int> _playDone;
        readonly List<double> _frameMs = new List<double>();
        readonly System.Windows.Forms.Timer _playTimer = new System.Windows.Forms.Timer { Interval = 40 };
        Point? _dragStart;
        Point _dragNow;
        bool _busy;

        /// <summary>What "Segment everything" uses (SAM2's automatic mask generator defaults).</summary>
        internal EverythingOptions EverythingOptions = new EverythingOptions();

        /// <summary>The UI's work in flight (the self-test awaits it).</summary>
        internal Task Pending = Task.FromResult(0);

        /// <summary>Completes with the number of frames tracked when a play reaches the last frame (the self-test awaits it).</summary>
        internal Task<int> PlayDone { get { return _playDone != null ? _playDone.Task : Task.FromResult(0); } }

        /// <summary>The click's result on the first frame, the last frame shown, and the indices of the frames shown in order (masks are not kept: a long video would fill the memory).</summary>
        internal TrackedFrame FirstTracked, LastTracked;

        /// <summary>Where the last click that started a play landed, in image pixels.</summary>
        internal PointF FirstClick { get; private set; }
        internal readonly List<long> ShownFrames = new List<long>();

        /// <summary>The id the sample gives the clicked object.</summary>
        internal const int TrackedObjectId = 1;

        public static readonly Color UnetColor = Color.FromArgb(255, 40, 40);
        public static readonly Color Sam2Color = Color.FromArgb(40, 160, 255);

        public MainForm(string modelsDir)
        {
            Text = "segrt demo";
            ClientSize = new Size(1000, 700);
            _unetPath = Path.Combine(modelsDir, "demo_unet.onnx");
            _encoderPath = Path.Combine(modelsDir, "sam2", "sam2_tiny_samexporter_encoder.onnx");
            _decoderPath = Path.Combine(modelsDir, "sam2", "sam2_tiny_samexporter_decoder.onnx");
            _videoModelDir = Path.Combine(modelsDir, "sam2", "video");

            _modeBox.Items.AddRange(new object[] { "UNet", "SAM2 (click / drag a box)", "Track frames (one click)" });
            _modeBox.SelectedIndex = 0;
            _modeBox.SelectedIndexChanged += (s, e) => ApplyMode((Mode)_modeBox.SelectedIndex);
            _tools.Items.Add(new ToolStripButton("Open image...", null, (s, e) => { var f = Ask("Images|*.png;*.jpg;*.jpeg;*.bmp;*.tif;*.tiff"); if (f != null) Track(OpenImageAsync(f)); }));
            _tools.Items.Add(new ToolStripButton("Track frames...", null, (s, e) => { var d = AskFolder("A folder of frames (sorted by name; all of one size)"); if (d != null) Track(OpenFramesAsync(d)); }));
            _tools.Items.Add(new ToolStripButton("UNet model...", null, (s, e) => { var f = Ask("ONNX|*.onnx"); if (f != null) { _unetPath = f; DisposeModels(); } }));
            _tools.Items.Add(new ToolStripButton("SAM2 encoder + decoder...", null, (s, e) => PickSam2()));
            _tools.Items.Add(new ToolStripSeparator());
            _tools.Items.Add(_modeBox);
            _tools.Items.Add(new ToolStripButton("Run UNet", null, (s, e) => Track(RunUnetAsync())));
            _tools.Items.Add(new ToolStripButton("Segment everything", null, (s, e) => Track(SegmentEverythingAsync())));
            _tools.Items.Add(new ToolStripButton("Reset", null, (s, e) => ResetPrompts()));
            _tools.Items.Add(new ToolStripButton("Stop", null, (s, e) => StopTracking("Stopped.")));
            _tools.Items.Add(new ToolStripButton("Video model...", null, (s, e) => { var d = AskFolder("The SAM2 video model folder (video_metadata.json + 4 .onnx)"); if (d != null) UseVideoModel(d); }));

            var statusStrip = new StatusStrip();
            statusStrip.Items.Add(_status);
            statusStrip.Items.Add(_frameStatus);
            statusStrip.Items.Add(_provider);
            Controls.Add(_picture);
            Controls.Add(_tools);
            Controls.Add(statusStrip);

            _picture.MouseDown += OnPictureMouseDown;
            _picture.MouseMove += (s, e) => { if (_dragStart.HasValue) { _dragNow = e.Location; _picture.Invalidate(); } };
            _picture.MouseUp += OnPictureMouseUp;
            _picture.Paint += OnPicturePaint;
            SegRuntime.Log += OnSegrtLog;
            _playTimer.Tick += OnPlayTick;
            FormClosed += (s, e) => { SegRuntime.Log -= OnSegrtLog; StopTracking(null); DisposeModels(); };
            _status.Text = "Open an image. segrt: " + SafeVersion();
        }

        static string SafeVersion()
        {
            try { return SegRuntime.Version; }
            catch (Exception e) { return e.Message; }
        }

        // segrt's diagnostics arrive on the thread that made the call: marshal to the UI thread.
        void OnSegrtLog(object sender, SegLogEventArgs e)
        {
            if (e.Level == Segrt.LogLevel.Info || !IsHandleCreated) return;
            BeginInvoke((Action)(() => _status.Text = e.Level + ": " + e.Message));
        }

        string Ask(string filter)
        {
            using (var d = new OpenFileDialog { Filter = filter })
                return d.ShowDialog(this) == DialogResult.OK ? d.FileName : null;
        }

        string AskFolder(string description)
        {
            using (var d = new FolderBrowserDialog { Description = description, ShowNewFolderButton = false })
                return d.ShowDialog(this) == DialogResult.OK ? d.SelectedPath : null;
        }

        internal void UseVideoModel(string dir)
        {
            StopTracking(null);
            _videoModelDir = dir;
            if (_video != null) { _video.Dispose(); _video = null; }
        }

        void PickSam2()
        {
            var enc = Ask("SAM2 image encoder|*.onnx");
            if (enc == null) return;
            var dec = Ask("SAM2 prompt decoder|*.onnx");
            if (dec == null) return;
            _encoderPath = enc;
            _decoderPath = dec;
            DisposeModels();
        }

        internal void UseSam2Models(string encoder, string decoder)
        {
            _encoderPath = encoder;
            _decoderPath = decoder;
            if (_sam2 != null) { _sam2.Dispose(); _sam2 = null; }
        }

        void DisposeModels()
        {
            if (_unet != null) { _unet.Dispose(); _unet = null; }
            if (_sam2 != null) { _sam2.Dispose(); _sam2 = null; }
            if (_video != null) { _video.Dispose(); _video = null; }
        }

        /// <summary>Runs UI work, reporting any failure in the status bar (and to the self-test).</summary>
        void Track(Task task)
        {
            Pending = task;
            task.ContinueWith(t => _status.Text = "Error: " + t.Exception.GetBaseException().Message,
                System.Threading.CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.FromCurrentSynchronizationContext());
        }

        /// <summary>A picture file as a 24bpp Bitmap (the caller disposes it).</summary>
        static Bitmap LoadBitmap24(string path)
        {
            using (var file = new Bitmap(path))
            {
                var copy = new Bitmap(file.Width, file.Height, PixelFormat.Format24bppRgb);
                using (var g = Graphics.FromImage(copy))
                    g.DrawImage(file, new Rectangle(0, 0, file.Width, file.Height));
                return copy;
            }
        }

        internal async Task OpenImageAsync(string path)
        {
            Bitmap loaded = await Task.Run(() => LoadBitmap24(path));
            if (_image != null) _image.Dispose();
            _image = loaded;
            _mask = null;
            _labels = null;
            if (_sam2 != null) _sam2.ClearPrompts();
            Redraw();
            _status.Text = string.Format("{0} ({1} x {2})", Path.GetFileName(path), _image.Width, _image.Height);
            if (_mode == Mode.Sam2) await PrepareSam2Async();
        }

        /// <summary>What choosing a mode in the combo box does (the combo box raises ApplyMode).</summary>
        internal void SetMode(Mode mode)
        {
            if (_modeBox.SelectedIndex != (int)mode) _modeBox.SelectedIndex = (int)mode;
            else ApplyMode(mode);
        }

        void ApplyMode(Mode mode)
        {
            if (_mode == Mode.Track && mode != Mode.Track) StopTracking(null);
            if (mode != Mode.Track) _frameStatus.Text = "";
            _mode = mode;
            _mask = null;
            _labels = null;
            Redraw();
            if (mode == Mode.Sam2) Track(PrepareSam2Async());
            if (mode == Mode.Track && _framePaths == null) _status.Text = "Track frames...: pick a folder of frames, then click the object on the first one.";
        }

        internal async Task RunUnetAsync()
        {
            if (_image == null || _busy) return;
            _busy = true;
            try
            {
                if (_unet == null)
                {
                    _status.Text = "Loading " + Path.GetFileName(_unetPath) + "...";
                    string path = _unetPath;
                    _unet = await Task.Run(() => new UnetSegmenter(path));
                }
                Bitmap image = _image;
                UnetSegmenter unet = _unet;
                UnetResult r = await unet.SegmentAsync(image);
                _mask = r.Mask;
                _labels = null;
                _maskColor = UnetColor;
                Redraw();
                _status.Text = string.Format("UNet {0}x{1} at {2}x{3}: pre-processing {4:F1} ms | inference {5:F1} ms | post-processing {6:F1} ms | {7} foreground pixels",
                    r.Width, r.Height, r.ModelWidth, r.ModelHeight, r.PreprocessMs, r.InferenceMs, r.PostprocessMs, r.ForegroundPixels);
                _provider.Text = "Provider: " + unet.ProviderInUse;
            }
            finally
            {
                _busy = false;
            }
        }

        /// <summary>Loads the SAM2 pair if needed and encodes the image, both on a worker thread.</summary>
        internal async Task PrepareSam2Async()
        {
            if (_image == null || _busy) return;
            _busy = true;
            try
            {
                if (_sam2 == null)
                {
                    _status.Text = "Loading SAM2...";
                    string enc = _encoderPath, dec = _decoderPath;
                    _sam2 = await Task.Run(() => new Sam2Segmenter(enc, dec));
                }
                _status.Text = "Encoding the image...";
                Bitmap image = _image;
                Sam2Segmenter sam2 = _sam2;
                double ms = await sam2.SetImageAsync(image);
                _status.Text = string.Format("Image encoded in {0:F0} ms. Left click: object, right click: not object, drag: box.", ms);
                _provider.Text = "Provider: " + sam2.ProviderInUse;
            }
            finally
            {
                _busy = false;
            }
        }

        void OnPictureMouseDown(object sender, MouseEventArgs e)
        {
            if ((_mode == Mode.Sam2 || _mode == Mode.Track) && _image != null) { _dragStart = e.Location; _dragNow = e.Location; }
        }

        void OnPictureMouseUp(object sender, MouseEventArgs e)
        {
            if (!_dragStart.HasValue) return;
            Point start = _dragStart.Value;
            _dragStart = null;
            if (_mode == Mode.Track)
            {
                // One left click on the first frame starts the play (a click during a play starts it again).
                var at = ZoomMapping.ToImage(e.Location, _picture.ClientSize, _image.Size);
                if (at.HasValue && e.Button == MouseButtons.Left && !_busy && _framePaths != null) Track(StartTrackingAsync(at.Value));
                _picture.Invalidate();
                return;
            }
            if (_sam2 == null || _busy || _sam2.ImageSize.Width == 0) return;
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

        async Task RunSam2Async(Func<Sam2Segmenter, Sam2Result> prompt)
        {
            _busy = true;
            try
            {
                Sam2Segmenter sam2 = _sam2;
                Sam2Result r = await Task.Run(() => prompt(sam2));
                _mask = r.Mask;
                _labels = null;
                _maskColor = Sam2Color;
                Redraw();
                _status.Text = string.Format("SAM2: decoder {0:F1} ms | post-processing {1:F1} ms | encoder {2} | predicted IoU {3:F3} | {4} points{5}",
                    r.DecoderMs, r.PostprocessMs, r.EncoderReused ? "cached" : r.EncoderMs.ToString("F0") + " ms", r.Score,
                    sam2.Points.Count, sam2.CurrentBox.HasValue ? " + box" : "");
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
            if (_sam2 == null || _sam2.ImageSize != _image.Size) await PrepareSam2Async();
            if (_sam2 == null || _busy) return;
            _busy = true;
            try
            {
                _status.Text = "Segmenting everything...";
                Sam2Segmenter sam2 = _sam2;
                EverythingResult r = await sam2.SegmentEverythingAsync(EverythingOptions);
                _mask = null;
                _labels = r.Labels;
                Redraw();
                _status.Text = string.Format("Segment everything: {0} objects | {1} prompts in {2} decoder runs, {3:F0} ms | post-processing {4:F0} ms | encoder {5}",
                    r.Objects.Count, r.Prompts, r.DecoderRuns, r.DecoderMs, r.PostprocessMs, r.EncoderReused ? "cached" : r.EncoderMs.ToString("F0") + " ms");
            }
            finally
            {
                _busy = false;
            }
        }

        // ---- tracking: a folder of frames, one click, then a Timer feeding NextAsync ----

        /// <summary>"Track frames...": lists the folder's pictures (sorted by name) and shows the first one for the click.</summary>
        internal async Task OpenFramesAsync(string folder)
        {
            StopTracking(null);
            string[] exts = { ".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff" };
            var files = Directory.GetFiles(folder).Where(f => exts.Contains(Path.GetExtension(f).ToLowerInvariant()))
                .OrderBy(f => f, StringComparer.Ordinal).ToArray();
            if (files.Length == 0)
            {
                _status.Text = "No pictures in " + folder;
                return;
            }
            _framePaths = files;
            _nextFrame = 0;
            SetMode(Mode.Track);
            await OpenImageAsync(files[0]);
            _status.Text = string.Format("{0} frames in {1} ({2} x {3}). Click the object to track on the first frame.",
                files.Length, Path.GetFileName(folder), _image.Width, _image.Height);
        }

        /// <summary>The click: a new track, the first frame added and the object prompted (off the UI thread), then the play.</summary>
        async Task StartTrackingAsync(PointF click)
        {
            StopTracking(null);
            _busy = true;
            try
            {
                if (_nextFrame != 0)
                {
                    // A click on a later frame (during or after a play): back to the first frame for the next click.
                    string firstPath = _framePaths[0];
                    Bitmap first = await Task.Run(() => LoadBitmap24(firstPath));
                    _image.Dispose();
                    _image = first;
                    _nextFrame = 0;
                    _mask = null;
                    Redraw();
                    _status.Text = "Back at the first frame: click the object to track.";
                    return;
                }
                if (_video == null)
                {
                    _status.Text = "Loading the SAM2 video model...";
                    string dir = _videoModelDir;
                    _video = await Task.Run(() => new Sam2VideoModel(dir));
                    _provider.Text = "Provider: " + _video.ProviderInUse;
                }
                // The folder's frame count is known: SAM2 uses it (for clips under 16 frames) as the official predictor does.
                FirstClick = click;
                var tracker = _video.CreateTracker(new TrackerOptions { NumFrames = _framePaths.Length });
                _tracker = tracker;
                Bitmap image = _image;
                var sw = System.Diagnostics.Stopwatch.StartNew();
                TrackedFrame f = await Task.Run(() =>
                {
                    tracker.AddFrame(image);
                    return tracker.AddPoints(0, TrackedObjectId, new Sam2Point(click.X, click.Y, true));
                });
                FirstTracked = f;
                ShownFrames.Clear();
                _frameMs.Clear();
                ShowTracked(f, string.Format("Frame 1/{0}: first frame encoded and clicked in {1:F0} ms", _framePaths.Length, sw.Elapsed.TotalMilliseconds));
                _nextFrame = 1;
                _playCancel = new CancellationTokenSource();
                _playDone = new TaskCompletionSource<int>();
                _playTimer.Start();
            }
            finally
            {
                _busy = false;
            }
        }

        /// <summary>One Timer tick: the next frame through NextAsync unless the previous one is still running.</summary>
        async void OnPlayTick(object sender, EventArgs e)
        {
            if (_playing || _tracker == null) return;
            if (_nextFrame >= _framePaths.Length)
            {
                _playTimer.Stop();
                _status.Text = "Click to track again.";
                _frameStatus.Text = string.Format("Tracked {0} frames: {1:F0} ms per frame on average (encoder + memory attention + decoder + memory encoder)",
                    _framePaths.Length, _frameMs.Count > 0 ? _frameMs.Average() : 0);
                _playDone.TrySetResult(ShownFrames.Count);
                return;
            }
            _playing = true;
            Sam2Tracker tracker = _tracker;
            CancellationToken token = _playCancel.Token;
            string path = _framePaths[_nextFrame];
            try
            {
                Bitmap frame = await Task.Run(() => LoadBitmap24(path), token);
                TrackedFrame f;
                try
                {
                    f = await tracker.NextAsync(frame, token);
                }
                catch
                {
                    frame.Dispose();
                    throw;
                }
                if (tracker != _tracker) { frame.Dispose(); return; } // stopped while it ran
                _image.Dispose();
                _image = frame;
                _nextFrame++;
                _frameMs.Add(f.TotalMs);
                ShowTracked(f, string.Format("Frame {0}/{1}: {2:F0} ms (encoder {3:F0} | memory attention {4:F0} | decoder {5:F0} | memory encoder {6:F0})",
                    f.Frame + 1, _framePaths.Length, f.TotalMs, f.ImageEncoderMs, f.MemoryAttentionMs, f.MaskDecoderMs, f.MemoryEncoderMs));
            }
            catch (OperationCanceledException) { }   // Stop before the call started
            catch (ObjectDisposedException) { }      // Stop while the call was queued: the track is gone
            catch (Exception ex)
            {
                _status.Text = "Error: " + ex.Message;
                var done = _playDone;
                StopTracking(null);
                if (done != null) done.TrySetException(ex);
            }
            finally
            {
                _playing = false;
            }
        }

        void ShowTracked(TrackedFrame f, string text)
        {
            LastTracked = f;
            ShownFrames.Add(f.Frame);
            _mask = f.MaskOf(TrackedObjectId);
            _labels = null;
            _maskColor = Sam2Color;
            Redraw();
            TrackedObject? o = f.ObjectOf(TrackedObjectId);
            _frameStatus.Text = text + (o.HasValue ? string.Format(" | object: {0}, {1} px, score {2:F2}", o.Value.Present ? "present" : "hidden", o.Value.Area, o.Value.Score) : "");
        }

        /// <summary>Stops a play: no further frame starts; a frame already running finishes in the background.</summary>
        void StopTracking(string text)
        {
            _playTimer.Stop();
            if (_playCancel != null) { _playCancel.Cancel(); _playCancel = null; }
            if (_tracker != null) { _tracker.Dispose(); _tracker = null; }
            if (_playDone != null) _playDone.TrySetCanceled();
            if (text != null) _status.Text = text;
        }

        internal ushort[] LastLabels { get { return _labels; } }
        internal byte[] LastMask { get { return _mask; } }
        internal Size ImageSize { get { return _image == null ? Size.Empty : _image.Size; } }
        internal PictureBox Picture { get { return _picture; } }

        void ResetPrompts()
        {
            if (_sam2 != null) _sam2.ClearPrompts();
            _mask = null;
            _labels = null;
            Redraw();
        }

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
            if (_mode == Mode.Sam2 && _sam2 != null) DrawPrompts(composed);
            var old = _picture.Image;
            _picture.Image = composed;
            if (old != null) old.Dispose();
        }

        void DrawPrompts(Bitmap target)
        {
            using (var g = Graphics.FromImage(target))
            {
                float r = Math.Max(3f, target.Width / 150f);
                if (_sam2.CurrentBox.HasValue)
                {
                    var box = _sam2.CurrentBox.Value;
                    using (var pen = new Pen(Color.Yellow, r / 2))
                        g.DrawRectangle(pen, box.X, box.Y, box.Width, box.Height);
                }
                foreach (var p in _sam2.Points)
                    using (var brush = new SolidBrush(p.Foreground ? Color.LimeGreen : Color.OrangeRed))
                        g.FillEllipse(brush, p.X - r, p.Y - r, 2 * r, 2 * r);
            }
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

        /// <summary>A screenshot of this window as it is on screen (falls back to DrawToBitmap).</summary>
        internal Bitmap Screenshot()
        {
            var shot = new Bitmap(Width, Height, PixelFormat.Format24bppRgb);
            try
            {
                using (var g = Graphics.FromImage(shot))
                    g.CopyFromScreen(Location, Point.Empty, Size);
            }
            catch (Exception)
            {
                DrawToBitmap(shot, new Rectangle(0, 0, Width, Height));
            }
            return shot;
        }
    }

    static class Program
    {
        /// <summary>The models folder: beside the exe (deployed) or in the repository above it.</summary>
        static string FindModels()
        {
            for (var dir = new DirectoryInfo(AppDomain.CurrentDomain.BaseDirectory); dir != null; dir = dir.Parent)
            {
                string candidate = Path.Combine(dir.FullName, "models");
                if (File.Exists(Path.Combine(candidate, "demo_unet.onnx"))) return candidate;
            }
            return Path.Combine(AppDomain.CurrentDomain.BaseDirectory, "models");
        }

        [STAThread]
        static int Main(string[] args)
        {
            Application.EnableVisualStyles();
            Application.SetCompatibleTextRenderingDefault(false);
            string models = FindModels();
            int selftest = Array.IndexOf(args, "--selftest");
            var form = new MainForm(models);
            if (selftest < 0)
            {
                Application.Run(form);
                return 0;
            }
            string shot = selftest + 1 < args.Length ? Path.GetFullPath(args[selftest + 1]) : "selftest.png";
            int exitCode = 1;
            form.Shown += async (s, e) =>
            {
                try
                {
                    await SelfTest.Run(form, models, shot, args);
                    exitCode = 0;
                }
                catch (Exception ex)
                {
                    Console.Error.WriteLine("selftest FAILED: " + ex);
                }
                form.Close();
            };
            Application.Run(form);
            return exitCode;
        }
    }

    static class SelfTest
    {
        static string Option(string[] args, string name, string fallback)
        {
            int i = Array.IndexOf(args, name);
            return i >= 0 && i + 1 < args.Length ? args[i + 1] : fallback;
        }

        internal static async Task Run(MainForm form, string models, string shot, string[] args)
        {
            string image = Option(args, "--image", Path.Combine(models, "samples", "lesion_01.png"));
            await form.OpenImageAsync(image);

            // UNet through the "Run UNet" button's code.
            await form.RunUnetAsync();
            Expect(form.LastMask != null, "UNet produced a mask");
            await Settle(form);
            SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-unet.png");

            // SAM2 mode (same code as picking it in the combo box), then a left click at a known image point.
            string encoder = Option(args, "--sam2-encoder", null), decoder = Option(args, "--sam2-decoder", null);
            if (encoder != null) form.UseSam2Models(encoder, decoder);
            form.SetMode(Mode.Sam2);
            await form.Pending;
            var target = new PointF(form.ImageSize.Width * 0.62f, form.ImageSize.Height * 0.40f);
            Point control = ZoomMapping.ToControl(target, form.Picture.ClientSize, form.ImageSize);
            form.SimulateClick(control, MouseButtons.Left);
            await form.Pending;
            Expect(form.LastMask != null, "SAM2 produced a mask");
            PointF centroid = Centroid(form.LastMask, form.ImageSize.Width);
            Console.WriteLine(string.Format("selftest: clicked image point ({0:F1}, {1:F1}) through control point ({2}, {3}) of a {4}x{5} PictureBox; mask centroid ({6:F1}, {7:F1})",
                target.X, target.Y, control.X, control.Y, form.Picture.ClientSize.Width, form.Picture.ClientSize.Height, centroid.X, centroid.Y));
            if (Array.IndexOf(args, "--check-click-centroid") >= 0)
            {
                // One control pixel covers 1/scale image pixels: the click can't be placed closer than that.
                float scale = Math.Min((float)form.Picture.ClientSize.Width / form.ImageSize.Width, (float)form.Picture.ClientSize.Height / form.ImageSize.Height);
                double error = Math.Sqrt(Math.Pow(centroid.X - target.X, 2) + Math.Pow(centroid.Y - target.Y, 2));
                Expect(error <= 1.0 / scale + 1.0, "mask centroid within a control pixel of the clicked point (error " + error.ToString("F2") + " px)");
            }
            await Settle(form);
            SaveScreenshot(form, shot);

            // "Segment everything" through the button's code; with the oracle pair every 4x4 grid point gives
            // its disc (stability 0.819, so the threshold is lowered to 0.8 for the oracle).
            if (Array.IndexOf(args, "--check-click-centroid") >= 0)
                form.EverythingOptions = new EverythingOptions { PointsPerSide = 4, StabilityScoreThreshold = 0.8f };
            await form.SegmentEverythingAsync();
            Expect(form.LastLabels != null, "Segment everything produced labels");
            var ids = new System.Collections.Generic.HashSet<int>();
            foreach (ushort l in form.LastLabels) if (l != 0) ids.Add(l);
            Console.WriteLine("selftest: segment everything coloured " + ids.Count + " objects");
            if (Array.IndexOf(args, "--check-click-centroid") >= 0) Expect(ids.Count == 16, "16 oracle discs coloured, not " + ids.Count);
            await Settle(form);
            SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-everything.png");

            await TrackFrames(form, models, shot, args);
        }

        /// <summary>
        /// "Track frames...": the clip's folder, one click through the mouse handlers on the first frame, the play
        /// through the Timer and NextAsync to the last frame. Checks every frame was shown once and in order, and
        /// that the last mask is what a tracker fed the same frames directly gives (so the UI fed them all, in
        /// order); with --check-tracking also that the first frame's mask is the official SAM2 video predictor's
        /// for that click (reference/event0_obj1_mask.png, >= 99.5 % identical pixels).
        /// </summary>
        static async Task TrackFrames(MainForm form, string models, string shot, string[] args)
        {
            string videoModel = Option(args, "--video-model", Path.Combine(models, "sam2", "video"));
            string frames = Option(args, "--frames", Path.Combine(videoModel, "reference", "frames"));
            bool check = Array.IndexOf(args, "--check-tracking") >= 0;
            if (!Directory.Exists(frames) || !File.Exists(Path.Combine(videoModel, "video_metadata.json")))
            {
                Expect(!check, "the video model and frames are there: " + videoModel + ", " + frames);
                Console.WriteLine("selftest: no SAM2 video model or frames beside the sample; tracking skipped");
                return;
            }
            form.UseVideoModel(videoModel);
            await form.OpenFramesAsync(frames);
            Size size = form.ImageSize;
            // The reference clip's first click is at (60, 100) of 320 x 240: the same place on any frame size.
            var target = new PointF(size.Width * 60f / 320f, size.Height * 100f / 240f);
            Point control = ZoomMapping.ToControl(target, form.Picture.ClientSize, size);
            form.SimulateClick(control, MouseButtons.Left);
            await form.Pending;
            Expect(form.FirstTracked != null, "the click on the first frame gave a mask");
            int shown = await form.PlayDone;
            string[] files = Directory.GetFiles(frames).Where(f => f.EndsWith(".png", StringComparison.OrdinalIgnoreCase))
                .OrderBy(f => f, StringComparer.Ordinal).ToArray();
            var expectedOrder = Enumerable.Range(0, files.Length).Select(i => (long)i).ToArray();
            Expect(shown == files.Length && form.ShownFrames.SequenceEqual(expectedOrder),
                "every frame shown once, in order: " + string.Join(",", form.ShownFrames));
            byte[] first = form.FirstTracked.MaskOf(MainForm.TrackedObjectId), last = form.LastTracked.MaskOf(MainForm.TrackedObjectId);
            Console.WriteLine(string.Format("selftest: tracked {0} frames from a click at ({1:F1}, {2:F1}); object area {3} px on the first frame, {4} px on the last",
                shown, target.X, target.Y, Area(first), Area(last)));

            // The same frames fed directly to a tracker with the sample's options give the same last mask.
            using (var model = new Sam2VideoModel(videoModel))
            using (var direct = model.CreateTracker(new TrackerOptions { NumFrames = files.Length }))
            {
                TrackedFrame f = await Task.Run(() =>
                {
                    using (var b = new Bitmap(files[0])) direct.AddFrame(b);
                    var clicked = direct.AddPoints(0, MainForm.TrackedObjectId, new Sam2Point(form.FirstClick.X, form.FirstClick.Y, true));
                    for (int i = 1; i < files.Length; i++)
                        using (var b = new Bitmap(files[i])) clicked = direct.Next(b);
                    return clicked;
                });
                byte[] want = f.MaskOf(MainForm.TrackedObjectId);
                Expect(want.SequenceEqual(last), "the last frame's mask is the direct tracker's (" + Area(want) + " px there, " + Area(last) + " px shown)");
            }
            if (check)
            {
                string reference = Path.Combine(Path.GetDirectoryName(Path.GetFullPath(frames).TrimEnd(Path.DirectorySeparatorChar)), "event0_obj1_mask.png");
                byte[] refMask = GrayMask(reference);
                long same = 0;
                for (int i = 0; i < first.Length; i++) if ((first[i] != 0) == (refMask[i] != 0)) same++;
                double pct = 100.0 * same / first.Length;
                Console.WriteLine(string.Format("selftest: first-frame mask {0:F3} % identical to the official predictor's ({1} px there)", pct, Area(refMask)));
                Expect(pct >= 99.5, "first-frame mask matches the official predictor's (" + pct.ToString("F3") + " %)");
                Expect(Area(last) > 0, "the object is still tracked on the last frame");
            }
            await Settle(form);
            SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-track.png");
        }

        static long Area(byte[] mask)
        {
            long n = 0;
            foreach (byte v in mask) if (v != 0) n++;
            return n;
        }

        /// <summary>A gray PNG mask as bytes (LockBits on a 24bpp copy; never GetPixel).</summary>
        static byte[] GrayMask(string path)
        {
            using (var file = new Bitmap(path))
            using (var b = new Bitmap(file.Width, file.Height, PixelFormat.Format24bppRgb))
            {
                using (var g = Graphics.FromImage(b)) g.DrawImage(file, new Rectangle(0, 0, file.Width, file.Height));
                var data = b.LockBits(new Rectangle(0, 0, b.Width, b.Height), ImageLockMode.ReadOnly, PixelFormat.Format24bppRgb);
                try
                {
                    var row = new byte[data.Stride];
                    var mask = new byte[b.Width * b.Height];
                    for (int y = 0; y < b.Height; y++)
                    {
                        System.Runtime.InteropServices.Marshal.Copy(data.Scan0 + y * data.Stride, row, 0, data.Stride);
                        for (int x = 0; x < b.Width; x++) mask[y * b.Width + x] = row[3 * x + 1] > 127 ? (byte)255 : (byte)0;
                    }
                    return mask;
                }
                finally
                {
                    b.UnlockBits(data);
                }
            }
        }

        static PointF Centroid(byte[] mask, int width)
        {
            double sx = 0, sy = 0;
            long n = 0;
            for (int i = 0; i < mask.Length; i++)
                if (mask[i] != 0) { sx += i % width + 0.5; sy += i / width + 0.5; n++; }
            return n == 0 ? new PointF(float.NaN, float.NaN) : new PointF((float)(sx / n), (float)(sy / n));
        }

        static async Task Settle(MainForm form)
        {
            form.Refresh();
            await Task.Delay(300);
            Application.DoEvents();
        }

        static void SaveScreenshot(MainForm form, string path)
        {
            using (var shot = form.Screenshot())
                shot.Save(path, ImageFormat.Png);
            Console.WriteLine("selftest: screenshot " + path);
        }

        static void Expect(bool ok, string what)
        {
            if (!ok) throw new Exception("selftest check failed: " + what);
        }
    }
}
