//go:build linux && cgo

package detect

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

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
