//! Which build of ONNX Runtime was loaded (CPU, CUDA 12, CUDA 13, DirectML, OpenVINO), told at load
//! from three things: the providers the library was compiled with (`GetAvailableProviders`), the
//! provider libraries beside it, and for CUDA the CUDA major version its provider library links
//! (`libcudart.so.12` / `cublasLt64_13.dll` among its NEEDED entries or imports).
//! `GetAvailableProviders` alone says what was compiled in, not what can load: onnxruntime-gpu lists
//! CUDA and TensorRT with or without `libonnxruntime_providers_cuda.so` beside it.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The build, as `segrt providers` / `seg_session_info` name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flavour {
    Cpu,
    /// onnxruntime-gpu; the CUDA major version its provider links (None: the provider library is
    /// not beside ONNX Runtime or does not say).
    Cuda {
        cuda_major: Option<u32>,
    },
    DirectMl,
    OpenVino,
}

impl Flavour {
    pub fn describe(&self) -> String {
        match self {
            Flavour::Cpu => "CPU".into(),
            Flavour::Cuda { cuda_major: Some(m) } => format!("CUDA {m}"),
            Flavour::Cuda { cuda_major: None } => "CUDA (its provider library is not beside ONNX Runtime)".into(),
            Flavour::DirectMl => "DirectML".into(),
            Flavour::OpenVino => "OpenVINO".into(),
        }
    }
}

/// The CUDA provider library's file name.
pub const CUDA_PROVIDER: &str = if cfg!(windows) { "onnxruntime_providers_cuda.dll" } else { "libonnxruntime_providers_cuda.so" };

/// The flavour of a build offering `providers` (ONNX Runtime's names), whose CUDA provider library
/// links `cuda_provider_needs` (empty when it is absent).
pub fn classify(providers: &[String], cuda_provider_needs: &[String]) -> Flavour {
    let has = |name: &str| providers.iter().any(|p| p == name);
    if has("CUDAExecutionProvider") {
        Flavour::Cuda { cuda_major: cuda_major(cuda_provider_needs) }
    } else if has("DmlExecutionProvider") {
        Flavour::DirectMl
    } else if has("OpenVINOExecutionProvider") {
        Flavour::OpenVino
    } else {
        Flavour::Cpu
    }
}

/// The CUDA major version from the CUDA libraries a provider links: `libcudart.so.12`,
/// `libcublasLt.so.13`, `cudart64_12.dll`, `cublasLt64_13.dll`, `cublas64_13.dll`.
pub fn cuda_major(needed: &[String]) -> Option<u32> {
    needed.iter().find_map(|n| {
        let n = n.to_ascii_lowercase();
        for stem in ["libcudart.so.", "libcublaslt.so.", "libcublas.so."] {
            if let Some(v) = n.strip_prefix(stem) {
                return v.split('.').next()?.parse().ok();
            }
        }
        for stem in ["cudart64_", "cublaslt64_", "cublas64_"] {
            if let Some(v) = n.strip_prefix(stem).and_then(|v| v.strip_suffix(".dll")) {
                return v.parse().ok();
            }
        }
        None
    })
}

/// The flavour of the ONNX Runtime library at `library`, given its `GetAvailableProviders`.
pub fn detect(library: &Path, providers: &[String]) -> Flavour {
    let needs = library
        .parent()
        .map(|dir| dir.join(CUDA_PROVIDER))
        .filter(|p| p.is_file())
        .and_then(|p| linked_libraries(&p).ok())
        .unwrap_or_default();
    classify(providers, &needs)
}

/// The libraries a shared library links by name: an ELF file's DT_NEEDED entries, or a PE file's
/// imported and delay-loaded DLLs. Reads the headers and tables only, not the whole file (a CUDA
/// provider library is 200-370 MB).
pub fn linked_libraries(path: &Path) -> std::io::Result<Vec<String>> {
    let mut file = std::fs::File::open(path)?;
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic)?;
    if &magic == b"\x7fELF" {
        elf_needed(&mut file)
    } else if magic[..2] == *b"MZ" {
        pe_imports(&mut file)
    } else {
        Err(bad("neither an ELF nor a PE file"))
    }
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string())
}

fn read_at<F: Read + Seek>(f: &mut F, at: u64, len: usize) -> std::io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(at))?;
    let mut buf = vec![0; len];
    f.read_exact(&mut buf)?;
    Ok(buf)
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn c_string(b: &[u8], at: usize) -> Option<String> {
    let tail = b.get(at..)?;
    let end = tail.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&tail[..end]).into_owned())
}

/// DT_NEEDED of a 64-bit little-endian ELF file: the SHT_DYNAMIC section, its strings in the section
/// it links.
fn elf_needed<F: Read + Seek>(f: &mut F) -> std::io::Result<Vec<String>> {
    let header = read_at(f, 0, 64)?;
    if header[4] != 2 || header[5] != 1 {
        return Err(bad("not a 64-bit little-endian ELF file"));
    }
    let (shoff, shentsize, shnum) = (u64_at(&header, 0x28), u16_at(&header, 0x3a) as usize, u16_at(&header, 0x3c) as usize);
    if shentsize < 64 || shnum == 0 || shnum > 65_000 {
        return Err(bad("no section headers"));
    }
    let sections = read_at(f, shoff, shentsize * shnum)?;
    let section = |i: usize| &sections[i * shentsize..(i + 1) * shentsize];
    const SHT_DYNAMIC: u32 = 6;
    const DT_NEEDED: u64 = 1;
    let Some(dynamic) = (0..shnum).map(section).find(|s| u32_at(s, 4) == SHT_DYNAMIC) else { return Ok(Vec::new()) };
    let link = u32_at(dynamic, 0x28) as usize;
    if link >= shnum {
        return Err(bad("the dynamic section links no string table"));
    }
    let strtab = section(link);
    let (dyn_off, dyn_size) = (u64_at(dynamic, 0x18), u64_at(dynamic, 0x20) as usize);
    let (str_off, str_size) = (u64_at(strtab, 0x18), u64_at(strtab, 0x20) as usize);
    if dyn_size > 1 << 20 || str_size > 16 << 20 {
        return Err(bad("implausible dynamic section"));
    }
    let entries = read_at(f, dyn_off, dyn_size)?;
    let strings = read_at(f, str_off, str_size)?;
    Ok(entries
        .chunks_exact(16)
        .take_while(|e| u64_at(e, 0) != 0)
        .filter(|e| u64_at(e, 0) == DT_NEEDED)
        .filter_map(|e| c_string(&strings, u64_at(e, 8) as usize))
        .collect())
}

