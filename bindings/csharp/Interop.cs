// segrt .NET wrapper: loading checks, UTF-8 strings, the session SafeHandle and status checks.
// Hand-written; the P/Invoke declarations themselves are generated (NativeMethods.g.cs).
using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using Segrt.Native;

namespace Segrt
{
    internal static unsafe class Interop
    {
        /// <summary>The C ABI this wrapper was written for (SEG_ABI_VERSION).</summary>
        internal const uint ExpectedAbiVersion = 1;

        static readonly object Gate = new object();
        static volatile bool s_loaded;

        internal static bool IsWindows
        {
            get { return Path.DirectorySeparatorChar == '\\'; }
        }

        internal static string LibraryFileName
        {
            get { return IsWindows ? "segrt.dll" : "libsegrt.so"; }
        }

        /// <summary>
        /// Checks, once, that this process can use segrt: 64-bit, the native library found, and the
        /// ABI it implements is the one this wrapper expects. Throws with the fix in the message.
        /// </summary>
        internal static void EnsureLoaded()
        {
            if (s_loaded) return;
            lock (Gate)
            {
                if (s_loaded) return;
                if (IntPtr.Size != 8)
                    throw new PlatformNotSupportedException(
                        "segrt is a 64-bit (x64) library but this process is 32-bit (IntPtr.Size == " + IntPtr.Size + "), " +
                        "so it cannot load " + LibraryFileName + " (BadImageFormatException). Fix: in the project's Build " +
                        "properties set 'Platform target' to x64 (or, for AnyCPU, untick 'Prefer 32-bit').");
                uint abi;
                try
                {
                    abi = NativeMethods.seg_abi_version();
                }
                catch (DllNotFoundException e)
                {
                    throw new DllNotFoundException(MissingLibraryMessage(), e);
                }
                catch (BadImageFormatException e)
                {
                    throw new BadImageFormatException(
                        LibraryFileName + " could not be loaded into this 64-bit process: it is not an x64 build of segrt (" + e.Message + ")", e);
                }
                catch (EntryPointNotFoundException e)
                {
                    throw new InvalidOperationException(
                        "the " + LibraryFileName + " that was loaded is not segrt (it has no seg_abi_version export)", e);
                }
                if (abi != ExpectedAbiVersion)
                    throw new InvalidOperationException(
                        "the loaded " + LibraryFileName + " implements segrt ABI " + abi + " but this wrapper expects ABI " +
                        ExpectedAbiVersion + ": ship the segrt library and the C# files from the same release");
                s_loaded = true;
            }
        }

        static string MissingLibraryMessage()
        {
            var dirs = new System.Collections.Generic.List<string>();
            dirs.Add(AppDomain.CurrentDomain.BaseDirectory);
            string assemblyDir = Path.GetDirectoryName(typeof(Interop).Assembly.Location);
            if (!string.IsNullOrEmpty(assemblyDir)) dirs.Add(assemblyDir);
            string searchVar = IsWindows ? "PATH" : "LD_LIBRARY_PATH";
            foreach (var d in (Environment.GetEnvironmentVariable(searchVar) ?? "").Split(Path.PathSeparator))
                if (d.Length > 0) dirs.Add(d);

            var sb = new StringBuilder();
            sb.Append(LibraryFileName).Append(" could not be loaded. Put it beside the .exe. Searched:");
            bool foundSomewhere = false;
            foreach (var d in dirs)
            {
                bool exists = File.Exists(Path.Combine(d, LibraryFileName));
                foundSomewhere |= exists;
                sb.Append("\n  ").Append(Path.Combine(d, LibraryFileName)).Append(exists ? " (exists)" : " (not there)");
            }
            if (foundSomewhere)
                sb.Append("\nThe file exists but did not load: ").Append(IsWindows
                    ? "install the Visual C++ 2015-2022 x64 redistributable (vcruntime140.dll), or use a segrt.dll built with +crt-static."
                    : "check its dependencies with ldd.");
            sb.Append("\nONNX Runtime itself is loaded later by segrt, by absolute path; if it is missing, creating a segmenter says so with every path tried.");
            return sb.ToString();
        }

        /// <summary>NUL-terminated UTF-8 (.NET Framework 4.6.1 has no UnmanagedType.LPUTF8Str).</summary>
        internal static byte[] Utf8z(string s)
        {
            if (s == null) return null;
            if (s.IndexOf('\0') >= 0) throw new ArgumentException("the string contains a NUL character", nameof(s));
            int n = Encoding.UTF8.GetByteCount(s);
            var bytes = new byte[n + 1];
            Encoding.UTF8.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }

