package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// levelReason is the reason the answer's level row of quant gives.
func levelReason(t *testing.T, a *ShardingAnswer, quant string) string {
	t.Helper()
	for _, r := range a.Levels {
		if r.Quant == quant {
			require.NotEmpty(t, r.Reason, "level %s has no reason: %s", quant, dump(t, a.Levels))
			return strings.TrimPrefix(r.Reason, LevelMisfitPrefix)
		}
	}
	require.Failf(t, "no level row", "%s: %s", quant, dump(t, a.Levels))
	return ""
}

// A refusal on a pool of one device said "int4 needs 203.4 GiB on one
// device (...; largest 79.2 GiB free) and does not fit split over the 1
// cuda_gpu (nvidia) device(s) (79.2 GiB in all)": "largest", "split over
// the 1" and "device(s)" do not fit one device. It now says what that one
// device has (its total: this registry read no free memory) and what the
// engine may use of it.
func TestOneDeviceRefusalSaysWhatTheDeviceHasFree(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"Llama-3.1-405B"},"engine":"llama.cpp"}`, reg(t, []registry.Device{h100(0)})))
	require.False(t, a.Fits.Yes())
	reason := levelReason(t, a, "q4_k_m")
	assert.Regexp(t, `^q4_k_m needs [0-9.]+ GiB on one device \(weights [0-9.]+ GiB[^;]*\) and the one cuda_gpu \(nvidia\) device has [0-9.]+ GiB total, of which llama.cpp may use [0-9.]+ GiB under --fit-target 1024$`, reason)
	for _, wrong := range []string{"(s)", "largest", "split over", "in all"} {
		assert.NotContains(t, reason, wrong)
	}
}

// On several devices the refusal keeps the largest device's free memory and
// the pool's total, and counts the devices in the plural.
func TestSeveralDeviceRefusalCountsTheDevices(t *testing.T) {
	a := shard(t, request(t, `{"model":{"name":"DeepSeek-V3"},"engine":"llama.cpp"}`, reg(t, []registry.Device{h100(0), h100(1)})))
	reason := levelReason(t, a, "q4_k_m")
	assert.Regexp(t, `^q4_k_m needs [0-9.]+ GiB on one device \(weights [0-9.]+ GiB[^;]*; the largest device has [0-9.]+ GiB total, of which llama.cpp may use [0-9.]+ GiB under --fit-target 1024\) and does not fit split over the 2 cuda_gpu \(nvidia\) devices \([0-9.]+ GiB llama.cpp may use in all\)$`, reason)
	assert.NotContains(t, reason, "(s)")
}

// counted writes a count and its noun, singular for one.
func TestCounted(t *testing.T) {
	assert.Equal(t, "1 device", counted(1, "device"))
	assert.Equal(t, "0 sequences", counted(0, "sequence"))
	assert.Equal(t, "4096 tokens", counted(4096, "token"))
	assert.Equal(t, "device", nounOf(1, "device"))
	assert.Equal(t, "devices", nounOf(2, "device"))
}
