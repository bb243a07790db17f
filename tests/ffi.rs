//! The committed bindings of `csrc/include/lab.h` (crates/gpu/src/lab_ffi.rs) are what bindgen makes of
//! the header now. Building the library reads the committed file, so it needs no libclang; this
//! test does (scripts/setup.sh installs it) and fails when lab.h changed without them.
//! `cargo make ffi` (KERNEL_LAB_FFI=write) rewrites the file instead of checking it.

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// What bindgen makes of lab.h: its `lab_*` types and `LAB_*` constants, with the layout
/// assertions that hold the Rust structs to clang's size, alignment and offsets.
fn generate() -> String {
    let header = Path::new(ROOT).join("csrc/include/lab.h");
    bindgen::Builder::default()
        .header(header.to_string_lossy())
        .allowlist_type("lab_.*")
        .allowlist_var("LAB_.*")
        .derive_default(true)
        .derive_debug(true)
        .derive_copy(true)
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen could not read {}: {e} (it needs libclang: `cargo make setup` installs it)", header.display()))
        .to_string()
}

#[test]
fn the_committed_bindings_are_what_bindgen_makes_of_lab_h() {
    let path = Path::new(ROOT).join("crates/gpu/src/lab_ffi.rs");
    let now = generate();
    if std::env::var("KERNEL_LAB_FFI").is_ok_and(|v| v == "write") {
        std::fs::write(&path, now).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(committed == now, "crates/gpu/src/lab_ffi.rs differs from what bindgen makes of csrc/include/lab.h now: run `cargo make ffi`");
}

#[test]
fn the_build_plans_c_boxes_of_the_width_the_header_gives_the_kernels() {
    // hopper::Layout gives two C buffers only where a tile's boxes are even in number, counting
    // boxes of its own TMA_C_COLS; the kernels' boxes are lab_gemm.h's LAB_TMA_C_COLS wide.
    assert_eq!(kernel_lab::facts::hopper::TMA_C_COLS, u64::from(kernel_lab::gpu::ffi::LAB_TMA_C_COLS));
}
