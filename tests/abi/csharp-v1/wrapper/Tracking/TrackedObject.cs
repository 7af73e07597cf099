using System;
using System.Drawing;

namespace Segrt
{
    /// <summary>One object on one frame: the record segrt writes beside its mask (<see cref="TrackedFrame.Objects"/>).</summary>
    public readonly struct TrackedObject : IEquatable<TrackedObject>
    {
        internal TrackedObject(int objectId, bool present, bool hasOutput, float score, long area, Rectangle bounds)
        {
            ObjectId = objectId;
            Present = present;
            HasOutput = hasOutput;
            Score = score;
            Area = area;
            Bounds = bounds;
        }

        /// <summary>The id given when the object was prompted.</summary>
        public int ObjectId { get; }

        /// <summary>True when SAM2 sees the object on this frame (object score above 0); false when hidden or gone (empty mask).</summary>
        public bool Present { get; }

        /// <summary>False when the object has no prediction on this frame yet (prompted on a later frame): Score 0, empty mask.</summary>
        public bool HasOutput { get; }

        /// <summary>SAM2's object score logit (present when above 0).</summary>
        public float Score { get; }

        /// <summary>Pixels of the mask.</summary>
        public long Area { get; }

        /// <summary>The box around the mask in frame pixels (Right/Bottom exclusive); <see cref="Rectangle.Empty"/> for an empty mask.</summary>
        public Rectangle Bounds { get; }

        /// <summary>Whether both records are the same.</summary>
        /// <param name="other">Another record.</param>
        /// <returns>True when every property is equal.</returns>
        public bool Equals(TrackedObject other)
        {
            return ObjectId == other.ObjectId && Present == other.Present && HasOutput == other.HasOutput
                && Score.Equals(other.Score) && Area == other.Area && Bounds == other.Bounds;
        }

        /// <inheritdoc/>
        public override bool Equals(object obj)
        {
            return obj is TrackedObject && Equals((TrackedObject)obj);
        }

        /// <inheritdoc/>
        public override int GetHashCode()
        {
            return (ObjectId * 397 ^ Area.GetHashCode()) * 397 ^ Bounds.GetHashCode();
        }

        /// <summary>Whether both records are the same.</summary>
        /// <param name="left">A record.</param>
        /// <param name="right">Another record.</param>
        /// <returns>True when every property is equal.</returns>
        public static bool operator ==(TrackedObject left, TrackedObject right)
        {
            return left.Equals(right);
        }

        /// <summary>Whether the records differ.</summary>
        /// <param name="left">A record.</param>
        /// <param name="right">Another record.</param>
        /// <returns>True when a property differs.</returns>
        public static bool operator !=(TrackedObject left, TrackedObject right)
        {
            return !left.Equals(right);
        }
    }
}
