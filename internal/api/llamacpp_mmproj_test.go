package api

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"
)

// llamaCPPProjectorRun is one record of
// internal/calibration/data/llamacpp_mmproj.json: what llama.cpp's mtmd (CPU
// backend) allocated when it loaded a random-weight vision projector and
// warmed it up, written by scripts/llamacpp-measure/mmproj.sh.
type llamaCPPProjectorRun struct {
	Model        string `json:"model"`
	Quant        string `json:"quant"`
	ConfigSource string `json:"config_source"`
	// VisionConfigChanges are the vision_config values replaced in the
	// catalog's config (a shape variation; empty for the model as published).
	VisionConfigChanges map[string]int `json:"vision_config_changes"`
	FileBytes           int64          `json:"file_bytes"`
	ModelSizeBytes      int64          `json:"model_size_bytes"`
	ComputeBufferBytes  int64          `json:"compute_buffer_bytes"`
	FlashAttnRequested  string         `json:"flash_attn_requested"`
	FlashAttn           string         `json:"flash_attn"`
	WarmupImage         []int          `json:"warmup_image"`
	LlamaCPPCommit      string         `json:"llama_cpp_commit"`
	Command             string         `json:"command"`
	Log                 []string       `json:"log"`
}

func (r llamaCPPProjectorRun) name() string {
	return fmt.Sprintf("%s %s fa=%s %s", r.Model, r.Quant, r.FlashAttn, r.changes())
}

// changes is VisionConfigChanges as "key=value, ..." in key order, "—" when
// none.
func (r llamaCPPProjectorRun) changes() string {
	var ch []string
	for k, v := range r.VisionConfigChanges {
		ch = append(ch, fmt.Sprintf("%s=%d", k, v))
	}
	if len(ch) == 0 {
		return "—"
	}
	sort.Strings(ch)
	return strings.Join(ch, ", ")
}

