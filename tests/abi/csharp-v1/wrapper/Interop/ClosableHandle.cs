using System;
using System.Runtime.InteropServices;

namespace Segrt
{
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
}
