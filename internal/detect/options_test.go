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
// "set and empty" must not read as "unset": LookupEnv tells them apart where
// Getenv cannot.
func TestLookupEnvTellsEmptyFromUnset(t *testing.T) {
	procEnv := map[string]string{"CUDA_VISIBLE_DEVICES": ""}
	lookup := func(name string) (string, bool) { v, ok := procEnv[name]; return v, ok }
	getenv := func(name string) string { return procEnv[name] }

	for _, tc := range []struct {
		name    string
		opts    Options
		varName string
		want    string
		wantOK  bool
	}{
		{"LookupEnv: set and empty", Options{LookupEnv: lookup, Getenv: getenv}, "CUDA_VISIBLE_DEVICES", "", true},
		{"LookupEnv: unset", Options{LookupEnv: lookup, Getenv: getenv}, "HIP_VISIBLE_DEVICES", "", false},
		{"env option wins over LookupEnv", Options{Env: map[string]string{"CUDA_VISIBLE_DEVICES": "1"}, LookupEnv: lookup},
			"CUDA_VISIBLE_DEVICES", "1", true},
		{"Getenv only: empty reads as unset", Options{Getenv: getenv}, "CUDA_VISIBLE_DEVICES", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := tc.opts.withDefaults().lookupEnv(tc.varName)
			assert.Equal(t, tc.want, v)
			assert.Equal(t, tc.wantOK, ok)
		})
	}
}

// With neither hook given, the process environment is read with
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
