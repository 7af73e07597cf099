# Windows x64 counterpart of scripts/fetch-ort.sh, the C-host and C# stages of scripts/test.sh, and
# scripts/package.sh: fetches ONNX Runtime 1.31.1 from its official PyPI wheel, builds the release
# segrt.dll (MSVC target), runs the C test host and the C# tests, and writes dist\segrt-<version>-win-x64\
# and its .zip.
#
# UNTESTED: written on Linux, where it cannot run; it has never been executed. Report what fails.
#
# Needs: Windows 10+ x64; Rust with the x86_64-pc-windows-msvc target (rustup's default on Windows;
# otherwise `rustup target add x86_64-pc-windows-msvc`);
# Visual Studio 2019+ or its Build Tools with "Desktop development with C++" and the .NET Framework
# 4.6.1 targeting pack; Python 3 with pip (to download the wheel and write the C test's inputs).
# Usage, from any folder:  powershell -ExecutionPolicy Bypass -File scripts\build-windows.ps1 [-SkipTests]
param([switch]$SkipTests)
$ErrorActionPreference = 'Stop'
Set-Location (Split-Path -Parent $PSScriptRoot)   # the repository root, as the .sh scripts `cd` there
$repo = (Get-Location).Path

# A native command's failure does not stop PowerShell 5 (no `set -e`): check the exit code after each one.
function Assert-Exit([string]$what) { if ($LASTEXITCODE -ne 0) { throw "$what failed (exit $LASTEXITCODE)" } }

# 1. ONNX Runtime (fetch-ort.sh): the DLL out of the official wheel; any Python version can download it.
$ortVersion = (Get-Content (Join-Path $repo 'scripts\ort-version.txt') -Raw).Trim()  # the one place the version is written
$ortDll = Join-Path $repo '.onnxruntime\onnxruntime.dll'
if (-not (Test-Path $ortDll)) {
    $tmp = Join-Path ([IO.Path]::GetTempPath()) ("segrt-ort-" + [Guid]::NewGuid())
    python -m pip download --quiet --no-deps --only-binary=:all: --platform win_amd64 --python-version 3.12 `
        --dest $tmp "onnxruntime==$ortVersion"
    Assert-Exit 'pip download onnxruntime'
    $wheel = (Get-ChildItem $tmp -Filter 'onnxruntime-*.whl')[0].FullName
    Add-Type -AssemblyName System.IO.Compression, System.IO.Compression.FileSystem
    $zip = [IO.Compression.ZipFile]::OpenRead($wheel)
    try {
        New-Item -ItemType Directory -Force (Split-Path $ortDll) | Out-Null
        [IO.Compression.ZipFileExtensions]::ExtractToFile($zip.GetEntry('onnxruntime/capi/onnxruntime.dll'), $ortDll, $true)
    } finally { $zip.Dispose() }
    Remove-Item -Recurse -Force $tmp
    (Get-FileHash -Algorithm SHA256 $ortDll).Hash.ToLower() + '  onnxruntime.dll' | Set-Content (Join-Path $repo '.onnxruntime\SHA256SUMS')
}
Write-Host "ONNX Runtime $ortVersion in $ortDll"

# 2. The release library for the MSVC target, whatever the default toolchain is.
$target = 'x86_64-pc-windows-msvc'
cargo build --release --target $target
Assert-Exit 'cargo build'
$lib = Join-Path $repo "target\$target\release"   # segrt.dll, its import library segrt.dll.lib, segrt.exe

# Visual Studio's tools: cl.exe needs its environment (vcvars64.bat); csc.exe is the Roslyn compiler that
# VS / Build Tools ship (the csc.exe of C:\Windows\Microsoft.NET\Framework64 stops at C# 5, the wrapper needs 7.2).
$vswhere = "${env:ProgramFiles(x86)}\Microsoft Visual Studio\Installer\vswhere.exe"
$vs = & $vswhere -latest -products * -requires Microsoft.VisualStudio.Component.VC.Tools.x86.x64 -property installationPath
$csc = & $vswhere -latest -products * -requires Microsoft.Component.MSBuild -find 'MSBuild\**\Bin\Roslyn\csc.exe' | Select-Object -First 1
if (-not $vs -or -not $csc) { throw "Visual Studio 2019+ or its Build Tools (C++ workload, MSBuild) not found by $vswhere" }
$netfx = "${env:ProgramFiles(x86)}\Reference Assemblies\Microsoft\Framework\.NETFramework\v4.6.1"
if (-not (Test-Path "$netfx\mscorlib.dll")) { throw ".NET Framework 4.6.1 targeting pack not found in $netfx (Visual Studio Installer > Individual components)" }
# What a .NET Framework 4.6.1 x64 project gets (tests/csharp/run.sh: mcs -sdk:4.6.1 ...). No -warnaserror+
# here: Roslyn warns about things mcs does not, and the Linux run already keeps the wrapper warning-free.
$cscArgs = @('-nologo', '-noconfig', '-nostdlib+', '-unsafe+', '-platform:x64', '-langversion:7.2',
    "-r:$netfx\mscorlib.dll", "-r:$netfx\System.dll", "-r:$netfx\System.Core.dll", "-r:$netfx\System.Drawing.dll",
    "-r:$netfx\System.Xml.dll", "-r:$netfx\System.Runtime.Serialization.dll")
# The wrapper's sources as Segrt.Net.csproj compiles them (*.cs and *\*.cs, without bin\ and obj\).
$wrapper = (Get-ChildItem "$repo\bindings\csharp\*.cs", "$repo\bindings\csharp\*\*.cs" | Where-Object { $_.FullName -notmatch '\\(bin|obj)\\' }).FullName

$build = Join-Path $repo 'tests\windows-build'   # git-ignored, like tests/c/build
if (-not $SkipTests) {
    Remove-Item -Recurse -Force $build -ErrorAction SilentlyContinue
    New-Item -ItemType Directory $build | Out-Null
    # Each program finds segrt.dll beside itself, and segrt finds onnxruntime.dll beside itself.
    Copy-Item "$lib\segrt.dll", $ortDll $build

    # 3. The C host program (tests/c/run.sh, plain; no sanitizers or valgrind here). Its inputs are PPM/PGM
    #    files written with Pillow, in .venv\ as test.sh makes it.
    $py = "$repo\.venv\Scripts\python.exe"
    if (-not (Test-Path $py)) {
        python -m venv .venv; Assert-Exit 'python -m venv .venv'
        & $py -m pip install --quiet pillow numpy; Assert-Exit 'pip install pillow numpy'
    }
    & $py tests\c\make_inputs.py . "$build\inputs"; Assert-Exit 'make_inputs.py'
    # cl.exe runs inside vcvars64.bat's environment, from a .cmd file (no quoting through PowerShell).
    @("@call `"$vs\VC\Auxiliary\Build\vcvars64.bat`" >nul",
      "@cd /d `"$build`"",
      "cl /nologo /W4 /D_CRT_SECURE_NO_WARNINGS /I`"$repo\include`" `"$repo\tests\c\test_segrt.c`" /Fetest_segrt.exe /link `"$lib\segrt.dll.lib`"",
      "@exit /b %errorlevel%") | Set-Content -Encoding Ascii "$build\cl.cmd"
    cmd /c "$build\cl.cmd"; Assert-Exit 'cl test_segrt.c'
    & "$build\test_segrt.exe" . "$build\inputs"; Assert-Exit 'test_segrt.exe'

    # 4. The C# wrapper, its tests and the WinForms sample (tests/csharp/run.sh, without the screenshots).
    & $csc @cscArgs '-target:library' "-out:$build\Segrt.Net.dll" "-doc:$build\Segrt.Net.xml" '-nowarn:1591' @wrapper
    Assert-Exit 'csc Segrt.Net.dll'
    & $csc @cscArgs '-target:exe' "-r:$netfx\System.Windows.Forms.dll" "-out:$build\SegrtTests.exe" @wrapper (Get-ChildItem "$repo\tests\csharp\*.cs").FullName
    Assert-Exit 'csc SegrtTests.exe'
    & $csc @cscArgs '-target:winexe' "-r:$netfx\System.Windows.Forms.dll" "-r:$build\Segrt.Net.dll" `
        "-out:$build\SegrtDemo.exe" (Get-ChildItem "$repo\dotnet-sample\*.cs").FullName
    Assert-Exit 'csc SegrtDemo.exe'
    & "$build\SegrtTests.exe" $repo; Assert-Exit 'SegrtTests.exe'
    Write-Host "C host and C# tests passed; the WinForms sample: $build\SegrtDemo.exe"
}

