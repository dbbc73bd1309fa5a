package detect

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api/wire"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia"
	"github.com/ai-hwaccel/ai-hwaccel/internal/plan"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// copyMachineWithout copies fixture machine name into a temporary
// directory, symlinks as links, leaving out the files named in drop
// (paths under the machine's directory): the same machine seen from a
// container that lacks them.
func copyMachineWithout(t *testing.T, name string, drop ...string) string {
	t.Helper()
	src := detecttest.MachineDir(t, name)
	dst := filepath.Join(t.TempDir(), name)
	skip := map[string]bool{}
	for _, d := range drop {
		skip[filepath.FromSlash(d)] = true
	}
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skip[rel] {
			return nil
		}
		out := filepath.Join(dst, rel)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case e.IsDir():
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, info.Mode().Perm())
	})
	require.NoError(t, err)
	return dst
}

// DGX Spark in a container without /proc/meminfo: nvidia-smi gives no
// memory and MemTotal is out of view, so the GB10's memory is the 128 GB
// its datasheet states (NVIDIA DGX Spark porting guide), marked as the
// datasheet's, instead of unknown (which made an 8B model "not fit").
func TestFixtureDGXSparkWithoutMeminfoUsesDatasheet(t *testing.T) {
	dir := copyMachineWithout(t, "dgx-spark-gb10", "root/proc/meminfo")
	opts := fixtureOptions(t, "dgx-spark-gb10", nil)
	opts.Sysroot, opts.Path = filepath.Join(dir, "root"), filepath.Join(dir, "bin")
	opts.Backends = hostBackends
	reg, err := Detect(context.Background(), opts)
	require.NoError(t, err)
	g := onlyGPU(t, reg)
	assert.Equal(t, "NVIDIA GB10", g.Name)
	assert.True(t, g.MemoryShared)
	assert.Equal(t, int64(128e9), g.MemoryBytes)
	assert.Equal(t, int64(128e9), g.MemoryUsableBytes)
	assert.Equal(t, nvidia.SourceUnifiedDatasheet, g.Sources["memory_bytes"])
	assert.Equal(t, nvidia.SourceUnifiedDatasheet, g.Sources["memory_usable_bytes"])
	req, _, err := wire.DecodeRequest([]byte(`{"model":{"name":"Llama-3.1-8B"}}`))
	require.NoError(t, err)
	req.Registry = reg
	ans, err := plan.PlanSharding(req)
	require.NoError(t, err)
	assert.True(t, ans.Fits, "an 8B model fits in 128 GB")

	require.Len(t, reg.Warnings, 1)
	assert.Equal(t, registry.WarnFallback, reg.Warnings[0].Code)
	assert.Contains(t, reg.Warnings[0].Message, "128000000000 bytes of system memory its datasheet states")
}
