//! Safe binding of libai_hwaccel (`include/ai_hwaccel.h`): JSON in, JSON out.
//!
//! ```no_run
//! let registry = ai_hwaccel::detect(None)?;
//! let plan = ai_hwaccel::plan_sharding(r#"{"model":{"params_b":70},"engine":"vllm"}"#)?;
//! println!("{registry}\n{plan}");
//! # Ok::<(), ai_hwaccel::HwaccelError>(())
//! ```
//!
//! Every function returns the answer's JSON text, or `HwaccelError` when the
//! library answered its error object `{"error":{"code":...,"message":...}}`.
//! Parse the text with the JSON crate of your choice; this crate has no
//! dependencies and reads only the error envelope.
//!
//! All functions may be called from any thread.  Detection blocks the calling
//! thread (bounded by the `timeout_ms` option); in async code call it from
//! `spawn_blocking`.  See the header for fork() and signal rules.

use std::ffi::{c_char, c_int, CStr, CString};
use std::fmt;
use std::ptr::NonNull;

/// The ABI version this crate was written for (`HWACCEL_ABI_VERSION`).
pub const ABI_VERSION: i32 = 1;

mod ffi {
    use std::ffi::{c_char, c_int};
    extern "C" {
        pub fn hwaccel_version() -> *const c_char;
        pub fn hwaccel_abi_version() -> c_int;
        pub fn hwaccel_free_string(s: *mut c_char);
        pub fn hwaccel_detect_json(options_json: *const c_char) -> *mut c_char;
        pub fn hwaccel_suggest_quant(request_json: *const c_char) -> *mut c_char;
        pub fn hwaccel_plan_sharding(request_json: *const c_char) -> *mut c_char;
        pub fn hwaccel_estimate_training(request_json: *const c_char) -> *mut c_char;
        /// Since 0.2.0.
        pub fn hwaccel_models_json(request_json: *const c_char) -> *mut c_char;
        /// Since 0.2.0.
        pub fn hwaccel_fit_json(request_json: *const c_char) -> *mut c_char;
        // rent (issue 26)
        pub fn hwaccel_rent_json(request: *const c_char) -> *mut c_char;
    }
}

/// An answer owned by this process: freed with `hwaccel_free_string` exactly
/// once, when dropped.
pub struct OwnedJson(NonNull<c_char>);

// The pointer is uniquely owned C memory, never touched by the library after
// it was returned, and hwaccel_free_string may be called from any thread.
unsafe impl Send for OwnedJson {}
// Shared references only read the immutable text.
unsafe impl Sync for OwnedJson {}

impl OwnedJson {
    /// Takes ownership of an answer; None for NULL (malloc failed).
    ///
    /// # Safety
    /// `p` must be NULL or a string returned by a `char *` function of
    /// libai_hwaccel, not freed and not owned by anything else.
    pub unsafe fn from_raw(p: *mut c_char) -> Option<OwnedJson> {
        NonNull::new(p).map(OwnedJson)
    }

    /// The text as a C string.
    pub fn as_c_str(&self) -> &CStr {
        // SAFETY: the library returns NUL-terminated strings; we own it.
        unsafe { CStr::from_ptr(self.0.as_ptr()) }
    }

    /// The text (the library writes UTF-8; invalid bytes become U+FFFD).
    pub fn to_string_lossy(&self) -> String {
        self.as_c_str().to_string_lossy().into_owned()
    }
}

impl Drop for OwnedJson {
    fn drop(&mut self) {
        // SAFETY: owned, freed exactly once here.
        unsafe { ffi::hwaccel_free_string(self.0.as_ptr()) }
    }
}

impl fmt::Debug for OwnedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OwnedJson").field(&self.as_c_str()).finish()
    }
}

/// The library's error object, or an error of this binding:
/// `invalid_argument` for a request holding a NUL byte (C strings cannot
/// carry it), `out_of_memory` when the library returned NULL, and
/// `abi_mismatch` from [`check_abi`].  Other codes are the stable codes of
/// `ai_hwaccel.h`; treat unknown ones like `internal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwaccelError {
    pub code: String,
    pub message: String,
}

impl fmt::Display for HwaccelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for HwaccelError {}

