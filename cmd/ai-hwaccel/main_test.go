package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/schema"
)

// result is one in-process run of the command.
type result struct {
	code           int
	stdout, stderr string
}

// testNow is the fixed clock of testApp.
var testNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testApp is an app that sees no process environment (so a developer's
// CUDA_VISIBLE_DEVICES cannot leak in), a fixed clock and a sleeper that
// returns at once.
func testApp(out, errOut *bytes.Buffer) *app {
	a := newApp(out, errOut)
	a.getenv = api.NoEnv
	a.now = func() time.Time { return testNow }
	a.sleep = func(context.Context, time.Duration) error { return nil }
	a.hubHTTP = loopbackOnly()
	return a
}

func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	return runCLIAt(t, testNow, args...)
}

// runCLIAt is runCLI with the app's clock at now.
func runCLIAt(t *testing.T, now time.Time, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	a := testApp(&out, &errOut)
	a.now = func() time.Time { return now }
	a.sent = func(kind string, body []byte) { checkRequest(t, kind, body) }
	code := a.run(args)
	return result{code, out.String(), errOut.String()}
}

// runUnchecked runs the CLI without validating its requests: for tests that
// send the engine a request the contract rejects on purpose.
func runUnchecked(args ...string) result {
	var out, errOut bytes.Buffer
	code := testApp(&out, &errOut).run(args)
	return result{code, out.String(), errOut.String()}
}

// requestSchemas are the published request contracts: every request a test
// makes the command send is validated against them (issue 16: the request
// contract written down and checked).
var requestSchemas = sync.OnceValues(func() (map[string]*schema.Schema, error) {
	out := map[string]*schema.Schema{}
	for kind, file := range map[string]string{"detect": "detect-options", "planning": "request", "rent": "rent-request", "fit": "fit-request"} {
		b, err := os.ReadFile(filepath.Join(schemaDir, file+".schema.json"))
		if err != nil {
			return nil, err
		}
		if out[kind], err = schema.Compile(b); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// schemaDir is schema/, found before any test changes directory.
var schemaDir, _ = filepath.Abs(filepath.Join("..", "..", "schema"))

// sentRequests counts the requests checked, so a test can prove the hook ran.
var sentRequests atomic.Int64

func checkRequest(t *testing.T, kind string, body []byte) {
	t.Helper()
	schemas, err := requestSchemas()
	require.NoError(t, err)
	s, ok := schemas[kind]
	require.True(t, ok, "no schema for %s requests", kind)
	assert.NoError(t, s.Validate(body), "%s request %s", kind, body)
	if kind == "planning" {
		var req map[string]any
		require.NoError(t, json.Unmarshal(body, &req))
		if d, ok := req["detect"]; ok {
			b, err := json.Marshal(d)
			require.NoError(t, err)
			assert.NoError(t, schemas["detect"].Validate(b), "detect member of %s", body)
		}
	}
	sentRequests.Add(1)
}

// runJSON runs the CLI, requires exit status 0 and decodes its stdout as a
// JSON object.
func runJSON(t *testing.T, args ...string) (map[string]any, result) {
	t.Helper()
	r := runCLI(t, args...)
	require.Equal(t, 0, r.code, r.stderr)
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &obj), r.stdout)
	return obj, r
}

func machinesDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines"))
	require.NoError(t, err)
	return dir
}

// machines lists every fixture machine present at test time.
func machines(t *testing.T) []string {
	entries, err := os.ReadDir(machinesDir(t))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(t, names, "no fixture machines under testdata/machines")
	return names
}

// fixtureFlags points detection at a fixture machine: its root/ as sysroot
// and its bin/ as the only PATH entry (an absent bin/ finds no tool).
func fixtureFlags(t *testing.T, name string) []string {
	dir := filepath.Join(machinesDir(t), name)
	_, err := os.Stat(dir)
	require.NoError(t, err, "fixture machine %s", name)
	timeout := "5s"
	if name == "hostile" {
		// Its tools hang until the timeout by design; waiting 5 s for that
		// proves nothing more than waiting 2 s. On a loaded machine a run
		// that is not meant to hang can pass it too, so two detections of
		// hostile are compared by assertSameDetection.
		timeout = "2s"
	}
	return []string{"--sysroot", filepath.Join(dir, "root"), "--path", filepath.Join(dir, "bin"), "--timeout", timeout}
}

func timeoutMs(t *testing.T, name string) float64 {
	flags := fixtureFlags(t, name)
	ms, err := parseTimeout(flags[len(flags)-1])
	require.NoError(t, err)
	return ms
}

func withFixture(t *testing.T, name string, args ...string) []string {
	return append(args, fixtureFlags(t, name)...)
}

// withoutTiming decodes an answer and drops "timing", the one member that
// differs between two detections of the same machine.
func withoutTiming(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	delete(m, "timing")
	return m
}

