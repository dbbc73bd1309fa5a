package api

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bf16 mixed-precision training on a Mac was estimated on host RAM
// ("metal_gpu (apple) devices do not run bf16: skipped; no accelerator runs
// bf16: estimating on host RAM", the device cpu:0 with all 36 GiB), because
// the Metal GPU's precision list is llama.cpp's inference list, which leaves
// bf16 out. Training on a Mac runs through PyTorch's MPS backend, which runs
// bf16 from macOS 14 (pytorch/pytorch#119641) and autocasts to it
// (pytorch/pytorch#139386); Hugging Face's Trainer accepts bf16 on MPS
// (huggingface/transformers#40458). The estimate is now on the Metal GPU,
// within its working set, as fp16 training is.
func TestAppleBF16TrainingIsOnTheMetalGPU(t *testing.T) {
	for _, machine := range []string{"macbook-m3-pro", "macbook-m2-max-32gb"} {
		dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "machines", machine))
		require.NoError(t, err)
		detect := fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{},"cache_ttl_ms":0}`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
		var a struct {
			Fits    bool `json:"fits"`
			Devices []struct {
				DeviceID string `json:"device_id"`
			} `json:"devices"`
			Explanation []string `json:"explanation"`
		}
		for _, precision := range []string{"bf16", "fp16"} {
			out := EstimateTraining(context.Background(), []byte(`{"model":{"name":"Qwen2.5-0.5B"},"training":{"method":"full","precision":"`+precision+`"},"detect":`+detect+`}`), NoEnv)
			require.NoError(t, json.Unmarshal(out, &a), "%s", out)
			require.True(t, a.Fits, "%s %s: %q", machine, precision, a.Explanation)
			require.Len(t, a.Devices, 1)
			assert.Equal(t, "metal:0", a.Devices[0].DeviceID, "%s %s: %q", machine, precision, a.Explanation)
			assert.NotContains(t, strings.Join(a.Explanation, "\n"), "host RAM", "%s %s", machine, precision)
		}
	}
}
