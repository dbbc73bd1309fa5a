package plan

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// A MoE model of many layers is planned in bounded time. llama.cpp's expert
// offload (moeSplit) tried every host placement of experts, one expert
// tensor at a time, and for each grew the first GPU's layer range one layer
// at a time: a plan of ibm-granite's granite-3.1-1b-a400m-instruct config
// (testdata/hub) with num_hidden_layers 8192 on two H100s took 34 s, 16384
// took 3.5 min, and the limit (planreq.MaxLayers, 65536) hours (found by
// capi.FuzzRequestMembers, seed model.config.num_hidden_layers 65536: no
// answer within its 90 s bound). Each call must answer within the bound
// below, as the other hostile shapes do (TestHostileShapesAreBounded).
func TestDeepMoEIsBounded(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hub", "ibm-granite--granite-3.1-1b-a400m-instruct", "config.json"))
	require.NoError(t, err)
	r := reg(t, []registry.Device{h100(0), h100(1), host(512 << 30)}, link(registry.LinkNVLink, 900, "cuda:0", "cuda:1"))
	for _, layers := range []int{16384, planreq.MaxLayers} {
		deep := strings.Replace(string(cfg), `"num_hidden_layers": 24`, `"num_hidden_layers": `+strconv.Itoa(layers), 1)
		require.NotEqual(t, string(cfg), deep)
		for _, body := range []string{
			`{"model":{"config":` + deep + `}}`,
			`{"model":{"config":` + deep + `},"engine":"llama.cpp","cpu_offload":true}`,
		} {
			done := make(chan *ShardingAnswer, 1)
			start := time.Now()
			go func() { done <- shard(t, request(t, body, r)) }()
			select {
			case a := <-done:
				checkInvariants(t, a)
				t.Logf("%d layers: %v fits=%v %s", layers, time.Since(start), a.Fits, a.Strategy)
			case <-time.After(60 * time.Second): // generous: -race and a loaded machine
				t.Fatalf("%d layers: no answer after 60 s: %.120s", layers, body[len(body)-60:])
			}
		}
	}
}

// moeHostAt numbers exactly the placements moeSplit tried one after the
// other before it bisected: from {DenseLayers, 1} by moeHost.next, those
// that are partial or whole layers, up to every layer on the host.
func TestMoEHostAtIsTheSequenceOfNext(t *testing.T) {
	for _, lc := range []struct{ layers, dense int }{{1, 0}, {2, 1}, {5, 0}, {5, 3}, {48, 1}, {61, 3}, {3, 3}, {2, 4}} {
		c := costs{Layers: lc.layers, DenseLayers: lc.dense}
		var want []moeHost
		for h := (moeHost{Layers: c.DenseLayers, Part: 1}); h.Layers <= c.Layers; h = h.next() {
			if h.Part > 0 && !h.partial(&c) {
				continue
			}
			want = append(want, h)
		}
		var got []moeHost
		for k := 0; k < moeHostCount(c); k++ {
			got = append(got, moeHostAt(c, k))
		}
		require.Equal(t, want, got, "%+v", lc)
	}
}
