package main

import (
	json "github.com/goccy/go-json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fit --all's WHY column dropped every parenthesised aside of more than one
// word, which took more than the sources and memory breakdowns docs/cli.md
// said it drops: on the two-nvidia fixture (an RTX 6000 Ada and an RTX
// A6000, 48 GiB each) vLLM's refusal of Llama-3.1-405B read "int4 needs
// 204.7 GiB on one device and does not fit split over the 2 cuda_gpu
// (nvidia) devices", without what the largest device and both together
// may hold, as if the sentence were whole. An aside the column leaves out
// is now marked where it was, and a note under the table says so and
// where the whole reason is.
func TestFitWhyMarksWhatItLeavesOut(t *testing.T) {
	r := runCLI(t, withFixture(t, "two-nvidia", "fit", "--all", "--filter", "Llama-3.1-405B")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  int4 needs 204.7 GiB on one device (…) and does not fit split over the 2 cuda_gpu (nvidia) devices (…)\n")
	assert.Contains(t, r.stdout, "\n"+elidedNote+"\n")

	// The note names a flag that gives the whole reason: --json's
	// refusal_text holds the asides the row marks.
	j := runCLI(t, withFixture(t, "two-nvidia", "fit", "--all", "--filter", "Llama-3.1-405B", "--json")...)
	require.Equal(t, 0, j.code, j.stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(j.stdout), &rows))
	require.Len(t, rows, 1)
	text := rows[0]["refusal_text"].(string)
	assert.Contains(t, text, "the largest device has 45.0 GiB total, of which vLLM may use 40.5 GiB")
	assert.Contains(t, text, "(81.0 GiB vLLM may use in all)")
}

// shortReason keeps one-word asides and marks each longer one it drops, so
// that no qualification vanishes unseen: "split 2 ways (the largest
// tensor-parallel group) each device needs" is not "split 2 ways each
// device needs". The text is a real refusal (testdata/golden/two-nvidia.json).
func TestShortReasonMarksEachAsideItDrops(t *testing.T) {
	text := "int4 needs 207.2 GiB on one device (weights 200.7 GiB, KV cache 2.0 GiB, vLLM 0.21.0's start-up charge 4.5 GiB (peak activation 3.4 GiB, non-torch memory 0.2 GiB, CUDA graphs 0.8 GiB); the largest device has 80.0 GiB total, of which vLLM may use 72.0 GiB under --gpu-memory-utilization 0.9) and does not fit split over the 2 cuda_gpu (nvidia) devices (144.0 GiB vLLM may use in all); split 2 ways (the largest tensor-parallel group) each device needs 106.5 GiB (weights 100.4 GiB, KV cache 1.0 GiB, vLLM 0.21.0's start-up charge 5.2 GiB (peak activation 2.2 GiB, non-torch memory 2.1 GiB, CUDA graphs 0.8 GiB))"
	short, elided := shortReason(text)
	assert.True(t, elided)
	assert.Equal(t, "int4 needs 207.2 GiB on one device (…) and does not fit split over the 2 cuda_gpu (nvidia) devices (…); split 2 ways (…) each device needs 106.5 GiB (…)", short)

	short, elided = shortReason("the one cuda_gpu (nvidia) device has 139.8 GiB free")
	assert.False(t, elided, "a one-word aside stays")
	assert.Equal(t, "the one cuda_gpu (nvidia) device has 139.8 GiB free", short)
}

// fit's one line where no row can be told is no table column: it gives
// the whole reason, why each device's memory is unknown included (the GCE
// A100 whose driver is not bound).
func TestFitCannotTellLineGivesTheWholeReason(t *testing.T) {
	r := runCLI(t, withFixture(t, "gce-a100-sxm4-no-driver", "fit")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "left out as unavailable: cuda:0 (no driver bound); available but their memory is unknown: cpu:0 (host RAM: /proc/meminfo was not readable);")
	assert.False(t, strings.Contains(r.stdout, "(…)"), r.stdout)
}
