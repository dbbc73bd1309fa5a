//go:build linux && cgo

package detect

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/nvidia/nvml/nvmltest"
)

// Steady-state detection of the h200-vm fixture (every backend, no cache),
// the GPU read through NVML in-process (the fake libnvidia-ml.so.1 with the
// real H200's values) against the same detection running the fixture's
// nvidia-smi script. Figures in docs/performance.md ("NVML in-process");
// they measure the fake library, not a driver.
//
//	go test -run xxx -bench 'DetectH200' -benchtime=2s ./internal/detect/
func BenchmarkDetectH200NVML(b *testing.B) {
	benchDetectH200(b, nvmltest.Build(b))
}

// The same, the fake NVML taking as long for each call as the real H200's
// driver took at the median (nvmltest.H200Latency: 1.72 ms for each
// nvmlDeviceGetMaxClockInfo, 0.16 ms for the MIG and ECC modes, a few µs
// for most), so that the benchmark shows what a steady-state detection
// pays the driver (docs/performance.md, "NVML in-process").
//
//	go test -run xxx -bench 'DetectH200NVMLDriverLatency' -benchtime=2s ./internal/detect/
func BenchmarkDetectH200NVMLDriverLatency(b *testing.B) {
	m := nvmltest.H200(b)
	m.Latency = nvmltest.H200Latency(b)
	benchDetectH200(b, nvmltest.BuildMachine(b, m))
}

func BenchmarkDetectH200NvidiaSMI(b *testing.B) {
	benchDetectH200(b, NVMLOff)
}

// The same on the dgx-h100 fixture (8 GPUs behind NVSwitches): through
// NVML no tool runs; through nvidia-smi the query and `topo -m` run.
//
//	go test -run xxx -bench 'DetectDGXH100' -benchtime=2s ./internal/detect/
func BenchmarkDetectDGXH100NVML(b *testing.B) {
	benchDetect(b, "dgx-h100", nvmltest.BuildMachine(b, dgxH100Machine(b)))
}

func BenchmarkDetectDGXH100NvidiaSMI(b *testing.B) {
	benchDetect(b, "dgx-h100", NVMLOff)
}

// The same 8 GPUs, the fake NVML taking per call what the H200's driver
// took (nvmltest.H200Latency), in steady state: NVML loaded and the fixed
// facts cached before the loop. What it shows is how far the reads of the
// eight GPUs overlap when the driver serves each GPU on its own; whether a
// real driver does is not measured (docs/performance.md, "NVML on many
// GPUs").
//
//	go test -run xxx -bench 'DetectDGXH100NVMLDriverLatency' -benchtime=2s ./internal/detect/
func BenchmarkDetectDGXH100NVMLDriverLatency(b *testing.B) {
	m := dgxH100Machine(b)
	m.Latency = nvmltest.H200Latency(b)
	benchDetect(b, "dgx-h100", nvmltest.BuildMachine(b, m))
}

// Cold detections through the fake NVML with the H200's per-call costs and
// its nvmlInit (12.5 ms): each detection loads a fresh copy of the library,
// so it pays the load, nvmlInit and a first read with nothing cached. Run
// with -benchtime=1x, one process per sample, for the first detection of a
// process (the rest of detection cold too); more iterations keep the rest
// of detection warm (the sysfs memo of the fixture) and leave one copy of
// the library and its thread per iteration in the process.
//
//	go test -c -o detect.test ./internal/detect/
//	for i in 1 2 3 4 5; do ./detect.test -test.run '^$' -test.bench 'NVMLColdDriverLatency$' -test.benchtime 1x; done
func BenchmarkDetectH200NVMLColdDriverLatency(b *testing.B) {
	benchDetectCold(b, "h200-vm", nvmltest.H200(b))
}

func BenchmarkDetectDGXH100NVMLColdDriverLatency(b *testing.B) {
	benchDetectCold(b, "dgx-h100", dgxH100Machine(b))
}

// benchDetectCold detects fixture through a fresh copy of the fake NVML of
// m, with the H200's latencies, in each iteration (see above).
func benchDetectCold(b *testing.B, fixture string, m nvmltest.Machine) {
	m.Latency = nvmltest.H200Latency(b)
	lib, err := os.ReadFile(nvmltest.BuildMachine(b, m))
	require.NoError(b, err)
	opts := fixtureOptions(b, fixture, nil)
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		opts.NVMLLibrary = filepath.Join(dir, strconv.Itoa(i), nvml.DefaultLibrary)
		require.NoError(b, os.MkdirAll(filepath.Dir(opts.NVMLLibrary), 0o755))
		require.NoError(b, os.WriteFile(opts.NVMLLibrary, lib, 0o755))
		b.StartTimer()
		reg, err := Detect(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		require.Empty(b, reg.Warnings)
		b.StartTimer()
	}
}

func benchDetectH200(b *testing.B, lib string) { benchDetect(b, "h200-vm", lib) }

func benchDetect(b *testing.B, fixture, lib string) {
	opts := fixtureOptions(b, fixture, nil)
	opts.NVMLLibrary = lib
	reg, err := Detect(context.Background(), opts) // loads and initialises NVML once
	require.NoError(b, err)
	require.Empty(b, reg.Warnings)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Detect(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}
