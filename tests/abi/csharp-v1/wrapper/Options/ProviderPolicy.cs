namespace Segrt
{
    /// <summary>What happens when the requested execution provider cannot start.</summary>
    public enum ProviderPolicy
    {
        /// <summary>Creating the segmenter fails with ONNX Runtime's reason (<see cref="Status.ProviderUnavailable"/>).</summary>
        Require = 0,
        /// <summary>Run on the CPU; the reason is in <see cref="Segmenter.FallbackReason"/> and the <see cref="SegrtLibrary.Log"/> event.</summary>
        Fallback = 1,
    }
}
