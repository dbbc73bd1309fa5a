package aws

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/strictjson"
)

// NeuronLSArgs is the one neuron-ls command line the neuron backend runs
// (aws-neuron-sdk neuron-ls.rst: `-j/--json-output`).
var NeuronLSArgs = []string{"--json-output"}

// maxNeuronDevices bounds one neuron-ls answer (a trn2.48xlarge has 16).
const maxNeuronDevices = 1024

// neuronLSDevice is one element of `neuron-ls --json-output` as in
// testdata/machines/trn1-2xlarge and aws-neuron-sdk neuron-ls.rst
// (https://github.com/aws-neuron/aws-neuron-sdk tools/neuron-sys-tools/neuron-ls.rst): numa_node is a string ("-1" = none), connected_to is
// null or an array of device indices, memory_size is in bytes. Fields are
// decoded loosely (json.RawMessage) so a number where a string was expected,
// or the reverse, costs one field and not the whole answer.
type neuronLSDevice struct {
	NeuronDevice json.RawMessage `json:"neuron_device"`
	BDF          string          `json:"bdf"`
	NUMANode     json.RawMessage `json:"numa_node"`
	ConnectedTo  json.RawMessage `json:"connected_to"`
	NCCount      json.RawMessage `json:"nc_count"`
	MemorySize   json.RawMessage `json:"memory_size"`
	InstanceType string          `json:"instance_type"`
}

// neuronDevice is a parsed neuron-ls device; -1 marks an unknown number.
type neuronDevice struct {
	Index        int
	BusID        string
	NUMANode     int // -1: none or unknown
	ConnectedTo  []int
	Cores        int   // -1: unknown
	MemoryBytes  int64 // -1: unknown
	InstanceType string
	Absurd       []machine.AbsurdValue // memory figures left out as absurd
}

// ParseNeuronLS parses `neuron-ls --json-output`. A document that is not a
// JSON array of objects is an error; per-device problems are returned as
// errors beside the devices that could be read.
func ParseNeuronLS(out []byte) ([]neuronDevice, []error, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("empty output")
	}
	var raw []neuronLSDevice
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, nil, fmt.Errorf("not a JSON array of devices: %s", strictjson.Describe(err))
	}
	if len(raw) > maxNeuronDevices {
		return nil, nil, fmt.Errorf("%d devices is more than the %d accepted", len(raw), maxNeuronDevices)
	}
	var devs []neuronDevice
	var errs []error
	seen := map[int]bool{}
	for i, r := range raw {
		d, err := r.parse()
		if err != nil {
			errs = append(errs, fmt.Errorf("device %d: %w", i, err))
			continue
		}
		if seen[d.Index] {
			errs = append(errs, fmt.Errorf("device %d: neuron_device %d repeated", i, d.Index))
			continue
		}
		seen[d.Index] = true
		devs = append(devs, d)
	}
	return devs, errs, nil
}

func (r neuronLSDevice) parse() (neuronDevice, error) {
	idx, ok := jsonInt(r.NeuronDevice)
	if !ok || idx < 0 || idx >= maxNeuronDevices {
		return neuronDevice{}, fmt.Errorf("bad or missing neuron_device %s", machine.ClipMsg(string(r.NeuronDevice), 40))
	}
	d := neuronDevice{Index: int(idx), NUMANode: -1, Cores: -1, MemoryBytes: -1,
		InstanceType: machine.CleanText(r.InstanceType)}
	if b := machine.CleanText(r.BDF); b != "" {
		d.BusID = machine.NormalizeBusID(b)
	}
	if n, ok := jsonInt(r.NUMANode); ok && n >= 0 && n < 1<<16 {
		d.NUMANode = int(n)
	}
	if n, ok := jsonInt(r.NCCount); ok && n > 0 && n <= 1024 {
		d.Cores = int(n)
	}
	if s, ok := jsonNumberText(r.MemorySize); ok {
		switch n, v := machine.ParseMemory(s, 1); {
		case v == machine.MemOK && n > 0:
			d.MemoryBytes = n
		case v == machine.MemAbsurd:
			d.Absurd = append(d.Absurd, machine.AbsurdValue{What: "neuron_device " + strconv.Itoa(d.Index) + " memory_size", Raw: s})
		}
	}
	var peers []json.RawMessage
	if len(r.ConnectedTo) > 0 && string(r.ConnectedTo) != "null" {
		if err := json.Unmarshal(r.ConnectedTo, &peers); err != nil {
			return neuronDevice{}, fmt.Errorf("connected_to is not an array: %s", machine.ClipMsg(string(r.ConnectedTo), 40))
		}
	}
	for _, p := range peers {
		if n, ok := jsonInt(p); ok && n >= 0 && n < maxNeuronDevices && int(n) != d.Index {
			d.ConnectedTo = append(d.ConnectedTo, int(n))
		}
	}
	return d, nil
}

// jsonNumberText returns the text of a JSON number, or of a string holding
// one, unquoted and trimmed; null and absent give false.
func jsonNumberText(raw json.RawMessage) (string, bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", false
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if json.Unmarshal(raw, &str) != nil {
			return "", false
		}
		s = strings.TrimSpace(str)
	}
	return s, true
}

// jsonInt reads an integer given as a JSON number or as a string holding
// one ("-1"); null, absent and anything else are not integers.
func jsonInt(raw json.RawMessage) (int64, bool) {
	s, ok := jsonNumberText(raw)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}