func TestDefaultOutputIsTheLibraryAnswer(t *testing.T) {
	for _, name := range machines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, fixtureFlags(t, name)...)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			require.True(t, strings.HasSuffix(r.stdout, "}\n"))
			assert.Equal(t, 1, strings.Count(r.stdout, "\n"), "compact: one line")

			dir := filepath.Join(machinesDir(t), name)
			opts, err := json.Marshal(map[string]any{"sysroot": filepath.Join(dir, "root"),
				"path": filepath.Join(dir, "bin"), "timeout_ms": timeoutMs(t, name)})
			require.NoError(t, err)
			lib := api.Detect(context.Background(), opts, api.NoEnv)
			assertSameDetection(t, lib, []byte(r.stdout))

			pretty := runCLI(t, withFixture(t, name, "--pretty")...)
			require.Equal(t, 0, pretty.code, pretty.stderr)
			assert.Contains(t, pretty.stdout, "\n  \"devices\": [")
			assertSameDetection(t, lib, []byte(pretty.stdout))
		})
	}
}

func TestTableOnEveryFixture(t *testing.T) {
	for _, name := range machines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, withFixture(t, name, "--table")...)
			require.Equal(t, 0, r.code, r.stderr)
			lines := strings.Split(r.stdout, "\n")
			assert.Regexp(t, `^ID +KIND +NAME +MEMORY +FREE +BW +BUS +NUMA$`, lines[0])
			assert.True(t, strings.HasPrefix(lines[1], "cpu:0 "), "the host comes first: %q", lines[1])
			var reg struct {
				Devices []struct {
					ID string `json:"id"`
				} `json:"devices"`
			}
			require.NoError(t, json.Unmarshal([]byte(runCLI(t, fixtureFlags(t, name)...).stdout), &reg))
			for i, d := range reg.Devices {
				assert.True(t, strings.HasPrefix(lines[1+i], d.ID+" "), "row %d is %s: %q", i, d.ID, lines[1+i])
			}
			for _, section := range []string{"\nInterconnects", "\nNUMA nodes", "\nWarnings"} {
				assert.Contains(t, r.stdout, section)
			}
			assert.NotRegexp(t, `(^|  )0\.0 GiB  +0\.0 GiB`, r.stdout, "unknown memory must not print as zero")
			assert.NotContains(t, r.stdout, " 0 GB/s")
		})
	}
}

func TestTableDGX(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "--table")...)
	require.Equal(t, 0, r.code, r.stderr)
	for i := 0; i < 8; i++ {
		assert.Regexp(t, regexp.MustCompile(`(?m)^cuda:`+string(rune('0'+i))+
			` +cuda_gpu +NVIDIA H100 80GB HBM3 +79\.6 GiB +79\.2 GiB +.* +0000:[0-9a-f]{2}:00\.0 +[01]$`), r.stdout)
	}
	assert.Regexp(t, `(?m)^  nvswitch .*cuda:0-7$`, r.stdout)
	assert.Regexp(t, `(?m)^  infiniband +mlx5_0 `, r.stdout)
	assert.Regexp(t, `(?m)^  0 +[0-9.]+ GiB +0-55,112-167$`, r.stdout)
	assert.Regexp(t, `(?m)^Total: 9 devices, 8 accelerators, 637\.2 GiB accelerator memory`, r.stdout)
}

