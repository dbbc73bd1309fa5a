package detect

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// fixtureOptions returns detection options for a fixture machine: its root/
// tree as sysroot and its bin/ as the only PATH entry (an absent bin/ means
// no tool at all). env replaces the process environment entirely, so the
// developer's own CUDA_VISIBLE_DEVICES never leaks into a test.
func fixtureOptions(t testing.TB, name string, env map[string]string) Options {
	dir := detecttest.MachineDir(t, name)
	return Options{
		Sysroot:   filepath.Join(dir, "root"),
		Path:      filepath.Join(dir, "bin"),
		Timeout:   5 * time.Second,
		Env:       env,
		LookupEnv: func(string) (string, bool) { return "", false },
	}
}

// detectFixture runs a full detection on a fixture machine.
func detectFixture(t testing.TB, name string, env map[string]string) *registry.Registry {
	t.Helper()
	reg, err := Detect(context.Background(), fixtureOptions(t, name, env))
	require.NoError(t, err)
	return reg
}

// devicesOfKind returns the devices of one kind, in registry order.
func devicesOfKind(reg *registry.Registry, k registry.Kind) []registry.Device {
	var out []registry.Device
	for _, d := range reg.Devices {
		if d.Kind == k {
			out = append(out, d)
		}
	}
	return out
}

// warningCodes returns "backend/code" for every warning, to assert on.
func warningCodes(reg *registry.Registry) []string {
	out := make([]string, 0, len(reg.Warnings))
	for _, w := range reg.Warnings {
		out = append(out, w.Backend+"/"+w.Code)
	}
	return out
}
