namespace Segrt
{
    /// <summary>What <see cref="Regions"/> finds and returns. The defaults are segrt's (8-connected, pixel-exact outlines).</summary>
    public sealed class RegionOptions
    {
        /// <summary>Which neighbours join pixels into one region.</summary>
        public Connectivity Connectivity { get; set; } = Connectivity.Eight;

        /// <summary>
        /// Outline simplification in pixels: no border pixel farther than this from the polygon (OpenCV's approxPolyDP
        /// epsilon). 0 keeps every border pixel. Must be finite and &gt;= 0.
        /// </summary>
        public double Tolerance { get; set; }

        /// <summary>Regions of fewer pixels are left out.</summary>
        public long MinArea { get; set; }

        /// <summary>Holes of fewer pixels are filled: no outline, their pixels counted in the area and moments.</summary>
        public long MinHoleArea { get; set; }

        /// <summary>Trace the outlines (outer and holes) and the perimeter; false gives the other figures only, faster.</summary>
        public bool Outlines { get; set; } = true;

        /// <summary>Also return each region's convex hull (<see cref="MaskRegion.Hull"/>).</summary>
        public bool Hull { get; set; }

        /// <summary>
        /// For 8-bit masks: read each non-zero value as a label of its own (a multi-class UNet's class map) instead of
        /// every non-zero pixel as one foreground. 16-bit label images are always read as labels.
        /// </summary>
        public bool Labels { get; set; }
    }
}
