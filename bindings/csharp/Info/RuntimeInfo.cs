using System.Collections.Generic;
using System.Runtime.Serialization;

namespace Segrt
{
    /// <summary>The ONNX Runtime library a session runs on.</summary>
    [DataContract]
    public sealed class RuntimeInfo
    {
        [DataMember(Name = "version")] string _version;
        [DataMember(Name = "path")] string _path;
        [DataMember(Name = "build")] string _build;
        [DataMember(Name = "api_level")] int _apiLevel;
        [DataMember(Name = "degraded")] List<string> _degraded;

        /// <summary>e.g. "1.31.1" (segrt loads 1.24 to 1.31).</summary>
        public string Version { get { return _version; } }

        /// <summary>The file it was loaded from.</summary>
        public string Path { get { return _path; } }

        /// <summary>Which build it is: "CPU", "CUDA 12", "CUDA 13", "DirectML" or "OpenVINO".</summary>
        public string Build { get { return _build ?? ""; } }

        /// <summary>The C API level of the loaded release (its minor version: 24 for 1.24.x).</summary>
        public int ApiLevel { get { return _apiLevel; } }

        /// <summary>What segrt does that the loaded release is too old for, each with what happens instead
        /// (empty from 1.24 on today).</summary>
        public IReadOnlyList<string> Degraded { get { return _degraded ?? new List<string>(); } }
    }
}
