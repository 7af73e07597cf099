namespace Segrt
{
    /// <summary>Severity of a <see cref="SegrtLibrary.Log"/> message (the C header's SegLogLevel).</summary>
    public enum LogLevel
    {
        /// <summary>A call failed (the same text as the <see cref="SegrtException.NativeMessage"/>).</summary>
        Error = 1,
        /// <summary>Something works differently than asked, e.g. a provider fallback.</summary>
        Warn = 2,
        /// <summary>Information: the ONNX Runtime loaded, the provider each session got.</summary>
        Info = 3,
    }
}
