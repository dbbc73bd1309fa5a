package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// rtx4060Laptop is the slimbook-hero-rtx4060-igpu fixture's GPU, an RTX
// 4060 Laptop GPU of 8188 MiB with 7800 MiB free: 6.6 GiB usable under
// llama.cpp, where Qwen3-8B fits at q5_k_m (6.6 GiB) and not at q6_k.
func rtx4060Laptop(t *testing.T) *registry.Registry {
	d := gpu(registry.KindCUDA, 0, "NVIDIA GeForce RTX 4060 Laptop GPU", 8188<<20, "8.9")
	free := int64(7800 << 20)
	d.Vendor, d.MemoryFreeBytes = "nvidia", &free
	return reg(t, []registry.Device{d})
}

// Test catalog entries: Qwen3-8B's shape with the checkpoints a test lists
// (its real list grows as GGUF types are added to the catalog).
var (
	qwen3BF16 = model.Checkpoint{Quant: "bf16", Repo: "Qwen/Qwen3-8B", Source: "https://huggingface.co/Qwen/Qwen3-8B"}
	qwen3Q8   = model.Checkpoint{Quant: "q8_0", Repo: "Qwen/Qwen3-8B-GGUF", Method: "gguf", Source: "https://huggingface.co/Qwen/Qwen3-8B-GGUF"}
	qwen3Q4   = model.Checkpoint{Quant: "q4_k_m", Repo: "Qwen/Qwen3-8B-GGUF", Method: "gguf", Source: "https://huggingface.co/Qwen/Qwen3-8B-GGUF"}
)

// qwen3With is a request for Qwen3-8B whose catalog entry lists cks, with
// the rest of body.
func qwen3With(t *testing.T, body string, r *registry.Registry, cks ...model.Checkpoint) *Request {
	req := request(t, `{"model":{"name":"Qwen3-8B"}`+body+`}`, r)
	m := *req.Model
	m.Checkpoints, m.NamedCheckpoint = cks, -1
	req.Model = &m
	return req
}

// alsoFitsLine is the explanation's line naming a better level that
// fits and that nothing published runs (unpublishedLine), "" when there is
// none.
func alsoFitsLine(lines []string) string { return explanationWith(lines, "published: ") }

// Under quant auto a level a published checkpoint runs is preferred: with
// only a Q4_K_M GGUF published, the RTX 4060 plan takes q4_k_m, whose
// command runs, over q5_k_m, which fits but has no file; the explanation
// names q5_k_m, its memory and how to get it. suggest agrees.
func TestAutoTakesTheBestLevelAPublishedGGUFRuns(t *testing.T) {
	r := rtx4060Laptop(t)
	a := shard(t, qwen3With(t, `,"engine":"llama.cpp"`, r, qwen3BF16, qwen3Q4))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.Equal(t, "q4_k_m", a.Quant, dump(t, a.Explanation))
	assert.Equal(t, "Qwen/Qwen3-8B-GGUF", a.Load["llama.cpp"].Repo)
	assert.Equal(t, `published: q5_k_m (6.6 GiB at a context of 4096 tokens) also fits but no published Q5_K_M GGUF of this model is known; "quant": "q5_k_m" plans it (llama-quantize writes the file); under quant auto a plan takes a level a published checkpoint runs where one fits, so that its command runs`,
		alsoFitsLine(a.Explanation))

	sg, err := SuggestQuant(qwen3With(t, `,"engine":"llama.cpp"`, r, qwen3BF16, qwen3Q4))
	require.NoError(t, err)
	assert.Equal(t, a.Quant, sg.Quant)
	assert.Equal(t, "q5_k_m", firstFittingRow(sg.Levels), "q5_k_m fits: the preference, not memory, moved the level")
	assert.Equal(t, alsoFitsLine(a.Explanation), alsoFitsLine(sg.Explanation))
}

// firstFittingRow is the level of the first row that fits.
func firstFittingRow(rows []LevelRow) string {
	for _, r := range rows {
		if r.Fits.Yes() {
			return r.Quant
		}
	}
	return ""
}

// When no fitting level has a published file, auto keeps the best level
// that fits, without a command, as before.
func TestAutoKeepsTheBestLevelWhenNothingPublishedRunsIt(t *testing.T) {
	a := shard(t, qwen3With(t, `,"engine":"llama.cpp"`, rtx4060Laptop(t), qwen3BF16))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.Equal(t, "q5_k_m", a.Quant)
	assert.Empty(t, a.Load["llama.cpp"].Repo)
	assert.Empty(t, alsoFitsLine(a.Explanation))
}

