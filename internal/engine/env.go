package engine

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// visibleDevicesEnv is the environment that makes a process see exactly a
// plan's devices, numbered 0.. in placement order, which --main-gpu and
// --tensor-split use: CUDA (cudaEnv) and ROCm (rocmEnv). nil for other
// kinds and a multi-node plan.
func visibleDevicesEnv(p *Placement) map[string]string {
	if p.MultiNode {
		return nil
	}
	switch p.Kind {
	case registry.KindCUDA:
		return cudaEnv(p)
	case registry.KindROCm:
		return rocmEnv(p)
	}
	return nil
}

// cudaEnv: CUDA_VISIBLE_DEVICES lists the plan's GPUs (so a plan on
// cuda:2,3 does not start on 0,1) by their index in PCI bus order, the
// order nvidia-smi and this registry number them; CUDA_DEVICE_ORDER=PCI_BUS_ID
// makes CUDA number them the same way. CUDA's default, FASTEST_FIRST,
// orders devices "fastest to slowest using a simple heuristic" that is not
// specified, so the index of a mixed machine cannot be computed in it (CUDA
// C++ Programming Guide, "CUDA Environment Variables",
// https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars).
// A MIG slice has no plain index: it is named by its MIG UUID
// ("MIG-<UUID>" as nvidia-smi -L prints it, which the same page lists as a
// CUDA_VISIBLE_DEVICES identifier), and CUDA_DEVICE_ORDER, which orders
// indices, is then not needed. The planner never joins slices (each is a
// pool of its own, internal/plan/pools.go), so a MIG plan names one.
func cudaEnv(p *Placement) map[string]string {
	return cudaEnvOf(devicesOf(p, registry.KindCUDA))
}

// cudaEnvOf is cudaEnv's variables for the CUDA devices devs, in order.
func cudaEnvOf(devs []*registry.Device) map[string]string {
	var ids []string
	indexed := false
	for _, d := range devs {
		if d.MIG != nil && d.MIG.Parent != "" {
			if d.MIG.Instance == "" {
				return nil
			}
			ids = append(ids, d.MIG.Instance)
			continue
		}
		indexed = true
		ids = append(ids, strconv.Itoa(d.Index))
	}
	if len(ids) == 0 {
		return nil
	}
	env := map[string]string{"CUDA_VISIBLE_DEVICES": strings.Join(ids, ",")}
	if indexed {
		env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
	}
	return env
}

// rocmEnv: ROCR_VISIBLE_DEVICES lists the plan's GPUs by UUID. The ROCm
// runtime numbers GPUs in its own enumeration order (KFD topology nodes),
// which is neither PCI bus order nor this registry's, and ROCm has no
// variable like CUDA_DEVICE_ORDER; ROCR_VISIBLE_DEVICES takes "device
// indices or UUIDs" and is the one AMD recommends on Linux (ROCm
// environment variables, "GPU isolation variables",
// https://rocm.docs.amd.com/projects/HIP/en/latest/reference/env_variables.html;
// "GPU isolation techniques", example "GPU-DEADBEEFDEADBEEF",
// https://rocm.docs.amd.com/en/docs-6.1.2/conceptual/gpu-isolation.html).
// The UUID is "GPU-" and the 16 hex digits of the GPU's sysfs unique_id, as
// the runtime builds it (rocminfo "Uuid"). nil when a GPU has no unique_id
// (indices would have to be the runtime's, which the registry does not
// know) or is a compute partition (its parent's unique_id is not its own).
func rocmEnv(p *Placement) map[string]string {
	return rocmEnvOf(devicesOf(p, registry.KindROCm))
}

// rocmEnvOf is rocmEnv's variable for the ROCm devices devs, in order.
func rocmEnvOf(devs []*registry.Device) map[string]string {
	var ids []string
	for _, d := range devs {
		u, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(d.UUID), "0x"), 16, 64)
		if err != nil || d.Partition != nil && d.Partition.Parent != "" {
			return nil
		}
		ids = append(ids, fmt.Sprintf("GPU-%016x", u))
	}
	if len(ids) == 0 {
		return nil
	}
	return map[string]string{"ROCR_VISIBLE_DEVICES": strings.Join(ids, ",")}
}

// nodeVisibleDevices is, for a plan over the nodes of a cluster, each
// node's visibility variables for the plan's GPUs on it ("node0:
// CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=4,5,6,7; node1: ..."),
// which one environment cannot carry (visibleDevicesEnv gives none); ""
// when a node's GPUs cannot be named (cudaEnv, rocmEnv) or the plan is on
// one machine. Nodes in placement order, the devices of each as
// visibleDevicesEnv orders them.
func nodeVisibleDevices(p *Placement) string {
	if !p.MultiNode || (p.Kind != registry.KindCUDA && p.Kind != registry.KindROCm) {
		return ""
	}
	var nodes []string
	byNode := map[string][]*registry.Device{}
	seen := map[string]bool{}
	for _, r := range p.Units() {
		for _, s := range r {
			for _, d := range s.Devices {
				node, _, ok := strings.Cut(d.ID, "/")
				if !ok || d.Dev == nil || d.Dev.Kind != p.Kind || seen[d.ID] {
					continue
				}
				seen[d.ID] = true
				if _, ok := byNode[node]; !ok {
					nodes = append(nodes, node)
				}
				byNode[node] = append(byNode[node], d.Dev)
			}
		}
	}
	var out []string
	for _, n := range nodes {
		env := cudaEnvOf(byNode[n])
		if p.Kind == registry.KindROCm {
			env = rocmEnvOf(byNode[n])
		}
		if env == nil {
			return ""
		}
		out = append(out, n+": "+envWords(env))
	}
	return strings.Join(out, "; ")
}

// envWords writes variables as a shell prefix, CUDA_DEVICE_ORDER before
// the variable it orders, the others by name.
func envWords(env map[string]string) string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var w []string
	if v, ok := env["CUDA_DEVICE_ORDER"]; ok {
		w = append(w, "CUDA_DEVICE_ORDER="+v)
	}
	for _, k := range keys {
		if k != "CUDA_DEVICE_ORDER" {
			w = append(w, k+"="+env[k])
		}
	}
	return strings.Join(w, " ")
}

// devicesOf is the plan's devices of one kind in placement order (stage
// by stage, rank by rank), each once.
func devicesOf(p *Placement, kind registry.Kind) []*registry.Device {
	var out []*registry.Device
	seen := map[string]bool{}
	for _, r := range p.Units() {
		for _, s := range r {
			for _, d := range s.Devices {
				if d.Dev.Kind != kind || seen[d.ID] {
					continue
				}
				seen[d.ID] = true
				out = append(out, d.Dev)
			}
		}
	}
	return out
}

// gib formats bytes for notes: "71.3 GiB".
func gib(b int64) string {
	return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
}

// fmtFraction writes a fraction as the engines take it: 0.9, 0.95.
func fmtFraction(f float64) string {
	return fmt.Sprintf("%g", f)
}

// floorHundredth rounds a fraction down to a hundredth.
func floorHundredth(f float64) float64 {
	return math.Floor(f*100) / 100
}
