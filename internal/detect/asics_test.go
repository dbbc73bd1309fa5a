package detect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/asic"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// fakePCI is one PCI function of a machine built by a test, laid out like
// real sysfs (see writePCIFunction).
type fakePCI struct {
	Addr           string // "0000:3b:00.0"
	Vendor, Device int
	Driver         string
	NUMA           int
	Accel          int // accel node index, -1 for none
	DevNode        bool
}

// writePCIFunction lays out one function: sys/devices/pci0000:BB/<addr>
// with vendor/device/numa_node, the sys/bus/pci/devices link, the driver link
// and, when asked, sys/class/accel/accelN plus /dev/accel/accelN.
func writePCIFunction(t *testing.T, root string, p fakePCI) {
	t.Helper()
	bus := strings.Split(p.Addr, ":")[1]
	rel := filepath.Join("devices", "pci0000:"+bus, p.Addr)
	dev := filepath.Join(root, "sys", rel)
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
		require.NoError(t, os.WriteFile(name, []byte(text), 0o644))
	}
	link := func(name, target string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
		require.NoError(t, os.Symlink(target, name))
	}
	write(filepath.Join(dev, "vendor"), fmt.Sprintf("0x%04x\n", p.Vendor))
	write(filepath.Join(dev, "device"), fmt.Sprintf("0x%04x\n", p.Device))
	write(filepath.Join(dev, "numa_node"), fmt.Sprintf("%d\n", p.NUMA))
	link(filepath.Join(root, "sys", "bus", "pci", "devices", p.Addr), filepath.Join("..", "..", "..", rel))
	if p.Driver != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "sys", "bus", "pci", "drivers", p.Driver), 0o755))
		link(filepath.Join(dev, "driver"), "../../../bus/pci/drivers/"+p.Driver)
	}
	if p.Accel >= 0 {
		node := fmt.Sprintf("accel%d", p.Accel)
		link(filepath.Join(dev, "accel", node, "device"), "../../../"+p.Addr)
		link(filepath.Join(root, "sys", "class", "accel", node), filepath.Join("..", "..", rel, "accel", node))
		if p.DevNode {
			write(filepath.Join(root, "dev", "accel", node), "")
		}
	}
}

// sysfsMachine builds a machine of the given PCI functions (no tools).
func sysfsMachine(t *testing.T, fns ...fakePCI) *machine.Machine {
	t.Helper()
	root := t.TempDir()
	for _, p := range fns {
		writePCIFunction(t, root, p)
	}
	m, err := NewMachine(Options{Sysroot: root, NoExec: true})
	require.NoError(t, err)
	return m
}

func warnCodes(ws []registry.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Code)
	}
	return out
}

func TestQualcommCountsEveryCard(t *testing.T) {
	m := sysfsMachine(t,
		fakePCI{Addr: "0000:3b:00.0", Vendor: asic.VendorQualcomm, Device: 0xa100, Driver: "qaic", NUMA: 0, Accel: 0, DevNode: true},
		fakePCI{Addr: "0000:5e:00.0", Vendor: asic.VendorQualcomm, Device: 0xa100, Driver: "qaic", NUMA: 0, Accel: 1, DevNode: true},
		fakePCI{Addr: "0000:af:00.0", Vendor: asic.VendorQualcomm, Device: 0xa080, Driver: "qaic", NUMA: 1, Accel: 2, DevNode: true},
		// Not bound: listed but unusable.
		fakePCI{Addr: "0000:d8:00.0", Vendor: asic.VendorQualcomm, Device: 0xa100, NUMA: 1, Accel: -1},
		// A Qualcomm Wi-Fi chip is not an AI card.
		fakePCI{Addr: "0000:02:00.0", Vendor: asic.VendorQualcomm, Device: 0x1103, Driver: "ath11k_pci", Accel: -1},
	)
	f := asic.DetectQualcomm(context.Background(), m)
	require.Len(t, f.Devices, 4)
	names := []string{"Qualcomm Cloud AI 100", "Qualcomm Cloud AI 100", "Qualcomm Cloud AI 080", "Qualcomm Cloud AI 100"}
	for i, d := range f.Devices {
		assert.Equal(t, registry.KindQualcommAI100, d.Kind)
		assert.Equal(t, "qualcomm", d.Vendor)
		assert.Equal(t, names[i], d.Name)
		assert.Zero(t, d.MemoryBytes, "no per-SKU memory figure is sourced")
		assert.Equal(t, i < 3, d.Available, "card %d", i)
		require.NotNil(t, d.NUMANode)
	}
	assert.Equal(t, "0000:af:00.0", f.Devices[2].PCIBusID)
	assert.Equal(t, 1, *f.Devices[2].NUMANode)
	assert.Equal(t, []string{registry.WarnDeviceUnusable}, warnCodes(f.Warnings))
}

