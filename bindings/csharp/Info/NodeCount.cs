using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Segrt
{
    /// <summary>How many of a session's nodes ONNX Runtime assigned to one execution provider.</summary>
    [DataContract]
    public sealed class NodeCount
    {
        [DataMember(Name = "provider")] string _provider;
        [DataMember(Name = "nodes")] long _nodes;
        [DataMember(Name = "operators")] Dictionary<string, long> _operators;

        /// <summary>ONNX Runtime's name of the provider, e.g. "CUDAExecutionProvider" or "CPUExecutionProvider".</summary>
        public string Provider { get { return _provider; } }

        /// <summary>Nodes it was assigned (as ONNX Runtime partitioned the graph: after its basic optimisations, before each provider's fusions).</summary>
        public long Nodes { get { return _nodes; } }

        /// <summary>How many of them each operator type accounts for, e.g. "Conv": 18.</summary>
        public IReadOnlyDictionary<string, long> Operators { get { return _operators ?? new Dictionary<string, long>(); } }
    }
}
