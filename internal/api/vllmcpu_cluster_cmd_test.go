package api

import (
	"context"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vLLM's CPU platform runs only the multiprocessing executor: any other
// --distributed-executor-backend is replaced by mp with the warning "%s is
// not supported on CPU, fallback to mp distributed executor backend"
// (CpuPlatform.check_and_update_config, vllm/platforms/cpu.py of
// vllm-project/vllm at 0031bf29e940 always, at f6ff3f0f903e where the world
// size is above 1), and the CPU platform has no Ray device key, so a Ray
// executor on it stops with "current platform cpu does not support ray"
// (vllm-project/vllm issue 21602). A vLLM plan on the CPUs of several hosts
// therefore never names ray: a pipeline over two thinkpad-p16s-krackan
// hosts names the mp executor over two nodes, this host rank 0, and says
// how the other host starts (--node-rank, --master-addr, --headless:
// "Running vLLM with MultiProcessing", docs/serving/parallelism_scaling.md
// of vllm-project/vllm at 096bd6a4a109); replicas, one rank each, need no
// executor at all and are told to start one vllm serve per host, not Ray.
func TestVLLMCPUClusterCommandIsWhatVLLMRuns(t *testing.T) {
	for _, c := range []struct {
		model, strategy string
		want, notWant   []string
		noteHas         []string
	}{
		{"Llama-3.3-70B-Instruct", "pipeline_parallel",
			[]string{"--pipeline-parallel-size 2", "--distributed-executor-backend mp", "--nnodes 2", "--node-rank 0"}, nil,
			[]string{"--node-rank R", "--master-addr", "--headless", "pull 23691"}},
		{"Qwen2.5-32B", "data_parallel",
			[]string{"--data-parallel-size 2", "--data-parallel-size-local 1"}, []string{"--distributed-executor-backend"},
			[]string{"--data-parallel-start-rank R", "--data-parallel-address", "--headless"}},
	} {
		t.Run(c.strategy, func(t *testing.T) {
			out := PlanSharding(context.Background(), []byte(`{"model":{"name":"`+c.model+`"},"engine":"vllm","quant":"bf16",`+
				`"context_length":32768,`+cpuOnlyCluster(t, "thinkpad-p16s-krackan", 2)+`}`), NoEnv)
			require.Equal(t, "", errorCode(t, out), string(out))
			var p struct {
				Fits        bool                `json:"fits"`
				Strategy    string              `json:"strategy"`
				Args        map[string][]string `json:"engine_args"`
				Explanation []string            `json:"explanation"`
				Warnings    []string            `json:"warnings"`
			}
			require.NoError(t, json.Unmarshal(out, &p))
			require.True(t, p.Fits, string(out))
			require.Equal(t, c.strategy, p.Strategy)
			args := strings.Join(p.Args["vllm"], " ")
			for _, w := range c.want {
				assert.Contains(t, args, w)
			}
			for _, w := range c.notWant {
				assert.NotContains(t, args, w)
			}
			assert.NotContains(t, args, "ray")
			var vllmNotes []string
			for _, n := range append(p.Explanation, p.Warnings...) {
				if strings.HasPrefix(n, "vLLM") {
					vllmNotes = append(vllmNotes, n)
				}
			}
			notes := strings.Join(vllmNotes, "\n")
			for _, w := range c.noteHas {
				assert.Contains(t, notes, w)
			}
			assert.NotContains(t, notes, "--data-parallel-backend ray", "Ray has no CPU device key")
			assert.NotContains(t, notes, "--distributed-executor-backend ray")
		})
	}
}