func TestRelativePathEntriesAreResolved(t *testing.T) {
	// The library refuses relative path entries; the command resolves them,
	// so nvidia-smi of the fixture runs (free memory is known only from it).
	rel := filepath.Join("..", "..", "testdata", "machines", "dgx-h100")
	r := runCLI(t, "--table", "--sysroot", filepath.Join(rel, "root"), "--path", filepath.Join(rel, "bin")+":")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^cuda:0 .* 79\.6 GiB +79\.2 GiB `, r.stdout)
	assert.Equal(t, "/abs:"+filepath.Join(mustGetwd(t), "rel")+"::", absPathList("/abs:rel::"))
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	return wd
}

// cpuOnlyTable is the exact table of the cpu-only fixture (a two-socket Xeon
// L5640 with no accelerator and no vendor tool): its figures are all static.
const cpuOnlyTable = `ID     KIND  NAME                                  MEMORY    FREE      BW  BUS  NUMA
cpu:0  cpu   Intel(R) Xeon(R) CPU L5640 @ 2.27GHz  62.9 GiB  60.9 GiB  —   —    —
Total: 1 device, 0 accelerators, 0.0 GiB accelerator memory, 62.9 GiB host memory

Interconnects: none

NUMA nodes:
  NODE  MEMORY    CPUS
  0     31.5 GiB  0,2,4,6,8,10,12,14,16,18,20,22
  1     31.4 GiB  1,3,5,7,9,11,13,15,17,19,21,23

Warnings: none
`

func TestTableCPUOnly(t *testing.T) {
	r := runCLI(t, withFixture(t, "cpu-only", "--table")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, cpuOnlyTable, r.stdout)
}

func TestSummary(t *testing.T) {
	s, _ := runJSON(t, withFixture(t, "dgx-h100", "--summary")...)
	assert.EqualValues(t, 9, s["device_count"])
	assert.EqualValues(t, 8, s["accelerator_count"])
	assert.EqualValues(t, 8, s["families"].(map[string]any)["gpu"])
	assert.EqualValues(t, 8*85520809984.0, s["accelerator_memory_bytes"])
	assert.Equal(t, "cuda:0", s["best_device"].(map[string]any)["id"])
	assert.Contains(t, s["interconnects"], "nvswitch")

	p := runCLI(t, withFixture(t, "cpu-only", "--summary", "--pretty")...)
	require.Equal(t, 0, p.code, p.stderr)
	assert.Contains(t, p.stdout, "\n  \"best_device\": null")
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"--tabel"}, "unknown flag --tabel (did you mean --table?)"},
		{[]string{"plna"}, `unknown command "plna" (did you mean plan?)`},
		{[]string{"plan", "--modle", "70b"}, "unknown flag --modle (did you mean --model?)"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"--table", "plan"}, `the command "plan" must come before any flag`},
		{[]string{"--watch", "0"}, `--watch: "0" is not a positive duration`},
		{[]string{"--watch", "-3"}, "is not a positive duration"},
		{[]string{"--watch", "abc"}, `--watch: "abc" is neither a number of seconds nor a duration like 2s`},
		{[]string{"--watch"}, "--watch needs a value"},
		{[]string{"plan", "--model"}, "--model needs a value"},
		{[]string{"--watch-count", "2"}, "--watch-count needs --watch"},
		// 0 refreshes: refused, as --watch 0 is, rather than run until Ctrl-C
		// (what leaving the flag out does), which hung a script passing 0.
		// The request contract allows ZeRO stages 0-3 (schema/request.schema.json);
		// --zero 4 was sent and answered "request: training.zero_stage 4".
		{[]string{"train", "--model", "70b", "--method", "lora", "--zero", "4"}, "--zero must be 0-3, got 4"},
		{[]string{"--watch", "1", "--watch-count", "0"}, "--watch-count: 0 is not a number of refreshes >= 1"},
		{[]string{"--watch", "1", "--watch-count", "-2"}, "--watch-count: -2 is not a number of refreshes >= 1"},
		{[]string{"--table", "--summary"}, "exclude each other"},
		{[]string{"--watch", "1", "--table"}, "exclude each other"},
		{[]string{"--table", "--pretty"}, "--pretty applies to JSON output"},
		{[]string{"--timeout", "soon"}, `--timeout: "soon" is neither a number of milliseconds nor a duration like 2s`},
		{[]string{"--timeout", "0"}, `--timeout: "0" is not a positive duration`},
		{[]string{"--timeout", "11m"}, "is outside"},
		{[]string{"--backends", "cpu,nope"}, `--backends: unknown backend "nope"`},
		{[]string{"--exclude", "cpu,"}, "--exclude: empty backend name"},
		{[]string{"--sysroot", ""}, "--sysroot needs a directory"},
		{[]string{"--no-exec=maybe"}, `--no-exec: "maybe" is not true or false`},
		{[]string{"plan"}, "--model is required"},
		{[]string{"plan", "--model", "70b", "extra"}, `unexpected argument "extra"`},
		{[]string{"plan", "--model", "7"}, `a bare number is ambiguous; give a unit (7b for billions`},
		{[]string{"plan", "--model", "0b"}, "parameter count out of range"},
		{[]string{"plan", "--model", "99999999t"}, "parameter count out of range"},
		{[]string{"plan", "--model", "70b", "--quant", ""}, "--quant needs a value"},
		{[]string{"plan", "--model", "70b", "--kv-cache", "fp4"}, `--kv-cache "fp4": want one of auto, fp16, bf16, fp8, int8`},
		{[]string{"plan", "--model", "70b", "--engine", "vlm"}, "(did you mean vllm?)"},
		{[]string{"plan", "--model", "70b", "--registry", "/no/such/registry.json"}, `--registry "/no/such/registry.json": file not found`},
		{[]string{"plan", "--model", "70b", "--cluster", "/no/such/cluster.json"}, `--cluster "/no/such/cluster.json": file not found`},
		{[]string{"plan", "--model", "./no/such/model.gguf"}, `--model "./no/such/model.gguf": file not found`},
		{[]string{"plan", "--model", "70b", "--devices", "cuda:3-1"}, `"cuda:3-1" is not a range from a lower to a higher index`},
		{[]string{"plan", "--model", "70b", "--engine", "tgi"}, `--engine "tgi": want one of vllm`},
		{[]string{"plan", "--model", "70b", "--context", "0"}, `--context: "0" must be a whole number >= 1`},
		{[]string{"plan", "--model", "70b", "--batch", "-1"}, `--batch: "-1" is not a count like 8192 or 32k`},
		{[]string{"plan", "--model", "70b", "--context", "4q"}, `--context: "4q" is not a count`},
		{[]string{"plan", "--model", "70b", "--context", "0.3k"}, `--context: "0.3k" must be a whole number`},
		{[]string{"plan", "--model", "70b", "--devices", "cuda"}, `--devices: "cuda" is not a device id`},
		{[]string{"plan", "--model", "70b", "--devices", "cuda:0,,cuda:1"}, `--devices: "" is not a device id`},
		{[]string{"plan", "--model", "70b", "--devices", "cuda:0,cuda:0"}, `--devices: cuda:0 is named twice`},
		{[]string{"train", "--model", "7b", "--method", "lora", "--devices", "cuda:0-2,cuda:1"}, `--devices: cuda:1 is named twice`},
		{[]string{"plan", "--model", "70b", "--pretty"}, "--pretty applies to --json output"},
		{[]string{"suggest", "--model", "70b", "--quant", "bf16"}, "unknown flag --quant"},
		{[]string{"train", "--model", "7b", "--method", "lora", "--zero", "-1"}, "--zero must be >= 0"},
		{[]string{"train", "--model", "7b", "--method", "lora", "--lora-targets", ","}, "--lora-targets needs module names"},
		{[]string{"train", "--model", "7b", "--method", "lora", "--seq-len", "x"}, `--seq-len: "x" is not a count`},
		{[]string{"train", "--model", "7b"}, "--method is required"},
		{[]string{"train", "--model", "7b", "--method", "lora", "--quant", "int4"}, "unknown flag --quant"},
		{[]string{"train", "--model", "7b", "--method", "lora", "--optimizer", " "}, "--optimizer needs a value"},
		{[]string{"nfd", "--output", ""}, "--output needs a file name"},
		{[]string{"nfd", "--expiry", "soon"}, `--expiry: "soon" is neither`},
		{[]string{"nfd", "--expiry", "-1h"}, `"-1h" is not a positive duration`},
		{[]string{"version", "--short"}, "unknown flag --short"},
		{[]string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "plan", "train"}, "help takes one command name"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := runCLI(t, c.args...)
			assert.Equal(t, 2, r.code)
			assert.Empty(t, r.stdout)
			assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: usage: "), r.stderr)
			assert.Contains(t, r.stderr, c.want)
			assert.Contains(t, r.stderr, "--help' for usage.")
		})
	}
}

func TestUsageErrorPointsAtTheCommandHelp(t *testing.T) {
	r := runCLI(t, "plan", "--bogus")
	assert.Contains(t, r.stderr, "Run 'ai-hwaccel plan --help' for usage.")
	r = runCLI(t, "--bogus")
	assert.Contains(t, r.stderr, "Run 'ai-hwaccel --help' for usage.")
}

func TestHelp(t *testing.T) {
	root := runCLI(t, "--help")
	require.Equal(t, 0, root.code)
	assert.Empty(t, root.stderr)
	assert.True(t, strings.HasPrefix(root.stdout, "Usage:\n"))
	for _, c := range commands {
		assert.Contains(t, root.stdout, "\n  "+c.name+" ", "root help lists %s", c.name)
	}
	for _, fl := range []string{"--pretty", "--table", "--summary", "--watch N", "--version", "--sysroot DIR", "--timeout DURATION"} {
		assert.Contains(t, root.stdout, fl)
	}
	assert.NotContains(t, root.stdout, "watch-count", "hidden flag")
	// The table's Unavailable: section (each unavailable device and why)
	// is named where --table is, not left to be found.
	assert.Contains(t, root.stdout, "ai-hwaccel --table                 the devices as a table, why any is unavailable, then interconnects, NUMA nodes, warnings\n")
	assert.Contains(t, root.stdout, "print a table for humans instead of JSON: devices, an Unavailable: section with each unavailable device and why")
	assert.Contains(t, root.stdout, "Exit status: 0 success, 1 error")
	assert.Equal(t, root, runCLI(t, "-h"))
	assert.Equal(t, root, runCLI(t, "help"))

	wantFlags := map[string][]string{
		"plan": {"--model MODEL", "--quant QUANT", "--context N", "--batch N", "--devices IDS", "--engine ENGINE", "--json", "--sysroot DIR",
			"--kv-cache TYPE", "--cpu-offload", "--include-cpu", "--cluster FILE", "--registry FILE"},
		"suggest": {"--model MODEL", "--context N", "--devices IDS", "--json", "--no-exec", "--kv-cache TYPE", "--engine ENGINE", "--replicas N"},
		"train": {"--model MODEL", "--method METHOD", "--precision PRECISION", "--optimizer OPTIMIZER", "--json", "--backends LIST",
			"--seq-len N", "--micro-batch N", "--gradient-checkpointing", "--zero STAGE", "--fsdp", "--num-devices N",
			"--tensor-parallel N", "--lora-rank RANK", "--lora-targets MODULES", "--flash-attention", "--teacher MODEL"},
		"fit":     {"--filter TEXT", "--context N", "--registry FILE", "--all", "--json", "--sysroot DIR"},
		"models":  {"--filter TEXT", "--json"},
		"nfd":     {"--output FILE", "--expiry DURATION", "--exclude LIST"},
		"version": {},
		"help":    {},
	}
	wantFlags["snapshot"] = []string{"--output FILE", "--keep-ids", "--sysroot DIR"}
	wantFlags["rent"] = []string{"--model MODEL", "--provider PROVIDERS", "--target-tps N", "--max-price USD", "--max-nodes N",
		"--sort ORDER", "--prices FILE", "--json"}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, c.name, "--help")
			require.Equal(t, 0, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, "Usage:\n  ai-hwaccel "+c.name), r.stdout)
			for _, fl := range wantFlags[c.name] {
				assert.Contains(t, r.stdout, fl)
			}
			assert.Equal(t, r, runCLI(t, c.name, "-h"))
			if c.name != "help" {
				assert.Equal(t, r, runCLI(t, "help", c.name))
			}
		})
	}
	require.Len(t, commands, len(wantFlags), "a new command needs its help checked here")
}

func TestRunWritesToTheGivenStreams(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run([]string{"version"}, &out, &errOut))
	assert.Equal(t, "ai-hwaccel "+version+" (registry schema 1)\n", out.String())
	out.Reset()
	assert.Equal(t, 2, run([]string{"--nope"}, &out, &errOut))
	assert.Empty(t, out.String())
	assert.Contains(t, errOut.String(), "ai-hwaccel: usage: unknown flag --nope\n")
	assert.False(t, isTerminal(mustTemp(t)), "a regular file is not a terminal: --watch must not clear it")
}

func mustTemp(t *testing.T) *os.File {
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// The command's version must be the library's, which the public header
// records (include/ai_hwaccel.h, HWACCEL_VERSION_STRING).
func TestVersionMatchesHeader(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^#define HWACCEL_VERSION_STRING "([^"]+)"$`).FindSubmatch(b)
	require.NotNil(t, m, "HWACCEL_VERSION_STRING in include/ai_hwaccel.h")
	assert.Equal(t, string(m[1]), version)
}

