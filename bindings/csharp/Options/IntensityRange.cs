namespace Segrt
{
    /// <summary>
    /// Which values of an image map onto the output range of the intensity stage (the C header's SegIntensityRange,
    /// mirrored by hand; a test checks every name and value against the header). See <see cref="IntensityOptions"/>.
    /// </summary>
    public enum IntensityRange
    {
        /// <summary>No mapping: the (rescaled) value passes through unchanged (float models that take raw HU).</summary>
        None = 0,
        /// <summary>A fixed window <see cref="IntensityOptions.Low"/>..<see cref="IntensityOptions.High"/> in rescaled units; values outside are clipped.</summary>
        Window = 1,
        /// <summary>Each image's own minimum..maximum, over all its colour channels.</summary>
        MinMax = 2,
        /// <summary>Each image's <see cref="IntensityOptions.PercentileLow"/>..<see cref="IntensityOptions.PercentileHigh"/> percentiles (numpy's linear interpolation), over all its colour channels; values outside are clipped.</summary>
        Percentiles = 3,
    }
}
