// Package api is the JSON-in, JSON-out face of the engine, shared by the C
// ABI (capi/) and the CLI (cmd/ai-hwaccel): each entry point takes the
// request bytes exactly as the host gave them and returns the answer bytes,
// which are either the answer or an error object. Nothing here panics out:
// callers still guard, but every known failure is an error object.
package api

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// MaxInput is the largest request accepted (16 MiB); larger is too_large.
const MaxInput = 16 << 20

// planningCacheTTL is how old a detection of this machine planning may reuse
// when the request names no registry and no cache_ttl_ms.
const planningCacheTTL = 30 * time.Second

// MaxDepth bounds JSON nesting so hostile input cannot cost unbounded stack
// or time in the decoder.
const MaxDepth = 128

// Env is how the engine reads the process environment at call time, like
// os.LookupEnv: set reports whether the variable exists, so that a variable
// set to "" (CUDA_VISIBLE_DEVICES="" hides every GPU) differs from an unset one.
type Env func(name string) (value string, set bool)

// NoEnv is an environment with no variable set (tests, fixtures).
func NoEnv(string) (string, bool) { return "", false }

// Every entry point takes a context: when it ends (the CLI's Ctrl-C or
// SIGTERM) the call returns at once with a detection_failed error naming
// the cause, while a detection shared with other callers runs on to its own
// timeout (detect.Cache). The C ABI passes context.Background(): its calls
// are bounded by the detection timeout instead.

// Detect answers hwaccel_detect_json. input nil or empty means defaults.
func Detect(ctx context.Context, input []byte, getenv Env) []byte {
	opts, err := DecodeOptions(input, getenv)
	if err != nil {
		return ErrorJSON(syntaxFirst(input, &wireOptions{}, "options", err))
	}
	return detectAnswer(ctx, opts)
}

// detectAnswer is the encoded registry for opts, through the shared cache.
func detectAnswer(ctx context.Context, opts detect.Options) []byte {
	warmEncoder.Do(func() { go warmRegistryEncoder() })
	if opts.SnapshotOut != "" {
		return answer(func() (any, error) { return captureTo(ctx, opts) })
	}
	b, err := detect.Shared.DetectJSON(ctx, opts, func(r *registry.Registry) ([]byte, error) {
		return json.Marshal(r)
	})
	if err != nil {
		return ErrorJSON(detectionError(err))
	}
	return b
}

// SuggestQuant answers hwaccel_suggest_quant.
func SuggestQuant(ctx context.Context, input []byte, getenv Env) []byte {
	return answerTo(input, &planShape{}, func() (any, error) {
		req, err := planRequest(ctx, input, getenv)
		if err != nil {
			return nil, err
		}
		return plan.SuggestQuant(req)
	})
}

// PlanSharding answers hwaccel_plan_sharding.
func PlanSharding(ctx context.Context, input []byte, getenv Env) []byte {
	return answerTo(input, &planShape{}, func() (any, error) {
		req, err := planRequest(ctx, input, getenv)
		if err != nil {
			return nil, err
		}
		return plan.PlanSharding(req)
	})
}

// EstimateTraining answers hwaccel_estimate_training.
func EstimateTraining(ctx context.Context, input []byte, getenv Env) []byte {
	return answerTo(input, &planShape{}, func() (any, error) {
		req, err := planRequest(ctx, input, getenv)
		if err != nil {
			return nil, err
		}
		return plan.EstimateTraining(req)
	})
}

// ErrorJSON encodes an error object for err.
func ErrorJSON(err error) []byte {
	return ErrorJSONCode(errs.CodeOf(err), errs.MessageOf(err))
}

// ErrorJSONCode encodes an error object from a code and message.
func ErrorJSONCode(code, message string) []byte {
	type body struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		Error body `json:"error"`
	}{body{code, message}})
	if err != nil {
		return []byte(`{"error":{"code":"internal","message":"cannot encode error"}}`)
	}
	return b
}

// answerTo is answer for a request: when f refuses input for its shape or
// a value, a syntax problem anywhere in input is the error instead. shape
// is the request's type as syntaxFirst walks it.
func answerTo(input []byte, shape any, f func() (any, error)) []byte {
	return answer(func() (any, error) {
		v, err := f()
		return v, syntaxFirst(input, shape, "request", err)
	})
}

// planShape is a planning request as syntaxFirst walks it: wire's, with
// detect typed as the options it holds.
type planShape struct {
	Detect *wireOptions `json:"detect"`
	wire.RequestShape
}

// syntaxFirst is err, unless err refuses input for its shape or a value
// and input is not one well-formed JSON value without repeated keys: then
// that invalid_json error. Every export applies this order, whichever
// member it decoded or checked first (include/ai_hwaccel.h, "Error
// codes"); it runs only on the way out of a refusal. shape (a pointer) is
// the request's type with every member typed as it is decoded, so that a
// key repeated by letter case in a member not decoded yet is found as its
// decoding would find it (strictjson.WellFormedAs).
func syntaxFirst(input []byte, shape any, what string, err error) error {
	switch errs.CodeOf(err) {
	case errs.InvalidArgument, errs.UnknownModel, errs.ModelFile:
	default:
		return err
	}
	if len(bytes.TrimSpace(input)) == 0 {
		return err // NULL or empty: not JSON, but the contract says invalid_argument
	}
	if e := strictjson.WellFormedAs(input, shape, what); e != nil {
		return e
	}
	return err
}

