package api

// Benchmarks of the JSON entry points behind the C exports
// (docs/performance.md): detection answered as JSON on the dgx-h100 fixture
// machine (tools answering instantly, from the cache, and really run), and
// planning on registries of 16, 256 and 4096 H100s.
//
//	go test -run xxx -bench . -benchtime=200ms ./internal/api/

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/bench/benchreg"
	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
)

// noEnv is a process environment with no visibility variable set.
func noEnv(string) (string, bool) { return "", false }

// fixtureOptionsJSON is the hwaccel_detect_json options of a fixture machine.
func fixtureOptionsJSON(b *testing.B, machine, extra string) []byte {
	b.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", machine))
	require.NoError(b, err)
	return []byte(fmt.Sprintf(`{"sysroot":%q,"path":%q%s}`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"), extra))
}

// recordedRunner runs the real tools once (record) and then answers the same
// command lines from memory (replay): a machine whose tools are instant.
type recordedRunner struct {
	inner  *machine.ExecRunner
	replay bool
	mu     sync.Mutex
	runs   map[string]machine.Result
	has    map[string]bool
}

func (r *recordedRunner) Run(ctx context.Context, tool string, args ...string) machine.Result {
	key := tool + "\x00" + strings.Join(args, "\x00")
	if r.replay {
		res, ok := r.runs[key]
		if !ok {
			return machine.Result{Err: machine.ErrToolMissing}
		}
		res.Stdout = append([]byte(nil), res.Stdout...)
		return res
	}
	res := r.inner.Run(ctx, tool, args...)
	r.mu.Lock()
	r.runs[key] = res
	r.mu.Unlock()
	return res
}

func (r *recordedRunner) Has(tool string) bool {
	if r.replay {
		return r.has[tool]
	}
	ok := r.inner.Has(tool)
	r.mu.Lock()
	r.has[tool] = ok
	r.mu.Unlock()
	return ok
}

// instantOptions decodes the fixture's options as hwaccel_detect_json does
// and gives them a runner replaying the fixture's tools.
func instantOptions(b *testing.B, host, extra string) detect.Options {
	b.Helper()
	opts, err := DecodeOptions(fixtureOptionsJSON(b, host, extra), noEnv)
	require.NoError(b, err)
	rec := &recordedRunner{inner: machine.NewExecRunner(opts.Path, detect.DefaultTimeout),
		runs: map[string]machine.Result{}, has: map[string]bool{}}
	opts.Runner = rec
	_, err = detect.Detect(context.Background(), opts)
	require.NoError(b, err)
	rec.replay = true
	return opts
}

// detectInstant is Detect with the decoded options' runner swapped for the
// replaying one: option decoding, detection (through the shared cache, as
// the export does) and the JSON answer.
func detectInstant(input []byte, runner machine.Runner) []byte {
	opts, err := DecodeOptions(input, noEnv)
	if err != nil {
		return ErrorJSON(err)
	}
	opts.Runner = runner
	return detectAnswer(context.Background(), opts)
}

// BenchmarkDetectJSON is hwaccel_detect_json without the C boundary, on the
// dgx-h100 fixture (8 H100s): "instant" tools replay the fixture scripts'
// output, "cached" reuses a registry under cache_ttl_ms, "exec" really runs
// the fixture's nvidia-smi script.
func BenchmarkDetectJSON(b *testing.B) {
	b.Run("instant", func(b *testing.B) {
		input := fixtureOptionsJSON(b, "dgx-h100", "")
		runner := instantOptions(b, "dgx-h100", "").Runner
		require.Contains(b, string(detectInstant(input, runner)), `"kind":"nvswitch"`)
		b.ReportAllocs()
		for b.Loop() {
			detectInstant(input, runner)
		}
	})
	b.Run("cached", func(b *testing.B) {
		input := fixtureOptionsJSON(b, "dgx-h100", `,"cache_ttl_ms":86400000`)
		runner := instantOptions(b, "dgx-h100", "").Runner
		require.Contains(b, string(detectInstant(input, runner)), `"kind":"nvswitch"`)
		require.Contains(b, string(detectInstant(input, runner)), `"cached":true`)
		b.ReportAllocs()
		for b.Loop() {
			detectInstant(input, runner)
		}
	})
	b.Run("exec", func(b *testing.B) {
		input := fixtureOptionsJSON(b, "dgx-h100", "")
		require.Contains(b, string(Detect(context.Background(), input, noEnv)), `"kind":"nvswitch"`)
		b.ReportAllocs()
		for b.Loop() {
			Detect(context.Background(), input, noEnv)
		}
	})
	b.Run("no_exec", func(b *testing.B) {
		input := fixtureOptionsJSON(b, "dgx-h100", `,"no_exec":true`)
		require.Contains(b, string(Detect(context.Background(), input, noEnv)), `"cuda:7"`)
		b.ReportAllocs()
		for b.Loop() {
			Detect(context.Background(), input, noEnv)
		}
	})
}

// BenchmarkDecodeOptions is the options parsing of every detection.
func BenchmarkDecodeOptions(b *testing.B) {
	input := fixtureOptionsJSON(b, "dgx-h100", `,"timeout_ms":2000,"cache_ttl_ms":1000`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeOptions(input, noEnv); err != nil {
			b.Fatal(err)
		}
	}
}

// planBench runs one planning entry point on the benchmark request of each
// registry size, checking first that the answer is a plan, not an error.
func planBench(b *testing.B, entry func(context.Context, []byte, Env) []byte, wantKey string) {
	for _, n := range benchreg.Sizes {
		b.Run(fmt.Sprintf("devices=%d", n), func(b *testing.B) {
			req := benchreg.Request(n)
			var ans map[string]json.RawMessage
			require.NoError(b, json.Unmarshal(entry(context.Background(), req, noEnv), &ans))
			require.NotContains(b, ans, "error")
			require.Contains(b, ans, wantKey)
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				entry(context.Background(), req, noEnv)
			}
		})
	}
}

// BenchmarkPlanSharding is hwaccel_plan_sharding without the C boundary:
// request decoding (registry included), planning and the JSON answer.
func BenchmarkPlanSharding(b *testing.B) { planBench(b, PlanSharding, "shards") }

// BenchmarkSuggestQuant is hwaccel_suggest_quant without the C boundary.
func BenchmarkSuggestQuant(b *testing.B) { planBench(b, SuggestQuant, "quant") }

// BenchmarkPlanPhases splits hwaccel_plan_sharding on 16 GPUs into its
// phases: request decoding (the registry included), planning, and encoding
// the answer; "registry" is the registry's decoding alone.
func BenchmarkPlanPhases(b *testing.B) {
	req := benchreg.Request(16)
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := wire.DecodeRequest(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("registry", func(b *testing.B) {
		data := benchreg.RegistryJSON(16)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := regjson.Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			r, _, err := wire.DecodeRequest(req)
			require.NoError(b, err)
			b.StartTimer()
			if _, err := plan.PlanSharding(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		r, _, err := wire.DecodeRequest(req)
		require.NoError(b, err)
		ans, err := plan.PlanSharding(r)
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(ans); err != nil {
				b.Fatal(err)
			}
		}
	})
}
