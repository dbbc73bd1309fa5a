package plan

import (
	"fmt"
	"strings"
)

// otherEngineFits is the explanation's line for a refused request that named
// no engine, when another engine that also runs on the refused pool's
// devices (engine.Alternatives: llama.cpp beside vLLM on a CUDA GPU) holds
// the model: a refusal under the default engine alone told the owner of an
// 8 GiB GPU that an 8B model does not fit, where llama.cpp runs it in a
// 4-bit GGUF. The other engine's plan is the request with that engine named
// and the last level the default engine was refused at (int4, or a model's
// published format), one level rather than the other engine's whole ladder:
// llama.cpp's reaches iq1_s, a quality nobody should be pointed to, and
// walking it on a hostile shape takes minutes (TestHostileShapesAreBounded).
func otherEngineFits(r *planning, ch *choice) (string, bool) {
	pl := &ch.Plan
	if r.Engine != "" || pl.Pool == nil || len(pl.Pool.Devices) == 0 || !pl.Pool.Budget.ByDefault || len(ch.Rows) == 0 {
		return "", false
	}
	for _, e := range otherEngines(r.engineRule(), &pl.Pool.Devices[0].Dev) {
		named := *r.Request
		named.Engine, named.Quant = e.Name(), ch.Rows[len(ch.Rows)-1].Quant
		a, err := PlanSharding(&named)
		if err != nil || !a.Fits {
			continue
		}
		var ids []string
		for _, s := range a.Shards {
			ids = append(ids, s.DeviceID)
		}
		how := ""
		if a.Strategy != "" && a.Strategy != "none" {
			how = ", " + strings.ReplaceAll(a.Strategy, "_", " ")
		}
		return fmt.Sprintf("engine %s fits it: %s on %s%s; plan it with %s",
			e.Name(), a.Quant, strings.Join(ids, ", "), how, HintEngine(e.Name())), true
	}
	return "", false
}
