// segrt .NET wrapper: loading checks, UTF-8 strings and status checks.
// Hand-written; the P/Invoke declarations themselves are generated (NativeMethods.g.cs).
using System;
using System.IO;
using System.Text;
using Segrt.Native;

namespace Segrt
{
    internal static unsafe class Interop
    {
        /// <summary>The C ABI this wrapper was written for (SEG_ABI_VERSION).</summary>
        internal const uint ExpectedAbiVersion = NativeMethods.SEG_ABI_VERSION;

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

        /// <summary>Throws a SegrtException carrying the native message unless the call succeeded.</summary>
        internal static void Check(SegStatus status)
        {
            if (status != SegStatus.SEG_OK)
                throw new SegrtException((Status)(int)status, LastError());
        }
    }
}