impl HwaccelError {
    fn new(code: &str, message: impl Into<String>) -> Self {
        HwaccelError {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// The version of the loaded library, e.g. "0.2.0" (`hwaccel_version`).
pub fn version() -> &'static str {
    // SAFETY: static storage, never NULL, never freed.
    unsafe { CStr::from_ptr(ffi::hwaccel_version()) }
        .to_str()
        .unwrap_or("")
}

/// The ABI version of the loaded library.
pub fn abi_version() -> i32 {
    // SAFETY: no arguments, no state.
    unsafe { ffi::hwaccel_abi_version() as c_int }
}

/// Fails with `abi_mismatch` unless the loaded library speaks [`ABI_VERSION`].
pub fn check_abi() -> Result<(), HwaccelError> {
    if abi_version() == ABI_VERSION {
        return Ok(());
    }
    Err(HwaccelError::new(
        "abi_mismatch",
        format!(
            "libai_hwaccel {} has ABI {}, this crate speaks ABI {ABI_VERSION}",
            version(),
            abi_version()
        ),
    ))
}

/// The C functions with the answer owned; no error parsing.
pub mod raw {
    use super::*;

    fn call(
        f: unsafe extern "C" fn(*const c_char) -> *mut c_char,
        arg: Option<&CStr>,
    ) -> Option<OwnedJson> {
        let p = arg.map_or(std::ptr::null(), CStr::as_ptr);
        // SAFETY: p is NULL or a NUL-terminated string alive for the call;
        // the result is a fresh owned answer or NULL.
        unsafe { OwnedJson::from_raw(f(p)) }
    }
    pub fn detect(options: Option<&CStr>) -> Option<OwnedJson> {
        call(ffi::hwaccel_detect_json, options)
    }
    pub fn suggest_quant(request: &CStr) -> Option<OwnedJson> {
        call(ffi::hwaccel_suggest_quant, Some(request))
    }
    pub fn plan_sharding(request: &CStr) -> Option<OwnedJson> {
        call(ffi::hwaccel_plan_sharding, Some(request))
    }
    pub fn estimate_training(request: &CStr) -> Option<OwnedJson> {
        call(ffi::hwaccel_estimate_training, Some(request))
    }
    pub fn models(request: Option<&CStr>) -> Option<OwnedJson> {
        call(ffi::hwaccel_models_json, request)
    }
    pub fn fit(request: Option<&CStr>) -> Option<OwnedJson> {
        call(ffi::hwaccel_fit_json, request)
    }
    pub fn rent(request: &CStr) -> Option<OwnedJson> {
        call(ffi::hwaccel_rent_json, Some(request))
    }
}

fn c_arg(s: &str) -> Result<CString, HwaccelError> {
    CString::new(s).map_err(|e| {
        HwaccelError::new(
            "invalid_argument",
            format!("request has a NUL byte at {}", e.nul_position()),
        )
    })
}

/// `s` as a JSON string, quotes included, for building a request by hand:
/// `"`, `\` and the control characters U+0000 to U+001F escaped, as RFC 8259
/// section 7 requires (<https://www.rfc-editor.org/rfc/rfc8259#section-7>);
/// everything else as it is, since a request is UTF-8. Rust's `{:?}` is not
/// this: it writes `\0` and `\u{1b}`, which are not JSON.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Turns an answer into its text, or the error it holds.
pub fn take(answer: Option<OwnedJson>) -> Result<String, HwaccelError> {
    let answer =
        answer.ok_or_else(|| HwaccelError::new("out_of_memory", "libai_hwaccel returned NULL"))?;
    let text = answer.to_string_lossy();
    match parse_error(&text) {
        Some(e) => Err(e),
        None => Ok(text),
    }
}

/// `hwaccel_detect_json`: the registry (None or "" = default options).
pub fn detect(options: Option<&str>) -> Result<String, HwaccelError> {
    match options {
        None => take(raw::detect(None)),
        Some(o) => take(raw::detect(Some(&c_arg(o)?))),
    }
}

/// `hwaccel_suggest_quant`.
pub fn suggest_quant(request: &str) -> Result<String, HwaccelError> {
    take(raw::suggest_quant(&c_arg(request)?))
}

/// `hwaccel_plan_sharding`.
pub fn plan_sharding(request: &str) -> Result<String, HwaccelError> {
    take(raw::plan_sharding(&c_arg(request)?))
}

/// `hwaccel_estimate_training`.
pub fn estimate_training(request: &str) -> Result<String, HwaccelError> {
    take(raw::estimate_training(&c_arg(request)?))
}

/// `hwaccel_models_json` (since 0.2.0): the model catalog, filtered by
/// `{"filter":...,"quant":...}` (None = the whole catalog).
pub fn models(request: Option<&str>) -> Result<String, HwaccelError> {
    match request {
        None => take(raw::models(None)),
        Some(r) => take(raw::models(Some(&c_arg(r)?))),
    }
}

/// `hwaccel_fit_json` (since 0.2.0): which catalog models fit this machine,
/// or the request's `"registry"` (None = every model, this machine).
pub fn fit(request: Option<&str>) -> Result<String, HwaccelError> {
    match request {
        None => take(raw::fit(None)),
        Some(r) => take(raw::fit(Some(&c_arg(r)?))),
    }
}

/// `hwaccel_rent_json`: catalog machine types that run the model, ranked by
/// cost per million output tokens.
pub fn rent(request: &str) -> Result<String, HwaccelError> {
    take(raw::rent(&c_arg(request)?))
}

/// The code and message of an error object (`{"error":{...}}` as the first
/// member), or None for any other answer.  Success answers never start with
/// an "error" member, so this reads only the envelope.
pub fn parse_error(answer: &str) -> Option<HwaccelError> {
    let mut r = Reader {
        s: answer.as_bytes(),
        i: 0,
    };
    if !(r.eat(b'{') && r.string()?.as_str() == "error" && r.eat(b':') && r.eat(b'{')) {
        return None;
    }
    let mut e = HwaccelError::new("internal", "malformed error object");
    let mut have_code = false;
    if r.eat(b'}') {
        return Some(e);
    }
    loop {
        let Some(key) = r.string() else {
            return Some(e);
        };
        if !r.eat(b':') {
            return Some(e);
        }
        match key.as_str() {
            "code" | "message" => {
                let Some(v) = r.string() else { return Some(e) };
                if key == "code" {
                    e.code = v;
                    have_code = true;
                } else {
                    e.message = v;
                }
            }
            _ => {
                if !r.skip_value() {
                    return Some(e);
                }
            }
        }
        if !r.eat(b',') {
            break;
        }
    }
    if !have_code {
        e.code = "internal".into();
    }
    Some(e)
}

/// A minimal JSON reader for the error envelope.
struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            return true;
        }
        false
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.i..self.i + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.i += 4;
        Some(v)
    }

    /// A JSON string with its escapes decoded (lone surrogates → U+FFFD).
    fn string(&mut self) -> Option<String> {
        if !self.eat(b'"') {
            return None;
        }
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.s.get(self.i)?;
            self.i += 1;
            match c {
                b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
                b'\\' => {
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.s.get(self.i..self.i + 2) == Some(b"\\u")
                            {
                                let save = self.i;
                                self.i += 2;
                                match self.hex4() {
                                    Some(lo) if (0xDC00..0xE000).contains(&lo) => char::from_u32(
                                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00),
                                    )
                                    .unwrap_or('\u{FFFD}'),
                                    _ => {
                                        self.i = save;
                                        '\u{FFFD}'
                                    }
                                }
                            } else {
                                char::from_u32(hi).unwrap_or('\u{FFFD}')
                            }
                        }
                        _ => return None,
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }

    /// Skips one value of a member we do not read ("details").
    fn skip_value(&mut self) -> bool {
        self.ws();
        match self.s.get(self.i) {
            None => false,
            Some(b'"') => self.string().is_some(),
            Some(b'{') | Some(b'[') => {
                let mut depth = 0usize;
                while let Some(&c) = self.s.get(self.i) {
                    if c == b'"' {
                        if self.string().is_none() {
                            return false;
                        }
                        continue;
                    }
                    self.i += 1;
                    match c {
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return true;
                            }
                        }
                        _ => {}
                    }
                }
                false
            }
            Some(_) => {
                while let Some(&c) = self.s.get(self.i) {
                    if matches!(c, b',' | b'}' | b']') {
                        return true;
                    }
                    self.i += 1;
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_string_round_trips() {
        for s in [
            "/plain/root",
            r#"/a "quoted" dir"#,
            r"C:\sys\root",
            "tab\there\nnewline\rcr",
            "nul\0esc\u{1b}del\u{7f}bell\u{7}",
            "combining \u{300} and \u{2028} é 日本",
        ] {
            let j = json_string(s);
            let mut r = Reader {
                s: j.as_bytes(),
                i: 0,
            };
            assert_eq!(r.string().as_deref(), Some(s), "{j}");
            assert_eq!(r.i, j.len(), "{j}: one string, nothing after it");
            assert!(
                !j[1..j.len() - 1].bytes().any(|b| b < 0x20),
                "{j}: a raw control byte"
            );
        }
        assert_eq!(json_string("a\"b\\c\u{1}"), r#""a\"b\\c\u0001""#);
    }

    #[test]
    fn parse_error_table() {
        let rows: &[(&str, Option<(&str, &str)>)] = &[
            (
                r#"{"error":{"code":"invalid_json","message":"at byte 3"}}"#,
                Some(("invalid_json", "at byte 3")),
            ),
            (
                r#" { "error" : { "message" : "m" , "code" : "too_large" } } "#,
                Some(("too_large", "m")),
            ),
            (
                r#"{"error":{"code":"internal","message":"q \" s \\ n \n t \t"}}"#,
                Some(("internal", "q \" s \\ n \n t \t")),
            ),
            (
                r#"{"error":{"code":"x","message":"\u00e9\u20ac\ud83d\ude00"}}"#,
                Some(("x", "é€😀")),
            ),
            (
                r#"{"error":{"code":"x","message":"lone \udc00 \ud800x"}}"#,
                Some(("x", "lone \u{FFFD} \u{FFFD}x")),
            ),
            (
                r#"{"error":{"details":{"a":[1,{"b":"}"}]},"code":"model_file","message":"m"}}"#,
                Some(("model_file", "m")),
            ),
            (
                r#"{"error":{"message":"no code"}}"#,
                Some(("internal", "no code")),
            ),
            (
                r#"{"error":{"code":"trunc"#,
                Some(("internal", "malformed error object")),
            ),
            (
                r#"{"schema_version":1,"devices":[],"error":{"code":"x"}}"#,
                None,
            ),
            (r#"{"fits":false,"explanation":["{\"error\":"]}"#, None),
            ("", None),
            ("null", None),
        ];
        for (input, want) in rows {
            let got = parse_error(input).map(|e| (e.code, e.message));
            let want = want.map(|(c, m)| (c.to_string(), m.to_string()));
            assert_eq!(got, want, "input {input}");
        }
    }
}
