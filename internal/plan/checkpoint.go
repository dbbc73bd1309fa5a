package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/quant"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Load is what an engine loads to run a plan: a Hugging Face repository
// (and, for llama.cpp, the GGUF file and type), from the catalog's
// published checkpoints (internal/model/catalog.json).
type Load struct {
	// Quant is the level of the weights loaded.
	Quant string `json:"quant"`
	// Repo is the Hugging Face repository id ("openai/gpt-oss-120b"); ""
	// when no checkpoint at this level is published.
	Repo string `json:"repo,omitempty"`
	// File is the GGUF file within Repo (llama.cpp).
	File string `json:"file,omitempty"`
	// GGUFType is the llama.cpp file type the level means ("Q4_K_M").
	GGUFType string `json:"gguf_type,omitempty"`
	// Method is the quantization method the checkpoint's config declares
	// (fp8, mxfp4, awq, gptq; gguf); "" for 16-bit weights.
	Method string `json:"method,omitempty"`
	Source string `json:"source,omitempty"`
}

// nativeLevels is what auto tries for a model whose native checkpoint is
// quantized (gpt-oss MXFP4, DeepSeek FP8, an AWQ repository named in the
// request): that format first, then the auto levels narrower than it. A
// 16-bit upcast of a quantized checkpoint holds no more information, so it
// is never preferred. nil when the native format is 16-bit or unknown.
func nativeLevels(m *model.Model) ([]quant.Level, string) {
	ck := m.NativeCheckpoint()
	if ck == nil {
		return nil, ""
	}
	native, err := quant.Parse(ck.Quant)
	if err != nil || native == quant.BF16 || native == quant.FP16 || native == quant.FP32 {
		return nil, ""
	}
	levels := []quant.Level{native}
	for _, l := range autoLevels {
		if width(l) < width(native) {
			levels = append(levels, l)
		}
	}
	why := fmt.Sprintf("auto: %s is published in %s (%s); auto plans that format first, then narrower levels (a 16-bit upcast holds no more information)",
		m.Name, native, ck.Repo)
	return levels, why
}

// width is the nominal bits of a level's values, scales aside: 4 for int4
// and mxfp4 (4.125 and 4.25 bits per weight), 8 for fp8 and int8. An int4
// requantization of an MXFP4 checkpoint is not narrower than it.
func width(l quant.Level) int { return int(l.BitsPerWeight()) }