func TestVersion(t *testing.T) {
	r := runCLI(t, "--version")
	assert.Equal(t, 0, r.code)
	assert.Equal(t, "ai-hwaccel "+version+" (registry schema 1)\n", r.stdout)
	assert.Equal(t, r, runCLI(t, "version"))
}

func TestDetectionFailed(t *testing.T) {
	r := runCLI(t, "--sysroot", filepath.Join(t.TempDir(), "missing"), "--table")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: detection_failed: "), r.stderr)
}

func TestWatchOnFixture(t *testing.T) {
	var out, errOut bytes.Buffer
	a := testApp(&out, &errOut)
	slept := []time.Duration{}
	a.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	code := a.run(withFixture(t, "dgx-h100", "--watch", "3", "--watch-count", "2"))
	require.Equal(t, 0, code, errOut.String())
	assert.Equal(t, []time.Duration{3 * time.Second}, slept)
	assert.Equal(t, 2, strings.Count(out.String(), "ai-hwaccel watch: refresh "))
	assert.Equal(t, 2, strings.Count(out.String(), "\ncuda:7 "))
	assert.NotContains(t, out.String(), "\x1b[", "not a terminal: no clear-screen")

	// An interrupt (the context ends) stops an unbounded watch with status 0.
	ctx, cancel := context.WithCancel(context.Background())
	a.ctx = ctx
	a.sleep = func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }
	out.Reset()
	assert.Equal(t, 0, a.run(withFixture(t, "cpu-only", "--watch", "1")))
	assert.Equal(t, 1, strings.Count(out.String(), "ai-hwaccel watch: refresh "))
}