        internal static string FromUtf8z(byte* p)
        {
            if (p == null) return null;
            int n = 0;
            while (p[n] != 0) n++;
            return Encoding.UTF8.GetString(p, n);
        }

        /// <summary>The message of the calling thread's last failed segrt call.</summary>
        internal static string LastError()
        {
            int n = (int)NativeMethods.seg_last_error(null, UIntPtr.Zero);
            var buf = new byte[Math.Max(n, 1)];
            fixed (byte* p = buf)
            {
                NativeMethods.seg_last_error(p, (UIntPtr)buf.Length);
                return FromUtf8z(p);
            }
        }

        /// <summary>Throws a SegException carrying the native message unless the call succeeded.</summary>
        internal static void Check(Native.SegStatus status)
        {
            if (status != Native.SegStatus.SEG_OK)
                throw new SegException((Segrt.SegStatus)(int)status, LastError());
        }
    }

    /// <summary>
    /// A native handle that closes in two steps: <see cref="BeginClose"/> sets <see cref="_closing"/>, which every
    /// later <see cref="AddCallRef"/> sees, so no call can start once it has returned; then SafeHandle.Dispose
    /// drops the handle's own reference. Calls already inside hold a DangerousAddRef reference each, and the
    /// runtime runs ReleaseHandle when the last of them releases it. Checking IsClosed alone was not enough: on
    /// Mono it stays false while any call holds a reference, so overlapping calls on other threads kept the
    /// handle open indefinitely.
    /// </summary>
    internal abstract class ClosableHandle : SafeHandle
    {
        volatile bool _closing;

        protected ClosableHandle(IntPtr handle) : base(IntPtr.Zero, true)
        {
            SetHandle(handle);
        }

        /// <summary>True once BeginClose ran (the handle may still be finishing calls).</summary>
        internal bool IsClosing
        {
            get { return _closing || IsClosed; }
        }

        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        /// <summary>Refuses every later call, then frees the handle when the calls inside have returned.</summary>
        internal void BeginClose()
        {
            _closing = true;
            Dispose();
        }

        /// <summary>Keeps the handle alive for one native call; release with DangerousRelease.</summary>
        /// <exception cref="ObjectDisposedException">BeginClose has been called.</exception>
        protected void AddCallRef(object owner)
        {
            if (_closing) throw Disposed(owner);
            bool added = false;
            try
            {
                DangerousAddRef(ref added);
            }
            catch (ObjectDisposedException)
            {
                throw Disposed(owner);
            }
            // BeginClose may have run between the check above and the reference: the call has not started yet,
            // so it must not run.
            if (_closing)
            {
                if (added) DangerousRelease();
                throw Disposed(owner);
            }
        }

        static ObjectDisposedException Disposed(object owner)
        {
            return new ObjectDisposedException(owner.GetType().Name, "this " + owner.GetType().Name + " has been disposed");
        }
    }

    /// <summary>
    /// Owns one native session. The runtime's critical finalizer frees it if Dispose was never called;
    /// seg_free never calls back into managed code, so that is safe.
    /// </summary>
    /// <remarks>Closing is two-step (<see cref="ClosableHandle"/>).</remarks>
    internal sealed unsafe class SessionHandle : ClosableHandle
    {
        long _pressure;

        // Memory declared to the GC follows the session pool: segrt builds a further ONNX Runtime session
        // only when more calls run at once than it has sessions, so the declaration is re-read (one
        // seg_session_info) only after the wrapper has seen more calls at once than when it last read it,
        // at most until the pool reached its cap, and never more than RefreshLimit times.
        readonly object _memoryGate = new object();
        int _inFlight, _peak;
        int _measuredAtPeak = 1;
        int _refreshes;
        int _maxSessions;
        long _floorBytes;
        long _declared;
        const int RefreshLimit = 16;

        internal SessionHandle(SegSession* session) : base((IntPtr)session)
        {
        }

        /// <summary>The bytes last declared to the GC for this session (kept after it is freed).</summary>
        internal long DeclaredBytes
        {
            get { return Interlocked.Read(ref _declared); }
        }

        /// <summary>Times the declaration was re-read from segrt after calls overlapped (tests read it).</summary>
        internal int MemoryRefreshes
        {
            get { return Volatile.Read(ref _refreshes); }
        }