// forLlamaCPP maps levels to what llama.cpp runs: int8 and int4 are GGUF
// Q8_0 and Q4_K_M there (quant.Level.LlamaCPPLevel), sized as those types.
// fp8, which llama.cpp has no type for, becomes Q8_0 in a list of several
// (its 8-bit type; llama.cpp's converter stores an FP8 checkpoint's weights
// as Q8_0 or wider); asked alone it stays, and is refused. A level met
// twice is kept once.
func forLlamaCPP(levels []quant.Level) ([]quant.Level, []string) {
	var out []quant.Level
	var notes []string
	seen := map[quant.Level]bool{}
	for _, l := range levels {
		ll := l.LlamaCPPLevel()
		if l.GGUFType() == "" && len(levels) > 1 {
			if slices.Contains(levels, quant.INT8) {
				continue // int8 brings Q8_0, with its own note
			}
			ll = quant.INT8.LlamaCPPLevel()
		}
		if seen[ll] {
			continue
		}
		seen[ll] = true
		out = append(out, ll)
		if ll == l {
			continue
		}
		t := ll.GGUFType()
		if l.GGUFType() == "" {
			notes = append(notes, fmt.Sprintf("llama.cpp has no %s weight type: %s is planned instead", l, t))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s for llama.cpp means the GGUF type %s (sized as that type: %.2f bits per weight on the reference model)", l, t, ll.BitsPerWeight()))
	}
	return out, notes
}

// checkpointFor is the published checkpoint of m that stores level l for
// an engine: a GGUF repository for llama.cpp, another for vLLM; the one the
// request named first. nil when none is published.
func checkpointFor(m *model.Model, l quant.Level, gguf bool) *model.Checkpoint {
	var found *model.Checkpoint
	for i := range m.Checkpoints {
		ck := &m.Checkpoints[i]
		if ck.IsGGUF() != gguf {
			continue
		}
		if cl, err := quant.Parse(ck.Quant); err != nil || cl != l {
			continue
		}
		if i == m.NamedCheckpoint {
			return ck
		}
		if found == nil {
			found = ck
		}
	}
	return found
}

// vllmLoad is what vLLM loads for a plan at level l, with a note when no
// checkpoint at that level is published. 16-bit levels load the 16-bit
// checkpoint (--dtype converts bf16 to fp16); fp8 without an FP8 release
// loads it too and quantizes on load (--quantization fp8); int8/int4 need
// a pre-quantized checkpoint, except int8 on TPU, which vLLM's tpu_int8
// applies on load to the 16-bit one (vllmQuantArgs).
func vllmLoad(m *model.Model, l quant.Level, k registry.Kind) (*Load, string) {
	ck := checkpointFor(m, l, false)
	onLoad := l == quant.FP16 || l == quant.FP32 || l == quant.FP8 || (l == quant.INT8 && k == registry.KindTPU)
	if ck == nil && onLoad {
		ck = checkpointFor(m, quant.BF16, false)
	}
	if ck != nil {
		return &Load{Quant: string(l), Repo: ck.Repo, Method: ck.Method, Source: ck.Source}, ""
	}
	if len(m.Checkpoints) == 0 {
		return nil, ""
	}
	name := m.Name
	switch {
	case l == quant.INT8 || l == quant.INT4:
		return nil, fmt.Sprintf("vLLM: no %s checkpoint of %s is published in the catalog; vLLM loads a pre-quantized one (AWQ, GPTQ, compressed-tensors) and reads the method from it", l, name)
	case l.IsGGUF():
		return nil, ""
	}
	return nil, fmt.Sprintf("vLLM: no %s checkpoint of %s is published in the catalog", l, name)
}

// llamaLoad is what llama.cpp loads: the GGUF type of the level, with the
// published GGUF repository and file when the catalog has one.
func llamaLoad(m *model.Model, l quant.Level) *Load {
	t := l.GGUFType()
	if t == "" {
		return nil
	}
	ld := &Load{Quant: string(l), GGUFType: t, Method: "gguf"}
	if ck := checkpointFor(m, l, true); ck != nil {
		ld.Repo, ld.File, ld.Source = ck.Repo, ck.File, ck.Source
	}
	return ld
}

// engineEnv is the environment an engine needs to run a plan on the
// plan's devices: CUDA (cudaEnv) and ROCm (rocmEnv). Inside the process the
// visible devices are numbered 0.. in the listed order, which --main-gpu
// and --tensor-split use. nil for other kinds, a multi-node plan, or a
// llama.cpp plan with replicas (one process each).
func engineEnv(pl *planned, engine string, cluster bool) map[string]string {
	if pl.Pool == nil || (cluster && multiNode(pl)) {
		return nil
	}
	if engine == engineLlamaCPP && pl.DP > 1 {
		return nil
	}
	switch pl.Pool.Kind {
	case registry.KindCUDA:
		return cudaEnv(pl)
	case registry.KindROCm:
		return rocmEnv(pl)
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
func cudaEnv(pl *planned) map[string]string {
	var idx []string
	for _, d := range planCUDADevices(pl) {
		idx = append(idx, strconv.Itoa(d.Index))
	}
	if len(idx) == 0 {
		return nil
	}
	return map[string]string{"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": strings.Join(idx, ",")}
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
func rocmEnv(pl *planned) map[string]string {
	var ids []string
	for _, d := range planDevices(pl, registry.KindROCm) {
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

// planCUDADevices is the plan's GPUs in placement order (stage by stage,
// rank by rank), each once. MIG instances have no plain index and make the
// list empty (CUDA_VISIBLE_DEVICES then takes their MIG UUID, which the
// detection environment already set).
func planCUDADevices(pl *planned) []registry.Device {
	out := planDevices(pl, registry.KindCUDA)
	for _, d := range out {
		if d.MIG != nil && d.MIG.Parent != "" {
			return nil
		}
	}
	return out
}

// planDevices is the plan's devices of one kind in placement order (stage
// by stage, rank by rank), each once.
func planDevices(pl *planned, kind registry.Kind) []registry.Device {
	var out []registry.Device
	seen := map[string]bool{}
	for _, r := range pl.replicas() {
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

// engineLoads is, for every engine the plan has arguments for, what it
// loads and the environment it runs in (engineEnv).
func engineLoads(pl *planned, req *planning, args map[string][]string, cluster bool) (map[string]Load, map[string]map[string]string) {
	loads := map[string]Load{}
	envs := map[string]map[string]string{}
	for e := range args {
		var ld *Load
		switch e {
		case engineVLLM:
			ld, _ = vllmLoad(req.Model, pl.Level, pl.Pool.Kind)
		case engineLlamaCPP:
			ld = llamaLoad(req.Model, pl.Level)
		}
		if ld != nil {
			loads[e] = *ld
		}
		if env := engineEnv(pl, e, cluster); env != nil {
			envs[e] = env
		}
	}
	return loads, envs
}