func answer(f func() (any, error)) []byte {
	v, err := f()
	if err != nil {
		return ErrorJSON(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ErrorJSON(errs.Wrap(errs.Internal, err, "encode answer"))
	}
	return b
}

// planRequest decodes a planning request (internal/api/wire), checks it
// (plan.Validate) before anything is detected, and fills its registry by
// detecting this machine (through the shared cache) when the host gave none.
func planRequest(ctx context.Context, input []byte, getenv Env) (*plan.Request, error) {
	if input == nil {
		return nil, errs.New(errs.InvalidArgument, "request is NULL")
	}
	if err := checkInput(input); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(input)) == 0 {
		return nil, errs.New(errs.InvalidArgument, "request is empty")
	}
	req, detectOpts, err := wire.DecodeRequest(input)
	if err != nil {
		return nil, err
	}
	if err := plan.Validate(req); err != nil {
		return nil, err
	}
	if req.Registry == nil {
		opts, ttlGiven, err := decodeOptions(detectOpts, getenv)
		if err != nil {
			return nil, err
		}
		if !ttlGiven {
			// Planning on this machine reuses a recent detection by default;
			// "detect":{"cache_ttl_ms":0} asks for a fresh one.
			opts.CacheTTL = planningCacheTTL
		}
		reg, err := detectWith(ctx, opts)
		if err != nil {
			return nil, err
		}
		req.Registry = reg
		if err := req.CheckMemoryBounds(); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func detectWith(ctx context.Context, opts detect.Options) (*registry.Registry, error) {
	if opts.SnapshotOut != "" {
		return captureTo(ctx, opts)
	}
	reg, err := detect.Shared.Detect(ctx, opts)
	if err != nil {
		return nil, detectionError(err)
	}
	return reg, nil
}

// warmEncoder compiles the JSON encoder of the registry type while the first
// detection reads the machine: the encoder builds its code for a type on
// first use (about a millisecond for the registry), which would otherwise add
// to the first call's latency. Not done in init: loading the library must
// cost nothing (the load target in docs/performance.md).
var warmEncoder sync.Once

func warmRegistryEncoder() {
	defer func() { _ = recover() }() // a warm-up must never take the host down
	r := registry.New()
	free := int64(1)
	numa := 0
	r.Devices = append(r.Devices, registry.Device{Kind: registry.KindCPU, MemoryFreeBytes: &free, NUMANode: &numa,
		PCIe: &registry.PCIe{}, MIG: &registry.MIG{}, Sources: map[string]string{"x": "y"}})
	r.SystemIO.Environment = &registry.Environment{}
	r.Timing = &registry.Timing{}
	_, _ = json.Marshal(r)
}

// wireOptions is the JSON form of detection options.
type wireOptions struct {
	Sysroot    *string           `json:"sysroot"`
	Path       *string           `json:"path"`
	Backends   []string          `json:"backends"`
	Exclude    []string          `json:"exclude"`
	NoExec     bool              `json:"no_exec"`
	Inline     bool              `json:"inline_kernel_reads"`
	TimeoutMs  *wireMillis       `json:"timeout_ms"`
	CacheTTLMs *wireMillis       `json:"cache_ttl_ms"`
	Env        map[string]string `json:"env"`

	Snapshot        *string `json:"snapshot"`
	SnapshotOut     *string `json:"snapshot_out"`
	SnapshotKeepIDs bool    `json:"snapshot_keep_ids"`
}

// DecodeOptions parses detection options. nil or empty input means defaults.
// Unknown keys are rejected (a typo must not be silently ignored).
func DecodeOptions(input []byte, getenv Env) (detect.Options, error) {
	opts, _, err := decodeOptions(input, getenv)
	return opts, err
}

// decodeOptions is DecodeOptions that also tells whether cache_ttl_ms was
// given, so a caller with its own default can tell an explicit 0 (never
// reuse) from an absent value.
func decodeOptions(input []byte, getenv Env) (opts detect.Options, ttlGiven bool, err error) {
	opts = detect.Options{LookupEnv: getenv}
	if err := checkInput(input); err != nil {
		return opts, false, err
	}
	if len(bytes.TrimSpace(input)) == 0 || bytes.Equal(bytes.TrimSpace(input), []byte("null")) {
		return opts, false, nil
	}
	var w wireOptions
	if err := strictjson.Decode(input, &w, "options"); err != nil {
		return opts, false, err
	}
	if w.Sysroot != nil {
		if *w.Sysroot == "" {
			return opts, false, errs.New(errs.InvalidArgument, "options: sysroot is empty")
		}
		opts.Sysroot = *w.Sysroot
	}
	if w.Path != nil {
		opts.Path = *w.Path
		if opts.Path == "" {
			// An explicit empty PATH finds no tool, which is what it says.
			opts.NoExec = true
		}
		// Tools are only ever resolved in absolute directories (a library
		// must not depend on the host's working directory); an explicit
		// relative entry would be silently useless, so it is refused.
		for _, dir := range filepath.SplitList(opts.Path) {
			if dir != "" && !filepath.IsAbs(dir) {
				return opts, false, errs.New(errs.InvalidArgument, "options: path entry %q is not absolute", dir)
			}
		}
	}
	// The names only when a list is given, and looked up in a slice, not
	// a map made on every call (some 1.4 KB a detection with options:
	// docs/performance.md, "Eighth pass").
	if len(w.Backends)+len(w.Exclude) > 0 {
		known := detect.BackendNames()
		for _, list := range [][]string{w.Backends, w.Exclude} {
			for _, n := range list {
				if !slices.Contains(known, n) {
					return opts, false, errs.New(errs.InvalidArgument, "options: unknown backend %q (known: %v)", n, known)
				}
			}
		}
	}
	opts.Backends, opts.Exclude = w.Backends, w.Exclude
	opts.NoExec = opts.NoExec || w.NoExec
	opts.InlineKernelReads = w.Inline
	if w.TimeoutMs != nil {
		t := w.TimeoutMs.ms
		if !(t > 0 && t <= float64(detect.MaxTimeout/time.Millisecond)) {
			return opts, false, errs.New(errs.InvalidArgument, "options: timeout_ms %s is outside (0, %d]", w.TimeoutMs.asWritten(), detect.MaxTimeout/time.Millisecond)
		}
		opts.Timeout = millis(t)
	}
	if w.CacheTTLMs != nil {
		t := w.CacheTTLMs.ms
		if !(t >= 0 && t <= float64(detect.MaxCacheTTL/time.Millisecond)) {
			return opts, false, errs.New(errs.InvalidArgument, "options: cache_ttl_ms %s is outside [0, %d]", w.CacheTTLMs.asWritten(), detect.MaxCacheTTL/time.Millisecond)
		}
		opts.CacheTTL = millis(t)
		ttlGiven = true
	}
	opts.Env = w.Env
	if err := snapshotOptions(w, &opts); err != nil {
		return opts, false, err
	}
	return opts, ttlGiven, nil
}

// wireMillis is a number of milliseconds as a request gives it. A number
// too large for a float (1e400) is kept as an infinity with its text, so
// that the member's range check refuses it in its own words rather than the
// decoder calling it a value of the wrong type.
type wireMillis struct {
	ms   float64
	text string // the number as written
}

// UnmarshalJSON implements json.Unmarshaler.
func (w *wireMillis) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return errs.New(errs.InvalidArgument, "expected a number, got %s", jsonWords(s))
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return errs.New(errs.InvalidArgument, "expected a number, got %s", jsonWords(s))
	}
	w.ms, w.text = f, s
	return nil
}

