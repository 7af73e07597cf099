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

        /// <summary>The provider the options asked for, e.g. "CUDA:0".</summary>
        public string Requested { get { return _requested; } }

        /// <summary>The provider running the model, e.g. "CPU".</summary>
        public string InUse { get { return _inUse; } }

        /// <summary>Why <see cref="InUse"/> differs from <see cref="Requested"/>; null when it does not.</summary>
        public string FallbackReason { get { return _fallbackReason; } }
    }
}
