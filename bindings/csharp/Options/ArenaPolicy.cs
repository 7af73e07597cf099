namespace Segrt
{
    /// <summary>
    /// What happens to ONNX Runtime's working buffers (its CPU memory arena's blocks) after each run of a
    /// segmenter (the C header's SegArena, mirrored by hand and checked by a test).
    /// </summary>
    public enum ArenaPolicy
    {
        /// <summary>
        /// The default: the image encoders and the video memory attention (runs of seconds with hundreds of
        /// megabytes of buffers) give them back once the process has been idle for about 2 seconds, so
        /// back-to-back encodes keep them; SAM2 clicks, UNet runs and the other video modules keep them for the
        /// next run. <see cref="SegrtLibrary.ReleaseMemory"/> gives them back at once.
        /// </summary>
        Auto = 0,
        /// <summary>Every run keeps them: fastest repeated calls; the process holds the largest call's buffers until its last segmenter is disposed.</summary>
        Keep = 1,
        /// <summary>Every run gives them back: least memory between calls; each call faults its buffers in again.</summary>
        Release = 2,
    }
}
