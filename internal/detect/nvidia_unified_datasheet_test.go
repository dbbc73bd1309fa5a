package detect

import (
	"context"
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

// DGX Spark in a container without /proc/meminfo: nvidia-smi gives no
// memory and MemTotal is out of view, so the GB10's memory is the 128 GB
// its datasheet states (NVIDIA DGX Spark porting guide), marked as the
// datasheet's, instead of unknown (which made an 8B model "not fit").
func TestFixtureDGXSparkWithoutMeminfoUsesDatasheet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dgx-spark-gb10")
	detecttest.CopyTree(t, detecttest.MachineDir(t, "dgx-spark-gb10"), dir, "root/proc/meminfo")
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
	assert.True(t, ans.Fits.Yes(), "an 8B model fits in 128 GB")

	require.Len(t, reg.Warnings, 1)
	assert.Equal(t, registry.WarnFallback, reg.Warnings[0].Code)
	assert.Contains(t, reg.Warnings[0].Message, "128000000000 bytes of system memory its datasheet states")
}
