namespace Segrt
{
    /// <summary>
    /// What a long segrt call is doing when it reports <see cref="SegrtProgress"/> (the C header's <c>SegStage</c>;
    /// values never change).
    /// </summary>
    public enum ProgressStage
    {
        /// <summary>The SAM2 image encoder is running (reported before it starts and when it is done).</summary>
        Encode = 1,
        /// <summary>Segment-everything is decoding its grid of prompts (the fraction is the share of prompts done).</summary>
        Prompts = 2,
        /// <summary>A tiled UNet run (the fraction is the share of tiles done).</summary>
        Tiles = 3,
        /// <summary>A single (untiled) model run is starting.</summary>
        Run = 4,
        /// <summary>A tracking call is running one of its video models on a frame.</summary>
        Frames = 5,
        /// <summary>A propagation through a track's frames (the fraction is the share of the request's frames done).</summary>
        Propagation = 6,
    }
}