// A level the request names is its answer, published or not.
func TestExplicitQuantIsNotMovedToAPublishedLevel(t *testing.T) {
	a := shard(t, qwen3With(t, `,"engine":"llama.cpp","quant":"q5_k_m"`, rtx4060Laptop(t), qwen3BF16, qwen3Q4))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.Equal(t, "q5_k_m", a.Quant)
	assert.Empty(t, a.Load["llama.cpp"].Repo)
	assert.Empty(t, alsoFitsLine(a.Explanation))
}

// A GGUF of the other release than the request named counts as published
// where it serves (its command runs, with the release-switch warning):
// when the two releases share their config. Where the configs differ no
// command serves it, and the level counts as unpublished.
func TestOtherReleaseGGUFCountsAsPublishedWhereItServes(t *testing.T) {
	tuned := qwen3Q4
	tuned.Release = model.TunedRelease
	for _, differ := range []bool{false, true} {
		req := qwen3With(t, `,"engine":"llama.cpp"`, rtx4060Laptop(t), qwen3BF16, tuned)
		req.Model.Releases = model.Releases{Named: model.OwnRelease, Repos: [2]string{"Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B"},
			OwnPretrained: true, ConfigsDiffer: differ}
		a := shard(t, req)
		require.True(t, a.Fits.Yes(), dump(t, a))
		if differ {
			assert.Equal(t, "q5_k_m", a.Quant)
			assert.Empty(t, a.Load["llama.cpp"].Repo)
			continue
		}
		assert.Equal(t, "q4_k_m", a.Quant)
		assert.Equal(t, "Qwen/Qwen3-8B-GGUF", a.Load["llama.cpp"].Repo)
		assert.Contains(t, strings.Join(a.Warnings, "\n"), "serves Qwen/Qwen3-8B-GGUF")
		assert.NotEmpty(t, alsoFitsLine(a.Explanation))
	}
}

// On a CPU, auto weighs decode speed among the levels a published file
// runs only: with Q8_0 the one GGUF published, q8_0 is the plan, where the
// speed rule alone takes a smaller type (q5_k_m on this CPU, without a
// file).
func TestCPUSpeedChoiceWeighsOnlyPublishedLevels(t *testing.T) {
	r := cpuHost(t, "AMD EPYC 9354 32-Core Processor", 32)
	body := `,"engine":"llama.cpp","context_length":4096`
	all := shard(t, qwen3With(t, body, r, qwen3BF16))
	require.True(t, all.Fits.Yes(), dump(t, all))
	require.NotEqual(t, "q8_0", all.Quant, "the speed rule alone takes a smaller level than q8_0 here: %s", dump(t, all.Explanation))

	a := shard(t, qwen3With(t, body, r, qwen3BF16, qwen3Q8))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.Equal(t, "q8_0", a.Quant, dump(t, a.Explanation))
	assert.Equal(t, "Qwen/Qwen3-8B-GGUF", a.Load["llama.cpp"].Repo)

	// With Q8_0 and Q4_K_M published the rule weighs those two.
	a = shard(t, qwen3With(t, body, r, qwen3BF16, qwen3Q8, qwen3Q4))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.Contains(t, []string{"q8_0", "q4_k_m"}, a.Quant, dump(t, a.Explanation))
	assert.Equal(t, "Qwen/Qwen3-8B-GGUF", a.Load["llama.cpp"].Repo)
}

// vLLM: int8 and int4 need a quantized checkpoint. On a 16 GB T4
// (compute capability 7.5: no fp8, AWQ's floor) Qwen3-8B fits at int8 and
// int4, not at 16 bits; with only an int4 AWQ published, auto takes int4,
// which the AWQ runs, and names int8 and what it needs.
func TestVLLMAutoTakesTheQuantizedCheckpointPublished(t *testing.T) {
	d := gpu(registry.KindCUDA, 0, "Tesla T4", 15360<<20, "7.5")
	d.Vendor = "nvidia"
	r := reg(t, []registry.Device{d})
	awq := model.Checkpoint{Quant: "int4", Repo: "Qwen/Qwen3-8B-AWQ", Method: "awq", Source: "https://huggingface.co/Qwen/Qwen3-8B-AWQ"}
	base := shard(t, qwen3With(t, `,"engine":"vllm"`, r, qwen3BF16))
	require.True(t, base.Fits.Yes(), dump(t, base))
	require.Equal(t, "int8", base.Quant, "the premise: int8 is the best level that fits: %s", dump(t, base.Levels))
	assert.NotEmpty(t, base.Load["vllm"].Needs, "no int8 checkpoint: no command")

	a := shard(t, qwen3With(t, `,"engine":"vllm"`, r, qwen3BF16, awq))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.Equal(t, "int4", a.Quant, dump(t, a.Levels))
	assert.Equal(t, "Qwen/Qwen3-8B-AWQ", a.Load["vllm"].Repo)
	assert.Empty(t, a.Load["vllm"].Needs)
	assert.Contains(t, alsoFitsLine(a.Explanation), "published: int8 (")
	assert.Contains(t, alsoFitsLine(a.Explanation), "also fits but it needs a checkpoint of Qwen3-8B stored at int8")
}

