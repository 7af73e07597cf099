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
    /// object ("Segment everything"), teaches the object clicked and finds it in other images ("Teach", "Find": a
    /// <see cref="Sam2Reference"/>), plays a folder of frames tracked from one click (<see cref="FramePlayer"/>), and
    /// segments a structure through the slices of a volume: click a slice, "Propagate both ways", correct a slice,
    /// propagate again (<see cref="VolumeEditor"/>; a slider picks the slice shown).
    /// Long work (loading models, the SAM2 encoder, tracking) runs off the UI thread through <c>Task.Run</c> over
    /// segrt's synchronous calls, with a token (the Cancel button) and a progress reporter (the progress bar); results
    /// are drawn as an overlay composed with LockBits (never GetPixel), with the outlines of the mask's regions on top
    /// (segrt's Regions API drawn as a GraphicsPath, <see cref="OutlineOverlay"/>) and their area in the status bar. In SAM2 mode an image is encoded as soon as it
    /// is shown (encoding ahead): a click made during the encode waits only for the rest of it, and opening another
    /// image cancels the older encode.
    /// </summary>
    public sealed partial class MainForm : Form
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
        System.Collections.Generic.IList<MaskRegion> _regions;  // the outlines drawn: the regions of _mask or _labels
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
            _tools.Items.Add(new ToolStripButton("Teach", null, (s, e) => Track(TeachAsync())) { ToolTipText = "SAM2: keep the object clicked as a reference" });
            _tools.Items.Add(new ToolStripButton("Find", null, (s, e) => Track(FindAsync())) { ToolTipText = "SAM2: find the taught object in the image shown, without a click" });
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
        /// <summary>The regions whose outlines are drawn over the mask shown (segrt's Regions API).</summary>
        internal System.Collections.Generic.IList<MaskRegion> LastRegions { get { return _regions; } }
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
            DisposeReference();  // taught on these models
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
                _status.Text = string.Format("{8} | UNet {0}x{1} at {2}x{3}: pre-processing {4:F1} ms | inference {5:F1} ms | post-processing {6:F1} ms | {7} foreground pixels",
                    r.Width, r.Height, r.ModelWidth, r.ModelHeight, r.PreprocessMs, r.InferenceMs, r.PostprocessMs, r.ForegroundPixels,
                    OutlineOverlay.Summary(_regions));
                _provider.Text = "Provider: " + provider;
            }
            finally
            {
                _busy = false;
            }
        }

        void ResetPrompts()
        {
            if (_annotator != null) _annotator.ClearPrompts();
            _mask = null;
            _labels = null;
            Redraw();
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
