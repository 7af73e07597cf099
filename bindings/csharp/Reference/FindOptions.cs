using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>Options of <c>Sam2Reference.Find</c>; the defaults are seg_find_options_default's.</summary>
    public sealed class FindOptions
    {
        /// <summary>False (default): the single best match with its presence decision. True: every instance whose score reaches <see cref="Threshold"/>.</summary>
        public bool All { get; set; }

        /// <summary>A match is present when its score (0..1) reaches this (default 0.6, chosen on the copy-and-paste set).</summary>
        public float Threshold { get; set; } = 0.6f;

        /// <summary>With <see cref="All"/>: most instances returned, best first (default 100; 1..65535).</summary>
        public int MaxInstances { get; set; } = 100;

        /// <summary>Refine each match once with its own box and logits where the decoder takes a mask input (default true).</summary>
        public bool Refine { get; set; } = true;

        /// <summary>Use the object's colour to locate it and decide presence (default true); false for copies whose colour varies.</summary>
        public bool Colour { get; set; } = true;

        internal unsafe SegFindOptions ToNative()
        {
            if (MaxInstances < 1 || MaxInstances > 65535) throw new ArgumentOutOfRangeException(nameof(MaxInstances), MaxInstances, "give 1 to 65535");
            var o = new SegFindOptions { struct_size = (uint)sizeof(SegFindOptions) };
            Interop.Check(NativeMethods.seg_find_options_default(&o));
            o.mode = All ? 1 : 0; // SEG_FIND_ALL, SEG_FIND_BEST
            o.threshold = Threshold;
            o.max_instances = (uint)MaxInstances;
            o.refine = Refine ? 1u : 0u;
            o.colour = Colour ? 1u : 0u;
            return o;
        }
    }
}