/// The DLL names in a PE32+ file's import directory and delay-load import directory.
fn pe_imports<F: Read + Seek>(f: &mut F) -> std::io::Result<Vec<String>> {
    let dos = read_at(f, 0, 64)?;
    let pe = u32_at(&dos, 0x3c) as u64;
    let coff = read_at(f, pe, 24)?;
    if &coff[..4] != b"PE\0\0" {
        return Err(bad("no PE signature"));
    }
    let (sections, optional_size) = (u16_at(&coff, 6) as usize, u16_at(&coff, 20) as usize);
    let optional = read_at(f, pe + 24, optional_size)?;
    if optional_size < 112 + 14 * 8 || u16_at(&optional, 0) != 0x20b {
        return Err(bad("not a PE32+ (64-bit) file"));
    }
    let directory = |i: usize| (u32_at(&optional, 112 + 8 * i), u32_at(&optional, 112 + 8 * i + 4));
    let table = read_at(f, pe + 24 + optional_size as u64, 40 * sections)?;
    // (virtual address, virtual size, file offset, file size) per section, to turn RVAs into offsets.
    let spans: Vec<(u32, u32, u32, u32)> =
        table.chunks_exact(40).map(|s| (u32_at(s, 12), u32_at(s, 8).max(u32_at(s, 16)), u32_at(s, 20), u32_at(s, 16))).collect();
    let offset =
        |rva: u32| spans.iter().find(|(va, size, _, _)| rva >= *va && rva < va + size).map(|(va, _, raw, _)| (raw + (rva - va)) as u64);
    let mut names = Vec::new();
    let mut read_name = |f: &mut F, rva: u32| -> std::io::Result<()> {
        if let Some(at) = offset(rva) {
            if let Some(name) = c_string(&read_at(f, at, 260).or_else(|_| read_at(f, at, 64))?, 0) {
                names.push(name);
            }
        }
        Ok(())
    };
    // Import descriptors: 20 bytes, the name's RVA at 12; delay-load descriptors: 32 bytes, at 4.
    for (dir, size, name_at) in [(1usize, 20usize, 12usize), (13, 32, 4)] {
        let (rva, len) = directory(dir);
        let Some(at) = offset(rva).filter(|_| rva != 0 && len != 0) else { continue };
        let descriptors = read_at(f, at, (len as usize).min(1 << 16))?;
        for d in descriptors.chunks_exact(size) {
            if d.iter().all(|&b| b == 0) {
                break;
            }
            read_name(f, u32_at(d, name_at))?;
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_provider_list_and_the_cuda_libraries_name_the_build() {
        let cpu = names(&["AzureExecutionProvider", "CPUExecutionProvider"]);
        let gpu = names(&["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]);
        assert_eq!(classify(&cpu, &[]), Flavour::Cpu);
        assert_eq!(classify(&names(&["OpenVINOExecutionProvider", "CPUExecutionProvider"]), &[]), Flavour::OpenVino);
        assert_eq!(classify(&names(&["DmlExecutionProvider", "CPUExecutionProvider"]), &[]), Flavour::DirectMl);
        // NEEDED of onnxruntime-gpu 1.24.4's and 1.31.1's Linux provider, imports of their Windows DLLs.
        let linux12 =
            names(&["libcublasLt.so.12", "libcublas.so.12", "libcurand.so.10", "libcufft.so.11", "libcudart.so.12", "libcudnn.so.9"]);
        let linux13 = names(&["libcublasLt.so.13", "libcublas.so.13", "libcurand.so.10", "libcudart.so.13", "libcuda.so.1"]);
        let windows13 = names(&["KERNEL32.dll", "cublas64_13.dll", "cublasLt64_13.dll", "onnxruntime_providers_shared.dll"]);
        let windows12 = names(&["cublas64_12.dll", "cublasLt64_12.dll", "cudart64_12.dll", "cudnn64_9.dll", "cufft64_11.dll"]);
        assert_eq!(classify(&gpu, &linux12), Flavour::Cuda { cuda_major: Some(12) });
        assert_eq!(classify(&gpu, &linux13), Flavour::Cuda { cuda_major: Some(13) });
        assert_eq!(classify(&gpu, &windows13), Flavour::Cuda { cuda_major: Some(13) });
        assert_eq!(classify(&gpu, &windows12), Flavour::Cuda { cuda_major: Some(12) });
        assert_eq!(classify(&gpu, &[]), Flavour::Cuda { cuda_major: None });
        assert_eq!(cuda_major(&names(&["libcurand.so.10", "libcufft.so.11"])), None, "cuRAND/cuFFT numbers are not CUDA's");
    }
}
