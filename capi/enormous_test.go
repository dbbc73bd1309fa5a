//go:build cgo

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/cputime"
)

// Valid requests at or near the limits docs/requests.md and
// include/ai_hwaccel.h give answer, or are refused by the limit they pass,
// in bounded time through the C ABI. The bound is on the CPU time the
// process spends in the call (steady on a loaded machine, where wall time is
// not), with a wall-clock bound for a hang; measured on 2 shared cores the
// slowest here takes about 4 CPU seconds.
func TestEnormousRequestsAnswerInBoundedTime(t *testing.T) {
	const cpuBound, wallBound = 30 * time.Second, 5 * time.Minute
	config, err := os.ReadFile(filepath.Join("..", "testdata", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct", "config.json"))
	require.NoError(t, err)
	deepMoE := strings.Replace(string(config), `"num_hidden_layers": 24`, `"num_hidden_layers": 65536`, 1)
	require.NotEqual(t, string(config), deepMoE)
	reg10k, reg64k := manyGPUs(10000), manyGPUs(65536)
	two := `{"devices":[` + gpuSeed(0, 80) + `,` + gpuSeed(1, 80) + `]}`
	cluster := func(n int) string {
		nodes := make([]string, n)
		for i := range nodes {
			nodes[i] = manyGPUs(8)
		}
		return "[" + strings.Join(nodes, ",") + "]"
	}
	for _, tc := range []struct {
		name    string
		exports []int
		in      string
		code    string // "" an answer
	}{
		{"context_length 10^9", []int{1, 2, 3}, `{"model":{"params_b":8},"context_length":1000000000,"registry":` + two + `}`, "invalid_argument"},
		{"context_length 16 Mi", []int{1, 2}, `{"model":{"params_b":8},"context_length":16777216,"registry":` + two + `}`, ""},
		{"batch_size 10^6", []int{1, 2}, `{"model":"llama-3.1-8b","batch_size":1000000,"registry":` + two + `}`, ""},
		{"batch_size 1 Mi + 1", []int{2}, `{"model":"llama-3.1-8b","batch_size":1048577,"registry":` + two + `}`, "invalid_argument"},
		{"10^4 devices", []int{1, 2, 3}, `{"model":"llama-3.1-70b","training":{"method":"lora"},"registry":` + reg10k + `}`, ""},
		{"10^4 devices, 10^6 sequences", []int{2}, `{"model":"llama-3.1-8b","batch_size":1000000,"registry":` + reg10k + `}`, ""},
		{"10^4 devices, replicas max", []int{2}, `{"model":"llama-3.1-8b","replicas":"max","registry":` + reg10k + `}`, ""},
		{"65536 devices", []int{2}, `{"model":"llama-3.1-70b","registry":` + reg64k + `}`, ""},
		{"65537 devices", []int{2}, `{"model":"llama-3.1-70b","registry":` + manyGPUs(65537) + `}`, "invalid_argument"},
		{"10^4 missing device ids", []int{2}, `{"model":"llama-3.1-8b","devices":` + expandValue("$IDS(10000)") + `,"registry":` + two + `}`, "invalid_argument"},
		{"1024 nodes of 8 GPUs", []int{2}, `{"model":"llama-3.1-405b","cluster":` + cluster(1024) + `}`, ""},
		{"1025 nodes", []int{2}, `{"model":"llama-3.1-405b","cluster":` + cluster(1025) + `}`, "invalid_argument"},
		{"65536 MoE layers", []int{1, 2, 3}, `{"model":{"config":` + deepMoE + `},"training":{"method":"full"},"registry":` + two + `}`, ""},
		{"training at its limits", []int{3}, `{"model":"llama-3.1-8b","training":{"method":"full","seq_len":16777216,"micro_batch":65536,"num_devices":65536},"registry":` + reg10k + `}`, ""},
	} {
		for _, i := range tc.exports {
			t.Run(tc.name+"/"+exportNames[i], func(t *testing.T) {
				before := cputime.Process(t)
				start := time.Now()
				answer := boundedCall(t, i, []byte(tc.in), wallBound)
				cpu := cputime.Process(t) - before
				assert.Equal(t, tc.code, checkEnvelope(t, answer), "%.300s", answer)
				assert.Less(t, cpu, cpuBound, "CPU time")
				t.Logf("%d bytes: %v CPU, %v wall: %.100s", len(tc.in), cpu.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), answer)
			})
		}
	}
}