// asWritten is the number as the request wrote it, for error messages: its
// text when that is an integer (9007199254740993, which float64 reads as
// 2^53) or beyond a float (1e400), else the float64 without Go's exponent
// form (1e30 reads 1000000000000000000000000000000).
func (w wireMillis) asWritten() string {
	if digits := strings.TrimPrefix(w.text, "-"); math.IsInf(w.ms, 0) || digits != "" && strings.Trim(digits, "0123456789") == "" {
		return w.text
	}
	return asWritten(w.ms)
}

// jsonWords names a JSON value that is not a number, in the words of
// strictjson's messages.
func jsonWords(s string) string {
	switch {
	case strings.HasPrefix(s, `"`):
		return "a string"
	case strings.HasPrefix(s, "["):
		return "an array"
	case strings.HasPrefix(s, "{"):
		return "an object"
	case s == "true" || s == "false":
		return "a boolean"
	}
	return "a value that is not a number"
}

// asWritten is a JSON number as a request writes it (86400001, 0.5), not
// in Go's %v exponent form (8.6400001e+07), for error messages.
func asWritten(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// millis converts a non-negative number of milliseconds to a Duration,
// rounding up to the nanosecond: truncating made timeout_ms 1e-7 a zero
// Duration, which detection read as "unset" and replaced by the 5 s default
// (issue 14 item 15). A positive value is honoured, however small.
func millis(ms float64) time.Duration {
	return time.Duration(math.Ceil(ms * float64(time.Millisecond)))
}

// checkInput rejects input that is too large or nested too deep before any
// decoder sees it.
func checkInput(input []byte) error {
	if len(input) > MaxInput {
		return errs.New(errs.TooLarge, "input is %d bytes; the limit is %d", len(input), MaxInput)
	}
	if d := depth(input); d > MaxDepth {
		return errs.New(errs.InvalidJSON, "input nests deeper than %d levels", MaxDepth)
	}
	return nil
}

// depth is strictjson.Depth stopping past MaxDepth.
func depth(b []byte) int { return strictjson.Depth(b, MaxDepth) }