// Kubernetes label syntax (k8s.io/apimachinery validation, written out here
// independently of the code under test): key = [prefix "/"] name; prefix a
// DNS-1123 subdomain of at most 253 characters; name at most 63 characters
// of [A-Za-z0-9] at both ends and [-A-Za-z0-9_.] inside; value empty or the
// same shape as a name.
var (
	labelName      = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	dns1123Subdom  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	nfdExpiryLine  = regexp.MustCompile(`^# \+expiry-time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	nfdCommentLine = regexp.MustCompile(`^#`)
)

func validLabelKey(k string) bool {
	name := k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if len(prefix) == 0 || len(prefix) > 253 || !dns1123Subdom.MatchString(prefix) {
			return false
		}
	}
	return len(name) <= 63 && labelName.MatchString(name)
}

func validLabelValue(v string) bool {
	return v == "" || (len(v) <= 63 && labelName.MatchString(v))
}

func TestLabelSyntaxChecker(t *testing.T) {
	for _, k := range []string{"ai-hwaccel.io/gpu.count", "a", "x.y/A_b-c.9", strings.Repeat("a", 63)} {
		assert.True(t, validLabelKey(k), k)
	}
	for _, k := range []string{"", "ai-hwaccel.io/", "/x", "Upper.io/x", "a/b/c", "x/-a", "x/a-", strings.Repeat("a", 64), "x/a b"} {
		assert.False(t, validLabelKey(k), k)
	}
	for _, v := range []string{"", "8", "NVIDIA-H100-80GB-HBM3", "9.0", "a_b"} {
		assert.True(t, validLabelValue(v), v)
	}
	for _, v := range []string{"-a", "a-", "a b", "a,b", strings.Repeat("x", 64), "ü"} {
		assert.False(t, validLabelValue(v), v)
	}
}

