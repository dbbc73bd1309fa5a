package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The path classes of nvidia-smi topo -m's legend, from ancestor chains.
func TestPCIPathClasses(t *testing.T) {
	node := func(n int) *int { return &n }
	gpu := pciChain{"pci0000:d7", []string{"0000:d7:00.0", "0000:d8:00.0", "0000:d9:00.0"}}
	tests := []struct {
		name       string
		nic        pciChain
		numaA, nmB *int
		want       string
	}{
		// hgx-h100-nccl-topo-no-tools: GPU and NIC under one switch port.
		{"same switch", pciChain{"pci0000:d7", []string{"0000:d7:00.0", "0000:d8:00.0", "0000:da:00.0"}}, nil, nil, "PIX"},
		{"switch downstream ports", pciChain{"pci0000:d7", []string{"0000:d7:00.0", "0000:d8:01.0", "0000:db:00.0"}}, nil, nil, "PIX"},
		{"two switch levels", pciChain{"pci0000:d7", []string{"0000:d7:00.0", "0000:d8:01.0", "0000:e0:00.0", "0000:e1:00.0", "0000:e2:00.0"}}, nil, nil, "PXB"},
		{"root complex only", pciChain{"pci0000:d7", []string{"0000:d7:01.0", "0000:dc:00.0"}}, nil, nil, "PHB"},
		{"same NUMA node", pciChain{"pci0000:b7", []string{"0000:b7:00.0", "0000:b8:00.0"}}, node(1), node(1), "NODE"},
		{"other NUMA node", pciChain{"pci0000:17", []string{"0000:17:00.0", "0000:18:00.0"}}, node(1), node(0), ""},
		{"NUMA unknown", pciChain{"pci0000:17", []string{"0000:17:00.0", "0000:18:00.0"}}, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pciPath(gpu, tt.nic, tt.numaA, tt.nmB))
		})
	}
}
