namespace Segrt
{
    /// <summary>
    /// Which way <see cref="Sam2Tracker.Propagate(PropagationDirection, long?, long, System.Threading.CancellationToken, System.IProgress{SegrtProgress})"/>
    /// goes from its start frame (the C header's <c>SegTrackDirection</c>; values never change).
    /// </summary>
    public enum PropagationDirection
    {
        /// <summary>From the start frame to the last frame.</summary>
        Forward = 0,
        /// <summary>From the start frame down to frame 0.</summary>
        Reverse = 1,
        /// <summary>Forward, then in reverse: the start frame to the last, then the start frame again down to 0 (a volume from a middle slice).</summary>
        BothWays = 2,
    }
}