func TestNFDLabelsOnEveryFixture(t *testing.T) {
	for _, name := range machines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, withFixture(t, name, "nfd", "--expiry", "2h")...)
			require.Equal(t, 0, r.code, r.stderr)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			var keys []string
			expiry := 0
			for _, line := range lines {
				if nfdCommentLine.MatchString(line) {
					if strings.HasPrefix(line, "# +") {
						assert.Regexp(t, nfdExpiryLine, line)
						expiry++
					}
					continue
				}
				k, v, ok := strings.Cut(line, "=")
				require.True(t, ok, "line %q is key=value", line)
				assert.True(t, validLabelKey(k), "key %q", k)
				assert.True(t, validLabelValue(v), "value %q of %s", v, k)
				assert.True(t, strings.HasPrefix(k, "ai-hwaccel.io/"), k)
				keys = append(keys, k)
			}
			assert.Equal(t, 1, expiry)
			assert.Contains(t, r.stdout, "# +expiry-time=2026-01-02T05:04:05Z\n")
			assert.True(t, sort.StringsAreSorted(keys), "sorted")
			assert.Contains(t, keys, "ai-hwaccel.io/accelerator.present")
			assert.Less(t, len(r.stdout), 64<<10, "NFD ignores feature files over 64 kB")
		})
	}
}

func TestNFDDGX(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "nfd")...)
	require.Equal(t, 0, r.code, r.stderr)
	for _, line := range []string{
		"ai-hwaccel.io/accelerator.count=8",
		"ai-hwaccel.io/accelerator.present=true",
		"ai-hwaccel.io/gpu.count=8",
		"ai-hwaccel.io/gpu.memory=81559",
		"ai-hwaccel.io/gpu.product=NVIDIA-H100-80GB-HBM3",
		"ai-hwaccel.io/cuda.count=8",
		"ai-hwaccel.io/cuda.compute_capability=9.0",
		"ai-hwaccel.io/interconnect=nvswitch",
		"ai-hwaccel.io/interconnect.infiniband=true",
		"ai-hwaccel.io/numa.count=2",
	} {
		assert.Contains(t, r.stdout, "\n"+line+"\n")
	}
	assert.NotContains(t, r.stdout, "expiry")
}

// Gaudi 2 modules wired to each other over their on-chip RoCE ports are a
// scale-up interconnect; a host NIC's RoCE (no devices) is not.
func TestNFDGaudiScaleUp(t *testing.T) {
	r := runCLI(t, withFixture(t, "gaudi2-8", "nfd")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "\nai-hwaccel.io/interconnect=roce\n")
	assert.Contains(t, r.stdout, "\nai-hwaccel.io/interconnect.roce=true\n")
}

func TestNFDOutputFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ai-hwaccel")
	r := runCLI(t, withFixture(t, "cpu-only", "nfd", "--output", path)...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stdout)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), "ai-hwaccel.io/accelerator.present=false\n")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)

	r = runCLI(t, withFixture(t, "cpu-only", "nfd", "--output", filepath.Join(dir, "no", "such", "dir"))...)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: error: "), r.stderr)
	// The error named the temporary dot-file ("open .../.dir.tmp-3830708757:
	// no such file or directory") or, for a directory, the rename ("rename
	// /tmp/.nu10.tmp-2525450270 /tmp/nu10: file exists"): it names the flag,
	// the path given and what is wrong with it.
	assert.Equal(t, "ai-hwaccel: error: --output "+filepath.Join(dir, "no", "such", "dir")+": the directory "+filepath.Join(dir, "no", "such")+" does not exist\n", r.stderr)
	r = runCLI(t, withFixture(t, "cpu-only", "nfd", "--output", dir)...)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ai-hwaccel: error: --output "+dir+": is a directory; give the file to write, e.g. "+filepath.Join(dir, "ai-hwaccel")+"\n", r.stderr)
	entries, err = os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp-", "no temporary file left behind")
	}
}

