namespace Segrt
{
    /// <summary>
    /// How cuDNN chooses each convolution's algorithm on CUDA, and on CUDA behind TensorRT (the C header's
    /// SegConvSearch, mirrored by hand and checked by a test).
    /// </summary>
    public enum ConvSearch
    {
        /// <summary>
        /// The default: <see cref="Heuristic"/>. (ONNX Runtime's own default, exhaustive search, times every
        /// algorithm at the first run of each input shape: seconds, and extra GPU memory, whenever a UNet sees a new size.)
        /// </summary>
        Auto = 0,
        /// <summary>cuDNN's heuristics pick the algorithm: fast first runs.</summary>
        Heuristic = 1,
        /// <summary>Every algorithm is timed at the first run of each shape: slow first runs, the fastest later.</summary>
        Exhaustive = 2,
        /// <summary>cuDNN's default algorithm, no search: least memory.</summary>
        Default = 3,
    }
}
