package schema

import (
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
	"github.com/ai-hwaccel/ai-hwaccel/internal/planreq"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/rent"
)

// A host validating a request against the schemas must accept what the
// engine accepts and refuse what it refuses, so every upper bound the
// schemas state is read here beside the Go constant the engine enforces:
// changing either alone fails. Before, cluster (1024 nodes), devices (65536
// ids) and mmproj.size_bytes (1 EiB) had a bound in the code and none in
// request.schema.json.

// limit pairs a bound of a schema file, at a JSON pointer, with the engine's.
type limit struct {
	file, at string
	engine   *big.Rat
}

func ratOf[N int | int64 | float64](v N) *big.Rat {
	if f, ok := any(v).(float64); ok {
		return new(big.Rat).SetFloat64(f)
	}
	return new(big.Rat).SetInt64(int64(v))
}

func millis(d time.Duration) *big.Rat { return ratOf(d.Milliseconds()) }

// engineLimits are the bounds each schema states with the constant the
// engine checks against (internal/api/wire, internal/api, internal/registry,
// internal/rent, internal/detect, internal/model).
func engineLimits() []limit {
	training := func(m string) string { return "/properties/training/properties/" + m + "/maximum" }
	return []limit{
		{"request", "/properties/context_length/oneOf/0/maximum", ratOf(planreq.MaxContextLength)},
		{"request", "/properties/batch_size/maximum", ratOf(planreq.MaxBatchSize)},
		{"request", "/properties/devices/maxItems", ratOf(planreq.MaxRequestDevices)},
		{"request", "/properties/cluster/maxItems", ratOf(planreq.MaxClusterNodes)},
		{"request", "/properties/replicas/oneOf/0/maximum", ratOf(planreq.MaxRequestDevices)},
		{"request", "/properties/tensor_parallel_size/maximum", ratOf(planreq.MaxTensorParallel)},
		{"request", "/properties/mmproj/properties/size_bytes/maximum", ratOf(int64(planreq.MaxPlanBytes))},
		{"request", training("seq_len"), ratOf(planreq.MaxContextLength)},
		{"request", training("micro_batch"), ratOf(planreq.MaxTrainingCount)},
		{"request", training("num_devices"), ratOf(planreq.MaxTrainingCount)},
		{"request", training("tensor_parallel"), ratOf(planreq.MaxTrainingCount)},
		{"request", training("lora_rank"), ratOf(planreq.MaxTrainingCount)},
		{"request", training("zero_stage"), ratOf(planreq.MaxZeROStage)},
		{"request", "/$defs/model/properties/params/maximum", ratOf(float64(model.MaxParams))},
		{"request", "/$defs/model/properties/params_b/maximum", ratOf(float64(model.MaxParams / 1e9))},
		{"fit-request", "/properties/context_length/maximum", ratOf(planreq.MaxContextLength)},
		{"rent-request", "/properties/rent/properties/max_nodes/maximum", ratOf(rent.MaxNodes)},
		{"rent-request", "/properties/rent/properties/max_price_per_hour/exclusiveMaximum", ratOf(float64(rent.PriceCeiling))},
		{"rent-request", "/properties/rent/properties/target_tokens_per_s/exclusiveMaximum", ratOf(float64(rent.SpeedCeiling))},
		{"detect-options", "/properties/timeout_ms/maximum", millis(detect.MaxTimeout)},
		{"detect-options", "/properties/cache_ttl_ms/maximum", millis(detect.MaxCacheTTL)},
		{"registry", "/properties/schema_version/const", ratOf(registry.SchemaVersion)},
		{"registry", "/properties/devices/maxItems", ratOf(registry.MaxDevices)},
		{"registry", "/$defs/bytes/maximum", ratOf(registry.MaxDeviceMemory)},
		{"registry", "/$defs/device/properties/memory_bandwidth_gb_s/maximum", ratOf(float64(registry.MaxBandwidthGBs))},
		{"registry", "/$defs/device/properties/numa_node/maximum", ratOf(registry.MaxNUMANode)},
		{"registry", "/$defs/device/properties/telemetry/properties/power_draw_watts/maximum", ratOf(registry.MaxWatts)},
		{"registry", "/$defs/device/properties/telemetry/properties/power_limit_watts/maximum", ratOf(registry.MaxWatts)},
		{"registry", "/$defs/device/properties/telemetry/properties/temperature_c/maximum", ratOf(registry.MaxCelsius)},
	}
}

// boundsByDefinition are the upper bounds of the request schemas that no
// engine constant holds, each with why it is what it is.
var boundsByDefinition = map[string]string{
	"request/properties/memory_fraction/maximum": "a share of a device's memory: at most all of it",
}

