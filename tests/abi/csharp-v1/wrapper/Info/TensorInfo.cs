using System.Runtime.Serialization;

namespace Segrt
{
    /// <summary>One input or output of a model.</summary>
    [DataContract]
    public sealed class TensorInfo
    {
        [DataMember(Name = "name")] string _name;
        [DataMember(Name = "dtype")] string _dtype;
        [DataMember(Name = "shape")] long[] _shape;

        /// <summary>The tensor's name in the model.</summary>
        public string Name { get { return _name; } }

        /// <summary>Its element type, e.g. "f32".</summary>
        public string DataType { get { return _dtype; } }

        /// <summary>Its shape; -1 marks a dynamic axis.</summary>
        public long[] Shape { get { return _shape; } }
    }
}