func TestParseModel(t *testing.T) {
	dir := t.TempDir()
	gguf := filepath.Join(dir, "m.gguf")
	require.NoError(t, os.WriteFile(gguf, []byte("GGUF"), 0o644))
	cases := []struct {
		in  string
		key string
		val any
	}{
		{"70b", "params", int64(70e9)},
		{"70B", "params", int64(70e9)},
		{"7.5B", "params", int64(7.5e9)},
		{"7000m", "params", int64(7e9)},
		{"500k", "params", int64(5e5)},
		{"1.2t", "params", int64(1.2e12)},
		{" 8b ", "params", int64(8e9)},
		{"llama-3-70b", "name", "llama-3-70b"},
		{"Llama-2-7B", "name", "Llama-2-7B"},
		{gguf, "path", gguf},
		{filepath.Join(dir, "missing.gguf"), "name", filepath.Join(dir, "missing.gguf")},
	}
	for _, c := range cases {
		m, err := parseModel("plan", c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.key, m.key, c.in)
		assert.Equal(t, c.val, m.val, c.in)
	}
	for _, bad := range []string{"", "  ", "7", "0.5", "0b", "0.0000001k"} {
		_, err := parseModel("plan", bad)
		assert.Error(t, err, "%q", bad)
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]float64{"500": 500, "2s": 2000, "1m30s": 90000, "250ms": 250, "0.5": 0.5} {
		got, err := parseTimeout(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "x", "-1", "0", "0s", "11m", "1e9"} {
		_, err := parseTimeout(bad)
		assert.Error(t, err, bad)
	}
}

var strategies = []any{"none", "tensor_parallel", "pipeline_parallel", "data_parallel", "cpu_offload"}

func TestPlanJSONOnDGX(t *testing.T) {
	plan, r := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--json")...)
	assert.Equal(t, true, plan["fits"])
	assert.Contains(t, strategies, plan["strategy"])
	assert.Contains(t, []any{"bf16", "fp16", "fp8", "int8", "int4", "fp32"}, plan["quant"])
	shards, ok := plan["shards"].([]any)
	require.True(t, ok, "shards is a list")
	require.NotEmpty(t, shards)
	for _, s := range shards {
		shard := s.(map[string]any)
		assert.Regexp(t, `^cuda:[0-7]$`, shard["device_id"])
		if avail, ok := shard["memory_available_bytes"].(float64); ok {
			assert.LessOrEqual(t, shard["memory_bytes"].(float64), avail, "no shard exceeds its device")
		}
	}

	// The answer is the library's: the same request through internal/api.
	dir := filepath.Join(machinesDir(t), "dgx-h100")
	req, err := json.Marshal(map[string]any{"model": map[string]any{"params": 70e9}, "quant": "auto",
		"detect": map[string]any{"sysroot": filepath.Join(dir, "root"), "path": filepath.Join(dir, "bin"), "timeout_ms": 5000}})
	require.NoError(t, err)
	assert.JSONEq(t, string(api.PlanSharding(context.Background(), req, api.NoEnv)), r.stdout)
}

func TestPlanTextOnDGX(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--quant", "bf16", "--context", "8192", "--engine", "vllm", "--placement", "fewest")...)
	require.Equal(t, 0, r.code, r.stderr)
	headline, _, _ := strings.Cut(r.stdout, "\n")
	assert.Regexp(t, `^70b fits 2x NVIDIA H100 80GB HBM3 \(cuda:0-1\): (tensor|pipeline) parallel 2, bf16, KV room about [0-9]+k tokens( \([0-9]+ sequences of 8192\))?; no command: no published checkpoint of this model is known; name one `, headline)
	for _, want := range []string{"\nMemory (bf16, 2 devices): ", " GiB = weights ", "\nShards:\n  DEVICE  NAME ",
		"\nThroughput: decode ", " tokens/s per sequence", "\n  Validated on: not validated: ", "\nEngine commands:\n  vllm: no command: ",
		"\nLevels:\n  QUANT  ON ONE DEVICE  ", "\nExplanation:\n  - "} {
		assert.Contains(t, r.stdout, want)
	}
	for _, raw := range []string{"_bytes", "params:", "device(s)", "token(s)", "fits: yes"} {
		assert.NotContains(t, r.stdout, raw, "no raw keys or counts")
	}
	// A size names no weights, so no command is printed (withheldLine); the
	// context still reaches the engine's arguments.
	obj, _ := runJSON(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--quant", "bf16", "--context", "8192", "--engine", "vllm", "--placement", "fewest", "--json")...)
	assert.Contains(t, toStrings(obj["engine_args"].(map[string]any)["vllm"]), "8192", "the context reaches the engine")
}

func TestPlanDoesNotFitIsAnAnswer(t *testing.T) {
	plan, _ := runJSON(t, withFixture(t, "cpu-only", "plan", "--model", "700b", "--quant", "fp32", "--json")...)
	assert.Equal(t, false, plan["fits"])
}

func TestSuggestOnDGX(t *testing.T) {
	s, r := runJSON(t, withFixture(t, "dgx-h100", "suggest", "--model", "70b", "--json", "--pretty")...)
	assert.Contains(t, []any{"bf16", "fp16", "fp8", "int8", "int4", "fp32"}, s["quant"])
	assert.Contains(t, r.stdout, "\n  \"")

	text := runCLI(t, withFixture(t, "dgx-h100", "suggest", "--model", "70b")...)
	require.Equal(t, 0, text.code, text.stderr)
	assert.Regexp(t, `^70b fits 2x NVIDIA H100 80GB HBM3 \(cuda:0-1\) at bf16: [0-9.]+ GiB, tensor parallel; plan it: ai-hwaccel plan --model 70b .* --quant bf16\n`, text.stdout)
}

func TestTrain(t *testing.T) {
	ans, _ := runJSON(t, withFixture(t, "dgx-h100", "train", "--model", "Llama-2-7B", "--method", "qlora", "--json")...)
	assert.Equal(t, true, ans["fits"])
	assert.Equal(t, "qlora", ans["method"])
	assert.Contains(t, ans["per_device"], "total_bytes")

	text := runCLI(t, withFixture(t, "dgx-h100", "train", "--model", "7b", "--method", "lora", "--context", "2048",
		"--precision", "fp16", "--optimizer", "sgd")...)
	require.Equal(t, 0, text.code, text.stderr)
	assert.Regexp(t, `^7b lora training fits 8x NVIDIA H100 80GB HBM3 \(cuda:0-7\): [0-9.]+ GiB per device`, text.stdout)
	for _, want := range []string{"\nSetup: lora, sgd optimizer, fp16 precision, sequence length 2048, micro-batch 1\n",
		"\nMemory per device: ", "\nParameters: 7B, ", "\nExplanation:\n  - "} {
		assert.Contains(t, text.stdout, want)
	}

	// A method the engine does not know is its invalid_argument (exit 1).
	// (The request breaks schema/request.schema.json too: unchecked.)
	bad := runUnchecked(withFixture(t, "dgx-h100", "train", "--model", "7b", "--method", "telepathy")...)
	assert.Equal(t, 1, bad.code)
	assert.True(t, strings.HasPrefix(bad.stderr, "ai-hwaccel: invalid_argument: "), bad.stderr)
}

func TestModelArgumentResolution(t *testing.T) {
	fixture := fixtureFlags(t, "dgx-h100")

	// Not a size, not in the catalog, no such file: a usage error that
	// carries the engine's message.
	r := runCLI(t, append([]string{"plan", "--model", "no-such-model-xyz"}, fixture...)...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `ai-hwaccel: usage: --model "no-such-model-xyz" is not a size like 70b, not a model the catalog knows and not an existing file`)

	// A catalog name plans.
	r = runCLI(t, append([]string{"plan", "--model", "Llama-2-7B", "--json"}, fixture...)...)
	assert.Equal(t, 0, r.code, r.stderr)

	// A name the catalog does not know but a file of that name exists: the
	// file is read (here it is not a model, so the engine says model_file).
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mymodel"), []byte("not a model"), 0o644))
	t.Chdir(dir)
	r = runCLI(t, append([]string{"plan", "--model", "mymodel"}, fixture...)...)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: model_file: "), r.stderr)

	// A path is sent as a path.
	r = runCLI(t, append([]string{"suggest", "--model", filepath.Join(dir, "mymodel")}, fixture...)...)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: model_file: "), r.stderr)
}

func TestPlanEngineErrors(t *testing.T) {
	r := runCLI(t, withFixture(t, "dgx-h100", "plan", "--model", "70b", "--devices", "cuda:9")...)
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout)
	assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: invalid_argument: "), r.stderr)

	r = runCLI(t, "plan", "--model", "70b", "--sysroot", filepath.Join(t.TempDir(), "missing"))
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "ai-hwaccel: detection_failed: "), r.stderr)
}
