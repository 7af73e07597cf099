using System;
using System.Threading;
using Segrt.Native;

namespace Segrt
{
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
            bool ok = NativeMethods.seg_free((SegSession*)handle) == SegStatus.SEG_OK;
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
}
