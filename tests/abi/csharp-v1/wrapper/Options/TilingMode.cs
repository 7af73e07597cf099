namespace Segrt
{
    /// <summary>Whether large images are segmented tile by tile at full resolution (the C header's SegTileMode).</summary>
    public enum TilingMode
    {
        /// <summary>The whole image is resized to the model's input: one run.</summary>
        Off = 0,
        /// <summary>Always cut the image into model-sized tiles (no resizing); scores are blended where tiles overlap.</summary>
        On = 1,
        /// <summary>Tile when the image is more than twice the tile's width or height.</summary>
        Auto = 2,
    }
}
