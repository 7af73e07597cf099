using System;
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
    /// <summary>
    /// The sample's window: opens an image, runs a UNet on it, or segments what you click with SAM2 (a
    /// <see cref="Sam2Annotator"/>: left click "this object", right click "not this", drag a box), colours every
    /// object ("Segment everything"), plays a folder of frames tracked from one click (<see cref="FramePlayer"/>), and
    /// segments a structure through the slices of a volume: click a slice, "Propagate both ways", correct a slice,
    /// propagate again (<see cref="VolumeEditor"/>; a slider picks the slice shown).
    /// Long work (loading models, the SAM2 encoder, tracking) runs off the UI thread through <c>Task.Run</c> over
    /// segrt's synchronous calls, with a token (the Cancel button) and a progress reporter (the progress bar); results
    /// are drawn as an overlay composed with LockBits (never GetPixel). In SAM2 mode an image is encoded as soon as it
    /// is shown (encoding ahead): a click made during the encode waits only for the rest of it, and opening another
    /// image cancels the older encode.
    /// </summary>
    public sealed class MainForm : Form
    {
        /// <summary>What the image view is for: the combo box's entries, in order.</summary>
        internal enum Mode { Unet, Sam2, Track, Volume }

        readonly PictureBox _picture = new PictureBox { Dock = DockStyle.Fill, SizeMode = PictureBoxSizeMode.Zoom, BackColor = Color.FromArgb(40, 40, 40) };
        readonly ToolStripStatusLabel _status = new ToolStripStatusLabel { Spring = true, TextAlign = ContentAlignment.MiddleLeft };
        readonly ToolStripStatusLabel _provider = new ToolStripStatusLabel();
        // Tracking: the frame shown and its times. Spring, as the status: both share the width left and cut their
        // text, so the progress bar and the provider stay in view in a 1024-pixel-wide window.
        readonly ToolStripStatusLabel _frameStatus = new ToolStripStatusLabel { Spring = true, TextAlign = ContentAlignment.MiddleLeft };
        readonly ToolStripComboBox _modeBox = new ToolStripComboBox { DropDownStyle = ComboBoxStyle.DropDownList, AutoSize = false, Width = 190 };
        readonly ToolStrip _tools = new ToolStrip();
        readonly ToolStripProgressBar _progressBar = new ToolStripProgressBar { Minimum = 0, Maximum = 100, Width = 160 };
        readonly ToolStripButton _cancelButton = new ToolStripButton("Cancel") { Enabled = false };
        readonly FramePlayer _player;
        readonly VolumeEditor _volume;
        readonly ToolStrip _volumeTools = new ToolStrip { Visible = false };
        readonly TrackBar _sliceBar = new TrackBar { Minimum = 0, Maximum = 0, TickStyle = TickStyle.None, AutoSize = false, Width = 360, Height = 24 };
        readonly ToolStripLabel _sliceLabel = new ToolStripLabel("Slice -/-");
        long _slice;               // the volume slice shown

        Bitmap _image;             // 24bpp copy of the opened picture (or the frame shown)
        byte[] _mask;              // last mask, image size
        ushort[] _labels;          // last "Segment everything" labels, image size (0 = background)
        Color _maskColor;
        Mode _mode = Mode.Unet;
        string _unetPath, _encoderPath, _decoderPath;
        UnetSegmenter _unet;
        Sam2Segmenter _sam2;
        Sam2Annotator _annotator;  // the clicks on the image shown, on _sam2
        Point? _dragStart;
        Point _dragNow;
        bool _busy;                      // a UNet run, a SAM2 prompt, segment-everything or a track start is running
        CancellationTokenSource _work;   // cancels the segment-everything running (the Cancel button)
        CancellationTokenSource _encodeWork;  // cancels the SAM2 encode running (the Cancel button; a new image cancels it)
        Task _encoding = Task.FromResult(0);  // the encode of the image shown (the self-test awaits it)
        Task _imageSet = Task.FromResult(0);  // done once the annotator holds the image shown (before its encode ends)
        Task<Sam2Segmenter> _sam2Loading;     // the SAM2 pair being loaded, shared by the calls that need it

        /// <summary>What "Segment everything" uses (SAM2's automatic mask generator defaults).</summary>
        internal EverythingOptions EverythingOptions = new EverythingOptions();

        /// <summary>The UI's work in flight (the self-test awaits it).</summary>
        internal Task Pending = Task.FromResult(0);

        /// <summary>The mask overlay colours (the self-test's screenshot check looks for them).</summary>
        public static readonly Color UnetColor = Color.FromArgb(255, 40, 40);

        /// <summary>The SAM2 and tracking overlay colour.</summary>
        public static readonly Color Sam2Color = Color.FromArgb(40, 160, 255);

        /// <summary>The window, with the models of <paramref name="modelsDir"/> as defaults.</summary>
        public MainForm(string modelsDir)
        {
            Text = "segrt demo";
            ClientSize = new Size(1000, 700);
            _unetPath = Path.Combine(modelsDir, "demo_unet.onnx");
            _encoderPath = Path.Combine(modelsDir, "sam2", "sam2_tiny_samexporter_encoder.onnx");
            _decoderPath = Path.Combine(modelsDir, "sam2", "sam2_tiny_samexporter_decoder.onnx");
            _player = new FramePlayer(Path.Combine(modelsDir, "sam2", "video"));
            _player.FrameShown += ShowTracked;
            _player.PlayEnded += summary => { _status.Text = "Click to track again."; _frameStatus.Text = summary; };
            _player.StatusChanged += text => _status.Text = text;
            _player.ProviderChanged += provider => _provider.Text = "Provider: " + provider;

            _volume = new VolumeEditor(Path.Combine(modelsDir, "sam2", "video"));

            _modeBox.Items.AddRange(new object[] { "UNet", "SAM2 (click / drag a box)", "Track frames (one click)", "Volume (slices)" });
            _modeBox.SelectedIndex = 0;
            _modeBox.SelectedIndexChanged += (s, e) => ApplyMode((Mode)_modeBox.SelectedIndex);
            // Two drop-downs keep the toolbar within a 1024-pixel-wide window (the self-test checks it).
            var open = new ToolStripDropDownButton("Open");
            open.DropDownItems.Add(new ToolStripMenuItem("Image...", null, (s, e) => { var f = Ask("Images|*.png;*.jpg;*.jpeg;*.bmp;*.tif;*.tiff"); if (f != null) Track(OpenImageAsync(f)); }));
            open.DropDownItems.Add(new ToolStripMenuItem("Frames to track...", null, (s, e) => { var d = AskFolder("A folder of frames (sorted by name; all of one size)"); if (d != null) Track(OpenFramesAsync(d)); }));
            open.DropDownItems.Add(new ToolStripMenuItem("Volume (folder of slices)...", null, (s, e) => { var d = AskFolder("A folder of slices (sorted by name; all of one size)"); if (d != null) Track(OpenVolumeAsync(d)); }));
            _tools.Items.Add(open);
            var models = new ToolStripDropDownButton("Models");
            models.DropDownItems.Add(new ToolStripMenuItem("UNet model...", null, (s, e) => { var f = Ask("ONNX|*.onnx"); if (f != null) { _unetPath = f; DisposeModels(); } }));
            models.DropDownItems.Add(new ToolStripMenuItem("SAM2 encoder + decoder...", null, (s, e) => PickSam2()));
            models.DropDownItems.Add(new ToolStripMenuItem("Video model...", null, (s, e) => { var d = AskFolder("The SAM2 video model folder (video_metadata.json + 4 .onnx)"); if (d != null) UseVideoModel(d); }));
            // Trained weights (the Windows zip's, or fetched by scripts/fetch-real-weights.sh): real objects, not random shapes.
            string realSam = Program.FindRealSam(modelsDir);
            if (realSam != null)
                models.DropDownItems.Add(new ToolStripMenuItem("Real SAM", null, (s, e) => UseRealSam(realSam)) { ToolTipText = "The trained MobileSAM-class pair in " + realSam });
            _tools.Items.Add(models);
            _tools.Items.Add(new ToolStripSeparator());
            _tools.Items.Add(_modeBox);
            _tools.Items.Add(new ToolStripButton("Run UNet", null, (s, e) => Track(RunUnetAsync())));
            _tools.Items.Add(new ToolStripButton("Segment everything", null, (s, e) => Track(SegmentEverythingAsync())));
            _tools.Items.Add(new ToolStripButton("Reset", null, (s, e) => ResetPrompts()));
            _tools.Items.Add(new ToolStripButton("Stop", null, (s, e) => { _player.Stop(); _status.Text = "Stopped."; }));
            _cancelButton.Click += (s, e) => CancelWork("Cancelled.");
            _tools.Items.Add(_cancelButton);

            // The volume's row: the slice slider, "Propagate both ways" (shown in Volume mode).
            _sliceBar.ValueChanged += (s, e) => { if (_mode == Mode.Volume && _volume.Slices != null && _sliceBar.Value != _slice) ShowSlice(_sliceBar.Value); };
            _volumeTools.Items.Add(new ToolStripLabel("Slice"));
            _volumeTools.Items.Add(new ToolStripControlHost(_sliceBar) { AutoSize = false, Width = 360 });
            _volumeTools.Items.Add(_sliceLabel);
            _volumeTools.Items.Add(new ToolStripSeparator());
            _volumeTools.Items.Add(new ToolStripButton("Propagate both ways", null, (s, e) => Track(PropagateBothWaysAsync())) { ToolTipText = "From the slice shown up to the last slice, then down to the first" });
            _volumeTools.Items.Add(new ToolStripLabel("Left click: the structure; right click: not it"));

            var statusStrip = new StatusStrip();
            statusStrip.Items.Add(_status);
            statusStrip.Items.Add(_frameStatus);
            statusStrip.Items.Add(_progressBar);
            statusStrip.Items.Add(_provider);
            Controls.Add(_picture);
            Controls.Add(_volumeTools);
            Controls.Add(_tools);
            Controls.Add(statusStrip);

            _picture.MouseDown += OnPictureMouseDown;
            _picture.MouseMove += (s, e) => { if (_dragStart.HasValue) { _dragNow = e.Location; _picture.Invalidate(); } };
            _picture.MouseUp += OnPictureMouseUp;
            _picture.Paint += OnPicturePaint;
            SegrtLibrary.Log += OnSegrtLog;
            FormClosed += (s, e) => { SegrtLibrary.Log -= OnSegrtLog; _player.Dispose(); _volume.Dispose(); DisposeModels(); };
            _status.Text = "Open an image. segrt: " + SafeVersion();
        }

        /// <summary>The volume of "Open volume..." (the self-test reads its masks).</summary>
        internal VolumeEditor Volume { get { return _volume; } }

        /// <summary>The volume slice shown.</summary>
        internal long Slice { get { return _slice; } }

        /// <summary>The toolbars and the status bar (the self-test checks that they fit the window).</summary>
        internal ToolStrip[] Strips { get { return new ToolStrip[] { _tools, _volumeTools, (ToolStrip)Controls.OfType<StatusStrip>().First() }; } }

        /// <summary>The frame player of "Track frames..." (the self-test reads what it showed).</summary>
        internal FramePlayer Player { get { return _player; } }

        internal ushort[] LastLabels { get { return _labels; } }
        internal byte[] LastMask { get { return _mask; } }
        internal Size ImageSize { get { return _image == null ? Size.Empty : _image.Size; } }
        internal PictureBox Picture { get { return _picture; } }
        internal int ProgressPercent { get { return _progressBar.Value; } }

        /// <summary>The encode of the image shown (started when it was opened in SAM2 mode).</summary>
        internal Task Encoding { get { return _encoding; } }

        /// <summary>The last status bar text.</summary>
        internal string StatusText { get { return _status.Text; } }

        /// <summary>
        /// A token for the next long segrt call (cancelling any still running), with the Cancel button enabled;
        /// <see cref="EndWork"/> disables it again.
        /// </summary>
        CancellationToken StartWork()
        {
            if (_work != null) _work.Cancel();
            _work = new CancellationTokenSource();
            _progressBar.Value = 0;
            _cancelButton.Enabled = true;
            return _work.Token;
        }

        void EndWork(CancellationToken token)
        {
            if (_work != null && _work.Token == token)
            {
                _work.Dispose();
                _work = null;
                UpdateCancelButton();
            }
        }

        void UpdateCancelButton()
        {
            _cancelButton.Enabled = _mode == Mode.Track || _work != null || _encodeWork != null;
        }

        /// <summary>The Cancel button: stops the running encode and segment-everything (mid-run) and the tracking play.</summary>
        internal void CancelWork(string status)
        {
            if (_work != null) _work.Cancel();
            if (_encodeWork != null) _encodeWork.Cancel();
            if (_mode == Mode.Track) _player.Stop();
            if (status != null) _status.Text = status;
        }

        /// <summary>segrt's progress reports, on the UI thread (Progress posts them to the thread that made it).</summary>
        IProgress<SegrtProgress> ProgressBarReporter()
        {
            return new Progress<SegrtProgress>(p => _progressBar.Value = Math.Max(0, Math.Min(100, (int)Math.Round(p.Fraction * 100))));
        }

        static string SafeVersion()
        {
            try { return SegrtLibrary.Version; }
            catch (Exception e) { return e.Message; }
        }

        // segrt's diagnostics arrive on the thread that made the call: marshal to the UI thread.
        void OnSegrtLog(object sender, LogEventArgs e)
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
            _player.UseModel(dir);
            _volume.UseModel(dir);
            _volumeTools.Visible = false;
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
            DisposeSam2();
        }

        /// <summary>The MobileSAM-class pair in <paramref name="dir"/> (encoder.onnx + sam.onnx), in SAM2 click mode.</summary>
        internal void UseRealSam(string dir)
        {
            UseSam2Models(Path.Combine(dir, "encoder.onnx"), Path.Combine(dir, "sam.onnx"));
            _status.Text = "MobileSAM-class pair from " + dir + ": open an image, then click an object.";
            SetMode(Mode.Sam2);  // loads the pair and encodes the image shown, if any
        }

        /// <summary>The trained pair in SAM2 click mode on <paramref name="photo"/>, encoding at once (the zip's first view).</summary>
        internal void OpenRealDemo(string samDir, string photo)
        {
            UseRealSam(samDir);
            Track(OpenImageAsync(photo));
            _status.Text = "Trained MobileSAM-class pair on " + Path.GetFileName(photo) + ": click an object (right click excludes), or open your own image.";
        }

        void DisposeSam2()
        {
            if (_encodeWork != null) _encodeWork.Cancel();
            if (_sam2 != null) { _sam2.Dispose(); _sam2 = null; }
            _sam2Loading = null;
            _annotator = null;
        }

        void DisposeModels()
        {
            if (_unet != null) { _unet.Dispose(); _unet = null; }
            DisposeSam2();
            _player.ReleaseModel();
        }

        /// <summary>Runs UI work, reporting any failure in the status bar (and to the self-test).</summary>
        void Track(Task task)
        {
            Pending = task;
            task.ContinueWith(t => _status.Text = "Error: " + t.Exception.GetBaseException().Message,
                System.Threading.CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted, TaskScheduler.FromCurrentSynchronizationContext());
        }

        /// <summary>
        /// "Open image...": shows the picture; in SAM2 mode its encode starts at once (see <see cref="PrepareSam2Async"/>)
        /// and this returns when the encode has started, not when it ends: clicks are accepted from then on. A new
        /// picture cancels the encode of the previous one (mid-run), and a segment-everything still running.
        /// </summary>
        internal async Task OpenImageAsync(string path)
        {
            if (_work != null) _work.Cancel();
            if (_encodeWork != null) _encodeWork.Cancel();
            Bitmap loaded = await Task.Run(() => ImageFiles.Load24(path));
            if (_image != null) _image.Dispose();
            _image = loaded;
            _mask = null;
            _labels = null;
            if (_annotator != null) _annotator.ClearPrompts();
            Redraw();
            _status.Text = string.Format("{0} ({1} x {2})", Path.GetFileName(path), _image.Width, _image.Height);
            if (_mode == Mode.Sam2) Track(PrepareSam2Async());
            await _imageSet;
        }

        /// <summary>What choosing a mode in the combo box does (the combo box raises ApplyMode).</summary>
        internal void SetMode(Mode mode)
        {
            if (_modeBox.SelectedIndex != (int)mode) _modeBox.SelectedIndex = (int)mode;
            else ApplyMode(mode);
        }

        void ApplyMode(Mode mode)
        {
            if (_mode == Mode.Track && mode != Mode.Track) _player.Stop();
            if (mode != Mode.Track) _frameStatus.Text = "";
            _volumeTools.Visible = mode == Mode.Volume;
            _mode = mode;
            UpdateCancelButton();
            _mask = null;
            _labels = null;
            Redraw();
            if (mode == Mode.Sam2) Track(PrepareSam2Async());
            if (mode == Mode.Track && _player.Frames == null) _status.Text = "Open > Frames to track...: pick a folder of frames, then click the object on the first one.";
            if (mode == Mode.Volume && _volume.Slices == null) _status.Text = "Open > Volume...: pick a folder of slices, then click the structure on a slice.";
            if (mode == Mode.Volume && _volume.Slices != null) ShowSlice(_slice);
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
                // Read before the await: a model disposed meanwhile ("UNet model...") answers nothing but ObjectDisposedException.
                string provider = unet.ProviderInUse;
                UnetResult r = await Task.Run(() => unet.Segment(image));
                _mask = r.Mask;
                _labels = null;
                _maskColor = UnetColor;
                Redraw();
                _status.Text = string.Format("UNet {0}x{1} at {2}x{3}: pre-processing {4:F1} ms | inference {5:F1} ms | post-processing {6:F1} ms | {7} foreground pixels",
                    r.Width, r.Height, r.ModelWidth, r.ModelHeight, r.PreprocessMs, r.InferenceMs, r.PostprocessMs, r.ForegroundPixels);
                _provider.Text = "Provider: " + provider;
            }
            finally
            {
                _busy = false;
            }
        }

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
                _status.Text = string.Format("SAM2: decoder {0:F1} ms | post-processing {1:F1} ms | encoder {2} | predicted IoU {3:F3} | {4} points{5}",
                    r.DecoderMs, r.PostprocessMs, r.EncoderReused ? "cached" : r.EncoderMs.ToString("F0") + " ms", r.Score,
                    annotator.Points.Count, annotator.CurrentBox.HasValue ? " + box" : "");
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
                _status.Text = string.Format("Segment everything: {0} objects | {1} prompts in {2} decoder runs, {3:F0} ms | post-processing {4:F0} ms | encoder {5}",
                    r.Objects.Count, r.Prompts, r.DecoderRuns, r.DecoderMs, r.PostprocessMs, r.EncoderReused ? "cached" : r.EncoderMs.ToString("F0") + " ms");
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

        void ResetPrompts()
        {
            if (_annotator != null) _annotator.ClearPrompts();
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

        // ---- volumes ----

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
}
