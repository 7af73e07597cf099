using System.Runtime.Serialization;

namespace Segrt
{
    /// <summary>The part of segrt's "interpretation" the wrapper reads (SAM2's low-res mask size).</summary>
    [DataContract]
    internal sealed class Interpretation
    {
        [DataMember(Name = "mask_input_size")] internal int[] MaskInputSize;
    }
}