        /// <summary>
        /// Tells the GC what this session holds, from its first session info: the pools' measured memory,
        /// at least <paramref name="floorBytes"/> (the model files); later re-read as the pools grow, and
        /// removed again when the session is freed.
        /// </summary>
        internal void DeclareMemory(SessionInfo info, long floorBytes)
        {
            lock (_memoryGate)
            {
                _floorBytes = floorBytes;
                _maxSessions = info.MaxSessions;
                if (_maxSessions <= 1 || info.LiveSessions >= _maxSessions) _measuredAtPeak = int.MaxValue;
                SetPressure(Math.Max(info.NativeBytes, floorBytes));
            }
        }

        /// <summary>Moves the GC declaration to <paramref name="bytes"/>; the caller holds _memoryGate and a reference.</summary>
        void SetPressure(long bytes)
        {
            if (bytes < 0) bytes = 0;
            long before = Interlocked.Exchange(ref _pressure, bytes);
            Interlocked.Exchange(ref _declared, bytes);
            if (bytes > before) MemoryPressure.Add(bytes - before);
            else if (bytes < before) MemoryPressure.Remove(before - bytes);
        }

        /// <summary>After a call, while it still holds its reference: re-reads the pools' memory if they may have grown.</summary>
        void RefreshMemory(SegSession* session)
        {
            int peak = Volatile.Read(ref _peak);
            if (peak <= Volatile.Read(ref _measuredAtPeak) || Volatile.Read(ref _refreshes) >= RefreshLimit || IsClosing) return;
            try
            {
                lock (_memoryGate)
                {
                    if (peak <= _measuredAtPeak || _refreshes >= RefreshLimit) return;
                    _refreshes++;
                    var info = SessionInfo.Parse(SessionInfoReader.Read(session));
                    int live = info.LiveSessions;
                    if (!info.PoolsSettled) { }                                   // a session is being built: a later call looks again
                    else if (live >= _maxSessions) _measuredAtPeak = int.MaxValue; // the pools cannot grow any more
                    else if (live >= peak) _measuredAtPeak = peak;                // grown as far as these calls need
                    // else: another call may not have taken its session yet; a later call looks again.
                    SetPressure(Math.Max(info.NativeBytes, _floorBytes));
                }
            }
            catch (Exception)
            {
                // Only the GC hint is at stake; the call itself succeeded or failed on its own.
            }
        }

        protected override bool ReleaseHandle()
        {
            bool ok = NativeMethods.seg_free((SegSession*)handle) == Native.SegStatus.SEG_OK;
            long bytes = Interlocked.Exchange(ref _pressure, 0);
            if (bytes > 0) MemoryPressure.Remove(bytes);
            return ok;
        }

        /// <summary>
        /// Keeps the handle alive for one native call (DangerousAddRef/DangerousRelease), so Dispose
        /// on another thread waits for the call instead of freeing the session under it.
        /// </summary>
        /// <exception cref="ObjectDisposedException">Dispose has been called.</exception>
        internal Lease Acquire(object owner)
        {
            AddCallRef(owner);
            int now = Interlocked.Increment(ref _inFlight);
            int peak;
            while (now > (peak = Volatile.Read(ref _peak)) && Interlocked.CompareExchange(ref _peak, now, peak) != peak) { }
            return new Lease(this, (SegSession*)DangerousGetHandle());
        }

        void EndCall(SegSession* session)
        {
            RefreshMemory(session);
            Interlocked.Decrement(ref _inFlight);
            DangerousRelease();
        }

        internal struct Lease : IDisposable
        {
            readonly SessionHandle _owner;
            internal readonly SegSession* Session;

            internal Lease(SessionHandle owner, SegSession* session)
            {
                _owner = owner;
                Session = session;
            }

            public void Dispose()
            {
                _owner.EndCall(Session);
            }
        }
    }

    /// <summary>
    /// GC.AddMemoryPressure / RemoveMemoryPressure for native sessions, with a running total that tests
    /// (and a curious debugger) can read.
    /// </summary>
    internal static class MemoryPressure
    {
        static long s_outstanding;

        /// <summary>Bytes currently declared to the GC by live sessions of this process.</summary>
        internal static long Outstanding
        {
            get { return Interlocked.Read(ref s_outstanding); }
        }

        internal static void Add(long bytes)
        {
            GC.AddMemoryPressure(bytes);
            Interlocked.Add(ref s_outstanding, bytes);
        }

        internal static void Remove(long bytes)
        {
            GC.RemoveMemoryPressure(bytes);
            Interlocked.Add(ref s_outstanding, -bytes);
        }
    }
}