// The passed-over level's memory is that of the plan's sequences: under
// llama.cpp with -np 2 both slots' caches, so the line says "2 sequences
// of ..." rather than "a context of ...", which read as one sequence's
// (before: Llama-3.1-70B at --batch 4 on dgx-h100 said "bf16 (170.4 GiB at
// a context of 32768 tokens)", the memory of 4 such sequences).
func TestPublishedLineNamesTheSequencesItsMemoryHolds(t *testing.T) {
	r := rtx4060Laptop(t)
	a := shard(t, qwen3With(t, `,"engine":"llama.cpp","context_length":2048,"batch_size":2`, r, qwen3BF16, qwen3Q4))
	require.True(t, a.Fits.Yes(), dump(t, a))
	require.Equal(t, "q4_k_m", a.Quant, dump(t, a.Explanation))
	line := alsoFitsLine(a.Explanation)
	assert.Regexp(t, `^published: q5_k_m \([0-9.]+ GiB at 2 sequences of 2048 tokens\) also fits but`, line)
}

// qwen3MoEQ2K is unsloth's Q2_K GGUF of Qwen3-235B-A22B (catalog).
var qwen3MoEQ2K = model.Checkpoint{Quant: "q2_k", Repo: "unsloth/Qwen3-235B-A22B-GGUF", Method: "gguf", Source: "https://huggingface.co/unsloth/Qwen3-235B-A22B-GGUF"}

// qwen3MoEWith is a llama.cpp request for Qwen3-235B-A22B on one GPU of
// 96 GiB whose catalog entry lists cks.
func qwen3MoEWith(t *testing.T, cks ...model.Checkpoint) *Request {
	d := gpu(registry.KindCUDA, 0, "test GPU", 96<<30, "8.9")
	req := request(t, `{"model":{"name":"Qwen3-235B-A22B"},"engine":"llama.cpp"}`, reg(t, []registry.Device{d}))
	m := *req.Model
	m.Checkpoints, m.NamedCheckpoint = cks, -1
	req.Model = &m
	return req
}

// rowOf is the row of level l, nil when it was not planned.
func rowOf(rows []LevelRow, l string) *LevelRow {
	for i := range rows {
		if rows[i].Quant == l {
			return &rows[i]
		}
	}
	return nil
}

// On Qwen3-235B-A22B llama.cpp's Q2_K outweighs IQ2_M (the ladder leaves
// it out: a worse level that is not smaller), but where Q2_K is the one
// low level with a published file (unsloth's, as on strix-halo-128gb) and
// no better level that fits has one, quant auto plans q2_k, whose command
// runs, and says why a larger, worse level was taken.
func TestAutoTakesAPublishedLevelTheLadderLeftOut(t *testing.T) {
	a := shard(t, qwen3MoEWith(t, qwen3BF16, qwen3MoEQ2K))
	require.True(t, a.Fits.Yes(), dump(t, a))
	assert.Equal(t, "q2_k", a.Quant, dump(t, a.Explanation))
	assert.Equal(t, qwen3MoEQ2K.Repo, a.Load["llama.cpp"].Repo)
	q2k, iq2m := rowOf(a.Levels, "q2_k"), rowOf(a.Levels, "iq2_m")
	require.NotNil(t, q2k, "the planned level has its row")
	require.NotNil(t, iq2m)
	assert.Greater(t, q2k.TotalBytes, iq2m.TotalBytes, "q2_k is larger than iq2_m on this shape")
	assert.Contains(t, dump(t, a.Explanation), "q2_k: iq2_m would be smaller and better but no published file runs it")

	sg, err := SuggestQuant(qwen3MoEWith(t, qwen3BF16, qwen3MoEQ2K))
	require.NoError(t, err)
	assert.Equal(t, a.Quant, sg.Quant)

	// Where IQ2_M is published too, the smaller, better level is planned
	// and q2_k stays off the ladder.
	iq2 := qwen3MoEQ2K
	iq2.Quant = "iq2_m"
	a = shard(t, qwen3MoEWith(t, qwen3BF16, qwen3MoEQ2K, iq2))
	assert.Equal(t, "iq2_m", a.Quant)
	assert.Nil(t, rowOf(a.Levels, "q2_k"))

	// With no low level published the best level that fits is planned,
	// without a command, and q2_k stays off the ladder.
	a = shard(t, qwen3MoEWith(t, qwen3BF16))
	assert.NotEqual(t, "q2_k", a.Quant)
	assert.Nil(t, rowOf(a.Levels, "q2_k"))
	assert.NotContains(t, dump(t, a.Explanation), "would be smaller and better")
}
