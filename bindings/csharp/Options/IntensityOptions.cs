using System;
using System.Globalization;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// The intensity stage: how the values of a 16-bit, signed 16-bit or float image (and, once set, of an 8-bit one)
    /// become the values the model's own normalisation sees. Set it on a segmenter with
    /// <see cref="Segmenter.Intensity"/>; it is segrt's <c>SegIntensity</c>, step by step:
    /// <list type="number">
    /// <item><description><see cref="UsedBits"/> (0 = all): a stored value outside them is refused, never masked;</description></item>
    /// <item><description>the rescale <c>v = stored * Slope + Intercept</c> (DICOM RescaleSlope/RescaleIntercept);</description></item>
    /// <item><description>the range <c>[low, high]</c> from <see cref="Mode"/>: a fixed window, the image's min-max or percentiles, or none;</description></item>
    /// <item><description><c>v' = clamp((v - low) / (high - low), 0, 1) * (OutputHigh - OutputLow) + OutputLow</c>.</description></item>
    /// </list>
    /// </summary>
    /// <remarks>
    /// Immutable: the factories make one, the <c>With...</c> methods return a changed copy, e.g.
    /// <c>IntensityOptions.Window(40, 400).WithRescale(1, -1024)</c> (a CT soft-tissue window on stored values).
    /// The values are checked by segrt when the options are set (a window of zero width, percentiles out of order,
    /// a slope of 0, a value that is not finite: <see cref="SegrtException"/> with <see cref="Status.InvalidArgument"/>).
    /// Keep the output range 0..255 (the default) for SAM2 and for tracking: each model's own normalisation then
    /// applies as it does to 8-bit pixels.
    /// </remarks>
    public sealed class IntensityOptions
    {
        IntensityOptions(IntensityRange range, double low, double high, double percentileLow, double percentileHigh)
        {
            Mode = range;
            Low = low;
            High = high;
            PercentileLow = percentileLow;
            PercentileHigh = percentileHigh;
            Slope = 1;
            Intercept = 0;
            OutputLow = 0;
            OutputHigh = 255;
        }

        IntensityOptions Copy()
        {
            return (IntensityOptions)MemberwiseClone();
        }

        /// <summary>segrt's default stage for 16-bit and float images: each image's own min-max to 0..255, all bits, no rescale (<c>seg_intensity_default</c>).</summary>
        public static IntensityOptions Default
        {
            get { return MinMax(); }
        }

        /// <summary>
        /// A window given as centre and width (DICOM WindowCenter/WindowWidth, e.g. 40 and 400 for CT soft tissue):
        /// <c>Low = centre - width / 2</c>, <c>High = centre + width / 2</c>, as <c>seg_intensity_set_window</c> computes it.
        /// </summary>
        /// <param name="centre">The centre, in rescaled units.</param>
        /// <param name="width">The width; must be positive (segrt refuses the options when they are set otherwise).</param>
        /// <returns>The options.</returns>
        public static IntensityOptions Window(double centre, double width)
        {
            return new IntensityOptions(IntensityRange.Window, centre - width / 2, centre + width / 2, 0.5, 99.5);
        }

        /// <summary>A window given by its ends: the values <paramref name="low"/>..<paramref name="high"/> map onto the output range, values outside are clipped.</summary>
        /// <param name="low">The value that maps to <see cref="OutputLow"/>, in rescaled units.</param>
        /// <param name="high">The value that maps to <see cref="OutputHigh"/>; must be above <paramref name="low"/>.</param>
        /// <returns>The options.</returns>
        public static IntensityOptions Range(double low, double high)
        {
            return new IntensityOptions(IntensityRange.Window, low, high, 0.5, 99.5);
        }

        /// <summary>Each image's own minimum..maximum (over all its colour channels) maps onto the output range; a flat image maps to <see cref="OutputLow"/>.</summary>
        /// <returns>The options.</returns>
        public static IntensityOptions MinMax()
        {
            return new IntensityOptions(IntensityRange.MinMax, 0, 0, 0.5, 99.5);
        }

        /// <summary>Each image's percentiles (numpy's linear interpolation, over all its colour channels) map onto the output range; values outside are clipped (MONAI ScaleIntensityRangePercentiles).</summary>
        /// <param name="low">The lower percentile, 0..100 (e.g. 0.5).</param>
        /// <param name="high">The upper percentile, 0..100, above <paramref name="low"/> (e.g. 99.5).</param>
        /// <returns>The options.</returns>
        public static IntensityOptions Percentiles(double low, double high)
        {
            return new IntensityOptions(IntensityRange.Percentiles, 0, 0, low, high);
        }

        /// <summary>No mapping: the rescaled values reach the model's normalisation as they are (float models that take raw HU).</summary>
        public static IntensityOptions None
        {
            get { return new IntensityOptions(IntensityRange.None, 0, 0, 0.5, 99.5); }
        }

        /// <summary>Which values map onto the output range.</summary>
        public IntensityRange Mode { get; private set; }

        /// <summary>The window's low end (<see cref="IntensityRange.Window"/>), in rescaled units.</summary>
        public double Low { get; private set; }

        /// <summary>The window's high end (<see cref="IntensityRange.Window"/>), in rescaled units.</summary>
        public double High { get; private set; }

        /// <summary>The lower percentile (<see cref="IntensityRange.Percentiles"/>), 0..100.</summary>
        public double PercentileLow { get; private set; }

        /// <summary>The upper percentile (<see cref="IntensityRange.Percentiles"/>), 0..100.</summary>
        public double PercentileHigh { get; private set; }

        /// <summary>The rescale's slope (DICOM RescaleSlope; default 1, never 0).</summary>
        public double Slope { get; private set; }

        /// <summary>The rescale's intercept (DICOM RescaleIntercept; default 0).</summary>
        public double Intercept { get; private set; }

        /// <summary>Used bits of a 16-bit (or 8-bit) integer image, e.g. 12 for a Mono12 camera or a HALCON uint2 image with 12 bits; 0 = all (default). At most 16.</summary>
        public int UsedBits { get; private set; }

        /// <summary>The value the low end maps to (default 0).</summary>
        public double OutputLow { get; private set; }

        /// <summary>The value the high end maps to (default 255).</summary>
        public double OutputHigh { get; private set; }

        /// <summary>A copy with the modality rescale <c>v = stored * slope + intercept</c>, applied before the range (so a window is in rescaled units, e.g. HU).</summary>
        /// <param name="slope">RescaleSlope; not 0.</param>
        /// <param name="intercept">RescaleIntercept.</param>
        /// <returns>The changed copy.</returns>
        public IntensityOptions WithRescale(double slope, double intercept)
        {
            var c = Copy();
            c.Slope = slope;
            c.Intercept = intercept;
            return c;
        }

        /// <summary>
        /// A copy that declares the used bits of integer images: an unsigned value must lie in 0..2^bits-1, a signed one
        /// in -2^(bits-1)..2^(bits-1)-1, else the call is refused (garbage in the unused high bits is an unpacking bug,
        /// and segrt never masks it away). Ignored for float images.
        /// </summary>
        /// <param name="bits">1..16, or 0 for all.</param>
        /// <returns>The changed copy.</returns>
        /// <exception cref="ArgumentOutOfRangeException"><paramref name="bits"/> is negative.</exception>
        public IntensityOptions WithUsedBits(int bits)
        {
            if (bits < 0) throw new ArgumentOutOfRangeException(nameof(bits), bits, "the used bits must not be negative (0 = all)");
            var c = Copy();
            c.UsedBits = bits;
            return c;
        }

        /// <summary>A copy whose range maps onto <paramref name="low"/>..<paramref name="high"/> (e.g. 0..1 for a MONAI <c>ScaleIntensityRange</c> with b_min 0, b_max 1).</summary>
        /// <param name="low">The value the range's low end maps to.</param>
        /// <param name="high">The value the range's high end maps to.</param>
        /// <returns>The changed copy.</returns>
        public IntensityOptions WithOutputRange(double low, double high)
        {
            var c = Copy();
            c.OutputLow = low;
            c.OutputHigh = high;
            return c;
        }

        /// <summary>The settings in one line, e.g. "Window -160..240, rescale 1x+0, bits 0, output 0..255".</summary>
        /// <returns>The text.</returns>
        public override string ToString()
        {
            string range;
            switch (Mode)
            {
                case IntensityRange.Window: range = string.Format(CultureInfo.InvariantCulture, "Window {0}..{1}", Low, High); break;
                case IntensityRange.Percentiles: range = string.Format(CultureInfo.InvariantCulture, "Percentiles {0}..{1}", PercentileLow, PercentileHigh); break;
                default: range = Mode.ToString(); break;
            }
            return string.Format(CultureInfo.InvariantCulture, "{0}, rescale {1}x+{2}, bits {3}, output {4}..{5}", range, Slope, Intercept, UsedBits, OutputLow, OutputHigh);
        }

        /// <summary>The native struct, its size declared and every field beyond these at segrt's defaults.</summary>
        internal unsafe SegIntensity ToNative()
        {
            var n = new SegIntensity { struct_size = (uint)sizeof(SegIntensity) };
            Interop.Check(NativeMethods.seg_intensity_default(&n));
            n.bits = (uint)UsedBits;
            n.range = (int)Mode;
            n.slope = Slope;
            n.intercept = Intercept;
            n.low = Low;
            n.high = High;
            n.percentile_low = PercentileLow;
            n.percentile_high = PercentileHigh;
            n.out_low = OutputLow;
            n.out_high = OutputHigh;
            return n;
        }
    }
}
