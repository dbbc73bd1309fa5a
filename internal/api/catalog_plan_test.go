package api

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// TestEveryCatalogModelPlans: every catalog model gets an answer, not an
// error, on one GPU (gh200-480gb: one GH200 with 96 GB) and on eight
// (dgx-h100), with its weights counted.
func TestEveryCatalogModelPlans(t *testing.T) {
	for _, e := range model.Catalog() {
		for _, machine := range []string{"gh200-480gb", "dgx-h100"} {
			a := fullPlan(t, machine, `{"model":{"name":"`+e.Name+`"}}`)
			assert.Contains(t, a, "fits", "%s on %s", e.Name, machine)
			mem, _ := a["memory"].(map[string]any)
			assert.Positive(t, mem["weights_bytes"], "%s on %s", e.Name, machine)
		}
	}
}
