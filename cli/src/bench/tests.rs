//! Tests of `mvision bench`: argument parsing, the report format, and GPU backends where present.

use super::*;

fn args(sizes: &[(usize, usize)], json: bool, backend: Backend) -> BenchArgs {
    BenchArgs {
        suite: Suite::Filter(FilterBenchArgs {
            sizes: sizes
                .iter()
                .map(|&(width, height)| BenchSize { width, height })
                .collect(),
            repeat: 3,
            cases: Vec::new(),
            json,
            backend,
            variant: mvision_runtime::Variant::default(),
        }),
    }
}

#[test]
fn sizes_parse_and_reject_what_no_case_can_run() {
    assert_eq!(
        "1920x1080".parse(),
        Ok(BenchSize {
            width: 1920,
            height: 1080
        })
    );
    assert_eq!(" 7 X 5 ".parse::<BenchSize>().unwrap().to_string(), "7x5");
    assert!("1920".parse::<BenchSize>().unwrap_err().contains("WxH"));
    assert!("0x10"
        .parse::<BenchSize>()
        .unwrap_err()
        .contains("positive"));
    assert!("axb".parse::<BenchSize>().is_err());
    assert!("65536x65536"
        .parse::<BenchSize>()
        .unwrap_err()
        .contains("too large"));
}

#[test]
fn median_of_odd_and_even_counts() {
    let ms = Duration::from_millis;
    assert_eq!(median(&mut [ms(5), ms(1), ms(3)]), ms(3));
    assert_eq!(median(&mut [ms(4), ms(1), ms(3), ms(2)]), ms(2) + ms(1) / 2);
    assert_eq!(median(&mut [ms(7)]), ms(7));
}

#[test]
fn gpu_backends_run_where_present_and_fail_clearly_elsewhere() {
    let available = mvision_runtime::available();
    for backend in [Backend::Opencl, Backend::Cuda] {
        let mut a = args(&[(8, 8)], true, backend);
        let Suite::Filter(f) = &mut a.suite else {
            unreachable!("args() builds a filter suite")
        };
        f.cases = vec!["filter2d_3x3_u8".into(), "integral_u8".into()];
        f.variant = mvision_runtime::Variant::Naive;
        let mut out = Vec::new();
        let result = run(&a, &mut out);
        if available.contains(backend.gpu().unwrap()) {
            result.unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains("copy GB/s"), "{text}");
            let json: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
            assert_eq!(json["results"].as_array().unwrap().len(), 2);
            assert!(json["results"][0]["fraction_of_copy"].as_f64().unwrap() > 0.0);
        } else {
            let msg = format!("{:#}", result.unwrap_err());
            assert!(msg.contains(backend.name()), "{msg}");
            assert!(
                out.is_empty(),
                "nothing is printed for a backend that cannot run"
            );
        }
    }
}

#[test]
fn variants_parse() {
    use mvision_runtime::Variant;
    assert_eq!(parse_variant("naive"), Ok(Variant::Naive));
    assert_eq!(parse_variant("tiled"), Ok(Variant::default()));
    assert_eq!(
        parse_variant("tiled:8x4"),
        Ok(Variant::Tiled { w: 8, h: 4 })
    );
    assert!(parse_variant("tiles").is_err());
}

#[test]
fn table_then_one_json_object_on_the_last_line() {
    let mut out = Vec::new();
    run(&args(&[(16, 9), (5, 3)], true, Backend::Cpu), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Header, column titles, one row per case, then the JSON.
    assert_eq!(lines.len(), 2 + CASES.len() + 1);
    assert!(lines[1].contains("16x9") && lines[1].contains("5x3"));
    assert!(lines[2].starts_with("filter2d 3x3 u8"));
    let v: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    assert_eq!(v["backend"], "cpu");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), CASES.len() * 2);
    assert_eq!(results[0]["case"], "filter2d_3x3_u8");
    assert_eq!(results[1]["width"], 5);
    assert!(results
        .iter()
        .all(|r| r["median_ms"].as_f64().unwrap() >= 0.0));
    assert_eq!(v["dense_kernels"]["7x7"].as_array().unwrap().len(), 49);
}

#[test]
fn cases_select_rows_and_unknown_ids_are_named() {
    let mut a = args(&[(4, 4)], false, Backend::Cpu);
    let Suite::Filter(f) = &mut a.suite else {
        unreachable!("args() builds a filter suite")
    };
    f.cases = vec!["box_5_u8".into(), "filter2d_7x7_f32".into()];
    let mut out = Vec::new();
    run(&a, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let rows: Vec<&str> = text.lines().skip(2).collect();
    // Catalogue order, whatever the order given.
    assert_eq!(rows.len(), 2);
    assert!(rows[0].starts_with("filter2d 7x7 f32") && rows[1].starts_with("box 5x5 u8"));

    let Suite::Filter(f) = &mut a.suite else {
        unreachable!("args() builds a filter suite")
    };
    f.cases = vec!["box_3_u8".into()];
    let err = format!("{:#}", run(&a, &mut Vec::new()).unwrap_err());
    assert!(
        err.contains("'box_3_u8'") && err.contains("box_5_u8"),
        "{err}"
    );
}

#[test]
fn without_json_only_the_table_is_printed() {
    let mut out = Vec::new();
    run(&args(&[(4, 4)], false, Backend::Cpu), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.lines().count(), 2 + CASES.len());
    assert!(!text.contains('{'));
}
