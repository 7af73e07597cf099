using System;
using System.Drawing;

namespace Segrt
{
    /// <summary>One object found by "segment everything" (<see cref="EverythingResult.Objects"/>).</summary>
    public readonly struct EverythingObject : IEquatable<EverythingObject>
    {
        internal EverythingObject(int id, Rectangle bounds, long area, float predictedIou, float stabilityScore, PointF point)
        {
            Id = id;
            Bounds = bounds;
            Area = area;
            PredictedIou = predictedIou;
            StabilityScore = stabilityScore;
            Point = point;
        }

        /// <summary>Its value in <see cref="EverythingResult.Labels"/>: 1, 2, ... by predicted IoU, best first.</summary>
        public int Id { get; }

        /// <summary>Box around the full mask (inclusive pixel indices as Left/Top and Right-1/Bottom-1: a Rectangle).</summary>
        public Rectangle Bounds { get; }

        /// <summary>Pixels of the full mask (also those painted over by smaller objects in the label image).</summary>
        public long Area { get; }

        /// <summary>The decoder's predicted IoU of the mask.</summary>
        public float PredictedIou { get; }

        /// <summary>The mask's stability score.</summary>
        public float StabilityScore { get; }

        /// <summary>The prompt point that gave the mask, in image pixels.</summary>
        public PointF Point { get; }

        /// <summary>Whether both records are the same.</summary>
        /// <param name="other">Another record.</param>
        /// <returns>True when every property is equal.</returns>
        public bool Equals(EverythingObject other)
        {
            return Id == other.Id && Bounds == other.Bounds && Area == other.Area && PredictedIou.Equals(other.PredictedIou)
                && StabilityScore.Equals(other.StabilityScore) && Point == other.Point;
        }

        /// <inheritdoc/>
        public override bool Equals(object obj)
        {
            return obj is EverythingObject && Equals((EverythingObject)obj);
        }

        /// <inheritdoc/>
        public override int GetHashCode()
        {
            return (Id * 397 ^ Bounds.GetHashCode()) * 397 ^ Area.GetHashCode();
        }

        /// <summary>Whether both records are the same.</summary>
        /// <param name="left">A record.</param>
        /// <param name="right">Another record.</param>
        /// <returns>True when every property is equal.</returns>
        public static bool operator ==(EverythingObject left, EverythingObject right)
        {
            return left.Equals(right);
        }

        /// <summary>Whether the records differ.</summary>
        /// <param name="left">A record.</param>
        /// <param name="right">Another record.</param>
        /// <returns>True when a property differs.</returns>
        public static bool operator !=(EverythingObject left, EverythingObject right)
        {
            return !left.Equals(right);
        }
    }
}
