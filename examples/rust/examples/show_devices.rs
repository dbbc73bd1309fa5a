//! Detects this machine (or the machine under SYSROOT) and plans an 8B model.
//!
//!     cargo run --example show_devices -- [SYSROOT]
use std::process::ExitCode;

fn main() -> ExitCode {
    let options = std::env::args().nth(1).map(|root| {
        format!(
            r#"{{"sysroot":{},"no_exec":true}}"#,
            ai_hwaccel::json_string(&root)
        )
    });
    let run = || -> Result<(), ai_hwaccel::HwaccelError> {
        ai_hwaccel::check_abi()?;
        let registry = ai_hwaccel::detect(options.as_deref())?;
        // Device ids without a JSON crate: each device object starts with {"id":"
        for part in registry.split(r#"{"id":""#).skip(1) {
            println!("device {}", part.split('"').next().unwrap_or(""));
        }
        let request =
            format!(r#"{{"model":{{"params_b":8}},"engine":"llama.cpp","registry":{registry}}}"#);
        println!("{}", ai_hwaccel::plan_sharding(&request)?);
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("show_devices: {e}");
            ExitCode::FAILURE
        }
    }
}
