package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// BenchmarkReplicasMax is "replicas": "max" on n identical 80 GB GPUs in one
// NVSwitch domain (issue 11: 32 768 took about 6 s and 65 535 about 62 s,
// placing replicas was quadratic): a 70B model, one tensor-parallel replica
// per 2 GPUs, and an 8B model, one replica per GPU. Cost must grow linearly
// (times a log for sorting) with n.
//
//	go test -run xxx -bench ReplicasMax -benchtime=3x ./internal/plan/
func BenchmarkReplicasMax(b *testing.B) {
	for _, n := range []int{1024, 8192, 32768, 65535} {
		devs := make([]registry.Device, n)
		all := make([]string, n)
		for i := range devs {
			devs[i] = gpu(registry.KindCUDA, i, "X", 80*gibBytes, "9.0")
			all[i] = devs[i].ID
		}
		r := reg(b, devs, link(registry.LinkNVSwitch, 900, all...))
		for _, m := range []string{"llama-3.1-70b", "llama-3.1-8b"} {
			b.Run(fmt.Sprintf("%s/devices=%d", m, n), func(b *testing.B) {
				req := request(b, `{"model":{"name":"`+m+`"},"replicas":"max"}`, r)
				a := shard(b, req)
				require.True(b, a.Fits.Yes())
				require.Greater(b, a.DPSize, n/4)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := PlanSharding(req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
