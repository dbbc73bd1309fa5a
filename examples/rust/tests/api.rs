//! Tests of the binding against the built library (rpath from build.rs).
//! Fixture machines: ../../testdata/machines (see their README.md).
use std::path::PathBuf;
use std::thread;

use ai_hwaccel::{HwaccelError, OwnedJson};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn fixture_options(machine: &str) -> String {
    let root = repo().join("testdata/machines").join(machine).join("root");
    options_for(&root.display().to_string())
}

fn options_for(sysroot: &str) -> String {
    format!(
        r#"{{"sysroot":{},"no_exec":true}}"#,
        ai_hwaccel::json_string(sysroot)
    )
}

fn header_define(name: &str) -> String {
    let text = std::fs::read_to_string(repo().join("include/ai_hwaccel.h")).unwrap();
    let prefix = format!("#define {name} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("{name} not in header"))
        .trim()
        .to_string()
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn versions_match_header() {
    assert_eq!(
        format!("\"{}\"", ai_hwaccel::version()),
        header_define("HWACCEL_VERSION_STRING")
    );
    assert_eq!(
        ai_hwaccel::ABI_VERSION.to_string(),
        header_define("HWACCEL_ABI_VERSION")
    );
    assert_eq!(ai_hwaccel::abi_version(), ai_hwaccel::ABI_VERSION);
    ai_hwaccel::check_abi().unwrap();
    assert_send_sync::<OwnedJson>();
}

#[test]
fn detect_cpu_only_fixture() {
    let reg = ai_hwaccel::detect(Some(&fixture_options("cpu-only"))).unwrap();
    assert!(reg.starts_with(r#"{"schema_version":1"#), "{reg}");
    assert_eq!(reg.matches(r#"{"id":""#).count(), 1, "one device: {reg}");
    assert!(reg.contains(r#""id":"cpu:0","kind":"cpu""#), "{reg}");
    // MemTotal 65921280 kB in the fixture's /proc/meminfo.
    assert!(reg.contains(r#""memory_bytes":67503390720"#), "{reg}");
}

// A sysroot whose path holds a quote, a backslash and a control character
// reaches the library intact through json_string: the same machine is
// detected through it as through the plain path. (Rust's {:?} wrote the
// ESC as \u{1b}, which the library refuses as invalid_json.)
#[test]
fn unusual_sysroot_path_is_escaped() {
    let root = repo().join("testdata/machines/cpu-only/root");
    let odd = std::env::temp_dir().join(format!(
        "ai-hwaccel \"q\" back\\slash \u{1b}esc {}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&odd);
    std::os::unix::fs::symlink(&root, &odd).unwrap();
    let odd_str = odd.to_str().unwrap().to_string();
    let via_odd = ai_hwaccel::detect(Some(&options_for(&odd_str)));
    let debug = format!(r#"{{"sysroot":{:?},"no_exec":true}}"#, odd_str);
    let via_debug = ai_hwaccel::detect(Some(&debug));
    std::fs::remove_file(&odd).unwrap();
    let plain = ai_hwaccel::detect(Some(&fixture_options("cpu-only"))).unwrap();
    let via_odd = via_odd.unwrap();
    assert!(
        via_odd.contains(r#""memory_bytes":67503390720"#),
        "{via_odd}"
    );
    assert_eq!(
        via_odd.matches(r#"{"id":""#).count(),
        plain.matches(r#"{"id":""#).count()
    );
    assert_eq!(via_debug.unwrap_err().code, "invalid_json");
}

#[test]
fn errors_carry_stable_codes() {
    let rows: &[(&str, Result<String, HwaccelError>, &str)] = &[
        (
            "unknown option",
            ai_hwaccel::detect(Some(r#"{"bogus":1}"#)),
            "invalid_argument",
        ),
        (
            "bad json",
            ai_hwaccel::plan_sharding(r#"{"model":"#),
            "invalid_json",
        ),
        (
            "empty request",
            ai_hwaccel::suggest_quant(""),
            "invalid_argument",
        ),
        (
            "unknown model",
            ai_hwaccel::plan_sharding(r#"{"model":{"name":"no-such-model-xyz"}}"#),
            "unknown_model",
        ),
        (
            "NUL byte",
            ai_hwaccel::detect(Some("{}\0")),
            "invalid_argument",
        ),
    ];
    for (name, got, code) in rows {
        let e = got.as_ref().expect_err(name);
        assert_eq!(e.code, *code, "{name}: {e}");
        assert!(!e.message.is_empty(), "{name}");
    }
}

#[test]
fn planning_on_a_registry() {
    let reg = ai_hwaccel::detect(Some(&fixture_options("cpu-only"))).unwrap();
    let req = format!(r#"{{"model":{{"params_b":8}},"engine":"llama.cpp","registry":{reg}}}"#);
    let plan = ai_hwaccel::plan_sharding(&req).unwrap();
    assert!(plan.contains(r#""fits":true"#), "{plan}");
    assert!(plan.contains(r#""device_id":"cpu:0""#), "{plan}");
    assert!(plan.contains(r#""llama.cpp":["#), "{plan}");
    let quant = ai_hwaccel::suggest_quant(&req).unwrap();
    assert!(quant.contains(r#""quant":""#), "{quant}");
    let train = ai_hwaccel::estimate_training(&req).unwrap();
    assert!(ai_hwaccel::parse_error(&train).is_none(), "{train}");
    // rent (issue 26): the catalog's machines, not this registry.
    let rent =
        ai_hwaccel::rent(r#"{"model":{"params_b":8},"rent":{"providers":["aws"]}}"#).unwrap();
    assert!(
        rent.contains(r#""cost_per_million_output_tokens":"#),
        "{rent}"
    );
    let refused = ai_hwaccel::rent(&req).unwrap_err();
    assert_eq!(refused.code, "invalid_argument");
}

#[test]
fn owned_answers_move_across_threads() {
    let opts = fixture_options("cpu-only");
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let opts = opts.clone();
            thread::spawn(move || {
                let c = std::ffi::CString::new(opts).unwrap();
                (0..20)
                    .map(|_| ai_hwaccel::raw::detect(Some(&c)).expect("not NULL"))
                    .collect::<Vec<OwnedJson>>()
            })
        })
        .collect();
    // Answers made on 8 threads are read and dropped (freed) on this one.
    let mut n = 0;
    for h in handles {
        for a in h.join().unwrap() {
            assert!(a.to_string_lossy().contains(r#""id":"cpu:0""#));
            n += 1;
        }
    }
    assert_eq!(n, 160);
}

#[test]
fn catalog_and_fit() {
    let models = ai_hwaccel::models(Some(r#"{"filter":"llama-3.1-8b"}"#)).unwrap();
    assert!(models.contains(r#""name":"Llama-3.1-8B""#), "{models}");
    let reg = ai_hwaccel::detect(Some(&fixture_options("cpu-only"))).unwrap();
    let fit = ai_hwaccel::fit(Some(&format!(
        r#"{{"filter":"Llama-3.1","registry":{reg}}}"#
    )))
    .unwrap();
    assert!(
        fit.contains(r#""model":"Llama-3.1-8B""#) && fit.contains(r#""fits":true"#),
        "{fit}"
    );
    let err = ai_hwaccel::fit(Some(r#"{"filtr":"x"}"#)).unwrap_err();
    assert_eq!(err.code, "invalid_argument");
    let plan =
        ai_hwaccel::plan_sharding(&format!(r#"{{"model":"Llama-3.1-8B","registry":{reg}}}"#))
            .unwrap();
    assert!(plan.contains(r#""fits":true"#), "{plan}");
}
