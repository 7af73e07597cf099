// The shape rules of the wrapper's public API, checked on its sources and by reflection: one public type per
// file named as the file; names without the C ABI's Seg prefix that neither repeat a generated type nor collide
// with a type that WinForms and WPF programs import; immutable public structs; nothing [Obsolete].
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text.RegularExpressions;
using Segrt;

static partial class SegrtTests
{
    static void RunRuleTests()
    {
        Test("public types: one per file, named as its file, in the project's folders", OnePublicTypePerFile);
        Test("public type names: no Seg prefix, no generated name, no clash with what WinForms/WPF programs import", PublicNamingRule);
        Test("public structs are immutable: readonly fields, no setters", PublicStructsAreReadonly);
        Test("no [Obsolete] type or member in the public API", NothingObsolete);
    }

    static List<Type> PublicTypes()
    {
        return typeof(Segmenter).Assembly.GetTypes().Where(t => t.IsPublic).OrderBy(t => t.FullName).ToList();
    }

    static void OnePublicTypePerFile()
    {
        string root = Path.Combine(Repo, "bindings", "csharp");
        var declaration = new Regex(@"^    public (?:(?:static|sealed|abstract|readonly|partial|unsafe)\s+)*(?:class|struct|enum|interface|delegate\s+\S+)\s+(\w+)", RegexOptions.Multiline);
        var declared = new Dictionary<string, string>();
        var problems = new List<string>();
        int files = 0;
        foreach (string path in Directory.GetFiles(root, "*.cs", SearchOption.AllDirectories).OrderBy(p => p, StringComparer.Ordinal))
        {
            string relative = path.Substring(root.Length + 1);
            if (relative.StartsWith("bin" + Path.DirectorySeparatorChar) || relative.StartsWith("obj" + Path.DirectorySeparatorChar)) continue;
            files++;
            if (relative.Count(c => c == Path.DirectorySeparatorChar) > 1) problems.Add(relative + ": deeper than the project compiles (*.cs, *\\*.cs)");
            if (Path.GetFileName(path) == "NativeMethods.g.cs") continue;
            var names = declaration.Matches(File.ReadAllText(path)).Cast<Match>().Select(m => m.Groups[1].Value).ToList();
            if (names.Count > 1) problems.Add(relative + " declares " + names.Count + " public types: " + string.Join(", ", names));
            foreach (var name in names)
            {
                if (name != Path.GetFileNameWithoutExtension(path)) problems.Add(relative + " declares " + name);
                if (declared.ContainsKey(name)) problems.Add(name + " is declared in " + declared[name] + " and " + relative);
                declared[name] = relative;
            }
        }
        // The sources and the compiled assembly agree: no public type was missed by the pattern above.
        var compiled = PublicTypes().Select(t => t.Name).ToList();
        foreach (var name in compiled.Where(n => !declared.ContainsKey(n))) problems.Add(name + " is public but no file declares it as the pattern expects");
        foreach (var name in declared.Keys.Where(n => !compiled.Contains(n))) problems.Add(name + " is declared public in " + declared[name] + " but not public in the assembly");
        Console.WriteLine(string.Format("      {0} source files, {1} public types, one per file", files, declared.Count));
        Check(problems.Count == 0, string.Join("; ", problems));
    }

    /// <summary>
    /// WPF types a WPF program imports with System.Windows, System.Windows.Media (and .Imaging) or
    /// System.Windows.Controls that a segmentation API could plausibly be tempted to name a type after. WPF does not
    /// exist on Mono, so they are listed here; the WinForms and System ones are read from the assemblies.
    /// </summary>
    static readonly string[] WpfNames =
    {
        "ImageSource", "BitmapSource", "PixelFormat", "PixelFormats", "CacheMode", "TileMode", "Stretch", "Color", "Colors",
        "Brush", "Size", "Point", "Rect", "Image", "Visual", "Geometry", "RenderOptions", "BitmapScalingMode", "Rotation",
    };

    static void PublicNamingRule()
    {
        var imported = new[] { "System", "System.Collections.Generic", "System.Diagnostics", "System.Drawing", "System.Drawing.Imaging",
            "System.IO", "System.Linq", "System.Threading", "System.Threading.Tasks", "System.Windows.Forms" };
        var assemblies = new[] { typeof(object).Assembly, typeof(Uri).Assembly, typeof(Enumerable).Assembly, typeof(System.Drawing.Bitmap).Assembly,
            Assembly.Load("System.Windows.Forms, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089") };
        var taken = new Dictionary<string, string>();
        foreach (var a in assemblies)
            foreach (var t in a.GetExportedTypes())
                if (imported.Contains(t.Namespace)) taken[t.Name.Split('`')[0]] = t.FullName;
        foreach (var n in WpfNames) taken[n] = "WPF's " + n;
        foreach (var t in typeof(Segrt.Native.NativeMethods).Assembly.GetTypes().Where(x => x.Namespace == "Segrt.Native"))
            taken[t.Name] = t.FullName + " (generated)";

        var problems = new List<string>();
        var types = PublicTypes();
        foreach (var t in types)
        {
            if (t.Namespace != "Segrt") problems.Add(t.FullName + " is public outside namespace Segrt");
            if (Regex.IsMatch(t.Name, "^Seg[A-Z]")) problems.Add(t.Name + " carries the C ABI's Seg prefix");
            if (taken.ContainsKey(t.Name)) problems.Add(t.Name + " is also " + taken[t.Name]);
        }
        Console.WriteLine(string.Format("      {0} public types checked against {1} names imported by WinForms/WPF programs or generated", types.Count, taken.Count));
        Check(problems.Count == 0, string.Join("; ", problems));
    }

    static void PublicStructsAreReadonly()
    {
        var flags = BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly;
        var problems = new List<string>();
        var structs = PublicTypes().Where(t => t.IsValueType && !t.IsEnum).ToList();
        foreach (var t in structs)
        {
            foreach (var f in t.GetFields(flags)) if (!f.IsInitOnly) problems.Add(t.Name + "." + f.Name + " is a writable field");
            foreach (var p in t.GetProperties(flags)) if (p.GetSetMethod(true) != null) problems.Add(t.Name + "." + p.Name + " has a setter");
        }
        Console.WriteLine("      public structs: " + string.Join(", ", structs.Select(t => t.Name)));
        Check(structs.Count >= 4 && problems.Count == 0, string.Join("; ", problems));
    }

    static void NothingObsolete()
    {
        var flags = BindingFlags.Instance | BindingFlags.Static | BindingFlags.Public | BindingFlags.DeclaredOnly;
        var obsolete = new List<string>();
        foreach (var t in PublicTypes())
        {
            if (t.IsDefined(typeof(ObsoleteAttribute), false)) obsolete.Add(t.Name);
            foreach (var m in t.GetMembers(flags))
                if (m.IsDefined(typeof(ObsoleteAttribute), false)) obsolete.Add(t.Name + "." + m.Name);
        }
        Check(obsolete.Count == 0, "obsolete: " + string.Join(", ", obsolete));
    }
}
