namespace Segrt
{
    /// <summary>How a binary model's probability becomes the 0/255 mask.</summary>
    public enum ThresholdMode
    {
        /// <summary><see cref="SegmenterOptions.Threshold"/>.</summary>
        Fixed = 0,
        /// <summary>Otsu's threshold of each image's probabilities.</summary>
        Otsu = 1,
    }
}
