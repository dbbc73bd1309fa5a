package nvmltest

import (
	"regexp"
	"strconv"
	"strings"
)

// Topology is what a fake machine's NVML answers about links, read from a
// captured `nvidia-smi topo -m`: the links of each GPU (index order) and the
// common ancestor of each pair.
type Topology struct {
	Links    [][]Link
	Ancestor [][]int
}

// TopoOptions say what `topo -m` does not: the GPUs' PCI bus ids (as NVML
// prints them), the NVSwitches' when the GPUs' links go to switches (nil:
// links go GPU to GPU), the links' nvmlNvlinkVersion_t, and the PCIe
// ancestor of a pair that `topo -m` shows as NV# (an nvmlGpuTopologyLevel_t).
type TopoOptions struct {
	Buses    []string
	Switches []string
	Version  int
	NVPCIe   func(a, b int) int
}

// topoLevels are the nvmlGpuTopologyLevel_t values of topo -m's legend.
var topoLevels = map[string]int{"PIX": 10, "PXB": 20, "PHB": 30, "NODE": 40, "SYS": 50}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TopoFrom reads the GPU rows of a `topo -m` capture into the links and
// ancestors NVML would answer with: a pair shown NV<n> gets n active links
// (with Switches, each GPU gets n links spread over the switches instead);
// another pair gets its cell's level. Rows are "GPU<i>" followed by one
// cell per GPU column (" X " on the diagonal), tab- or space-separated; the
// header line of column names is indented.
func TopoFrom(capture []byte, o TopoOptions) Topology {
	var rows [][]string
	for _, line := range strings.Split(ansi.ReplaceAllString(string(capture), ""), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && strings.HasPrefix(line, "GPU") { // the header is indented

			if _, err := strconv.Atoi(f[0][3:]); err == nil {
				rows = append(rows, f[1:])
			}
		}
	}
	n := len(rows)
	t := Topology{Links: make([][]Link, n), Ancestor: make([][]int, n)}
	for i := range rows {
		t.Ancestor[i] = make([]int, n)
		switchLinks := 0
		for j := 0; j < n && j < len(rows[i]); j++ {
			t.Ancestor[i][j] = -1
			cell := rows[i][j]
			if j == i {
				continue
			}
			if lvl, ok := topoLevels[cell]; ok {
				t.Ancestor[i][j] = lvl
				continue
			}
			k, err := strconv.Atoi(strings.TrimPrefix(cell, "NV"))
			if !strings.HasPrefix(cell, "NV") || err != nil {
				continue
			}
			t.Ancestor[i][j] = o.NVPCIe(i, j)
			if o.Switches != nil {
				switchLinks = k
				continue
			}
			for range k {
				t.Links[i] = append(t.Links[i], Link{Active: true, Version: o.Version, RemoteBus: o.Buses[j], RemoteType: 0})
			}
		}
		for l := range switchLinks {
			t.Links[i] = append(t.Links[i], Link{Active: true, Version: o.Version, RemoteBus: o.Switches[l%len(o.Switches)], RemoteType: 2})
		}
	}
	return t
}
