package api

import (
	"context"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rent request plans the catalog's machines, so a member naming devices
// of a machine has no place in it. "devices" was taken: ["cuda:99"] gave
// every one of the 52 types a not_fit row "request: devices: unknown device
// ...", a request error dressed as 52 answers, and ["cuda:0"] planned one
// GPU of every type while ranking the whole type's price (an 8x H100 at 8
// GPUs' price per hour for one GPU's tokens). It is invalid_argument, as
// registry, cluster and detect are.
func TestRentRefusesDevices(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, devices := range []string{`["cuda:0"]`, `["cuda:99"]`} {
		out := RentAt(context.Background(), []byte(`{"model":"Llama-3.1-8B","devices":`+devices+`,"rent":{"providers":["lambda"]}}`), now)
		var a struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(out, &a), "%s", out)
		require.NotNil(t, a.Error, "devices %s: %.300s", devices, out)
		assert.Equal(t, "invalid_argument", a.Error.Code)
		assert.Contains(t, a.Error.Message, `"devices" has no place in a rent request`)
	}
}
