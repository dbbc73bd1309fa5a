package model

// What the model readers of internal/modelio (GGUF and safetensors headers,
// config.json directories) use of this package's config rules, so that a
// model read from a file gets the bounds and layer patterns of one read
// from a config.

// MaxDim bounds any single shape field a config or file header states
// (maxDim).
const MaxDim = maxDim

// MaxListedLayers bounds the depth a per-layer list is built for
// (maxListedLayers).
const MaxListedLayers = maxListedLayers

// SlidingPattern is the layer pattern of a model whose every every-th layer
// is global and the others windowed to window tokens (slidingPattern).
func SlidingPattern(window, every int) []Layer { return slidingPattern(window, every) }

// HFArchitecture is the Hugging Face model_type of the arches table that a
// GGUF general.architecture names where the two differ; ok is false where
// they do not.
func HFArchitecture(gguf string) (hf string, ok bool) {
	hf, ok = ggufArchitectures[gguf]
	return hf, ok
}

// SetParams replaces the total parameter count, scaling ActiveParams for a
// MoE so the active fraction the shape implies is kept (setParams).
func (m *Model) SetParams(n int64) { setParams(m, n) }
