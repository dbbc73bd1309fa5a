package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// LabelPrefix is the namespace of every label ai-hwaccel writes.
const LabelPrefix = "ai-hwaccel.io/"

// Labels maps a registry to Kubernetes node labels for Node Feature Discovery
// (docs/kubernetes.md lists and explains every key). Only available devices
// count. Memory is in MiB (2^20 bytes), like GPU Feature Discovery's
// nvidia.com/gpu.memory. A value that is unknown is left out, never guessed;
// a value that differs between the devices it summarises reads "mixed".
func Labels(reg *registry.Registry) map[string]string {
	l := map[string]string{}
	var accel []registry.Device
	byFamily := map[registry.Family][]registry.Device{}
	byKind := map[registry.Kind][]registry.Device{}
	for _, d := range reg.Devices {
		if !d.Available || d.Kind == registry.KindCPU {
			continue
		}
		accel = append(accel, d)
		byFamily[d.Kind.Family()] = append(byFamily[d.Kind.Family()], d)
		byKind[d.Kind] = append(byKind[d.Kind], d)
	}
	l["accelerator.present"] = strconv.FormatBool(len(accel) > 0)
	l["accelerator.count"] = strconv.Itoa(len(accel))
	for f, devs := range byFamily {
		groupLabels(l, familyLabel(f), devs)
	}
	for k, devs := range byKind {
		p := KindLabel(k)
		groupLabels(l, p, devs)
		if dv := uniform(devs, func(d registry.Device) string { return d.DriverVersion }); dv != "" {
			l[p+".driver"] = dv
		}
		if cc := uniform(devs, func(d registry.Device) string { return d.ComputeCapability }); cc != "" {
			l[p+".compute_capability"] = cc
		}
	}
	interconnectLabels(l, reg.SystemIO.Interconnects)
	if n := len(reg.SystemIO.NUMANodes); n > 0 {
		l["numa.count"] = strconv.Itoa(n)
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		if v = LabelValue(v); v != "" {
			out[LabelPrefix+k] = v
		}
	}
	return out
}

// familyLabel is the label word of a family: "gpu", "npu", "tpu", "ai_asic".
func familyLabel(f registry.Family) string { return string(f) }

// KindLabel is the label word of a kind: its device-id prefix ("cuda",
// "rocm", "tpu", "gaudi", "aws_neuron", ...), so labels and device ids agree.
func KindLabel(k registry.Kind) string { return k.IDPrefix() }

// groupLabels writes count, product, vendor, family (architecture or
// generation, as GPU Feature Discovery's gpu.family) and memory for a group
// of devices.
func groupLabels(l map[string]string, p string, devs []registry.Device) {
	l[p+".count"] = strconv.Itoa(len(devs))
	if v := uniform(devs, func(d registry.Device) string { return d.Architecture }); v != "" {
		l[p+".family"] = v
	}
	if v := uniform(devs, productName); v != "" {
		l[p+".product"] = productLabel(v)
	}
	if v := uniform(devs, func(d registry.Device) string { return d.Vendor }); v != "" {
		l[p+".vendor"] = v
	}
	if mib, shared, ok := minMemoryMiB(devs); ok {
		l[p+".memory"] = strconv.FormatInt(mib, 10)
		if shared {
			l[p+".memory.shared"] = "true"
		}
	}
}

// productName is the product a device is of: its name, less a compute
// partition's index ("AMD Instinct MI300X OAM (CPX partition 3)" ->
// "AMD Instinct MI300X OAM (CPX partition)"), so that identical partitions
// share one product, as identical MIG slices do, and a node of them is not
// "mixed".
func productName(d registry.Device) string {
	if p := d.Partition; p != nil && p.Parent != "" && p.Index != nil {
		if base, ok := strings.CutSuffix(d.Name, fmt.Sprintf(" partition %d)", *p.Index)); ok {
			return base + " partition)"
		}
	}
	return d.Name
}

// uniform returns the value every device shares, "mixed" when they differ,
// or "" when any device does not report it (unknown stays unknown).
func uniform(devs []registry.Device, get func(registry.Device) string) string {
	v := ""
	for i, d := range devs {
		x := get(d)
		if x == "" {
			return ""
		}
		if i == 0 {
			v = x
		} else if x != v {
			return "mixed"
		}
	}
	return v
}

