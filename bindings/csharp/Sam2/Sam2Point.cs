using System;
using System.Collections.Generic;
using System.Drawing;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>A click in image pixels; Foreground false means "not this" (a background point).</summary>
    public struct Sam2Point
    {
        /// <summary>Column in image pixels (0 = left edge of the first pixel).</summary>
        public float X;

        /// <summary>Row in image pixels (0 = top edge of the first row).</summary>
        public float Y;

        /// <summary>True: "this object" (left click); false: "not this" (right click).</summary>
        public bool Foreground;

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
    }
}
