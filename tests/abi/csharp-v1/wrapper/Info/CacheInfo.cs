using System.Runtime.Serialization;

namespace Segrt
{
    /// <summary>What the model cache did when a session was built (<see cref="SessionInfo.Cache"/>).</summary>
    [DataContract]
    public sealed class CacheInfo
    {
        [DataMember(Name = "status")] string _status;
        [DataMember(Name = "file")] string _file;
        [DataMember(Name = "note")] string _note;

        /// <summary>
        /// "off" (no cache asked for), "hit" (loaded from the cache), "miss" (optimised and written),
        /// "rebuilt" (a stale or damaged file was replaced), "unwritable" (the folder could not be written:
        /// the session runs without the cache) or "bypassed" (the provider cannot use it).
        /// </summary>
        public string Status { get { return _status; } }

        /// <summary>The cache file; null when the cache is off.</summary>
        public string File { get { return _file; } }

        /// <summary>Why the cache was rebuilt, not written or not used; null when all went well.</summary>
        public string Note { get { return _note; } }
    }
}
