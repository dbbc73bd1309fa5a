package api

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// Qwen/Qwen2.5-7B-Instruct's own config.json says max_position_embeddings
// 32768 with no rope_scaling (the catalog entry Qwen2.5-7B's instruct.config
// and its config_source), where the base model's says 131072. vLLM derives
// its longest context from the config it loads and refuses a longer
// --max-model-len unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set
// (_get_and_verify_max_len in vllm/config/model.py of vllm-project/vllm @
// 0052a5b818980ce8a0477706aaf9f75bd5af72cd), so a plan for the instruct
// id that emitted the base model's 131072 did not start. The base model's
// own id keeps its 131072.
func TestQwen25InstructVLLMContextWithinItsConfig(t *testing.T) {
	for _, machine := range []string{"gh200-480gb", "dgx-h100"} {
		for _, name := range []string{"Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct", "qwen2.5:7b"} {
			a := fullPlan(t, machine, `{"model":{"name":"`+name+`"},"engine":"vllm"}`)
			n := contextFlag(argsOf(a, "vllm"), "--max-model-len")
			require.Positive(t, n, "%s on %s: %v", name, machine, a["engine_args"])
			assert.LessOrEqual(t, n, 32768, "%s on %s", name, machine)
		}
		base := fullPlan(t, machine, `{"model":{"name":"Qwen/Qwen2.5-7B"},"engine":"vllm"}`)
		assert.Equal(t, 131072, contextFlag(argsOf(base, "vllm"), "--max-model-len"), machine)
	}
	// Asked for the base model's context, the instruct id is refused with
	// its own maximum, as vLLM refuses it.
	out := PlanSharding(context.Background(), []byte(`{"model":{"name":"Qwen/Qwen2.5-7B-Instruct"},"engine":"vllm","context_length":131072,"detect":`+fixtureDetect(t, "gh200-480gb")+`}`), NoEnv)
	var a map[string]any
	require.NoError(t, json.Unmarshal(out, &a), "%s", out)
	e, _ := a["error"].(map[string]any)
	require.NotNil(t, e, "%s", out)
	assert.Equal(t, "invalid_argument", e["code"])
	assert.Contains(t, e["message"], "maximum context of 32768 tokens")
}

// Qwen/Qwen2.5-72B-Instruct-AWQ is quantized from Qwen2.5-72B-Instruct
// and carries its config.json (its model card: base_model
// Qwen/Qwen2.5-72B-Instruct, "The current config.json is set for context
// length up to 32,768 tokens"; the catalog checkpoint's base_model), so
// vLLM refuses the base model's 131072 for it as for the release: the
// plan's --max-model-len stays within 32768.
func TestQwen25InstructAWQVLLMContextWithinItsConfig(t *testing.T) {
	for _, machine := range []string{"gh200-480gb", "dgx-h100"} {
		a := fullPlan(t, machine, `{"model":{"name":"Qwen/Qwen2.5-72B-Instruct-AWQ"},"engine":"vllm"}`)
		n := contextFlag(argsOf(a, "vllm"), "--max-model-len")
		require.Positive(t, n, "%s: %v", machine, a["engine_args"])
		assert.LessOrEqual(t, n, 32768, machine)
	}
}

// TestEveryCatalogIDContextWithinItsConfig: for every id the catalog
// answers to (each entry's Hugging Face id, its instruct release and its
// non-GGUF checkpoints), the context each engine's command is given with
// no context asked never exceeds the longest context derived from the
// config that id's release publishes (model.ReleaseConfig), as vLLM
// derives it (vllmDerivedMaxLen).
func TestEveryCatalogIDContextWithinItsConfig(t *testing.T) {
	checked := 0
	for _, id := range catalogIDs() {
		cfg, err := model.ReleaseConfig(id)
		require.NoError(t, err, id)
		limit := vllmDerivedMaxLen(cfg)
		for _, eng := range []string{"vllm", "sglang", "llama.cpp"} {
			a := servingPlan(t, "dgx-h100", fmt.Sprintf(`{"model":{"name":%q},"engine":%q}`, id, eng))
			n := engineContext(argsOf(a, eng), eng)
			if n == 0 {
				continue // refused, or no command for this engine
			}
			checked++
			assert.LessOrEqual(t, n, limit, "%s under %s: the config derives %d", id, eng, limit)
		}
	}
	t.Logf("%d engine commands checked", checked)
	require.Greater(t, checked, 300, "the catalog must give commands to check")
}

