namespace Segrt
{
    /// <summary>
    /// Whether and where ONNX Runtime's optimised model is cached so later starts skip its graph optimiser
    /// (the C header's SegCacheMode, mirrored by hand and checked by a test).
    /// </summary>
    public enum ModelCacheMode
    {
        /// <summary>No cache (the default).</summary>
        Off = 0,
        /// <summary>A folder "segrt-cache" next to each model file; models loaded from bytes are refused (<see cref="Status.InvalidArgument"/>).</summary>
        BesideModel = 1,
        /// <summary>The folder <see cref="SegmenterOptions.CacheDirectory"/> (created if missing).</summary>
        Dir = 2,
    }
}
