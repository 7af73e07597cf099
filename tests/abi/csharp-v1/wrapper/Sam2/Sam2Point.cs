using System;

namespace Segrt
{
    /// <summary>A click in image pixels; <see cref="Foreground"/> false means "not this" (a background point).</summary>
    public readonly struct Sam2Point : IEquatable<Sam2Point>
    {
        /// <summary>Creates a point.</summary>
        /// <param name="x">Column in image pixels.</param>
        /// <param name="y">Row in image pixels.</param>
        /// <param name="foreground">True for "this object", false for "not this".</param>
        public Sam2Point(float x, float y, bool foreground)
        {
            X = x;
            Y = y;
            Foreground = foreground;
        }

        /// <summary>Column in image pixels (0 = left edge of the first pixel).</summary>
        public float X { get; }

        /// <summary>Row in image pixels (0 = top edge of the first row).</summary>
        public float Y { get; }

        /// <summary>True: "this object" (left click); false: "not this" (right click).</summary>
        public bool Foreground { get; }

        /// <summary>Whether both are the same click.</summary>
        /// <param name="other">Another point.</param>
        /// <returns>True when X, Y and Foreground are equal.</returns>
        public bool Equals(Sam2Point other)
        {
            return X.Equals(other.X) && Y.Equals(other.Y) && Foreground == other.Foreground;
        }

        /// <inheritdoc/>
        public override bool Equals(object obj)
        {
            return obj is Sam2Point && Equals((Sam2Point)obj);
        }

        /// <inheritdoc/>
        public override int GetHashCode()
        {
            return (X.GetHashCode() * 397 ^ Y.GetHashCode()) * 2 + (Foreground ? 1 : 0);
        }

        /// <summary>Whether both are the same click.</summary>
        /// <param name="left">A point.</param>
        /// <param name="right">Another point.</param>
        /// <returns>True when X, Y and Foreground are equal.</returns>
        public static bool operator ==(Sam2Point left, Sam2Point right)
        {
            return left.Equals(right);
        }

        /// <summary>Whether the clicks differ.</summary>
        /// <param name="left">A point.</param>
        /// <param name="right">Another point.</param>
        /// <returns>True when X, Y or Foreground differ.</returns>
        public static bool operator !=(Sam2Point left, Sam2Point right)
        {
            return !left.Equals(right);
        }

        /// <summary>e.g. "(105, 105) foreground".</summary>
        /// <returns>The point as text.</returns>
        public override string ToString()
        {
            return "(" + X + ", " + Y + ") " + (Foreground ? "foreground" : "background");
        }
    }
}