// catalogIDs are the ids the catalog answers to: each entry's Hugging
// Face id (its name when it has none), its instruct release's repository
// where the catalog answers to it (mistralai/Mistral-7B-Instruct-v0.3 it
// does not: its ollama tag mistral:7b serves it) and the ollama tags
// listed with it, and its checkpoints' repositories but GGUF ones (files,
// not a config).
func catalogIDs() []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if id != "" && !seen[strings.ToLower(id)] {
			seen[strings.ToLower(id)] = true
			ids = append(ids, id)
		}
	}
	for _, e := range model.Catalog() {
		if e.HFID != "" {
			add(e.HFID)
		} else {
			add(e.Name)
		}
		if model.Lookup(e.Instruct.Repo) != nil {
			add(e.Instruct.Repo)
		}
		for _, tag := range e.Instruct.Ollama {
			add(tag)
		}
		for _, ck := range e.Checkpoints {
			if !ck.IsGGUF() {
				add(ck.Repo)
			}
		}
	}
	return ids
}

// engineContext is the context per sequence an engine's arguments give:
// vLLM's --max-model-len, SGLang's --context-length, llama.cpp's -c shared
// by its -np sequences; 0 when none is given.
func engineContext(args []string, eng string) int {
	switch eng {
	case "vllm":
		return contextFlag(args, "--max-model-len")
	case "sglang":
		return contextFlag(args, "--context-length")
	}
	c := contextFlag(args, "-c")
	if np := contextFlag(args, "-np"); np > 1 {
		return c / np
	}
	return c
}

// contextFlag is the integer after flag in args, 0 when absent.
func contextFlag(args []string, flag string) int {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			n, _ := strconv.Atoi(args[i+1])
			return n
		}
	}
	return 0
}

// vllmDerivedMaxLen is the longest context vLLM derives from a
// config.json, following _get_and_verify_max_len (vllm/config/model.py @
// 0052a5b818980ce8a0477706aaf9f75bd5af72cd) on the language model's config
// (text_config where one is nested): the smallest of the position keys
// (model_max_length over them where given), 2048 when none is, times the
// rope scaling factor of a scaled type other than su, longrope and llama3
// (a YaRN type from original_max_position_embeddings), not for Gemma 3,
// whose positions are already scaled. Written from the config alone, not
// from the planner's reading of it.
func vllmDerivedMaxLen(cfg map[string]any) int {
	if tc, ok := cfg["text_config"].(map[string]any); ok {
		cfg = tc
	}
	derived := math.Inf(1)
	for _, k := range []string{"max_position_embeddings", "n_positions", "max_seq_len", "seq_length",
		"model_max_length", "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len"} {
		if v, ok := cfg[k].(float64); ok {
			derived = math.Min(derived, v)
		}
	}
	if v, ok := cfg["model_max_length"].(float64); ok && v > 0 {
		derived = v
	}
	if math.IsInf(derived, 1) {
		derived = 2048
	}
	mt, _ := cfg["model_type"].(string)
	if params := ropeParameterSets(cfg); params != nil && !strings.Contains(mt, "gemma3") {
		factor := 1.0
		for _, rp := range params {
			typ, _ := rp["rope_type"].(string)
			if typ == "" {
				typ, _ = rp["type"].(string)
			}
			if typ == "su" || typ == "longrope" || typ == "llama3" {
				continue
			}
			if f, ok := rp["factor"].(float64); ok {
				factor = f
			}
			if orig, ok := rp["original_max_position_embeddings"].(float64); ok && typ == "yarn" {
				derived = orig
			}
		}
		derived *= factor
	}
	return int(derived)
}

// ropeParameterSets are a config's rope parameters, one set per layer
// type where rope_parameters is keyed by layer type, else the one
// rope_parameters or rope_scaling object; nil where the config has none.
func ropeParameterSets(cfg map[string]any) []map[string]any {
	p, _ := cfg["rope_parameters"].(map[string]any)
	if p == nil {
		p, _ = cfg["rope_scaling"].(map[string]any)
	}
	if p == nil {
		return nil
	}
	var byLayer []map[string]any
	for _, k := range []string{"full_attention", "sliding_attention", "chunked_attention", "linear_attention"} {
		if s, ok := p[k].(map[string]any); ok {
			byLayer = append(byLayer, s)
		}
	}
	if len(byLayer) > 0 {
		return byLayer
	}
	return []map[string]any{p}
}

// fixtureDetect is the detect object that reads a fixture machine, as
// fullPlan writes it.
func fixtureDetect(t *testing.T, machine string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", machine))
	require.NoError(t, err)
	return fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{},"cache_ttl_ms":0}`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
}
