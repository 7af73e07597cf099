using System.Runtime.Serialization;

namespace Segrt
{
    /// <summary>The ONNX Runtime library a session runs on.</summary>
    [DataContract]
    public sealed class RuntimeInfo
    {
        [DataMember(Name = "version")] string _version;
        [DataMember(Name = "path")] string _path;

        /// <summary>e.g. "1.31.1".</summary>
        public string Version { get { return _version; } }

        /// <summary>The file it was loaded from.</summary>
        public string Path { get { return _path; } }
    }
}
