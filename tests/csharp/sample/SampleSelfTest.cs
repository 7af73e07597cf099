// The WinForms sample's self-test: drives dotnet-sample's MainForm through the same code paths a user's clicks
// take, then checks what it showed. Built against SegrtDemo.exe (whose internals it may use) and run from the
// sample's own output folder, so the sample as built and deployed is what is tested.
//
//   SegrtDemo.SelfTest.exe shot.png [--image PATH] [--sam2-encoder PATH --sam2-decoder PATH] [--check-click-centroid]
//                          [--video-model DIR] [--frames DIR] [--check-tracking] [--real-sam DIR --real-photo PATH]
//                          [--find-encoder PATH]
//
// Bundled image + UNet ("Run UNet"), SAM2 mode and one left click through the mouse handlers on the zoomed
// PictureBox, "Segment everything", then "Track frames...": the clip's folder, one click through the mouse handlers,
// then encoding ahead (two images opened in a row, a click at once), the play through the Timer and
// Sam2Tracker.Next to the last frame, then "Open > Volume..." on the same frames as slices: a click on the middle
// slice, "Propagate both ways", a correction on another slice, propagate again; with --real-sam, the Windows zip's
// first view (the trained pair on a photo) and a click on the cat; with --find-encoder, "Teach" from a click's mask
// and "Find" on other pictures; last, every toolbar and status bar item in view in a 1024-pixel-wide window.
// Screenshots: shot-unet.png, shot.png, shot-everything.png, shot-track.png, shot-volume.png, shot-find.png,
// shot-1024.png. Exit 0 when every check passed.
using System;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Linq;
using System.Threading.Tasks;
using System.Windows.Forms;
using Segrt;
using SegrtDemo;

