using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// The native segrt library as a whole, for this process: its version and C ABI, loading ONNX Runtime early,
    /// the execution providers this machine can run, and segrt's diagnostics (<see cref="Log"/>).
    /// </summary>
    public static class SegrtLibrary
    {
        /// <summary>e.g. "segrt 0.1.0 (ABI 1); ONNX Runtime 1.31.1 loaded from C:\App\onnxruntime.dll".</summary>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static string Version
        {
            get
            {
                Interop.EnsureLoaded();
                unsafe
                {
                    int n = (int)NativeMethods.seg_version(null, UIntPtr.Zero);
                    var buf = new byte[n];
                    fixed (byte* p = buf)
                    {
                        NativeMethods.seg_version(p, (UIntPtr)n);
                        return Interop.FromUtf8z(p);
                    }
                }
            }
        }

        /// <summary>
        /// Every execution provider as JSON: whether the loaded onnxruntime build includes it and whether
        /// it initialises on this machine (a tiny session per provider), with ONNX Runtime's reason.
        /// </summary>
        /// <param name="deviceId">GPU index to probe GPU providers on.</param>
        /// <returns>segrt's JSON text.</returns>
        /// <exception cref="SegrtException">ONNX Runtime could not be loaded.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static string ProbeProvidersJson(int deviceId = 0)
        {
            Interop.EnsureLoaded();
            var options = new SegmenterOptions { DeviceId = deviceId };
            unsafe
            {
                SegOptions o = options.ToNative(null, null, null);
                UIntPtr needed;
                Interop.Check(NativeMethods.seg_providers(&o, null, UIntPtr.Zero, &needed));
                var buf = new byte[(int)needed];
                fixed (byte* p = buf)
                {
                    Interop.Check(NativeMethods.seg_providers(&o, p, (UIntPtr)buf.Length, &needed));
                    return Interop.FromUtf8z(p);
                }
            }
        }

        /// <summary>The C ABI version the loaded native library implements (this wrapper checks it on first use).</summary>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static int AbiVersion
        {
            get { Interop.EnsureLoaded(); return (int)NativeMethods.seg_abi_version(); }
        }

        /// <summary>
        /// Loads ONNX Runtime now (optional: creating a segmenter does it), so a missing or wrong
        /// onnxruntime library is reported at start-up. <paramref name="onnxRuntimePath"/>: absolute path,
        /// or null for the default search (beside segrt first).
        /// </summary>
        /// <param name="onnxRuntimePath">Absolute path of the ONNX Runtime library, or null.</param>
        /// <exception cref="SegrtException">RuntimeNotFound (every path tried) or RuntimeInitFailed; InvalidArgument for a relative path.</exception>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static void Initialize(string onnxRuntimePath = null)
        {
            Interop.EnsureLoaded();
            unsafe
            {
                fixed (byte* p = Interop.Utf8z(onnxRuntimePath))
                    Interop.Check(NativeMethods.seg_runtime_init(p));
            }
        }

        /// <summary>
        /// Gives ONNX Runtime's unused working memory back to the system now (seg_release_memory): for a program
        /// that knows it goes idle, e.g. an annotation tool losing focus. Under <see cref="ArenaPolicy.Auto"/> an
        /// image encode's working memory goes back by itself about 2 seconds after the last encode; under
        /// <see cref="ArenaPolicy.Keep"/> only with this call or when the last segmenter is disposed. Segmenters
        /// stay usable, also while other threads run them.
        /// </summary>
        /// <exception cref="DllNotFoundException">The native segrt library is not beside the program.</exception>
        public static void ReleaseMemory()
        {
            Interop.EnsureLoaded();
            Interop.Check(NativeMethods.seg_release_memory());
        }

        // One static delegate for the process lifetime: the native side keeps a pointer to its thunk, so it must
        // never be collected (a collected thunk called from a finalizer's seg_free crashed Mono).
        static readonly unsafe NativeMethods.seg_set_log_callback_callback_delegate LogThunk = OnNativeLog;
        static readonly object LogGate = new object();
        static EventHandler<LogEventArgs> s_log;

        /// <summary>
        /// segrt's diagnostics: the ONNX Runtime it loaded, the execution provider each segmenter got,
        /// provider fallback reasons (Warn) and every failed call (Error). Raised synchronously on the
        /// thread making the segrt call (WinForms handlers must BeginInvoke to the UI thread). Exceptions
        /// thrown by handlers are swallowed: they must not unwind into native code.
        /// </summary>
        public static event EventHandler<LogEventArgs> Log
        {
            add
            {
                lock (LogGate)
                {
                    bool first = s_log == null;
                    s_log += value;
                    if (first)
                    {
                        Interop.EnsureLoaded();
                        unsafe { Interop.Check(NativeMethods.seg_set_log_callback(LogThunk, null)); }
                    }
                }
            }
            remove
            {
                lock (LogGate)
                {
                    s_log -= value;
                    if (s_log == null)
                        unsafe { Interop.Check(NativeMethods.seg_set_log_callback(null, null)); }
                }
            }
        }

        static unsafe void OnNativeLog(int level, byte* message, void* userData)
        {
            try
            {
                var handlers = s_log;
                if (handlers != null) handlers(null, new LogEventArgs((LogLevel)level, Interop.FromUtf8z(message)));
            }
            catch (Exception)
            {
                // A handler's exception must not cross into segrt's native frames.
            }
        }
    }
}
