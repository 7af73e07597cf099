using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Segrt
{
    /// <summary>The execution provider a session asked for, the one it got, and why they differ.</summary>
    [DataContract]
    public sealed class ProviderReport
    {
        [DataMember(Name = "requested")] string _requested;
        [DataMember(Name = "in_use")] string _inUse;
        [DataMember(Name = "fallback_reason")] string _fallbackReason;
        [DataMember(Name = "nodes")] List<NodeCount> _nodes;
        [DataMember(Name = "tensorrt_profile")] string _tensorRtProfile;

        /// <summary>The provider the options asked for, e.g. "CUDA:0".</summary>
        public string Requested { get { return _requested; } }

        /// <summary>
        /// The provider running the model, e.g. "CPU", "CUDA:0", or "CUDA:0 (partly: 12 of 340 nodes on the CPU)" when
        /// ONNX Runtime placed nodes the provider cannot run on the CPU (see <see cref="Nodes"/>).
        /// </summary>
        public string InUse { get { return _inUse; } }

        /// <summary>Why <see cref="InUse"/> differs from <see cref="Requested"/>; null when it does not.</summary>
        public string FallbackReason { get { return _fallbackReason; } }

        /// <summary>
        /// Under TensorRT: the shape profile TensorRT was given (e.g. "image 1..4x3x512x512"), or why it got none;
        /// null for other providers.
        /// </summary>
        public string TensorRtProfile { get { return _tensorRtProfile; } }

        /// <summary>How many nodes ONNX Runtime assigned to each provider, with their operator types; empty when it could not say.</summary>
        public IList<NodeCount> Nodes { get { return (_nodes ?? new List<NodeCount>()).AsReadOnly(); } }
    }
}