// unbounded are the numbers and lists of the request schemas the engine
// takes at any size (within the 16 MiB a request may hold), with why.
var unbounded = map[string]string{
	"request/properties/training/properties/lora_targets":                                                               "names from a closed set; repeats are harmless",
	"rent-request/properties/rent/properties/providers":                                                                 "names a closed set filters by",
	"rent-request/properties/rent/properties/prices/properties/machines":                                                "one entry per catalog type; an unknown type is refused by name",
	"rent-request/properties/rent/properties/prices/properties/schema":                                                  "the price file's version, kept as written",
	"rent-request/properties/rent/properties/prices/properties/machines/items/properties/price/properties/usd_per_hour": "a price the host states; it only ranks",
	"detect-options/properties/backends":                                                                                "names of a closed set (the enum)",
	"detect-options/properties/exclude":                                                                                 "names of a closed set (the enum)",
}

// at is the value at pointer (JSON pointer, "/a/b/0") in doc.
func at(doc any, pointer string) (any, bool) {
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		switch n := doc.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			doc = n[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

func schemaDoc(t *testing.T, file string) any {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "schema", file+".schema.json"))
	require.NoError(t, err)
	doc, err := decode(b)
	require.NoError(t, err)
	return doc
}

func TestSchemaLimitsAreTheEngines(t *testing.T) {
	docs := map[string]any{}
	for _, l := range engineLimits() {
		if docs[l.file] == nil {
			docs[l.file] = schemaDoc(t, l.file)
		}
		v, ok := at(docs[l.file], l.at)
		if !assert.True(t, ok, "%s.schema.json%s: the engine bounds it at %s; the schema states no bound", l.file, l.at, l.engine.RatString()) {
			continue
		}
		n, ok := v.(json.Number)
		require.True(t, ok, "%s%s is %v, not a number", l.file, l.at, v)
		assert.Equal(t, l.engine.RatString(), rat(n).RatString(), "%s.schema.json%s: schema %s, engine %s", l.file, l.at, n, l.engine.RatString())
	}
}

// TestRequestSchemasBoundWhatTheEngineBounds walks the request schemas:
// every number has an upper bound and every list a length bound (each
// paired with the engine's in engineLimits, or bounded by definition), or
// is listed as one the engine takes at any size; every bound stated is
// one of those. A member added to a schema, or a bound added, without
// saying how the engine bounds it fails here.
func TestRequestSchemasBoundWhatTheEngineBounds(t *testing.T) {
	paired := map[string]bool{}
	for _, l := range engineLimits() {
		paired[l.file+l.at] = true
	}
	for why := range boundsByDefinition {
		paired[why] = true
	}
	var missing, stray []string
	for _, file := range []string{"request", "fit-request", "rent-request", "detect-options", "models-request"} {
		walkSchema(schemaDoc(t, file), file, func(where string, n map[string]any) {
			for _, k := range []string{"maximum", "exclusiveMaximum", "maxItems"} {
				if _, ok := n[k]; ok && !paired[where+"/"+k] {
					stray = append(stray, where+"/"+k)
				}
			}
			typ, _ := n["type"].(string)
			_, hasMax := n["maximum"]
			_, hasXMax := n["exclusiveMaximum"]
			_, hasMaxItems := n["maxItems"]
			_, free := unbounded[where]
			switch {
			case free:
			case (typ == "integer" || typ == "number") && !hasMax && !hasXMax:
				missing = append(missing, where+" (a number with no maximum)")
			case typ == "array" && !hasMaxItems:
				missing = append(missing, where+" (a list with no maxItems)")
			}
		})
	}
	sort.Strings(missing)
	sort.Strings(stray)
	assert.Empty(t, missing, "bound these as the engine does (engineLimits), or say in unbounded why the engine takes any size")
	assert.Empty(t, stray, "a bound with no engine constant beside it (engineLimits) and no reason (boundsByDefinition)")
}

// walkSchema calls visit with every schema object under doc, named by its
// file and JSON pointer.
func walkSchema(doc any, where string, visit func(where string, n map[string]any)) {
	switch n := doc.(type) {
	case map[string]any:
		visit(where, n)
		for _, k := range sortedKeys(n) {
			switch k {
			case "enum", "const", "required", "examples", "default":
				continue // values, not schemas
			}
			walkSchema(n[k], where+"/"+k, visit)
		}
	case []any:
		for i, v := range n {
			walkSchema(v, where+"/"+strconv.Itoa(i), visit)
		}
	}
}

// The backends a host may name in detection options are the engine's:
// an unknown name is refused (internal/api decodeOptions).
func TestDetectOptionBackendsAreTheEngines(t *testing.T) {
	names := detect.BackendNames()
	sort.Strings(names)
	for _, list := range []string{"backends", "exclude"} {
		assert.Equal(t, names, enumAt(t, "detect-options", "properties", list, "items"), list)
	}
}
