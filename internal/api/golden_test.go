package api

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"
)

// updateGolden rewrites testdata/golden from today's answers:
//
//	go test ./internal/api -run TestGoldenAnswers -update
//
// A commit that changes a golden file says which answer it corrects and why.
var updateGolden = flag.Bool("update", false, "rewrite the golden answers in testdata/golden")

// goldenSkip are fixture machines whose answers depend on wall time (tools
// that hang or sleep until the timeout).
var goldenSkip = map[string]bool{"hostile": true, "slow-tools": true}

// goldenRequests are the planning questions asked of every fixture machine:
// the catalog's headline sizes, a training estimate and the inverse
// questions, so that a restructuring of detection or planning shows every
// answer it changes.
var goldenRequests = []struct{ name, entry, body string }{
	{"plan-8b", "plan", `{"model":{"name":"Llama-3.1-8B"}}`},
	{"plan-70b", "plan", `{"model":{"name":"Llama-3.3-70B-Instruct"}}`},
	{"plan-405b", "plan", `{"model":{"name":"Llama-3.1-405B"}}`},
	{"plan-70b-vllm", "plan", `{"model":{"params_b":70},"engine":"vllm","context_length":32768}`},
	{"plan-32b-llamacpp", "plan", `{"model":{"name":"Qwen2.5-32B"},"engine":"llama.cpp","quant":"int4"}`},
	{"plan-mixtral-cpu", "plan", `{"model":{"name":"Mixtral-8x7B-v0.1"},"include_cpu":true}`},
	{"plan-gptoss-replicas", "plan", `{"model":{"name":"gpt-oss-20b"},"replicas":"max"}`},
	// SGLang's own pool sizing (context, batch, engine_expect) and a serving
	// batch (the per-sequence decode term, the concurrency checks), which
	// no request above plans.
	{"plan-32b-sglang", "plan", `{"model":{"name":"Qwen3-32B"},"engine":"sglang"}`},
	{"plan-8b-batch64", "plan", `{"model":{"name":"Qwen3-8B"},"batch_size":64,"context_length":8192}`},
	{"suggest-70b", "suggest", `{"model":{"params_b":70}}`},
	{"suggest-deepseek", "suggest", `{"model":{"name":"DeepSeek-V3"}}`},
	{"train-8b-lora", "train", `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"lora"}}`},
	{"train-8b-full", "train", `{"model":{"name":"Llama-3.1-8B"},"training":{"method":"full"}}`},
}

// TestGoldenAnswers pins the answer of every fixture machine: its registry
// (timing aside) and the planning answers above, byte for byte.
func TestGoldenAnswers(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	machines, err := os.ReadDir(filepath.Join(root, "testdata", "machines"))
	require.NoError(t, err)
	for _, m := range machines {
		if !m.IsDir() || goldenSkip[m.Name()] {
			continue
		}
		t.Run(m.Name(), func(t *testing.T) {
			got := goldenAnswers(t, root, m.Name())
			file := filepath.Join(root, "testdata", "golden", m.Name()+".json")
			if *updateGolden {
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				require.NoError(t, os.WriteFile(file, got, 0o644))
				return
			}
			want, err := os.ReadFile(file)
			require.NoError(t, err, "no golden answers: run with -update and review the diff")
			require.Equal(t, string(want), string(got), "answers of %s changed: if on purpose, run with -update and say why in the commit", m.Name())
		})
	}
}

// goldenFiles are the golden answer files, one per fixture machine, for
// the tests that check a property of every answer.
func goldenFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// goldenAnswers returns the machine's answers as one indented JSON document
// with the fixture directory written as $MACHINE.
func goldenAnswers(t *testing.T, root, machine string) []byte {
	dir := filepath.Join(root, "testdata", "machines", machine)
	detectOpts := fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{},"cache_ttl_ms":0}`,
		filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
	answers := map[string]json.RawMessage{}
	answers["detect"] = withoutTiming(t, Detect(context.Background(), []byte(detectOpts), NoEnv))
	entries := map[string]func(context.Context, []byte, Env) []byte{"plan": PlanSharding, "suggest": SuggestQuant, "train": EstimateTraining}
	for _, r := range goldenRequests {
		req := strings.TrimSuffix(r.body, "}") + `,"detect":` + detectOpts + `}`
		answers[r.name] = entries[r.entry](context.Background(), []byte(req), NoEnv)
	}
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, k := range keys {
		var pretty bytes.Buffer
		require.NoError(t, json.Indent(&pretty, answers[k], "  ", "  "), "answer %s is not JSON: %s", k, answers[k])
		fmt.Fprintf(&buf, "  %q: %s", k, pretty.String())
		if i < len(keys)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("}\n")
	return bytes.ReplaceAll(buf.Bytes(), []byte(dir), []byte("$MACHINE"))
}

// withoutTiming drops the registry's "timing" member (wall time).
func withoutTiming(t *testing.T, answer []byte) json.RawMessage {
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(answer, &m), "detect answer: %s", answer)
	delete(m, "timing")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}
