namespace Segrt
{
    /// <summary>Which neighbours join pixels into one region (the values are the neighbour counts).</summary>
    public enum Connectivity
    {
        /// <summary>Pixels sharing a side.</summary>
        Four = 4,

        /// <summary>Pixels sharing a side or a corner (OpenCV's findContours default).</summary>
        Eight = 8,
    }
}