func TestQualcommNoneIsNothing(t *testing.T) {
	f := asic.DetectQualcomm(context.Background(), sysfsMachine(t))
	assert.Empty(t, f.Devices)
	assert.Empty(t, f.Warnings)
}

func TestASICGraphcoreAndGroqByPCIID(t *testing.T) {
	m := sysfsMachine(t,
		fakePCI{Addr: "0000:17:00.0", Vendor: asic.VendorGraphcore, Device: 0x0001, Driver: "ipu", Accel: -1},
		fakePCI{Addr: "0000:18:00.0", Vendor: asic.VendorGraphcore, Device: 0x0001, Driver: "ipu", Accel: -1},
		fakePCI{Addr: "0000:19:00.0", Vendor: asic.VendorGraphcore, Device: 0x00a0, Driver: "ipu", Accel: -1},
		fakePCI{Addr: "0000:3d:00.0", Vendor: asic.VendorGroq, Device: 0x0000, Driver: "groq", NUMA: 0, Accel: -1},
		fakePCI{Addr: "0000:3e:00.0", Vendor: asic.VendorGroq, Device: 0x0000, NUMA: 0, Accel: -1},
	)
	f := asic.DetectASICs(context.Background(), m)
	require.Len(t, f.Devices, 5, "one device per PCI function, never a constant one")
	gc := f.Devices[:3]
	for _, d := range gc {
		assert.Equal(t, registry.KindGraphcore, d.Kind)
		assert.Equal(t, "graphcore", d.Vendor)
		assert.True(t, d.Available)
		assert.Zero(t, d.MemoryBytes)
	}
	assert.Equal(t, "Graphcore Colossus GC2 (C2)", gc[0].Name)
	assert.Equal(t, "colossus_gc2", gc[0].Architecture)
	assert.Equal(t, "Graphcore IPU (device 00a0)", gc[2].Name)
	assert.Empty(t, gc[2].Architecture)

	groq := f.Devices[3:]
	for _, d := range groq {
		assert.Equal(t, registry.KindGroq, d.Kind)
		assert.Equal(t, "Groq GroqChip (TSP)", d.Name)
		assert.Equal(t, []string{"fp16", "int8"}, d.Quantizations)
	}
	assert.True(t, groq[0].Available)
	assert.False(t, groq[1].Available, "no driver bound")
	assert.Equal(t, []string{registry.WarnGuess, registry.WarnDeviceUnusable}, warnCodes(f.Warnings))
}

func TestASICNothingOnOtherMachines(t *testing.T) {
	for _, name := range []string{"gaudi2-8", "tpu-v5e", "qemu-q35-vm"} {
		reg := detectFixture(t, name, nil)
		for _, k := range []registry.Kind{registry.KindGraphcore, registry.KindGroq, registry.KindQualcommAI100} {
			assert.Empty(t, devicesOfKind(reg, k), "%s: %s", name, k)
		}
		assert.Empty(t, backendWarnings(reg, asic.BackendASIC), name)
		assert.Empty(t, backendWarnings(reg, asic.BackendQualcomm), name)
	}
}
