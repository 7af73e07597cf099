namespace Segrt
{
    /// <summary>
    /// Progress of a long call (UNet tiles, SAM2 encode, segment-everything, tracking), reported through the
    /// <see cref="System.IProgress{T}"/> given to the call. Reports come on the thread running the call, between
    /// its steps; with <see cref="System.Progress{T}"/> they are posted to the thread that created it (the UI thread
    /// in a WinForms app).
    /// </summary>
    public readonly struct SegrtProgress
    {
        /// <summary>Creates a progress report.</summary>
        /// <param name="stage">What the call is doing.</param>
        /// <param name="fraction">The share of this stage done, in [0, 1].</param>
        public SegrtProgress(ProgressStage stage, double fraction)
        {
            Stage = stage;
            Fraction = fraction;
        }

        /// <summary>What the call is doing.</summary>
        public ProgressStage Stage { get; }

        /// <summary>The share of <see cref="Stage"/> done, in [0, 1] (0 when the stage has no measurable steps).</summary>
        public double Fraction { get; }

        /// <summary>The stage and the percentage, e.g. "Tiles 25%".</summary>
        /// <returns>A short description of the report.</returns>
        public override string ToString()
        {
            return Stage + " " + (Fraction * 100).ToString("F0", System.Globalization.CultureInfo.InvariantCulture) + "%";
        }
    }
}
