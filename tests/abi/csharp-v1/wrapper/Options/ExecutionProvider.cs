namespace Segrt
{
    /// <summary>
    /// Execution providers (the C header's SegProvider, mirrored by hand and checked by a test);
    /// <see cref="SegrtLibrary.ProbeProvidersJson"/> says which work on this PC.
    /// </summary>
    public enum ExecutionProvider
    {
        /// <summary>ONNX Runtime's CPU provider (always available).</summary>
        Cpu = 0,
        /// <summary>NVIDIA CUDA (needs the GPU build of ONNX Runtime and CUDA/cuDNN).</summary>
        Cuda = 1,
        /// <summary>NVIDIA TensorRT.</summary>
        TensorRT = 2,
        /// <summary>DirectML (Windows, any DirectX 12 GPU).</summary>
        DirectML = 3,
        /// <summary>Intel OpenVINO.</summary>
        OpenVino = 4,
    }
}
