package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A bf16 folder planned at int4 has no `vllm serve` of that folder (issue
// 21 item 5): the folder holds 16-bit weights, so the answer says which
// checkpoint is needed instead of a command. At its own level the command
// serves the folder. The folder is the Hub's config.json of
// ibm-granite/granite-3.1-1b-a400m-instruct at its bf16 commit
// (testdata/hub/SOURCES.md) with one BF16 safetensors header (planning never
// reads tensor data).
func TestPlanBF16FolderAtInt4HasNoServeOfTheFolder(t *testing.T) {
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct", "config.bf16.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o600))
	hdr, err := json.Marshal(map[string]any{"w": map[string]any{"dtype": "BF16", "shape": []int64{1334464512}, "data_offsets": []int64{0, 2668929024}}})
	require.NoError(t, err)
	st := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), append(st, hdr...), 0o600))

	env := map[string]string{"HOME": t.TempDir()}
	r := runWithEnv(t, env, withFixture(t, "two-nvidia", "plan", "--model", dir, "--quant", "int4", "--engine", "vllm")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "vllm serve "+dir)
	assert.Contains(t, r.stdout, "no command: needs a checkpoint of this model stored at int4")

	r = runWithEnv(t, env, withFixture(t, "two-nvidia", "plan", "--model", dir, "--quant", "bf16", "--engine", "vllm")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "vllm serve "+dir)
}
