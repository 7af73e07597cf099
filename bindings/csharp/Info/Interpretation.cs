using System;
using System.IO;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Json;
using System.Text;

namespace Segrt
{
    /// <summary>The part of segrt's "interpretation" the wrapper reads (SAM2's low-res mask size).</summary>
    [DataContract]
    internal sealed class Interpretation
    {
        [DataMember(Name = "mask_input_size")] internal int[] MaskInputSize;
    }
}
