using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using Segrt.Native;

namespace Segrt
{
    /// <summary>One object on one frame: the record segrt writes beside its mask.</summary>
    public struct TrackedObject
    {
        /// <summary>The id given when the object was prompted.</summary>
        public int ObjectId;

        /// <summary>True when SAM2 sees the object on this frame (object score above 0); false when hidden or gone (empty mask).</summary>
        public bool Present;

        /// <summary>False when the object has no prediction on this frame yet (prompted on a later frame): Score 0, empty mask.</summary>
        public bool HasOutput;

        /// <summary>SAM2's object score logit (present when above 0).</summary>
        public float Score;

        /// <summary>Pixels of the mask.</summary>
        public long Area;

        /// <summary>The box around the mask in frame pixels (Right/Bottom exclusive); <see cref="Rectangle.Empty"/> for an empty mask.</summary>
        public Rectangle Bounds;
    }
}
