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
            // Simple dictionaries: a JSON object such as {"Conv": 18} reads as a Dictionary<string, long>.
            var serializer = new DataContractJsonSerializer(typeof(T), new DataContractJsonSerializerSettings { UseSimpleDictionaryFormat = true });
            using (var stream = new MemoryStream(Encoding.UTF8.GetBytes(json)))
                return (T)serializer.ReadObject(stream);
        }
    }
}
