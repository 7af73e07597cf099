namespace Segrt
{
    /// <summary>Channel order a 3-channel model was trained with.</summary>
    public enum ChannelOrder
    {
        /// <summary>Red, green, blue (PIL, torchvision).</summary>
        Rgb = 0,
        /// <summary>Blue, green, red (OpenCV).</summary>
        Bgr = 1,
    }
}
