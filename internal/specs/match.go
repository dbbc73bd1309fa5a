package specs

import (
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Matching rules (a device is matched to at most one record):
//
//  1. PCI id: an exact "vvvv:dddd" (lower-case hex) from pciIDs. The ids are
//     those listed in shared/formats.md ("Generic PCI", hl-smi, neuron-ls,
//     Google TPU sections) with the record they name.
//  2. Name: the printed name is normalised (lower case; "(R)", "(TM)"
//     dropped; every character outside [a-z0-9] is a separator; vendor and
//     brand words and form-factor words in noiseWords are dropped) and the
//     remaining set of words must EQUAL the word set of one alias. Set
//     equality, not substring: "NVIDIA GeForce RTX 4080 SUPER" is not an
//     "RTX 4080", "NVIDIA L40S" is not an "L40", "NVIDIA H100 NVL" is not an
//     H100 SXM5.
//  3. Memory check (ForDevice only): when the record gives the part's memory
//     (not a maximum) and the device reports its total memory, a device whose
//     memory is outside [0.85, 1.15] x the record's is a different SKU sold
//     under the same name (RTX 3060 8 GB, Arc A770 8 GB) and is not matched.
//
// Names that are ambiguous by themselves are left out on purpose: "Apple M3
// Max" and "Apple M4 Max" (two bins with different bandwidth), "TPU v2/v3"
// PCI id 1ae0:0027 (shared by two generations).

// noiseWords carry no identity: vendor and brand names, "graphics", and the
// OAM form factor (MI300X and MI250X come only as OAM).
var noiseWords = map[string]bool{
	"nvidia": true, "geforce": true, "tesla": true, "amd": true, "ati": true,
	"radeon": true, "instinct": true, "intel": true, "habana": true,
	"google": true, "cloud": true, "tpu": true, "apple": true, "aws": true,
	"amazon": true, "qualcomm": true, "corporation": true, "inc": true,
	"graphics": true, "oam": true, "r": true, "tm": true, "labs": true,
}

// aliases lists, per record name, the names tools print for it. The record
// name itself is always an alias too.
var aliases = map[string][]string{
	// nvidia-smi -L prints "NVIDIA H100 80GB HBM3" for the SXM5 part
	// (formats.md, nvidia-smi real samples); the PCIe card is "NVIDIA H100 PCIe".
	"NVIDIA H100 SXM5 80GB": {"NVIDIA H100 80GB HBM3", "H100 SXM5", "H100 SXM", "H100 SXM 80GB", "H100-SXM5-80GB"},
	"NVIDIA H100 PCIe 80GB": {"NVIDIA H100 PCIe", "H100 80GB PCIe", "H100-PCIE-80GB"},
	"NVIDIA H200 SXM 141GB": {"NVIDIA H200", "H200 SXM", "H200 141GB HBM3e"},
	"NVIDIA A100 SXM4 40GB": {"NVIDIA A100-SXM4-40GB"},
	"NVIDIA A100 SXM4 80GB": {"NVIDIA A100-SXM4-80GB"},
	"NVIDIA A100 PCIe 80GB": {"NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-80GB"},
	"NVIDIA L40S":           {"NVIDIA L40S"},
	"NVIDIA L40":            {"NVIDIA L40"},
	"NVIDIA L4":             {"NVIDIA L4"},
	"NVIDIA A10":            {"NVIDIA A10"},
	"NVIDIA A10G (AWS G5)":  {"NVIDIA A10G"},
	"NVIDIA T4":             {"Tesla T4", "NVIDIA T4"},
	"NVIDIA Tesla V100 SXM2 (16GB launch; 32GB variant exists)": {"Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB", "Tesla V100 SXM2"},
	"NVIDIA A40":                     {"NVIDIA A40"},
	"NVIDIA GeForce RTX 3090":        {"NVIDIA GeForce RTX 3090"},
	"NVIDIA GeForce RTX 4090":        {"NVIDIA GeForce RTX 4090"},
	"NVIDIA GeForce RTX 4080 (16GB)": {"NVIDIA GeForce RTX 4080"},
	"NVIDIA GeForce RTX 3060 (12GB)": {"NVIDIA GeForce RTX 3060"},
	// Hand-kept records (datasheets_extra.go), by the names nvidia-smi
	// prints: "NVIDIA RTX A6000", "NVIDIA RTX 6000 Ada Generation" (the
	// Quadro RTX 6000 of 2018 keeps its "Quadro" word and does not match).
	// The 10 GB and 12 GB RTX 3080 share a name; the memory check (rule 3)
	// keeps the 12 GB card off the 10 GB record.
	"NVIDIA RTX A6000":               {"NVIDIA RTX A6000", "RTX A6000"},
	"NVIDIA RTX 6000 Ada Generation": {"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"},
	"NVIDIA GeForce RTX 3080 (10GB)": {"NVIDIA GeForce RTX 3080"},
	"NVIDIA GeForce RTX 4070 Ti":     {"NVIDIA GeForce RTX 4070 Ti"},
	"NVIDIA GeForce RTX 5090":        {"NVIDIA GeForce RTX 5090"},
	// rocm-smi --showproductname prints "AMD Instinct MI300X OAM" (formats.md).
	"AMD Instinct MI300X":    {"AMD Instinct MI300X OAM", "MI300X"},
	"AMD Instinct MI250X":    {"AMD Instinct MI250X"},
	"AMD Instinct MI250":     {"AMD Instinct MI250"},
	"AMD Instinct MI210":     {"AMD Instinct MI210"},
	"AMD Radeon RX 7900 XTX": {"Radeon RX 7900 XTX"},
	// hl-smi -q prints "Product Name : HL-225" for Gaudi 2 (formats.md).
	"Intel Gaudi2 (HL-225)": {"HL-225", "Gaudi2", "Gaudi 2"},
	"Intel Gaudi3":          {"Gaudi3", "Gaudi 3"},
	"Intel Data Center GPU Max 1550 (Ponte Vecchio)": {"Intel Data Center GPU Max 1550", "Max 1550"},
	"Intel Arc A770 16GB":                            {"Intel Arc A770", "Intel Arc A770 Graphics"},
	// TPU generations as Cloud TPU names them (accelerator types v4, v5e /
	// v5litepod, v5p, v6e / Trillium).
	"Google TPU v3 (per chip)":           {"TPU v3"},
	"Google TPU v4 (per chip)":           {"TPU v4"},
	"Google TPU v5e (per chip)":          {"TPU v5e", "TPU v5 lite", "TPU v5litepod", "v5litepod"},
	"Google TPU v5p (per chip)":          {"TPU v5p"},
	"Google TPU v6e Trillium (per chip)": {"TPU v6e", "TPU v6 lite", "Trillium", "TPU Trillium"},
	"AWS Inferentia (Inf1, per chip)":    {"Inferentia", "Inferentia1", "Inf1"},
	"AWS Inferentia2 (per chip)":         {"Inferentia2", "Inf2"},
	"AWS Trainium (Trn1, per chip)":      {"Trainium", "Trainium1", "Trn1"},
	"AWS Trainium2 (per chip)":           {"Trainium2", "Trn2"},
	"AWS Trainium3 (per chip)":           {"Trainium3", "Trn3"},
	"Qualcomm Cloud AI 100 (AIC100)":     {"Qualcomm Cloud AI 100", "AIC100"},
	"Apple M1":                           {"Apple M1"},
	"Apple M1 Pro":                       {"Apple M1 Pro"},
	"Apple M1 Max":                       {"Apple M1 Max"},
	"Apple M1 Ultra":                     {"Apple M1 Ultra"},
	"Apple M2":                           {"Apple M2"},
	"Apple M2 Pro":                       {"Apple M2 Pro"},
	"Apple M2 Max":                       {"Apple M2 Max"},
	"Apple M2 Ultra":                     {"Apple M2 Ultra"},
	"Apple M3":                           {"Apple M3"},
	"Apple M3 Pro":                       {"Apple M3 Pro"},
	"Apple M3 Ultra":                     {"Apple M3 Ultra"},
	"Apple M4":                           {"Apple M4"},
	"Apple M4 Pro":                       {"Apple M4 Pro"},
}

// ambiguous record names are never matched by their own name (see above).
var ambiguous = map[string]bool{
	"Apple M3 Max (14-core CPU / 30-core GPU)":  true,
	"Apple M3 Max (16-core CPU / 40-core GPU)":  true,
	"Apple M4 Max (lower-end bin)":              true,
	"Apple M4 Max (top bin, up to 40-core GPU)": true,
}

// pciIDs maps vendor:device ids to record names. Sources: formats.md
// "Generic PCI / DRM / accel sysfs" (NVIDIA, AMD ids), "hl-smi" (1da3:1020
// Gaudi 2), "Google TPU" (tpu_info device.py ids), "neuron-ls"
// (aws-neuron-driver neuron_pci.c ids).
var pciIDs = map[string]string{
	"10de:2330": "NVIDIA H100 SXM5 80GB",
	"10de:2235": "NVIDIA A40",
	"10de:2684": "NVIDIA GeForce RTX 4090",
	"10de:2204": "NVIDIA GeForce RTX 3090",
	"10de:2504": "NVIDIA GeForce RTX 3060 (12GB)",
	"10de:20b5": "NVIDIA A100 PCIe 80GB",
	"1002:74a1": "AMD Instinct MI300X",
	"1da3:1020": "Intel Gaudi2 (HL-225)",
	"1ae0:005e": "Google TPU v4 (per chip)",
	"1ae0:0063": "Google TPU v5e (per chip)",
	"1ae0:0062": "Google TPU v5p (per chip)",
	"1ae0:006f": "Google TPU v6e Trillium (per chip)",
	"1d0f:7064": "AWS Inferentia (Inf1, per chip)",
	"1d0f:7065": "AWS Inferentia (Inf1, per chip)",
	"1d0f:7066": "AWS Inferentia (Inf1, per chip)",
	"1d0f:7067": "AWS Inferentia (Inf1, per chip)",
	"1d0f:7164": "AWS Trainium (Trn1, per chip)",
	"1d0f:7264": "AWS Inferentia2 (per chip)",
	"1d0f:7364": "AWS Trainium2 (per chip)",
}

// noMemoryCheck lists records whose name covers several memory sizes with the
// same bandwidth and compute (V100 SXM2 16 and 32 GB).
var noMemoryCheck = map[string]bool{
	"NVIDIA Tesla V100 SXM2 (16GB launch; 32GB variant exists)": true,
}

// byWords maps a normalised word set to a record index; built once.
var byWords = buildIndex()

func buildIndex() map[string]int {
	idx := map[string]int{}
	add := func(alias string, i int) {
		k := Normalize(alias)
		if k == "" {
			return
		}
		if j, ok := idx[k]; ok && j != i {
			panic("specs: alias " + alias + " names two records")
		}
		idx[k] = i
	}
	for i, s := range table {
		if ambiguous[s.Name] {
			continue
		}
		add(s.Name, i)
		for _, a := range aliases[s.Name] {
			add(a, i)
		}
	}
	return idx
}

// Normalize returns the matching key of a printed name: its identity words,
// sorted and joined by single spaces ("NVIDIA H100 80GB HBM3" → "80gb h100
// hbm3").
func Normalize(name string) string {
	s := strings.ToLower(name)
	s = strings.NewReplacer("(r)", " ", "(tm)", " ", "®", " ", "™", " ").Replace(s)
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var kept []string
	seen := map[string]bool{}
	for _, w := range words {
		if noiseWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		kept = append(kept, w)
	}
	sort.Strings(kept)
	return strings.Join(kept, " ")
}

// Lookup finds the record for a printed device name (rule 2).
func Lookup(name string) (Spec, bool) {
	i, ok := byWords[Normalize(name)]
	if !ok {
		return Spec{}, false
	}
	return table[i], true
}

// LookupPCIID finds the record for a "vvvv:dddd" PCI id (rule 1).
func LookupPCIID(id string) (Spec, bool) {
	name, ok := pciIDs[strings.ToLower(strings.TrimSpace(id))]
	if !ok {
		return Spec{}, false
	}
	return ByName(name)
}

// ForDevice finds the record for a detected device: by PCI id, else by name,
// and rejects a match whose memory size says it is another SKU (rule 3).
func ForDevice(d *registry.Device) (Spec, bool) {
	s, ok := LookupPCIID(d.PCIID)
	if !ok {
		s, ok = Lookup(d.Name)
	}
	if !ok {
		return Spec{}, false
	}
	if !memoryAgrees(s, d.MemoryBytes) {
		return Spec{}, false
	}
	return s, true
}

func memoryAgrees(s Spec, deviceBytes int64) bool {
	if deviceBytes <= 0 || s.MemoryBytes <= 0 || s.MemoryIsMaximum || noMemoryCheck[s.Name] {
		return true
	}
	r := float64(deviceBytes) / float64(s.MemoryBytes)
	return r >= 0.85 && r <= 1.15
}