func loadLlamaCPPProjectorRuns(t *testing.T) []llamaCPPProjectorRun {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "calibration", "data", "llamacpp_mmproj.json"))
	require.NoError(t, err)
	var doc struct {
		Runs []llamaCPPProjectorRun `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NotEmpty(t, doc.Runs)
	return doc.Runs
}

// catalogConfig is the config.json the catalog keeps for model name, with
// the vision_config values of changes replaced.
func catalogConfig(t *testing.T, name string, changes map[string]int) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "model", "catalog.json"))
	require.NoError(t, err)
	var cat struct {
		Models []struct {
			Name   string         `json:"name"`
			Config map[string]any `json:"config"`
		} `json:"models"`
	}
	require.NoError(t, json.Unmarshal(b, &cat))
	for _, m := range cat.Models {
		if m.Name == name {
			v, ok := m.Config["vision_config"].(map[string]any)
			require.True(t, ok, "%s has no vision_config", name)
			for k, x := range changes {
				v[k] = x
			}
			return m.Config
		}
	}
	t.Fatalf("%s is not in the catalog", name)
	return nil
}

// projectorGPU is the GPU that holds the measured projectors beside their
// language model at q4_k_m: the plan's first shard is the one llama.cpp
// loads the projector on.
const projectorGPU = `{"schema_version":1,"devices":[{"id":"cuda:0","kind":"cuda_gpu","index":0,"available":true,` +
	`"memory_bytes":150754820096,"memory_free_bytes":150754820096,"memory_bandwidth_gb_s":4800,"compute_capability":"9.0"}]}`

// firstShardBytes plans cfg on projectorGPU for llama.cpp and returns the
// memory of its first shard.
func firstShardBytes(t *testing.T, cfg map[string]any, extra map[string]any) int64 {
	t.Helper()
	req := map[string]any{
		"model": map[string]any{"config": cfg}, "engine": "llama.cpp", "quant": "q4_k_m",
		"context_length": 4096, "registry": json.RawMessage(projectorGPU),
	}
	for k, v := range extra {
		req[k] = v
	}
	in, err := json.Marshal(req)
	require.NoError(t, err)
	out := PlanSharding(context.Background(), in, NoEnv)
	var ans struct {
		Fits   bool `json:"fits"`
		Shards []struct {
			MemoryBytes int64 `json:"memory_bytes"`
		} `json:"shards"`
	}
	require.NoError(t, json.Unmarshal(out, &ans), string(out))
	require.True(t, ans.Fits, string(out))
	require.NotEmpty(t, ans.Shards, string(out))
	return ans.Shards[0].MemoryBytes
}

// TestLlamaCPPProjector replays every recorded projector load: the memory a
// plan adds on its first GPU for "mmproj" (the file's bytes and the image
// encoder's compute buffer, quant.ProjectorComputeBytes) against the
// projector's tensors and compute buffer as clip.cpp logged them. Issue 25
// asks for the projector within 5 %; the compute buffer alone is exact for
// the images of 4096 patches and more (Gemma 3's 896 px and the larger
// variant), and below that it is under (docs/accuracy.md, "The vision
// projector"). Run with -v for the table.
func TestLlamaCPPProjector(t *testing.T) {
	rows := []string{"| model | quant | vision_config changed | flash attention | tensors | compute (ours / llama.cpp) | total (ours / llama.cpp) | total error |",
		"|---|---|---|---|---|---|---|---|"}
	for _, r := range loadLlamaCPPProjectorRuns(t) {
		name := r.name()
		require.Len(t, r.LlamaCPPCommit, 40, name)
		require.True(t, strings.HasPrefix(r.ConfigSource, "https://"), name)
		require.True(t, strings.HasPrefix(r.Command, "./mmproj "), name)
		require.Contains(t, []string{"enabled", "disabled"}, r.FlashAttn, name)
		require.Positive(t, r.ModelSizeBytes, name)
		require.Positive(t, r.ComputeBufferBytes, name)
		require.NotEmpty(t, r.Log, name)

		cfg := catalogConfig(t, r.Model, r.VisionConfigChanges)
		extra := map[string]any{}
		if r.FlashAttn == "disabled" {
			extra["flash_attention"] = false // llama-server -fa off, which it passes to mtmd
		}
		without := firstShardBytes(t, cfg, extra)
		extra["mmproj"] = map[string]any{"size_bytes": r.FileBytes}
		added := firstShardBytes(t, cfg, extra) - without

		measured := r.ModelSizeBytes + r.ComputeBufferBytes
		oursCompute := added - r.FileBytes
		total := relErr(added, measured)
		rows = append(rows, fmt.Sprintf("| %s | %s | %v | %s | %s | %s / %s | %s / %s | %+.1f %% |",
			r.Model, r.Quant, r.changes(), r.FlashAttn, mib(r.ModelSizeBytes),
			mib(oursCompute), mib(r.ComputeBufferBytes), mib(added), mib(measured), 100*total))

		require.LessOrEqual(t, math.Abs(total), 0.05, "%s: projector %s, llama.cpp %s", name, mib(added), mib(measured))
		// The file holds the tensors and a header of some KiB.
		require.InDelta(t, r.ModelSizeBytes, r.FileBytes, 1<<20, name)
		// mtmd warms up on one image of the tower's own size, the n the
		// estimate is made for (clip.cpp: warmup_image_size = image_size).
		require.Equal(t, []int{visionInt(t, cfg, "image_size"), visionInt(t, cfg, "image_size")}, r.WarmupImage, name)
		if patches(t, cfg) >= 4096 {
			// 4096 patches or more: the activations set the buffer and the
			// estimate is llama.cpp's figure to the log's 0.01 MiB.
			require.InDelta(t, r.ComputeBufferBytes, oursCompute, 0.01*(1<<20), name)
		} else {
			// Fewer patches: fixed-size tensors (the F16 copy of the
			// transposed projection matrix) set the allocator's layout and
			// the estimate is under, by up to 32 MiB; the total stays
			// within the bound above.
			require.LessOrEqual(t, oursCompute, r.ComputeBufferBytes, name)
		}
	}
	t.Logf("projector (mmproj) vs llama.cpp's mtmd:\n%s", strings.Join(rows, "\n"))
}

// visionInt is the integer vision_config.key of cfg.
func visionInt(t *testing.T, cfg map[string]any, key string) int {
	t.Helper()
	switch x := cfg["vision_config"].(map[string]any)[key].(type) {
	case int:
		return x
	case float64:
		return int(x)
	default:
		t.Fatalf("vision_config.%s is %v", key, x)
		return 0
	}
}

// patches is the number of patches of one image of the config's vision
// tower: (image_size / patch_size)².
func patches(t *testing.T, cfg map[string]any) int {
	side := visionInt(t, cfg, "image_size") / visionInt(t, cfg, "patch_size")
	return side * side
}
