// The disposed-object rule of the wrapper: once Dispose has been called, every public member of UnetSegmenter,
// Sam2Segmenter, Sam2VideoModel and Sam2Tracker but IsDisposed and Dispose throws ObjectDisposedException (a
// Task-returning one gives a task faulted with it), properties answered from what was read at creation
// (ProviderInUse, Provider, FallbackReason, MemoryBytes, LowResSize) included. The members are found by
// reflection, so a member added later is checked too, and one whose arguments the test cannot make fails it.
using System;
using System.Collections.Generic;
using System.Drawing;
using System.Drawing.Imaging;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;
using Segrt;

static partial class SegrtTests
{
    static void RunDisposedTests()
    {
        Test("after Dispose every public member of the segmenters, the video model and the tracker throws ObjectDisposedException", EveryMemberThrowsAfterDispose);
    }

    /// <summary>The members every disposed object must refuse, named so that the reflection below cannot silently miss them.</summary>
    static readonly Dictionary<Type, string[]> s_mustRefuse = new Dictionary<Type, string[]>
    {
        { typeof(UnetSegmenter), new[] { "ProviderInUse", "Provider", "FallbackReason", "MemoryBytes", "SessionInfoJson", "SessionInfo", "Segment" } },
        { typeof(Sam2Segmenter), new[] { "ProviderInUse", "Provider", "FallbackReason", "MemoryBytes", "SessionInfoJson", "SessionInfo", "LowResSize",
            "CreateAnnotator", "SetImage", "ForgetImage", "Segment", "SegmentEverything", "SegmentPrompts" } },
        { typeof(Sam2VideoModel), new[] { "ProviderInUse", "Provider", "FallbackReason", "MemoryBytes", "SessionInfoJson", "SessionInfo", "CreateTracker" } },
        { typeof(Sam2Tracker), new[] { "State", "Reset", "AddFrame", "Next", "AddPoints", "AddBox", "AddPrompt", "TrackFrame" } },
    };

    static void EveryMemberThrowsAfterDispose()
    {
        string sam = Path.Combine(Repo, "models", "sam2");
        using (var bitmap = new Bitmap(64, 64, PixelFormat.Format24bppRgb))
        {
            var unet = new UnetSegmenter(Model("demo_unet.onnx"));
            var sam2 = new Sam2Segmenter(Path.Combine(sam, "sam2_oracle_encoder.onnx"), Path.Combine(sam, "sam2_oracle_decoder.onnx"));
            var model = VideoModel();
            var tracker = model.CreateTracker();
            var all = new IDisposable[] { unet, sam2, model, tracker };
            try
            {
                // Alive, the properties answer (so a refusal below is the Dispose rule, not a broken getter).
                foreach (var o in all)
                    foreach (var p in PublicProperties(o.GetType()))
                        p.GetValue(o, null);
                Check(unet.ProviderInUse == "CPU" && unet.Provider == ExecutionProvider.Cpu && unet.FallbackReason == null && unet.MemoryBytes > 0, "the UNet's provider before Dispose");
                Check(!sam2.LowResSize.IsEmpty, "LowResSize before Dispose");
                // The tracker is disposed last: disposing its model first must not dispose it.
                unet.Dispose();
                sam2.Dispose();
                model.Dispose();
                Check(!tracker.IsDisposed && tracker.State.Frames == 0, "a tracker outlives its model's Dispose");
                tracker.Dispose();
                int checkedMembers = 0;
                foreach (var o in all)
                {
                    var type = o.GetType();
                    Check((bool)type.GetProperty("IsDisposed").GetValue(o, null), type.Name + ".IsDisposed after Dispose");
                    o.Dispose(); // again: nothing
                    var names = new HashSet<string>();
                    foreach (var p in PublicProperties(type))
                    {
                        RefusedAfterDispose(() => p.GetValue(o, null), type.Name + "." + p.Name);
                        names.Add(p.Name);
                    }
                    foreach (var m in PublicMethods(type))
                    {
                        object[] args = m.GetParameters().Select(a => ArgumentFor(a, bitmap, type.Name + "." + m.Name)).ToArray();
                        RefusedAfterDispose(() => m.Invoke(o, args), type.Name + "." + m.Name + "(" + string.Join(", ", m.GetParameters().Select(a => a.ParameterType.Name)) + ")");
                        names.Add(m.Name);
                    }
                    foreach (var name in s_mustRefuse[type])
                        Check(names.Contains(name), type.Name + "." + name + " was not among the members checked");
                    checkedMembers += names.Count;
                    var others = type.GetMembers(BindingFlags.Public | BindingFlags.Instance)
                        .Where(x => x.MemberType != MemberTypes.Property && x.MemberType != MemberTypes.Method && x.MemberType != MemberTypes.Constructor)
                        .Select(x => x.MemberType + " " + x.Name).ToList();
                    Check(others.Count == 0, type.Name + " has public members this test does not check: " + string.Join(", ", others));
                }
                Console.WriteLine("      " + checkedMembers + " public members of 4 disposed objects refuse with ObjectDisposedException");
            }
            finally
            {
                foreach (var o in all) o.Dispose();
            }
        }
    }

