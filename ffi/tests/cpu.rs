//! `mv_cpu_*`: the detected level, the cap, and that capping does not change results (one test
//! body, since the cap is process-wide).

use mvision::cpu::*;
use mvision::status::mv_status::*;

#[test]
fn cap_lowers_the_level_and_rejects_unknown_values() {
    let detected = mv_cpu_detected();
    assert!((MV_CPU_BASELINE..=MV_CPU_X86_64_V4).contains(&detected));
    assert_eq!(mv_cpu_active(), detected);
    assert_eq!(mv_cpu_set_max_level(MV_CPU_BASELINE), MV_STATUS_OK);
    assert_eq!(mv_cpu_active(), MV_CPU_BASELINE);
    assert_eq!(mv_cpu_set_max_level(0), MV_STATUS_INVALID_ARGUMENT);
    assert_eq!(mv_cpu_set_max_level(4), MV_STATUS_INVALID_ARGUMENT);
    assert_eq!(
        mv_cpu_active(),
        MV_CPU_BASELINE,
        "a rejected cap changes nothing"
    );
    assert_eq!(mv_cpu_set_max_level(MV_CPU_X86_64_V3), MV_STATUS_OK);
    assert_eq!(mv_cpu_active(), detected.min(MV_CPU_X86_64_V3));
    assert_eq!(mv_cpu_set_max_level(MV_CPU_X86_64_V4), MV_STATUS_OK);
    assert_eq!(mv_cpu_active(), detected);
}
