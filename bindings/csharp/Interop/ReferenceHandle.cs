using System;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// Owns one native reference. Closing is two-step (<see cref="ClosableHandle"/>): <see cref="ClosableHandle.BeginClose"/>
    /// refuses every later <see cref="Acquire"/>, and seg_reference_free runs when the last running call releases
    /// its reference. seg_reference_free never calls back into managed code, so the critical finalizer may run it.
    /// </summary>
    internal sealed unsafe class ReferenceHandle : ClosableHandle
    {
        internal ReferenceHandle(SegReference* reference) : base((IntPtr)reference)
        {
        }

        protected override bool ReleaseHandle()
        {
            return NativeMethods.seg_reference_free((SegReference*)handle) == SegStatus.SEG_OK;
        }

        /// <exception cref="ObjectDisposedException">The reference has been disposed.</exception>
        internal Lease Acquire(object owner)
        {
            AddCallRef(owner);
            return new Lease(this, (SegReference*)DangerousGetHandle());
        }

        internal struct Lease : IDisposable
        {
            readonly ReferenceHandle _owner;
            internal readonly SegReference* Reference;

            internal Lease(ReferenceHandle owner, SegReference* reference)
            {
                _owner = owner;
                Reference = reference;
            }

            public void Dispose()
            {
                _owner.DangerousRelease();
            }
        }
    }
}
