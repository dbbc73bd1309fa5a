package detect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A visibility variable set to "" hides every device in the CUDA runtime, so
// "set and empty" must not read as "unset": LookupEnv tells them apart.
func TestLookupEnvTellsEmptyFromUnset(t *testing.T) {
	procEnv := map[string]string{"CUDA_VISIBLE_DEVICES": ""}
	lookup := func(name string) (string, bool) { v, ok := procEnv[name]; return v, ok }

	for _, tc := range []struct {
		name    string
		opts    Options
		varName string
		want    string
		wantOK  bool
	}{
		{"LookupEnv: set and empty", Options{LookupEnv: lookup}, "CUDA_VISIBLE_DEVICES", "", true},
		{"LookupEnv: unset", Options{LookupEnv: lookup}, "HIP_VISIBLE_DEVICES", "", false},
		{"env option wins over LookupEnv", Options{Env: map[string]string{"CUDA_VISIBLE_DEVICES": "1"}, LookupEnv: lookup},
			"CUDA_VISIBLE_DEVICES", "1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := tc.opts.withDefaults().lookupEnv(tc.varName)
			assert.Equal(t, tc.want, v)
			assert.Equal(t, tc.wantOK, ok)
		})
	}
}

// PATH is read with the same reader as the visibility variables, so the two
// cannot disagree (Options once had a second reader, Getenv, for PATH).
func TestPathReadWithLookupEnv(t *testing.T) {
	lookup := func(name string) (string, bool) {
		if name == "PATH" {
			return "/opt/vendor/bin", true
		}
		return "", false
	}
	assert.Equal(t, "/opt/vendor/bin", Options{LookupEnv: lookup}.withDefaults().Path)
	assert.Equal(t, "/given", Options{LookupEnv: lookup, Path: "/given"}.withDefaults().Path)
}

// With no reader given, the process environment is read with
// os.LookupEnv, which also tells "" from unset.
func TestLookupEnvDefaultsToOSLookupEnv(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	v, ok := Options{}.withDefaults().lookupEnv("CUDA_VISIBLE_DEVICES")
	assert.True(t, ok)
	assert.Equal(t, "", v)
}

// An empty CUDA_VISIBLE_DEVICES in the process environment hides the GPUs of
// a machine, as the CUDA runtime would.
func TestEmptyProcessVisibilityHidesGPUs(t *testing.T) {
	opts := fixtureOptions(t, "dgx-h100", nil)
	opts.Backends = []string{nvidia.BackendCUDA}
	opts.LookupEnv = func(name string) (string, bool) {
		if name == "CUDA_VISIBLE_DEVICES" {
			return "", true
		}
		return "", false
	}
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Empty(t, devicesOfKind(reg, registry.KindCUDA))
	assert.Contains(t, warningCodes(reg), nvidia.BackendCUDA+"/"+registry.WarnHiddenByEnv)
}
