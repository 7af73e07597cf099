using System.Drawing;

namespace Segrt
{
    /// <summary>One match of <c>Sam2Reference.Find</c> (<see cref="FindResult.Found"/>).</summary>
    public sealed class FoundObject
    {
        /// <summary>Its value in <see cref="FindResult.Labels"/> (every-instance finds: 1, 2, ... best first; the best match: 1).</summary>
        public int Id { get; internal set; }

        /// <summary>True when <see cref="Score"/> reaches the threshold.</summary>
        public bool Present { get; internal set; }

        /// <summary>How much the match looks like the taught object, 0..1: the mean of <see cref="Similarity"/> (rescaled) and <see cref="Colour"/>.</summary>
        public float Score { get; internal set; }

        /// <summary>The decoder's predicted IoU of the mask.</summary>
        public float PredictedIou { get; internal set; }

        /// <summary>Box around the mask (inclusive pixel indices as Left/Top and Right-1/Bottom-1: a Rectangle); empty for an empty mask.</summary>
        public Rectangle Bounds { get; internal set; }

        /// <summary>Pixels of the mask.</summary>
        public long Area { get; internal set; }

        /// <summary>Where the object was located (the first click), in image pixels.</summary>
        public PointF Point { get; internal set; }

        /// <summary>The mask's mean embedding against the taught one (cosine).</summary>
        public float Similarity { get; internal set; }

        /// <summary>The mask's colours against the object's (1 when colour is off).</summary>
        public float Colour { get; internal set; }
    }
}
