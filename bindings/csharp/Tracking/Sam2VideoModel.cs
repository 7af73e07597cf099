using System;
using System.IO;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// A SAM2 video model (the four modules written by <c>models/sam2/export_sam2_video.py</c>, with their
    /// <c>video_metadata.json</c>): make one <see cref="Sam2Tracker"/> per video with <see cref="CreateTracker"/>.
    /// Thread-safe: trackers made from one model may run at once on different threads (they share the model's
    /// sessions). Disposing the model refuses later <see cref="CreateTracker"/> calls; trackers already made
    /// keep the model alive and go on working until they are disposed. See <see cref="Segmenter"/> for
    /// session info and the provider in use.
    /// </summary>
    public sealed class Sam2VideoModel : Segmenter
    {
        /// <summary>Loads a SAM2 video model from the folder holding <c>video_metadata.json</c> and its four .onnx modules.</summary>
        /// <param name="modelsDir">The folder (any path).</param>
        /// <param name="options">Session options; null for segrt's defaults.</param>
        /// <exception cref="ArgumentNullException"><paramref name="modelsDir"/> is null.</exception>
        /// <exception cref="ArgumentException">An option is out of range before reaching segrt.</exception>
        /// <exception cref="SegrtException">segrt refused the folder (e.g. ModelNotFound) or the options.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public Sam2VideoModel(string modelsDir, SegmenterOptions options = null)
            : base(Create(modelsDir, options), FolderBytes(modelsDir))
        {
        }

        static long FolderBytes(string dir)
        {
            try
            {
                long n = 0;
                foreach (var f in new DirectoryInfo(dir).GetFiles("*.onnx")) n += f.Length;
                return n;
            }
            catch (Exception)
            {
                return 0; // segrt read it; only the memory hint is at stake
            }
        }

        static unsafe SessionHandle Create(string modelsDir, SegmenterOptions options)
        {
            if (modelsDir == null) throw new ArgumentNullException(nameof(modelsDir));
            Interop.EnsureLoaded();
            options = options ?? new SegmenterOptions();
            fixed (byte* dir = Interop.Utf8z(modelsDir))
            fixed (byte* ort = Interop.Utf8z(options.OnnxRuntimePath))
            fixed (byte* output = Interop.Utf8z(options.OutputName))
            fixed (byte* cacheDir = Interop.Utf8z(options.CacheDirectory))
            fixed (byte* ovDevice = Interop.Utf8z(options.OpenVinoDevice))
            fixed (byte* ovCacheDir = Interop.Utf8z(options.OpenVinoCacheDirectory))
            {
                SegOptions o = options.ToNative(ort, output, cacheDir, null, ovDevice, ovCacheDir);
                SegSession* session = null;
                Interop.Check(NativeMethods.seg_create_sam2_video(dir, &o, &session));
                return new SessionHandle(session);
            }
        }

        /// <summary>Starts a new, empty track (one video) on this model; the caller disposes it.</summary>
        /// <param name="options">Track options; null for segrt's defaults.</param>
        /// <returns>The new tracker.</returns>
        /// <exception cref="ArgumentOutOfRangeException">An option is negative.</exception>
        /// <exception cref="ObjectDisposedException">The model has been disposed.</exception>
        /// <exception cref="SegrtException">segrt refused the options.</exception>
        public unsafe Sam2Tracker CreateTracker(TrackerOptions options = null)
        {
            SegTrackOptions o = (options ?? new TrackerOptions()).ToNative();
            using (var lease = Acquire())
            {
                SegTrack* track = null;
                Interop.Check(NativeMethods.seg_track_create(lease.Session, &o, &track));
                return new Sam2Tracker(new TrackHandle(track));
            }
        }
    }
}
