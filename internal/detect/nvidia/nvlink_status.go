package nvidia

import (
	"context"
	"math"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// `nvidia-smi nvlink -s` (--status) prints, per GPU, the speed of each of
// its NVLinks, one direction, or "<inactive>":
//
//	GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-ff8a40d4-...)
//	         Link 0: 25 GB/s
//	         Link 3: <inactive>
//
// (captures: NVIDIA/nccl-tests issue 228, A100 SXM4, 12 links of 25 GB/s;
// Azure/azhpc-diagnostics issue 73, V100 with inactive links;
// NVIDIA/k8s-test-infra issue 371, GB200, 18 links of 53.125 GB/s). It does
// not say where a link goes; `topo -m` does, but fails on real nodes where
// `nvlink -s` still answers, so it is the fallback.

// nvlinkStatusArgs is the fallback run when `topo -m` fails.
var nvlinkStatusArgs = []string{"nvlink", "-s"}

// nvlinkGPU is one GPU of `nvlink -s`: its active links' speeds (GB/s, one
// direction) and how many links are inactive.
type nvlinkGPU struct {
	Index    int
	UUID     string
	Speeds   []float64
	Inactive int
}

// ParseNvlinkStatus parses `nvidia-smi nvlink -s`. Lines that are neither a
// GPU header nor a link line are skipped (a pasted "......").
func ParseNvlinkStatus(out []byte) []nvlinkGPU {
	var gpus []nvlinkGPU
	for _, line := range strings.Split(string(out), "\n") {
		t := strings.TrimSpace(line)
		if g, ok := parseNvidiaListGPU(t); ok {
			gpus = append(gpus, nvlinkGPU{Index: g.Index, UUID: g.UUID})
			continue
		}
		rest, ok := strings.CutPrefix(t, "Link ")
		if !ok || len(gpus) == 0 {
			continue
		}
		_, val, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		g := &gpus[len(gpus)-1]
		val = strings.TrimSpace(val)
		if strings.EqualFold(val, "<inactive>") {
			g.Inactive++
			continue
		}
		num, ok := strings.CutSuffix(val, " GB/s")
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(num), 64); err == nil && v > 0 && v < 1e4 {
			g.Speeds = append(g.Speeds, v)
		}
	}
	return gpus
}

// parseNvidiaListGPU reads a "GPU 0: <name> (UUID: GPU-...)" line, the
// header of `-L`, `nvlink -s` and `nvlink -R`.
func parseNvidiaListGPU(t string) (nvListGPU, bool) {
	rest, ok := strings.CutPrefix(t, "GPU ")
	if !ok {
		return nvListGPU{}, false
	}
	num, _, ok := strings.Cut(rest, ":")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return nvListGPU{}, false
	}
	uuid := ""
	if i := strings.LastIndex(t, "(UUID: "); i >= 0 && strings.HasSuffix(t, ")") {
		uuid = strings.TrimSpace(t[i+len("(UUID: ") : len(t)-1])
	}
	return nvListGPU{Index: n, UUID: uuid}, true
}

// nvlinkStatusInterconnects runs `nvlink -s` after `topo -m` failed and
// turns it into interconnects among the usable GPUs; ok is false when the
// run failed or listed no GPU of ours.
func nvlinkStatusInterconnects(ctx context.Context, m *machine.Machine, f *machine.Findings, devs []nvDevice, nvswitch bool) ([]registry.Interconnect, bool) {
	out, w, ok := m.Tool(ctx, BackendCUDA, ToolNvidiaSMI, nvlinkStatusArgs...)
	f.AddWarning(w)
	if !ok {
		return nil, false
	}
	return nvlinkFromStatus(ParseNvlinkStatus(out), devs, nvswitch)
}

// nvlinkFromStatus builds the interconnects `nvlink -s` supports. Every
// figure it gives is per link and direction, so an entry's bandwidth is
// twice the sum of a GPU's active links (the bidirectional convention of
// NVLink datasheets and of this registry), the least over its GPUs, and
// LinkBandwidthGBs the slowest active link. Where links go is not printed:
//   - with an NVSwitch in the fabric, the GPUs with active links form one
//     nvswitch domain (HGX/DGX baseboards cable every SXM GPU to the
//     switches);
//   - without one, two GPUs with active links can only be linked to each
//     other (an NVLink bridge); with more, the pairs are unknown and no
//     entry is made.
func nvlinkFromStatus(status []nvlinkGPU, devs []nvDevice, nvswitch bool) ([]registry.Interconnect, bool) {
	byIndex := map[int]nvlinkGPU{}
	for _, g := range status {
		byIndex[g.Index] = g
	}
	var linked []nvDevice
	var stats []nvlinkGPU
	seen := false
	for _, d := range devs {
		g, ok := byIndex[d.index]
		if d.slice || !d.dev.Available || !ok || (g.UUID != "" && d.dev.UUID != "" && g.UUID != d.dev.UUID) {
			continue
		}
		seen = true
		if len(g.Speeds) > 0 {
			linked = append(linked, d)
			stats = append(stats, g)
		}
	}
	if !seen {
		return nil, false
	}
	if len(linked) < 2 || (!nvswitch && len(linked) != 2) {
		return nil, true
	}
	kind := registry.LinkNVLink
	if nvswitch {
		kind = registry.LinkNVSwitch
	}
	ic := registry.Interconnect{Kind: kind, Source: "nvidia-smi nvlink -s"}
	ic.Links, ic.BandwidthGBs, ic.LinkBandwidthGBs = math.MaxInt, math.Inf(1), math.Inf(1)
	for i, d := range linked {
		ic.Devices = append(ic.Devices, d.dev.ID)
		var sum float64
		for _, s := range stats[i].Speeds {
			sum += s
			ic.LinkBandwidthGBs = math.Min(ic.LinkBandwidthGBs, s)
		}
		ic.Links = min(ic.Links, len(stats[i].Speeds))
		ic.BandwidthGBs = math.Min(ic.BandwidthGBs, math.Round(2*sum*1000)/1000)
	}
	return []registry.Interconnect{ic}, true
}
