package amd

import (
	"path"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// readAMDTelemetry fills the live readings amdgpu exposes in sysfs
// (https://docs.kernel.org/gpu/amdgpu/thermal.html): gpu_busy_percent
// (percent) in the device directory, and in its hwmon directory
// power1_average (average power, µW; power1_input, the instantaneous
// power, where the SMU gives no average), power1_cap (the power cap, µW)
// and temp1_input (the "edge" die sensor, m°C). A missing or unreadable
// attribute is no reading; a value outside the registry's bounds is
// absurd_value and left out.
func readAMDTelemetry(m *machine.Machine, f *machine.Findings, dir string, d *registry.Device) {
	var t registry.Telemetry
	read := func(dst **float64, file, what string, scale, lo, hi float64) bool {
		v, err := m.ReadInt(file)
		if err != nil {
			return false
		}
		x := float64(v) / scale
		if x < lo || x > hi {
			f.Warnings = append(f.Warnings, registry.Warning{Backend: BackendROCm, Code: registry.WarnAbsurdValue,
				Path: "/" + file, Message: d.PCIBusID + " " + what + " is out of range; left out"})
			return false
		}
		*dst = &x
		return true
	}
	read(&t.UtilizationPercent, path.Join(dir, "gpu_busy_percent"), "gpu_busy_percent", 1, 0, 100)
	if hw := amdHwmonDir(m, dir); hw != "" {
		if !read(&t.PowerDrawWatts, path.Join(hw, "power1_average"), "power1_average", 1e6, 0, registry.MaxWatts) {
			read(&t.PowerDrawWatts, path.Join(hw, "power1_input"), "power1_input", 1e6, 0, registry.MaxWatts)
		}
		read(&t.PowerLimitWatts, path.Join(hw, "power1_cap"), "power1_cap", 1e6, 0, registry.MaxWatts)
		read(&t.TemperatureC, path.Join(hw, "temp1_input"), "temp1_input", 1e3, -273.15, registry.MaxCelsius)
	}
	if t != (registry.Telemetry{}) {
		d.Telemetry = &t
		d.SetSource("telemetry", "sysfs")
	}
}

// amdHwmonDir is the device's hwmon directory ("<dev>/hwmon/hwmon8");
// amdgpu registers one per GPU. "" when there is none.
func amdHwmonDir(m *machine.Machine, dir string) string {
	var names []string
	for _, e := range m.ReadDir(path.Join(dir, "hwmon")) {
		if strings.HasPrefix(e.Name(), "hwmon") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return path.Join(dir, "hwmon", names[0])
}
