// What every segmenter shares: the native session, Dispose, session info, the execution provider in use,
// the GC memory-pressure hint.
using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// The base of <see cref="UnetSegmenter"/>, <see cref="Sam2Segmenter"/> and <see cref="Sam2VideoModel"/>: owns
    /// one loaded model (a native segrt handle). Thread-safe: any number of threads may use one instance at once:
    /// segrt keeps a pool of ONNX Runtime sessions per segmenter, shared by all threads, that grows on demand up to
    /// <see cref="SegmenterOptions.MaxSessions"/> (default: one per physical core); calls beyond it wait their turn.
    /// <see cref="Dispose"/> refuses every call that starts after it with <see cref="ObjectDisposedException"/>, and
    /// every public member but <see cref="IsDisposed"/> and <see cref="Dispose"/> throws it from then on, properties
    /// included (also those answered from what was read at creation); calls already running finish normally, and the native handle is freed when the last of them returns. An
    /// undisposed segmenter is freed by its finalizer; the GC is told how much native memory it holds
    /// (<c>GC.AddMemoryPressure</c>), so that happens sooner.
    /// </summary>
    public abstract class Segmenter : IDisposable
    {
        internal readonly SessionHandle Handle;
        SessionInfo _firstInfo;
        readonly object _intensityGate = new object();
        volatile IntensityOptions _intensity;

        /// <param name="handle">The new native session.</param>
        /// <param name="modelBytes">Size of the model files the session was made from (a floor for the memory declared).</param>
        internal Segmenter(SessionHandle handle, long modelBytes)
        {
            Handle = handle;
            try
            {
                // What segrt measured for this session: declare it to the GC. The provider in use never
                // changes, so this first reading also answers Provider/ProviderInUse/FallbackReason.
                _firstInfo = ReadSessionInfo();
                Handle.DeclareMemory(_firstInfo, modelBytes);
            }
            catch
            {
                Handle.BeginClose();
                throw;
            }
        }

        /// <summary>
        /// The native memory declared to the GC for this segmenter (GC.AddMemoryPressure), in bytes: what segrt
        /// measured for its session pool(s) (<see cref="Segrt.SessionInfo.NativeBytes"/>: the first session, plus
        /// the measured cost of each further session alive), and at least the size of its model files. Read when
        /// the segmenter is created, and again after a call that overlapped more calls than ever before (that is
        /// when segrt builds another session, up to <see cref="SegmenterOptions.MaxSessions"/>), so it follows the
        /// pool without a per-call cost. Taken back from the GC when the session is freed.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public long MemoryBytes
        {
            get
            {
                ThrowIfDisposed();
                return Handle.DeclaredBytes;
            }
        }

        /// <summary>What segrt reported when the segmenter was created.</summary>
        internal SessionInfo FirstInfo
        {
            get { return _firstInfo; }
        }

        /// <summary>True once <see cref="Dispose"/> has been called (calls started before it may still be finishing).</summary>
        public bool IsDisposed
        {
            get { return Handle.IsClosing; }
        }

        /// <summary>
        /// Releases the native session. Calls that start afterwards throw <see cref="ObjectDisposedException"/>;
        /// calls already running on other threads finish normally, and the session is freed when the last of
        /// them returns. Calling it again does nothing.
        /// </summary>
        public void Dispose()
        {
            Handle.BeginClose();
        }

        /// <summary>
        /// The model's inputs and outputs, how segrt reads them, the execution provider requested and in
        /// use with any fallback reason, the session pool(s) and memory, as segrt's JSON text.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public string SessionInfoJson
        {
            get
            {
                using (var lease = Handle.Acquire(this))
                    unsafe
                    {
                        return SessionInfoReader.Read(lease.Session);
                    }
            }
        }

        /// <summary>
        /// <see cref="SessionInfoJson"/> as a typed object, read now (the pool figures change as calls
        /// use the segmenter); <see cref="Segrt.SessionInfo.RawJson"/> keeps the whole text.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public SessionInfo SessionInfo
        {
            get { return ReadSessionInfo(); }
        }

        /// <summary>
        /// The execution provider running the model (<see cref="ExecutionProvider.Cpu"/> after a fallback). ONNX Runtime may
        /// still have placed some nodes on the CPU: <see cref="ProviderInUse"/> then says "partly", and
        /// <see cref="ProviderReport.Nodes"/> (in <c>SessionInfo.Provider</c>) counts them.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public ExecutionProvider Provider
        {
            get { return ParseProvider(ProviderInUse); }
        }

        /// <summary>segrt's name of the provider running the model, e.g. "CPU", "CUDA:0", or "CUDA:0 (partly: 12 of 352 nodes on the CPU)".</summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public string ProviderInUse
        {
            get
            {
                ThrowIfDisposed();
                return _firstInfo.Provider != null && _firstInfo.Provider.InUse != null ? _firstInfo.Provider.InUse : "unknown";
            }
        }

        /// <summary>
        /// Why the requested provider is not the one in use (with <see cref="ProviderPolicy.Fallback"/>:
        /// ONNX Runtime's reason, e.g. a missing CUDA library); null when the requested provider runs.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public string FallbackReason
        {
            get
            {
                ThrowIfDisposed();
                return _firstInfo.Provider != null ? _firstInfo.Provider.FallbackReason : null;
            }
        }

        /// <summary>
        /// The intensity stage of this segmenter (<see cref="IntensityOptions"/>): how the values of 16-bit, signed 16-bit
        /// and float images (<see cref="InputImage.FromPixels(ushort[], int, int, int, PixelLayout)"/> and its siblings)
        /// reach the model; null (the default) = segrt's default: 8-bit images exactly as without the stage, 16-bit and
        /// float images by each image's own min-max to 0..255. On a <see cref="Sam2VideoModel"/> it applies to the frames
        /// every one of its trackers adds later (use a fixed window there: min-max stretches each frame on its own).
        /// </summary>
        /// <remarks>
        /// Thread-safe, as segrt's <c>seg_set_intensity</c>: it may be set from any thread at any time; a call already
        /// running keeps the setting it started with, every later call takes the new one. On a <see cref="Sam2Segmenter"/>
        /// an image encoded under the old setting is encoded again when a call passes it again. The getter answers the
        /// options last set through this property (null = the default).
        /// </remarks>
        /// <exception cref="SegrtException">segrt refused the options (<see cref="Status.InvalidArgument"/>: a window of zero or negative width, percentiles out of order, a slope of 0, more than 16 used bits, a value that is not finite); the setting in force is unchanged.</exception>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        public IntensityOptions Intensity
        {
            get
            {
                ThrowIfDisposed();
                return _intensity;
            }
            set
            {
                lock (_intensityGate)
                {
                    using (var lease = Handle.Acquire(this))
                        unsafe
                        {
                            if (value == null)
                                Interop.Check(NativeMethods.seg_set_intensity(lease.Session, null));
                            else
                            {
                                SegIntensity n = value.ToNative();
                                Interop.Check(NativeMethods.seg_set_intensity(lease.Session, &n));
                            }
                        }
                    _intensity = value;
                }
            }
        }

        /// <summary>
        /// The disposed-object rule for members answered without a native call (those with one get it from
        /// <see cref="Acquire"/>): once <see cref="Dispose"/> has been called they throw, as every call does.
        /// </summary>
        /// <exception cref="ObjectDisposedException">The segmenter has been disposed.</exception>
        internal void ThrowIfDisposed()
        {
            if (IsDisposed) throw new ObjectDisposedException(GetType().Name, "this " + GetType().Name + " has been disposed");
        }

        internal SessionHandle.Lease Acquire()
        {
            return Handle.Acquire(this);
        }

        unsafe SessionInfo ReadSessionInfo()
        {
            using (var lease = Handle.Acquire(this))
                return SessionInfo.Parse(SessionInfoReader.Read(lease.Session));
        }

        internal static ExecutionProvider ParseProvider(string name)
        {
            // "CUDA:0", "CUDA:0 (partly: ...)", "OpenVINO (partly: ...)": the name before the device or the note.
            string n = (name ?? "").Split(':', ' ')[0].ToUpperInvariant();
            switch (n)
            {
                case "CUDA": return ExecutionProvider.Cuda;
                case "TENSORRT": return ExecutionProvider.TensorRT;
                case "DIRECTML": return ExecutionProvider.DirectML;
                case "OPENVINO": return ExecutionProvider.OpenVino;
                default: return ExecutionProvider.Cpu;
            }
        }
    }
}
