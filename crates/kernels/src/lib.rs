//! Nothing to link: this package exists for its build script (the top-level build.rs), which
//! compiles csrc/ into `<target>/kernels` and tests/csrc into `<target>/kernels-test`, where
//! kernel-lab finds them at run time (`lab_facts::kernels::locate`).
