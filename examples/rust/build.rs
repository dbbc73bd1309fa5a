//! Links libai_hwaccel.so (built by `make` in the repository root, or installed).
//!
//! Where the library is searched, first match wins:
//! 1. HWACCEL_LIB_DIR (a directory holding libai_hwaccel.so);
//! 2. ../../build next to this crate (the repository's `make` output);
//! 3. `pkg-config --variable=libdir ai_hwaccel` (a `make install` prefix;
//!    set PKG_CONFIG_PATH for a non-system prefix).
//!
//! Tests and examples get an rpath to that directory so they run
//! without LD_LIBRARY_PATH; the executable's NEEDED entry is the SONAME
//! (libai_hwaccel.so.0), so only that link must exist at run time.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=HWACCEL_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");

    let dir = lib_dir().unwrap_or_else(|| {
        panic!(
            "libai_hwaccel.so not found: run `make` in the repository root, \
             or set HWACCEL_LIB_DIR to the directory that holds it"
        )
    });
    let dir = dir.display();
    println!("cargo:rerun-if-changed={dir}/libai_hwaccel.so");
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=dylib=ai_hwaccel");
    println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{dir}");
    println!("cargo:rustc-link-arg-examples=-Wl,-rpath,{dir}");
    // For crates that depend on this one (links = "ai_hwaccel"): DEP_AI_HWACCEL_LIB_DIR.
    println!("cargo:lib_dir={dir}");
}

fn has_lib(dir: &Path) -> bool {
    dir.join("libai_hwaccel.so").exists()
}

fn lib_dir() -> Option<PathBuf> {
    if let Some(d) = env::var_os("HWACCEL_LIB_DIR") {
        let d = PathBuf::from(d);
        return Some(d.canonicalize().unwrap_or(d));
    }
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR")?);
    let repo_build = manifest.join("../../build");
    if has_lib(&repo_build) {
        return repo_build.canonicalize().ok();
    }
    let out = Command::new("pkg-config")
        .args(["--variable=libdir", "ai_hwaccel"])
        .output()
        .ok()?;
    let d = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (out.status.success() && has_lib(&d)).then_some(d)
}