    /// <summary>Public instance properties, inherited ones included, but IsDisposed.</summary>
    static IEnumerable<PropertyInfo> PublicProperties(Type type)
    {
        return type.GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.Name != "IsDisposed" && p.GetIndexParameters().Length == 0 && p.GetGetMethod() != null)
            .OrderBy(p => p.Name, StringComparer.Ordinal);
    }

    /// <summary>Public instance methods, inherited ones included, but Dispose, property accessors and System.Object's.</summary>
    static IEnumerable<MethodInfo> PublicMethods(Type type)
    {
        return type.GetMethods(BindingFlags.Public | BindingFlags.Instance)
            .Where(m => !m.IsSpecialName && m.DeclaringType != typeof(object) && m.Name != "Dispose")
            .OrderBy(m => m.Name, StringComparer.Ordinal).ThenBy(m => m.GetParameters().Length);
    }

    /// <summary>An argument that passes every check made before the native call, so only the Dispose rule can refuse it.</summary>
    static object ArgumentFor(ParameterInfo p, Bitmap bitmap, string member)
    {
        Type t = p.ParameterType;
        if (t == typeof(InputImage)) return (InputImage)bitmap;
        if (t == typeof(IList<Sam2Point>) || t == typeof(Sam2Point[])) return new[] { new Sam2Point(8, 8, true) };
        if (t == typeof(RectangleF) || t == typeof(RectangleF?)) return new RectangleF(4, 4, 16, 16);
        if (t == typeof(IReadOnlyList<Sam2Prompt>)) return new[] { Sam2Prompt.FromBox(new RectangleF(4, 4, 16, 16)) };
        if (t == typeof(byte[])) return new byte[bitmap.Width * bitmap.Height];
        if (t == typeof(float[])) return null; // previousLowRes / probabilityBuffer: optional
        if (t == typeof(bool)) return false;
        if (t == typeof(int)) return 1;
        if (t == typeof(long)) return 0L;
        if (t == typeof(CancellationToken)) return CancellationToken.None;
        if (t == typeof(PropagationDirection)) return PropagationDirection.BothWays;
        if (t == typeof(long?)) return (long?)0L;
        if (t == typeof(Action<TrackedFrame>)) return (Action<TrackedFrame>)(f => { });
        if (p.HasDefaultValue) return p.DefaultValue;
        throw new Exception(member + ": no test argument for parameter " + p.Name + " of type " + t.Name + " (add one to ArgumentFor)");
    }

    /// <summary>The call throws ObjectDisposedException, or returns a task that faults with it.</summary>
    static void RefusedAfterDispose(Func<object> call, string what)
    {
        object returned;
        try
        {
            returned = call();
        }
        catch (TargetInvocationException e)
        {
            Check(e.InnerException is ObjectDisposedException, what + " after Dispose: expected ObjectDisposedException, got " +
                e.InnerException.GetType().Name + ": " + e.InnerException.Message);
            return;
        }
        var task = returned as Task;
        Check(task != null, what + " after Dispose: expected ObjectDisposedException, nothing was thrown (returned " + (returned ?? "null") + ")");
        try
        {
            task.Wait(TimeSpan.FromSeconds(30));
        }
        catch (AggregateException)
        {
        }
        Check(task.IsFaulted && task.Exception.InnerException is ObjectDisposedException, what + " after Dispose: expected a task faulted with ObjectDisposedException, got " +
            task.Status + (task.Exception != null ? ": " + task.Exception.InnerException.GetType().Name + ": " + task.Exception.InnerException.Message : ""));
    }
}