// minMemoryMiB is the memory of the smallest device of the group in MiB: a
// pod selecting on "memory > N" must fit on whichever device it gets. For a
// device whose memory is host RAM (integrated GPU, unified memory) it is
// what the device can use of it (registry.Device.SharedUsableMemory), and
// shared says so; a group that mixes shared and dedicated memory, or has a
// device of unknown memory, has no figure.
func minMemoryMiB(devs []registry.Device) (mib int64, shared, ok bool) {
	var least int64
	for i, d := range devs {
		mem := d.MemoryBytes
		if d.MemoryShared {
			mem = d.SharedUsableMemory()
		}
		if mem <= 0 || (i > 0 && d.MemoryShared != shared) {
			return 0, false, false
		}
		shared = d.MemoryShared
		if i == 0 || mem < least {
			least = mem
		}
	}
	return least >> 20, shared, len(devs) > 0
}

// maxLabelValue is the longest label value Kubernetes accepts.
const maxLabelValue = 63

// productLabel is a product name as a label value that keeps the model
// number: a name longer than maxLabelValue loses the words it repeats
// (pci.ids spells AMD's Strix Halo "Strix Halo [Radeon Graphics / Radeon
// 8050S Graphics / Radeon 8060S Graphics]", which LabelValue would cut to
// "...-Radeon-806"), then whole words from the end, never part of one.
func productLabel(name string) string {
	all := strings.Fields(strings.Map(labelSpace, name))
	if len(strings.Join(all, "-")) <= maxLabelValue {
		return LabelValue(name)
	}
	seen := map[string]bool{}
	var words []string
	for _, w := range all {
		if !seen[strings.ToLower(w)] {
			seen[strings.ToLower(w)] = true
			words = append(words, w)
		}
	}
	v := strings.Join(words, "-")
	for len(v) > maxLabelValue && len(words) > 1 {
		words = words[:len(words)-1]
		v = strings.Join(words, "-")
	}
	return LabelValue(v)
}

// labelSpace turns the characters a label value cannot hold into spaces,
// so that the words of a name can be told apart.
func labelSpace(r rune) rune {
	if r < 0x80 && (r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
		return r
	}
	return ' '
}

// scaleUpRank orders the links between devices of one node, best first; the
// "interconnect" label names the best one present. Network fabrics
// (infiniband, roce, ethernet) leave the node and are labelled separately,
// except RoCE that lists devices: the ports of accelerators such as Gaudi 2/3
// wired to each other inside the node (docs/detection.md, gaudi), a scale-up
// link like NVLink.
var scaleUpRank = []string{registry.LinkNVSwitch, registry.LinkNVLink, registry.LinkXGMI,
	registry.LinkNeuronLink, registry.LinkICI, registry.LinkRoCE, registry.LinkPCIe}

func interconnectLabels(l map[string]string, ics []registry.Interconnect) {
	present := map[string]bool{}
	scaleUp := map[string]bool{}
	for _, ic := range ics {
		present[ic.Kind] = true
		if ic.Kind != registry.LinkRoCE || len(ic.Devices) > 0 {
			scaleUp[ic.Kind] = true
		}
	}
	for k := range present {
		l["interconnect."+k] = "true"
	}
	for _, k := range scaleUpRank {
		if scaleUp[k] {
			l["interconnect"] = k
			break
		}
	}
}

// LabelValue makes s a valid label value: characters outside [A-Za-z0-9_.-]
// become "-", runs of "-" collapse, the value is cut to 63 characters and
// must begin and end with an alphanumeric ("NVIDIA H100 80GB HBM3" ->
// "NVIDIA-H100-80GB-HBM3"). It returns "" when nothing valid is left.
func LabelValue(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r < 0x80 && (r == '_' || r == '.' || r == '-' ||
			('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'))
		if !ok || r == '-' {
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		dash = false
		b.WriteRune(r)
	}
	v := trimNonAlnum(b.String())
	if len(v) > maxLabelValue {
		v = trimNonAlnum(v[:maxLabelValue])
	}
	return v
}

func trimNonAlnum(s string) string {
	isAlnum := func(r rune) bool {
		return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
	}
	return strings.TrimFunc(s, func(r rune) bool { return !isAlnum(r) })
}

// FeatureFile renders labels as an NFD local-source feature file: one
// "key=value" per line, sorted by key, after a comment header. A non-zero
// expiry adds NFD's "# +expiry-time=" directive so labels lapse when the
// writer stops refreshing them.
func FeatureFile(labels map[string]string, expiry time.Time) []byte {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteString("# Written by ai-hwaccel nfd; see docs/kubernetes.md.\n")
	if !expiry.IsZero() {
		fmt.Fprintf(&b, "# +expiry-time=%s\n", expiry.UTC().Format(time.RFC3339))
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, labels[k])
	}
	return b.Bytes()
}

// WriteFileAtomic writes data to path by writing a dot-file in the same
// directory and renaming it over path: NFD ignores dot-files and a rename
// within a directory is atomic, so nfd-worker never reads a half-written
// file.
func WriteFileAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(name, path)
}
