package schema

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
)

// TestRentAnswersValidate: real rent answers, with and without filters and a
// price file, have the shape schema/rent.schema.json gives, and their
// requests the shape of schema/rent-request.schema.json.
func TestRentAnswersValidate(t *testing.T) {
	ans, req := load(t, "rent"), load(t, "rent-request")
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, in := range []string{
		`{"model":{"name":"Llama-3.1-8B"}}`,
		`{"model":{"name":"Llama-3.1-8B"},"rent":{"this_machine":{"provider":"aws","type":"p5.48xlarge"}}}`,
		`{"model":{"name":"Llama-3.1-70B"},"engine":"vllm","rent":{"providers":["aws","azure"],"sort":"speed","max_nodes":2}}`,
		`{"model":{"name":"DeepSeek-V3"},"quant":"fp8","rent":{"target_tokens_per_s":50,"max_price_per_hour":100,
		  "prices":{"schema":1,"machines":[{"provider":"oci","type":"BM.GPU.H200.8","price":{"usd_per_hour":60,"seen":"2026-11-01"}}]}}}`,
	} {
		require.NoError(t, req.Validate([]byte(in)), in)
		out := api.RentAt(context.Background(), []byte(in), now)
		assert.NotContains(t, string(out), `"error"`, in)
		assert.NoError(t, ans.Validate(out), "%s", out)
	}
	out := api.RentAt(context.Background(), []byte(`{"model":{"name":"Llama-3.1-8B"},"registry":{}}`), now)
	assert.Contains(t, string(out), `"invalid_argument"`)
}
