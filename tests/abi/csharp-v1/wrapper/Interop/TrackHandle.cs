using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Owns one native track. Closing is two-step (<see cref="ClosableHandle"/>): <see cref="ClosableHandle.BeginClose"/>
    /// refuses every later <see cref="Acquire"/>, and seg_track_free runs when the last running call releases
    /// its reference. seg_track_free never calls back into managed code, so the critical finalizer may run it.
    /// </summary>
    internal sealed unsafe class TrackHandle : ClosableHandle
    {
        internal TrackHandle(SegTrack* track) : base((IntPtr)track)
        {
        }

        protected override bool ReleaseHandle()
        {
            return NativeMethods.seg_track_free((SegTrack*)handle) == SegStatus.SEG_OK;
        }

        /// <exception cref="ObjectDisposedException">The tracker has been disposed.</exception>
        internal Lease Acquire(object owner)
        {
            AddCallRef(owner);
            return new Lease(this, (SegTrack*)DangerousGetHandle());
        }

        internal struct Lease : IDisposable
        {
            readonly TrackHandle _owner;
            internal readonly SegTrack* Track;

            internal Lease(TrackHandle owner, SegTrack* track)
            {
                _owner = owner;
                Track = track;
            }

            public void Dispose()
            {
                _owner.DangerousRelease();
            }
        }
    }
}