static class SampleSelfTest
{
    [STAThread]
    static int Main(string[] args)
    {
        if (args.Length == 0 || args[0].StartsWith("--"))
        {
            Console.Error.WriteLine("usage: SegrtDemo.SelfTest.exe shot.png [options]: see the top of tests/csharp/sample/SampleSelfTest.cs");
            return 2;
        }
        Application.EnableVisualStyles();
        Application.SetCompatibleTextRenderingDefault(false);
        string models = Program.FindModels();
        string shot = Path.GetFullPath(args[0]);
        var form = new MainForm(models);
        int exitCode = 1;
        form.Shown += async (s, e) =>
        {
            try
            {
                await Run(form, models, shot, args);
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

    static string Option(string[] args, string name, string fallback)
    {
        int i = Array.IndexOf(args, name);
        return i >= 0 && i + 1 < args.Length ? args[i + 1] : fallback;
    }

    static async Task Run(MainForm form, string models, string shot, string[] args)
    {
        string image = Option(args, "--image", Path.Combine(models, "samples", "lesion_01.png"));
        await form.OpenImageAsync(image);

        // UNet through the "Run UNet" button's code.
        await form.RunUnetAsync();
        Expect(form.LastMask != null, "UNet produced a mask");
        CheckOutlines(form, "UNet");
        await Settle(form);
        SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-unet.png");

        // SAM2 mode (same code as picking it in the combo box), then a left click at a known image point.
        string encoder = Option(args, "--sam2-encoder", null), decoder = Option(args, "--sam2-decoder", null);
        if (encoder != null) form.UseSam2Models(encoder, decoder);
        form.SetMode(MainForm.Mode.Sam2);
        await form.Pending;
        var target = new PointF(form.ImageSize.Width * 0.62f, form.ImageSize.Height * 0.40f);
        Point control = ZoomMapping.ToControl(target, form.Picture.ClientSize, form.ImageSize);
        form.SimulateClick(control, MouseButtons.Left);
        await form.Pending;
        Expect(form.LastMask != null, "SAM2 produced a mask");
        CheckOutlines(form, "SAM2 click");
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
        CheckOutlines(form, "segment everything");
        Expect(form.LastRegions.Select(r => r.Label).Distinct().Count() == ids.Count, "every object coloured has an outline");
        if (Array.IndexOf(args, "--check-click-centroid") >= 0) Expect(ids.Count == 16, "16 oracle discs coloured, not " + ids.Count);
        await Settle(form);
        SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-everything.png");

        await EncodeAhead(form, models);
        await TrackFrames(form, models, shot, args);
        await VolumeWorkflow(form, models, shot, args);
        await RealPairOnAPhoto(form, shot, args);
        await TeachAndFind(form, shot, args);
        await FitsNarrowWindow(form, shot);
    }

    /// <summary>
    /// The Windows zip's first view (Program.Main opens it when the zip's models\real holds the trained pair and
    /// chelsea.png): the MobileSAM-class pair in SAM2 mode on the photo, then a left click on the cat through the
    /// mouse handlers. The cat, not the whole picture or a speck: its mask covers the clicked point and 50-90 % of
    /// the picture (the cat fills most of it: the CLI's mask for this click covers 74.0 %).
    /// </summary>
    static async Task RealPairOnAPhoto(MainForm form, string shot, string[] args)
    {
        string sam = Option(args, "--real-sam", null), photo = Option(args, "--real-photo", null);
        if (sam == null || photo == null)
        {
            Console.WriteLine("selftest: no --real-sam/--real-photo: the trained pair's first view is not tried");
            return;
        }
        form.OpenRealDemo(sam, photo);
        await form.Pending;
        Expect(form.ImageSize == new Size(451, 300), "the photo is shown (" + form.ImageSize + ")");
        var cat = new PointF(150, 150);
        form.SimulateClick(ZoomMapping.ToControl(cat, form.Picture.ClientSize, form.ImageSize), MouseButtons.Left);
        await form.Pending;
        Expect(form.LastMask != null, "the click on the photo gave a mask");
        double share = (double)Area(form.LastMask) / form.LastMask.Length;
        Console.WriteLine("selftest: the trained pair's mask of the cat covers " + (share * 100).ToString("F1") + " % of the photo");
        Expect(form.LastMask[150 * 451 + 150] != 0 && share > 0.5 && share < 0.9, "the mask is the cat's (" + (share * 100).ToString("F1") + " %)");
        await Settle(form);
        SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-real.png");
    }

    /// <summary>
    /// "Teach" and "Find" with --find-encoder (the colour oracle encoder, beside --sam2-decoder's geometric oracle
    /// decoder: objects are located by colour and decoded as discs): a left click on the red disc of one picture
    /// through the mouse handlers, "Teach", then another picture where the red disc moved: "Find" must show a mask,
    /// the moved disc's (IoU &gt; 0.8), with its outline and score; on a picture without it, "not found" and no mask.
    /// </summary>
    static async Task TeachAndFind(MainForm form, string shot, string[] args)
    {
        string encoder = Option(args, "--find-encoder", null), decoder = Option(args, "--sam2-decoder", null);
        if (encoder == null || decoder == null)
        {
            Console.WriteLine("selftest: no --find-encoder/--sam2-decoder: Teach and Find are not tried");
            return;
        }
        string dir = Path.Combine(Path.GetTempPath(), "segrt-selftest-find-" + System.Diagnostics.Process.GetCurrentProcess().Id);
        Directory.CreateDirectory(dir);
        try
        {
            string teach = Path.Combine(dir, "teach.png"), next = Path.Combine(dir, "next.png"), without = Path.Combine(dir, "without.png");
            SaveDiscs(teach, new[] { new Point(150, 150), new Point(380, 380) });
            SaveDiscs(next, new[] { new Point(340, 300), new Point(120, 400) });
            SaveDiscs(without, new[] { new Point(-100, -100), new Point(120, 400) });
            form.UseSam2Models(encoder, decoder);
            form.SetMode(MainForm.Mode.Sam2);
            await form.Pending;
            await form.OpenImageAsync(teach);
            form.SimulateClick(ZoomMapping.ToControl(new PointF(150, 150), form.Picture.ClientSize, form.ImageSize), MouseButtons.Left);
            await form.Pending;
            Expect(form.LastMask != null && IoU(form.LastMask, Disc(150, 150)) > 0.8, "the click on the red disc gave its mask to teach");
            await form.TeachAsync();
            Expect(form.Reference != null, "Teach made a reference (" + form.StatusText + ")");

            await form.OpenImageAsync(next);
            await form.FindAsync();
            Expect(form.LastFind != null && form.LastMask != null && Area(form.LastMask) > 0, "Find produced a mask (" + form.StatusText + ")");
            double iou = IoU(form.LastMask, Disc(340, 300));
            Console.WriteLine("selftest: Find on the next picture: IoU " + iou.ToString("F3") + " with the moved disc; status: " + form.StatusText);
            Expect(form.LastFind.Present && iou > 0.8, "Find's mask is the moved disc (IoU " + iou.ToString("F3") + ")");
            CheckOutlines(form, "Find");
            Expect(form.StatusText.Contains("found, score "), "the status bar shows the score (" + form.StatusText + ")");
            await Settle(form);
            SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-find.png");

            await form.OpenImageAsync(without);
            await form.FindAsync();
            Expect(form.LastFind != null && !form.LastFind.Present && Area(form.LastMask) == 0, "without the red disc Find shows no mask (" + form.StatusText + ")");
            CheckOutlines(form, "Find without the object");
            Expect(form.StatusText.Contains("not found"), "the status bar says not found (" + form.StatusText + ")");
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    /// <summary>A gray 512x512 picture with a red disc (radius 40) at discs[0] and a blue one at discs[1].</summary>
    static void SaveDiscs(string path, Point[] discs)
    {
        var px = new byte[512 * 512 * 3];
        for (int i = 0; i < 512 * 512; i++)
        {
            int x = i % 512, y = i / 512;
            byte r = 128, g = 128, b = 128;   // BGR order below
            if (InDisc(x, y, discs[0])) { r = 220; g = 30; b = 30; }
            else if (InDisc(x, y, discs[1])) { r = 30; g = 40; b = 220; }
            px[3 * i] = b; px[3 * i + 1] = g; px[3 * i + 2] = r;
        }
        using (var bmp = new Bitmap(512, 512, PixelFormat.Format24bppRgb))
        {
            var data = bmp.LockBits(new Rectangle(0, 0, 512, 512), ImageLockMode.WriteOnly, PixelFormat.Format24bppRgb);
            for (int y = 0; y < 512; y++) System.Runtime.InteropServices.Marshal.Copy(px, y * 512 * 3, data.Scan0 + y * data.Stride, 512 * 3);
            bmp.UnlockBits(data);
            bmp.Save(path, ImageFormat.Png);
        }
    }

    static bool InDisc(int x, int y, Point c) { return (x - c.X) * (x - c.X) + (y - c.Y) * (y - c.Y) <= 40 * 40; }

    static byte[] Disc(int cx, int cy)
    {
        var m = new byte[512 * 512];
        for (int i = 0; i < m.Length; i++) if (InDisc(i % 512, i / 512, new Point(cx, cy))) m[i] = 255;
        return m;
    }

    static double IoU(byte[] a, byte[] b)
    {
        long both = 0, any = 0;
        for (int i = 0; i < a.Length && i < b.Length; i++)
        {
            if (a[i] != 0 && b[i] != 0) both++;
            if (a[i] != 0 || b[i] != 0) any++;
        }
        return any == 0 ? 0 : (double)both / any;
    }

    /// <summary>
    /// "Open > Volume...": the clip's frames as the slices of a volume, a click on the middle slice through the mouse
    /// handlers, "Propagate both ways", a correction (a right click) on another slice, "Propagate both ways" again from
    /// there; after each propagation every slice has a mask, and the masks are a direct volume tracker's doing the same.
    /// </summary>
    static async Task VolumeWorkflow(MainForm form, string models, string shot, string[] args)
    {
        string videoModel = Option(args, "--video-model", Path.Combine(models, "sam2", "video"));
        string slices = Option(args, "--frames", Path.Combine(videoModel, "reference", "frames"));
        if (!Directory.Exists(slices) || !File.Exists(Path.Combine(videoModel, "video_metadata.json")))
        {
            Console.WriteLine("selftest: no SAM2 video model or slices beside the sample; the volume workflow skipped");
            return;
        }
        form.UseVideoModel(videoModel);
        await form.OpenVolumeAsync(slices);
        VolumeEditor volume = form.Volume;
        string[] files = volume.Slices;
        Expect(files != null && files.Length > 2, "the volume is open");
        long mid = files.Length / 2;
        Expect(form.Slice == mid, "the middle slice is shown first (" + form.Slice + ")");
        Size size = form.ImageSize;
        // The structure on the middle slice: the clip's object 1 there, scaled to the slice size.
        var click = new PointF(size.Width * 130f / 320f, size.Height * 112f / 240f);
        form.SimulateClick(ZoomMapping.ToControl(click, form.Picture.ClientSize, size), MouseButtons.Left);
        await form.Pending;
        Expect(volume.MaskOf(mid) != null && Area(volume.MaskOf(mid)) > 0, "the click gave the middle slice a mask");
        Sam2Point clicked = volume.ClicksOf(mid)[0];
        await form.PropagateBothWaysAsync();
        for (long k = 0; k < files.Length; k++) Expect(volume.MaskOf(k) != null, "slice " + k + " has a mask after propagating both ways");

        // A correction on another slice (shown through the slider's code): a right click inside its mask, then propagate again.
        long fix = Enumerable.Range(0, files.Length).Select(i => (long)i).First(k => k != mid && Area(volume.MaskOf(k)) > 0);
        form.ShowSlice(fix);
        Expect(form.Slice == fix, "the slider's slice is shown");
        PointF inside = Centroid(volume.MaskOf(fix), size.Width);
        form.SimulateClick(ZoomMapping.ToControl(inside, form.Picture.ClientSize, size), MouseButtons.Right);
        await form.Pending;
        Sam2Point corrected = volume.ClicksOf(fix)[0];
        Expect(!volume.ClicksOf(fix)[0].Foreground, "the right click is a background click");
        await form.PropagateBothWaysAsync();
        byte[][] shown = Enumerable.Range(0, files.Length).Select(k => volume.MaskOf(k)).ToArray();

        // A direct volume tracker doing the same gives the same masks (the later visit of each slice kept).
        using (var model = new Sam2VideoModel(videoModel))
        using (var direct = model.CreateTracker(new TrackerOptions { NumFrames = files.Length, Volume = true, CorrectionsAsConditioning = true }))
        {
            byte[][] want = await Task.Run(() =>
            {
                foreach (string f in files) using (var b = new Bitmap(f)) direct.AddFrame(b);
                var masks = new byte[files.Length][];
                direct.AddPoints(mid, VolumeEditor.ObjectId, new Sam2Point(clicked.X, clicked.Y, true));
                direct.Propagate(PropagationDirection.BothWays, mid, -1, f => masks[f.Frame] = f.MaskOf(VolumeEditor.ObjectId));
                direct.AddPoints(fix, VolumeEditor.ObjectId, new Sam2Point(corrected.X, corrected.Y, false));
                direct.Propagate(PropagationDirection.BothWays, fix, -1, f => masks[f.Frame] = f.MaskOf(VolumeEditor.ObjectId));
                return masks;
            });
            for (int k = 0; k < files.Length; k++)
                Expect(want[k].SequenceEqual(shown[k]), "slice " + k + ": the sample's mask is the direct tracker's (" + Area(want[k]) + " px there, " + Area(shown[k]) + " px shown)");
        }
        Console.WriteLine(string.Format("selftest: volume of {0} slices: clicked slice {1}, propagated both ways, corrected slice {2}, propagated again; areas {3}",
            files.Length, mid, fix, string.Join(" ", shown.Select(m => Area(m)))));
        form.ShowSlice(mid);
        await Settle(form);
        SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-volume.png");
    }

    /// <summary>
    /// A 1024-pixel-wide window (in Volume mode, where most is shown): every item of the toolbars and the status bar is
    /// laid out in view, none in the overflow menu or hidden for want of room.
    /// </summary>
    static async Task FitsNarrowWindow(MainForm form, string shot)
    {
        form.WindowState = FormWindowState.Normal;
        form.Size = new Size(1024, form.Height);
        form.PerformLayout();
        await Settle(form);
        foreach (ToolStrip strip in form.Strips)
        {
            if (!strip.Visible) continue;
            foreach (ToolStripItem item in strip.Items)
            {
                if (!item.Available) continue;
                string what = strip.GetType().Name + " item '" + item.Text + "' (" + item.GetType().Name + ")";
                Console.WriteLine(string.Format("selftest: {0} at {1}..{2} of {3}, {4}", what, item.Bounds.Left, item.Bounds.Right, strip.DisplayRectangle.Width, item.Placement));
                Expect(item.Placement == ToolStripItemPlacement.Main, what + " is not in view in a 1024-pixel-wide window (" + item.Placement + ")");
                Expect(item.Bounds.Right <= strip.ClientSize.Width, what + " ends at " + item.Bounds.Right + ", past the strip's " + strip.ClientSize.Width + " px");
            }
        }
        SaveScreenshot(form, Path.ChangeExtension(shot, null) + "-1024.png");
    }

    /// <summary>
    /// Encoding ahead in the sample (SAM2 mode): opening an image starts its encode and returns once the annotator
    /// holds it; opening another image at once cancels the older encode (or finds it done, for a fast encoder); a
    /// click made right away is accepted and segments the image shown.
    /// </summary>
    static async Task EncodeAhead(MainForm form, string models)
    {
        await form.OpenImageAsync(Path.Combine(models, "samples", "lesion_02.png"));
        Task first = form.Encoding;
        await form.OpenImageAsync(Path.Combine(models, "samples", "lesion_03.png"));
        Task second = form.Encoding;
        Expect(first != second, "the second image has an encode of its own");
        await first; // the sample catches the cancellation: the task ends either way
        bool during = !second.IsCompleted;
        var target = new PointF(form.ImageSize.Width * 0.5f, form.ImageSize.Height * 0.5f);
        form.SimulateClick(ZoomMapping.ToControl(target, form.Picture.ClientSize, form.ImageSize), MouseButtons.Left);
        await form.Pending;
        await second;
        Expect(form.LastMask != null && form.LastMask.Length == form.ImageSize.Width * form.ImageSize.Height,
            "a click right after opening gives a mask of the image shown");
        Console.WriteLine("selftest: encode ahead: the click was made " + (during ? "during" : "after") + " the encode; status: " + form.StatusText);
    }

    /// <summary>
    /// "Track frames...": the clip's folder, one click through the mouse handlers on the first frame, the play
    /// through the Timer and Sam2Tracker.Next to the last frame. Checks every frame was shown once and in order, and
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
        FramePlayer player = form.Player;
        Expect(player.FirstTracked != null, "the click on the first frame gave a mask");
        int shown = await player.PlayDone;
        string[] files = Directory.GetFiles(frames).Where(f => f.EndsWith(".png", StringComparison.OrdinalIgnoreCase))
            .OrderBy(f => f, StringComparer.Ordinal).ToArray();
        var expectedOrder = Enumerable.Range(0, files.Length).Select(i => (long)i).ToArray();
        Expect(shown == files.Length && player.ShownFrames.SequenceEqual(expectedOrder),
            "every frame shown once, in order: " + string.Join(",", player.ShownFrames));
        byte[] first = player.FirstTracked.MaskOf(FramePlayer.TrackedObjectId), last = player.LastTracked.MaskOf(FramePlayer.TrackedObjectId);
        Console.WriteLine(string.Format("selftest: tracked {0} frames from a click at ({1:F1}, {2:F1}); object area {3} px on the first frame, {4} px on the last",
            shown, target.X, target.Y, Area(first), Area(last)));

        // The same frames fed directly to a tracker with the sample's options give the same last mask.
        using (var model = new Sam2VideoModel(videoModel))
        using (var direct = model.CreateTracker(new TrackerOptions { NumFrames = files.Length }))
        {
            TrackedFrame f = await Task.Run(() =>
            {
                using (var b = new Bitmap(files[0])) direct.AddFrame(b);
                var clicked = direct.AddPoints(0, FramePlayer.TrackedObjectId, new Sam2Point(player.FirstClick.X, player.FirstClick.Y, true));
                for (int i = 1; i < files.Length; i++)
                    using (var b = new Bitmap(files[i])) clicked = direct.Next(b);
                return clicked;
            });
            byte[] want = f.MaskOf(FramePlayer.TrackedObjectId);
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

    /// <summary>
    /// The sample draws the outlines of the mask shown from segrt's Regions API and shows their area: the regions'
    /// areas add up to the mask's (or label image's) pixels, the picture shown has the outline colour on their
    /// outlines' points, and the status bar names the area.
    /// </summary>
    static void CheckOutlines(MainForm form, string what)
    {
        var regions = form.LastRegions;
        long pixels = form.LastLabels != null ? form.LastLabels.LongCount(l => l != 0) : Area(form.LastMask);
        Expect(regions != null, what + ": the regions of the mask shown are there");
        if (pixels == 0)
        {
            // (The bundled random-weights pair may find no object at all.)
            Expect(regions.Count == 0 && form.StatusText.Contains("no outline"), what + ": an empty mask, no outline");
            Console.WriteLine("selftest: " + what + ": an empty mask, no outline");
            return;
        }
        Expect(regions.Count > 0, what + ": outlines drawn");
        long area = regions.Sum(r => r.Area);
        Expect(area == pixels, what + ": the regions' area " + area + " is the mask's " + pixels + " px");
        var shown = (Bitmap)form.Picture.Image;
        int points = 0, onOutline = 0;
        foreach (var r in regions)
            foreach (Point p in r.Outer.Concat(r.Holes.SelectMany(h => h)))
            {
                points++;
                if (shown.GetPixel(p.X, p.Y).ToArgb() == OutlineOverlay.OutlineColor.ToArgb()) onOutline++;
            }
        Expect(points > 0 && onOutline >= 0.95 * points, what + ": " + onOutline + " of " + points + " outline points drawn in the outline colour");
        Expect(form.StatusText.Contains(" " + area + " px"), what + ": the status bar shows the area " + area + " px (" + form.StatusText + ")");
        Console.WriteLine("selftest: " + what + ": " + regions.Count + " regions, " + area + " px, " + onOutline + "/" + points + " outline points drawn");
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
