package model

import (
	"encoding/binary"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
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
	hdr, err := readHeader(r, int64(n))
	if err != nil {
		return err
	}
	// encoding/json's Valid, not goccy's: goccy copies its input into a
	// pooled buffer, which would keep another 100 MB alive after the call.
	if !stdjson.Valid(hdr) {
		return errors.New("header JSON is not valid")
	}
	names := nameSet{hdr: hdr, seed: maphash.MakeSeed(), first: map[uint64]uint32{}}
	return eachMember(hdr, func(key, value []byte) error {
		name, err := memberName(key)
		if err != nil {
			return fmt.Errorf("tensor name %s: %w", clipBytes(key), err)
		}
		if name == "__metadata__" {
			return nil
		}
		if names.seen(name, key) {
			return fmt.Errorf("tensor %q is listed twice", name)
		}
		return s.addTensor(name, value)
	})
}

// nameSet finds a tensor listed twice in one header (it would be counted
// twice) without copying the names: it maps a hash of each name to where its
// key starts in the header, and on a hash match decodes that key again, so
// a hash collision is never taken for a repeat.
type nameSet struct {
	hdr   []byte
	seed  maphash.Seed
	first map[uint64]uint32 // hash of a name -> offset of its key in hdr (headers are < 4 GiB)
	more  map[string]bool   // names whose hash matched an earlier, different name
}

// seen reports whether name, whose raw key is the slice rawKey of the
// header, was added before, and adds it.
func (n *nameSet) seen(name string, rawKey []byte) bool {
	h := maphash.String(n.seed, name)
	off, ok := n.first[h]
	if !ok {
		n.first[h] = uint32(cap(n.hdr) - cap(rawKey)) // rawKey's offset in hdr
		return false
	}
	if prev, _ := memberName(n.hdr[off:skipString(n.hdr, int(off))]); prev == name || n.more[name] {
		return true
	}
	if n.more == nil {
		n.more = map[string]bool{}
	}
	n.more[name] = true
	return false
}

// readHeader reads the n header bytes that follow the length. Where the
// reader knows how many bytes it holds (a model file, a bytes.Reader), a
// header that fits is read into one buffer of exactly n bytes; otherwise
// ReadAll over a LimitReader grows with the bytes actually present, so a
// lying length on a short file costs no more than the file.
func readHeader(r io.Reader, n int64) ([]byte, error) {
	if l, ok := r.(interface{ Len() int }); ok && int64(l.Len()) >= n {
		hdr := make([]byte, n)
		if _, err := io.ReadFull(r, hdr); err != nil {
			return nil, fmt.Errorf("header truncated: %w", err)
		}
		return hdr, nil
	}
	hdr, err := io.ReadAll(io.LimitReader(r, n))
	if err != nil {
		return nil, err
	}
	if int64(len(hdr)) != n {
		return nil, fmt.Errorf("header truncated: %d of %d bytes", len(hdr), n)
	}
	return hdr, nil
}

func clipBytes(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// addTensor adds one tensor entry of a header, {"dtype":"F16","shape":[..],
// "data_offsets":[..]}, to the summary. The entry is read in place (no
// decoder, no allocation): with millions of entries a per-entry decode was
// most of the time and memory a header cost.
func (s *safetensorsSummary) addTensor(name string, raw []byte) error {
	var dtype []byte
	var shape []byte
	err := eachMember(raw, func(key, value []byte) error {
		switch string(key) {
		case `"dtype"`:
			dtype = value
		case `"shape"`:
			shape = value
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tensor %q: not an object", name)
	}
	count, err := shapeElements(shape)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", name, err)
	}
	s.params += int64(count)
	if float64(s.params) > MaxParams {
		return errors.New("tensor element total exceeds 1e14")
	}
	if len(dtype) < 2 || dtype[0] != '"' {
		return fmt.Errorf("tensor %q: dtype is missing or not a string", name)
	}
	dt, ok := safetensorsDTypes[string(dtype[1:len(dtype)-1])]
	if !ok {
		return fmt.Errorf("tensor %q: unknown dtype %s", name, clipBytes(dtype))
	}
	b := int64(math.Ceil(float64(count) * dt.size))
	s.bytes += b
	s.byDType[string(dtype[1:len(dtype)-1])] += b
	return nil
}

// maxSafetensorsDims bounds a tensor's rank (real tensors have at most 5).
const maxSafetensorsDims = 8

// shapeElements is the element count of a raw JSON shape, an array of at
// most maxSafetensorsDims whole numbers ([], null or no shape is a scalar:
// one element, as the decoder this replaced read them).
func shapeElements(raw []byte) (uint64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 1, nil
	}
	if len(raw) < 2 || raw[0] != '[' {
		return 0, errors.New("shape is missing or not an array")
	}
	count, dims := uint64(1), 0
	for i := skipSpace(raw, 1); i < len(raw) && raw[i] != ']'; {
		if dims++; dims > maxSafetensorsDims {
			return 0, fmt.Errorf("more than %d dimensions", maxSafetensorsDims)
		}
		d, end := uint64(0), i
		for ; end < len(raw) && raw[end] >= '0' && raw[end] <= '9'; end++ {
			hi, lo := bits.Mul64(d, 10)
			if hi != 0 || lo+uint64(raw[end]-'0') < lo {
				return 0, errors.New("element count overflows")
			}
			d = lo + uint64(raw[end]-'0')
		}
		if end == i {
			return 0, errors.New("shape holds something other than whole numbers")
		}
		hi, lo := bits.Mul64(count, d)
		if hi != 0 || lo > maxTensorElements {
			return 0, errors.New("element count overflows")
		}
		count = lo
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return count, nil
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
		// Into a map only the text can be wrong; the decoder's words for it
		// carry its "json: " prefix, which is not the contract's.
		return nil, errs.New(errs.ModelFile, "%s/config.json: not a JSON object: %s", dir, strings.TrimPrefix(err.Error(), "json: "))
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