# 5. The package (package.sh), Windows layout: the native pair in lib\ and runtimes\win-x64\native\.
#    Unlike package.sh, the version comes from Cargo.toml, not from a probe of the built library, and the
#    C example (a gcc Makefile) and the PPM/PGM sample copies are left out.
$version = (cargo metadata --no-deps --format-version 1 | ConvertFrom-Json).packages[0].version
Assert-Exit 'cargo metadata'
$name = "segrt-$version-win-x64"
$pkg = Join-Path $repo "dist\$name"
Remove-Item -Recurse -Force $pkg, "$pkg.zip" -ErrorAction SilentlyContinue
foreach ($d in 'lib', 'include', 'bindings\csharp', 'runtimes\win-x64\native', 'build', 'models\samples') {
    New-Item -ItemType Directory -Force "$pkg\$d" | Out-Null
}
Copy-Item "$lib\segrt.dll", "$lib\segrt.dll.lib", $ortDll "$pkg\lib\"
Copy-Item "$lib\segrt.dll", $ortDll "$pkg\runtimes\win-x64\native\"
Copy-Item include\segrt.h, include\segrt.hpp "$pkg\include\"
foreach ($f in $wrapper) {   # the C# sources keep their folders
    $dst = Join-Path "$pkg\bindings\csharp" $f.Substring("$repo\bindings\csharp\".Length)
    New-Item -ItemType Directory -Force (Split-Path $dst) | Out-Null
    Copy-Item $f $dst
}
Copy-Item packaging\msbuild\Segrt.Net.props, packaging\msbuild\Segrt.Net.targets "$pkg\build\"
Copy-Item models\demo_unet.onnx "$pkg\models\"
Copy-Item models\samples\lesion_01.png, models\samples\lesion_01_gt.png "$pkg\models\samples\"
Copy-Item packaging\README.txt "$pkg\"
$commit = git rev-parse HEAD
if (git status --porcelain) { $commit += ' plus uncommitted changes' }
@("segrt $version", "ONNX Runtime $ortVersion (onnxruntime.dll, official onnxruntime==$ortVersion PyPI wheel)",
  "platform win-x64 (needs the Visual C++ 2015-2022 x64 runtime: onnxruntime.dll imports MSVCP140.dll)",
  "built from $commit with $(rustc --version), release profile") | Set-Content "$pkg\VERSIONS.txt"
$sums = Get-ChildItem -Recurse -File $pkg | Sort-Object FullName | ForEach-Object {
    $rel = $_.FullName.Substring($pkg.Length + 1).Replace('\', '/')
    (Get-FileHash -Algorithm SHA256 $_.FullName).Hash.ToLower() + "  $rel"
}
$sums | Set-Content "$pkg\SHA256SUMS"
Compress-Archive -Path $pkg -DestinationPath "$pkg.zip"
Write-Host "package: $pkg, $pkg.zip"
