// Cancellation and progress of one long native call: a SegCallControl tied to a CancellationToken and an
// IProgress<SegrtProgress>.
using System;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using System.Threading;
using Segrt.Native;

namespace Segrt
{
    /// <summary>
    /// One native <c>SegCallControl</c> for one call. <see cref="Begin"/> throws <see cref="OperationCanceledException"/>
    /// when the token is already cancelled (nothing native runs), and returns null when there is nothing to control
    /// (a token that cannot be cancelled, no progress): <see cref="NativeOf"/> then gives NULL. After the call,
    /// <see cref="Check"/> maps SEG_CANCELLED to an <see cref="OperationCanceledException"/> (or the progress reporter's own exception); <see cref="Dispose"/> frees the control.
    /// </summary>
    internal sealed unsafe class CallControl : IDisposable
    {
        // Kept alive for the process: native code holds a pointer to its thunk while calls run.
        static readonly NativeMethods.seg_control_set_progress_callback_delegate s_onProgress = OnProgress;

        readonly CancellationToken _token;
        readonly IProgress<SegrtProgress> _progress;
        SegCallControl* _native;
        GCHandle _self;
        CancellationTokenRegistration _registration;
        Exception _callbackError;

        CallControl(CancellationToken token, IProgress<SegrtProgress> progress)
        {
            _token = token;
            _progress = progress;
        }

        /// <summary>The control for one call, or null when neither cancellation nor progress is asked for.</summary>
        /// <exception cref="OperationCanceledException">The token is already cancelled.</exception>
        internal static CallControl Begin(CancellationToken token, IProgress<SegrtProgress> progress)
        {
            token.ThrowIfCancellationRequested();
            if (!token.CanBeCanceled && progress == null) return null;
            var control = new CallControl(token, progress);
            try
            {
                SegCallControl* native = null;
                Interop.Check(NativeMethods.seg_control_create(&native));
                control._native = native;
                if (progress != null)
                {
                    control._self = GCHandle.Alloc(control);
                    Interop.Check(NativeMethods.seg_control_set_progress(native, s_onProgress, (void*)GCHandle.ToIntPtr(control._self)));
                }
                // Runs at once when the token fired in between: the call then returns SEG_CANCELLED.
                if (token.CanBeCanceled) control._registration = token.Register(control.CancelNative);
            }
            catch
            {
                control.Dispose();
                throw;
            }
            return control;
        }

        /// <summary>The native control of <paramref name="control"/>; NULL for none.</summary>
        internal static SegCallControl* NativeOf(CallControl control)
        {
            return control == null ? null : control._native;
        }

        /// <summary>
        /// Throws for a failed call: SEG_CANCELLED becomes the progress reporter's exception when it threw,
        /// <see cref="OperationCanceledException"/> for the token when it fired, and an
        /// <see cref="OperationCanceledException"/> with segrt's reason when segrt cancelled the call itself (a newer
        /// image set on a SAM2 segmenter, or its reset, cancels the older encode and the calls waiting for it);
        /// any other failure is a <see cref="SegrtException"/>.
        /// </summary>
        internal static void Check(CallControl control, SegStatus status)
        {
            if (status == SegStatus.SEG_CANCELLED)
            {
                if (control != null)
                {
                    Exception error = Volatile.Read(ref control._callbackError);
                    if (error != null) ExceptionDispatchInfo.Capture(error).Throw();
                    if (control._token.IsCancellationRequested)
                        throw new OperationCanceledException("the segrt call was cancelled", control._token);
                }
                throw new OperationCanceledException(Interop.LastError());
            }
            Interop.Check(status);
        }

        void CancelNative()
        {
            // Under the registration: Dispose waits for this callback before freeing the control.
            SegCallControl* native = _native;
            if (native != null) NativeMethods.seg_control_cancel(native);
        }

        /// <summary>Called by segrt on the thread running the call; must never let an exception unwind into native code.</summary>
        static int OnProgress(int stage, float fraction, void* userData)
        {
            try
            {
                var control = GCHandle.FromIntPtr((IntPtr)userData).Target as CallControl;
                if (control == null) return 1;
                if (control._callbackError != null || control._token.IsCancellationRequested) return 0;
                try
                {
                    control._progress.Report(new SegrtProgress((ProgressStage)stage, Math.Min(1.0, Math.Max(0.0, fraction))));
                }
                catch (Exception e)
                {
                    Volatile.Write(ref control._callbackError, e);
                    return 0;
                }
                return control._token.IsCancellationRequested ? 0 : 1;
            }
            catch
            {
                return 0;
            }
        }

        /// <summary>Unregisters from the token (waiting for a cancellation callback in flight), then frees the control.</summary>
        public void Dispose()
        {
            _registration.Dispose();
            if (_native != null)
            {
                NativeMethods.seg_control_free(_native);
                _native = null;
            }
            if (_self.IsAllocated) _self.Free();
        }
    }
}
