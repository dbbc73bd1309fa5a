package detect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/host"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestStorageFixtures(t *testing.T) {
	tests := []struct {
		machine string
		want    []registry.Storage
	}{
		{"qemu-q35-vm", []registry.Storage{{Name: "vda", Class: host.StorageVirtual, SizeBytes: 41943040 * 512}}},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			reg := detectFixture(t, tt.machine, nil)
			assert.Equal(t, tt.want, reg.SystemIO.Storage)
			assert.Empty(t, backendWarnings(reg, host.BackendStorage))
		})
	}
}

func TestStorageClasses(t *testing.T) {
	m := envMachine(t, map[string]string{
		"sys/block/sda/size": "3907029168\n", "sys/block/sda/queue/rotational": "1\n",
		"sys/block/sdb/size": "1000215216\n", "sys/block/sdb/queue/rotational": "0\n",
		"sys/block/sdc/size":  "0\n", // empty card reader: no size, no queue
		"sys/block/xvda/size": "16777216\n", "sys/block/xvda/queue/rotational": "1\n",
		"sys/block/nvme1n1/size": "3750748848\n", "sys/block/nvme1n1/queue/rotational": "0\n",
		"sys/block/nvme1c1n1/size": "3750748848\n",
		"sys/block/dm-0/size":      "100\n", "sys/block/md0/size": "100\n", "sys/block/zram0/size": "100\n",
		"sys/block/ram0/size": "100\n", "sys/block/sr0/size": "100\n", "sys/block/fd0/size": "100\n",
		"sys/block/loop7/size": "100\n",
	}, nil)
	f := host.DetectStorage(context.Background(), m)
	want := []registry.Storage{
		{Name: "nvme1n1", Class: host.StorageNVMe, SizeBytes: 3750748848 * 512},
		{Name: "sda", Class: host.StorageHDD, SizeBytes: 3907029168 * 512},
		{Name: "sdb", Class: host.StorageSSD, SizeBytes: 1000215216 * 512},
		{Name: "sdc", Class: host.StorageUnknown},
		{Name: "xvda", Class: host.StorageVirtual, SizeBytes: 16777216 * 512},
	}
	assert.Equal(t, want, f.Storage)
	for _, s := range f.Storage {
		assert.Zero(t, s.BandwidthGBs, "no per-class bandwidth constant")
	}
	assert.Empty(t, f.Warnings)
}

func TestStorageNoBlockDirIsEmpty(t *testing.T) {
	f := host.DetectStorage(context.Background(), envMachine(t, nil, nil))
	require.Empty(t, f.Storage)
	require.Empty(t, f.Warnings)
}
