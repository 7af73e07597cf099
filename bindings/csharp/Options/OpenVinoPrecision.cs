namespace Segrt
{
    /// <summary>
    /// OpenVINO's inference precision hint (the C header's SegOvPrecision, mirrored by hand and checked by a test).
    /// </summary>
    public enum OpenVinoPrecision
    {
        /// <summary>The default: the device's own (FP32 on the CPU; FP16 on Intel GPUs and NPUs).</summary>
        Default = 0,
        /// <summary>32-bit floats.</summary>
        Fp32 = 1,
        /// <summary>16-bit floats (Intel GPUs and NPUs; the CPU refuses it).</summary>
        Fp16 = 2,
        /// <summary>The model's own precision, no lowering (what a parity check wants).</summary>
        Accuracy = 3,
    }
}
