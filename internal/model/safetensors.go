package model

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"path/filepath"
	"sort"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// Safetensors limits: the format puts an 8-byte little-endian header length
// before a JSON header; the reference implementation rejects headers over
// 100 MB (safetensors MAX_HEADER_SIZE), and so do we.
const (
	maxSafetensorsHeader = 100_000_000
	maxSafetensorsFiles  = 4096     // shards in one directory
	maxConfigJSON        = 16 << 20 // config.json
)

// safetensorsDTypes maps a safetensors dtype to bytes per element and the
// contract level it corresponds to ("" when none does, e.g. packed ints).
var safetensorsDTypes = map[string]struct {
	size  float64
	level string
}{
	"F64": {8, ""}, "F32": {4, "fp32"}, "F16": {2, "fp16"}, "BF16": {2, "bf16"},
	"F8_E4M3": {1, "fp8"}, "F8_E5M2": {1, "fp8"}, "I8": {1, "int8"}, "U8": {1, ""},
	"I16": {2, ""}, "U16": {2, ""}, "I32": {4, ""}, "U32": {4, ""}, "I64": {8, ""}, "U64": {8, ""},
	"BOOL": {1, ""},
}

// safetensorsSummary is what one or more safetensors headers hold.
type safetensorsSummary struct {
	params  int64
	bytes   int64
	byDType map[string]int64
}

// ReadSafetensors reads a safetensors stream's header (never the data).
func ReadSafetensors(r io.Reader) (*Model, error) {
	s := &safetensorsSummary{byDType: map[string]int64{}}
	if err := s.add(r); err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "safetensors")
	}
	if s.params == 0 {
		return nil, errs.New(errs.ModelFile, "safetensors: %v", errNoTensors)
	}
	return s.model(), nil
}

// errNoTensors: a header without tensor elements ("{}", only __metadata__,
// only empty shapes) would be planned as a model of zero parameters.
var errNoTensors = errors.New("the file has no tensors")

func (s *safetensorsSummary) add(r io.Reader) error {
	var lenBuf [8]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return fmt.Errorf("header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n < 2 || n > maxSafetensorsHeader {
		return fmt.Errorf("header length %d is outside [2, %d]", n, maxSafetensorsHeader)
	}
	// ReadAll over a LimitReader grows with the bytes actually present, so a
	// lying length on a short file costs no more than the file.
	hdr, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return err
	}
	if uint64(len(hdr)) != n {
		return fmt.Errorf("header truncated: %d of %d bytes", len(hdr), n)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &entries); err != nil {
		return fmt.Errorf("header JSON: %w", err)
	}
	for name, raw := range entries {
		if name == "__metadata__" {
			continue
		}
		var t struct {
			DType       string   `json:"dtype"`
			Shape       []uint64 `json:"shape"`
			DataOffsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("tensor %q: %w", name, err)
		}
		if len(t.Shape) > 8 {
			return fmt.Errorf("tensor %q: %d dimensions", name, len(t.Shape))
		}
		count := uint64(1)
		for _, d := range t.Shape {
			hi, lo := bits.Mul64(count, d)
			if hi != 0 || lo > maxTensorElements {
				return fmt.Errorf("tensor %q: element count overflows", name)
			}
			count = lo
		}
		s.params += int64(count)
		if float64(s.params) > MaxParams {
			return errors.New("tensor element total exceeds 1e14")
		}
		if dt, ok := safetensorsDTypes[t.DType]; ok {
			b := int64(math.Ceil(float64(count) * dt.size))
			s.bytes += b
			s.byDType[t.DType] += b
		} else {
			return fmt.Errorf("tensor %q: unknown dtype %q", name, t.DType)
		}
	}
	return nil
}

func (s *safetensorsSummary) model() *Model {
	m := &Model{Source: "safetensors header", Params: s.params, ActiveParams: s.params}
	dominant, most := "", int64(-1)
	keys := make([]string, 0, len(s.byDType))
	for k := range s.byDType {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s.byDType[k] > most {
			dominant, most = k, s.byDType[k]
		}
	}
	if lv := safetensorsDTypes[dominant].level; lv != "" {
		m.FileQuant = lv
		// Exact only when every tensor has the dominant dtype's level.
		if s.byDType[dominant] == s.bytes {
			m.FileWeightBytes = s.bytes
		}
	} else if dominant != "" {
		m.FileQuant = strings.ToLower(dominant)
		m.Notes = append(m.Notes, fmt.Sprintf("weights are mostly %s tensors (packed or integer storage): the parameter count may not be the model's", dominant))
	}
	return m
}

// fromDir reads a Hugging Face model directory: config.json for the shape,
// and every *.safetensors header for the exact parameter count.
func fromDir(dir string, deadline time.Time) (*Model, error) {
	cfgBytes, err := readCapped(filepath.Join(dir, "config.json"), maxConfigJSON, deadline)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(cfgBytes, &cfg); err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, dir+"/config.json")
	}
	m, err := FromConfig(cfg)
	if err != nil {
		return nil, errs.New(errs.ModelFile, "%s/config.json: %s", dir, errs.MessageOf(err))
	}
	m.Source = "config.json"
	if m.Name == "" {
		m.Name = baseName(filepath.Clean(dir))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, dir)
	}
	if len(files) > maxSafetensorsFiles {
		return nil, errs.New(errs.ModelFile, "%s: %d safetensors files exceed the limit %d", dir, len(files), maxSafetensorsFiles)
	}
	if len(files) == 0 {
		return m, nil
	}
	s := &safetensorsSummary{byDType: map[string]int64{}}
	for _, p := range files {
		if err := addSafetensorsFile(s, p, deadline); err != nil {
			return nil, err
		}
	}
	if s.params == 0 {
		// setParams would replace config.json's shape-derived count by 0.
		return nil, errs.New(errs.ModelFile, "%s: the safetensors files hold no tensors", dir)
	}
	fm := s.model()
	setParams(m, fm.Params)
	m.FileQuant, m.FileWeightBytes = fm.FileQuant, fm.FileWeightBytes
	m.Notes = append(m.Notes, fm.Notes...)
	m.Source = "config.json + safetensors headers"
	return m, nil
}

func addSafetensorsFile(s *safetensorsSummary, path string, deadline time.Time) error {
	f, err := openModelFile(path, deadline)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := s.add(f); err != nil {
		return errs.New(errs.ModelFile, "%s: %v", path, err)
	}
	return nil
}

// readCapped reads a whole small regular file, refusing one over limit bytes.
func readCapped(path string, limit int64, deadline time.Time) ([]byte, error) {
	f, err := openModelFile(path, deadline)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.left > limit {
		return nil, errs.New(errs.ModelFile, "%s is larger than %d bytes", path, limit)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, path)
	}
	return b, nil
}
