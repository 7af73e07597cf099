using System.IO;
using System.Runtime.Serialization.Json;
using System.Text;

namespace Segrt
{
    /// <summary>segrt's JSON texts as DataContract objects.</summary>
    internal static class Json
    {
        internal static T Read<T>(string json)
        {
            var serializer = new DataContractJsonSerializer(typeof(T));
            using (var stream = new MemoryStream(Encoding.UTF8.GetBytes(json)))
                return (T)serializer.ReadObject(stream);
        }
    }
}
