//! Without libcuda (CI, most build machines) every entry point reports `Error::Unavailable`:
//! nothing panics, nothing aborts. With a GPU, asking for a device that does not exist is
//! `Unavailable` too.

use mvision_cuda::{devices, loader, Context, Error};

fn is_unavailable<T: std::fmt::Debug>(r: Result<T, Error>) -> bool {
    match r {
        Err(Error::Unavailable(why)) => {
            assert!(!why.is_empty());
            eprintln!("unavailable, as expected: {why}");
            true
        }
        other => panic!("expected Error::Unavailable, got {other:?}"),
    }
}

#[test]
fn without_libcuda_everything_is_unavailable() {
    if loader::driver_present() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED without_libcuda_everything_is_unavailable: libcuda is installed here"
        );
        return;
    }
    assert!(is_unavailable(devices()));
    assert!(is_unavailable(Context::new(0)));
    assert!(is_unavailable(Context::from_env()));
    // Twice: the answer is cached and stays the same.
    assert!(is_unavailable(Context::new(0)));
}

#[test]
fn a_device_index_beyond_the_last_is_unavailable() {
    assert!(is_unavailable(Context::new(10_000)));
}

#[test]
fn an_unparsable_device_variable_is_an_invalid_argument() {
    // Only this test sets the variable. `from_env` looks for libcuda first, so without it the
    // parallel test above gets `Unavailable` whatever the variable holds.
    std::env::set_var(mvision_cuda::DEVICE_ENV, "first");
    let r = Context::from_env();
    std::env::remove_var(mvision_cuda::DEVICE_ENV);
    if loader::driver_present() {
        assert!(matches!(
            r,
            Err(Error::Invalid(mvision_core::Error::InvalidArgument))
        ));
    } else {
        assert!(is_unavailable(r));
    }
}

#[test]
fn errors_print_what_went_wrong() {
    let e = Error::KernelBuild {
        kernel: "mv_filter_16x16.cu (sm_87)".into(),
        log: "error: identifier \"x\" is undefined".into(),
    };
    let text = e.to_string();
    assert!(text.contains("sm_87") && text.contains("undefined"));
    assert_eq!(
        Error::Device {
            call: "cuLaunchKernel",
            code: 700
        }
        .to_string(),
        "cuLaunchKernel failed with status 700"
    );
    assert!(Error::Invalid(mvision_core::Error::ZeroSize)
        .to_string()
        .contains("size must be positive"));
}

#[test]
fn contexts_and_images_can_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Context>();
    send_sync::<mvision_cuda::DeviceImage<u8>>();
    send_sync::<mvision_cuda::DeviceImage<f32>>();
    send_sync::<Error>();
}
