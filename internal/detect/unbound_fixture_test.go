package detect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// An Intel Arc Pro B70 that the loaded xe does not claim is listed, named
// from its PCI id, and not available, with the reason
// (testdata/machines/zimaos-arc-pro-b70-unbound/README.md).
func TestIntelGPUFixtureUnboundIsListedUnavailable(t *testing.T) {
	reg := detectFixture(t, "zimaos-arc-pro-b70-unbound", nil)
	gpus := devicesOfKind(reg, registry.KindIntelGPU)
	require.Len(t, gpus, 1)
	g := gpus[0]
	assert.Equal(t, "0000:03:00.0", g.PCIBusID)
	assert.Equal(t, "Intel Arc Pro B70", g.Name)
	assert.Equal(t, "part table", g.Sources["name"])
	assert.False(t, g.Available)
	assert.Equal(t, "no kernel driver bound", g.UnavailableReason)
	assert.NotEmpty(t, g.Quantizations)
	assert.Empty(t, reg.Accelerators(), "an unbound GPU is no planning target")
}
