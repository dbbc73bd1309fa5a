package modelio

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// maxGGUFHeaderBytes bounds the GGUF header bytes a request may carry. A
// header is the metadata and tensor list before the tensor data: a few MB
// for a 150k-token vocabulary with its merges; 64 MiB is far above any
// published file's and keeps a request's size sane.
const maxGGUFHeaderBytes = 64 << 20

// fetched reports whether the spec carries files a host fetched from a
// model repository rather than a name, count or path.
func fetched(s model.Spec) bool {
	return s.SafetensorsIndex != nil || s.SafetensorsHeader != "" || s.GGUFHeader != ""
}

// fromFetched builds a model from what a host fetched from a repository
// (the library opens no socket; the CLI's internal/hub and the Python
// package's fetch_model do the fetching): config plus the safetensors index
// or one safetensors header, or a GGUF header on its own.
func fromFetched(s model.Spec) (*model.Model, error) {
	if s.Params != nil || s.ParamsB != nil || s.Name != "" || s.Path != "" {
		return nil, errs.New(errs.InvalidArgument, "model: safetensors_index, safetensors_header_base64 and gguf_header_base64 go with config only, not with params, params_b, name or path")
	}
	if s.GGUFHeader != "" {
		if s.Config != nil || s.SafetensorsIndex != nil || s.SafetensorsHeader != "" {
			return nil, errs.New(errs.InvalidArgument, "model: gguf_header_base64 stands alone (the GGUF header is authoritative)")
		}
		return fromGGUFHeader(s.GGUFHeader)
	}
	if s.Config == nil {
		return nil, errs.New(errs.InvalidArgument, "model: safetensors_index and safetensors_header_base64 need the repository's config.json as config")
	}
	if s.SafetensorsIndex != nil && s.SafetensorsHeader != "" {
		return nil, errs.New(errs.InvalidArgument, "model: give safetensors_index (a sharded checkpoint) or safetensors_header_base64 (a single file), not both")
	}
	m, err := model.FromConfig(s.Config)
	if err != nil {
		return nil, err
	}
	if s.SafetensorsHeader != "" {
		return withSafetensorsHeader(m, s.SafetensorsHeader)
	}
	return withSafetensorsIndex(m, s.Config, s.SafetensorsIndex)
}

func decodeBase64(field, v string, limit int) ([]byte, error) {
	if base64.StdEncoding.DecodedLen(len(v)) > limit+3 {
		return nil, errs.New(errs.InvalidArgument, "model: %s is larger than %d bytes", field, limit)
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, errs.New(errs.InvalidArgument, "model: %s is not standard base64: %v", field, err)
	}
	return b, nil
}

// fromGGUFHeader reads a GGUF file's first bytes, which must hold the whole
// header (metadata and tensor list); the tensor data need not follow.
func fromGGUFHeader(b64 string) (*model.Model, error) {
	b, err := decodeBase64("gguf_header_base64", b64, maxGGUFHeaderBytes)
	if err != nil {
		return nil, err
	}
	m, err := ReadGGUF(bytes.NewReader(b))
	if err != nil {
		msg := errs.MessageOf(err)
		if strings.Contains(msg, "EOF") {
			msg += fmt.Sprintf(" (the %d bytes given end inside the header: give more of the file's start)", len(b))
		}
		return nil, errs.New(errs.ModelFile, "model: gguf_header_base64: %s", msg)
	}
	m.Source = "gguf header"
	return m, nil
}

// withSafetensorsHeader completes a config's model with a single-file
// checkpoint's header (8-byte length and JSON), as a local directory with
// one .safetensors file is read (fromDir).
func withSafetensorsHeader(m *model.Model, b64 string) (*model.Model, error) {
	b, err := decodeBase64("safetensors_header_base64", b64, maxSafetensorsHeader+8)
	if err != nil {
		return nil, err
	}
	fm, err := ReadSafetensors(bytes.NewReader(b))
	if err != nil {
		return nil, errs.New(errs.ModelFile, "model: safetensors_header_base64: %s", strings.TrimPrefix(errs.MessageOf(err), "safetensors: "))
	}
	m.SetParams(fm.Params)
	m.FileQuant, m.FileWeightBytes = fm.FileQuant, fm.FileWeightBytes
	m.Notes = append(m.Notes, fm.Notes...)
	m.Source = "config.json + safetensors header"
	return m, nil
}

// indexDTypes are the config's torch_dtype values whose checkpoints store
// every weight at that width, so metadata.total_size is the weights' size
// at that level.
var indexDTypes = map[string]string{"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}

// withSafetensorsIndex completes a config's model with a sharded
// checkpoint's model.safetensors.index.json: metadata.total_size is the
// bytes of every tensor (transformers' save_pretrained writes it;
// https://huggingface.co/docs/transformers/main/en/big_models), and newer
// files also carry metadata.total_parameters. total_size is the weights'
// size only for an unquantized checkpoint of the config's torch_dtype; a
// quantized one (quantization_config) packs weights and scales in other
// dtypes, and the answer only notes the size.
func withSafetensorsIndex(m *model.Model, cfg, index map[string]any) (*model.Model, error) {
	meta, _ := index["metadata"].(map[string]any)
	if _, ok := index["weight_map"].(map[string]any); !ok {
		return nil, errs.New(errs.InvalidArgument, "model: safetensors_index has no weight_map object (want model.safetensors.index.json as published)")
	}
	m.Source = "config.json + safetensors index"
	if n, ok := indexCount(meta, "total_parameters"); ok {
		if n > model.MaxParams {
			return nil, errs.New(errs.InvalidArgument, "model: safetensors_index total_parameters %.4g exceeds the limit of 1e14", n)
		}
		m.SetParams(int64(n))
		m.Source += " (parameters: metadata.total_parameters)"
	}
	size, ok := indexCount(meta, "total_size")
	if !ok {
		return m, nil
	}
	if size > model.MaxParams*8 {
		return nil, errs.New(errs.InvalidArgument, "model: safetensors_index total_size %.4g bytes is more than any model", size)
	}
	dtype, _ := cfg["torch_dtype"].(string)
	if dtype == "" {
		dtype, _ = cfg["dtype"].(string) // transformers >= 4.56 writes "dtype"
	}
	level, plain := indexDTypes[dtype]
	if _, quantized := cfg["quantization_config"]; quantized || !plain {
		m.Notes = append(m.Notes, fmt.Sprintf("the checkpoint's tensors total %.0f bytes (safetensors index metadata.total_size); its weights are not all %s, so the size is not taken as the weights'", size, orUnknown(dtype)))
		return m, nil
	}
	m.FileQuant, m.FileWeightBytes = level, int64(size)
	m.Source += fmt.Sprintf(" (weights: metadata.total_size, %s)", level)
	return m, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "of one stated dtype"
	}
	return s
}

// indexCount reads a whole positive number from the index's metadata (the
// index writes them as JSON numbers; some tools write strings).
func indexCount(meta map[string]any, key string) (float64, bool) {
	v, ok := meta[key].(float64)
	if !ok || v <= 0 || v != math.Trunc(v) {
		return 0, false
	}
	return v, true
}
