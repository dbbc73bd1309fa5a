package modelio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// GGUF header limits. Every count and length read from a file is checked
// against one of these before it is used, so a hostile header costs at most
// a bounded amount of memory and time.
const (
	ggufMagic = 0x46554747 // "GGUF" read as little-endian uint32

	maxGGUFTensors   = 1 << 20 // real models: < 10^5 tensors (DeepSeek-V3 ~ 1.1e5 per-expert names in old files)
	maxGGUFKVs       = 1 << 16 // real models: < 100 keys
	maxGGUFKeyLen    = 1 << 16 // spec: keys are at most 65535 bytes
	maxGGUFNameLen   = 1 << 12 // tensor names (ggml's GGML_MAX_NAME is 64)
	maxGGUFStringLen = 1 << 24 // one string value (chat templates are ~10 KiB)
	maxGGUFArrayLen  = 1 << 26 // one array (vocabularies are ~2.6e5 entries)
	maxGGUFArrayNest = 4       // arrays of arrays
	maxGGUFDims      = 4       // GGML_MAX_DIMS
	maxGGUFHeader    = 1 << 30 // bytes of header read before giving up
	maxKeptString    = 1 << 12 // string values kept (architecture, name); longer ones are skipped
	// maxKeptKeyLen: keys longer than this are read past, and their values
	// are not kept. Planning reads keys such as "general.architecture" and
	// "<arch>.attention.head_count_kv" (tens of bytes); keeping every key
	// made a crafted header of 64 KiB keys cost as much memory as the header
	// (issue 23 item 12: +1006 MB).
	maxKeptKeyLen = 1 << 8
)

// GGUF metadata value types (gguf_type in ggml/include/gguf.h).
const (
	gUint8 = iota
	gInt8
	gUint16
	gInt16
	gUint32
	gInt32
	gFloat32
	gBool
	gString
	gArray
	gUint64
	gInt64
	gFloat64
)

// ggufFixedSize is the byte size of the fixed-width value types.
var ggufFixedSize = map[uint32]int{
	gUint8: 1, gInt8: 1, gBool: 1, gUint16: 2, gInt16: 2,
	gUint32: 4, gInt32: 4, gFloat32: 4, gUint64: 8, gInt64: 8, gFloat64: 8,
}

// ggufHeader is what planning keeps from a GGUF header.
type ggufHeader struct {
	version  uint32
	nums     map[string]float64 // scalar numeric metadata; arrays of numbers: their maximum
	strs     map[string]string  // short string metadata
	arrayLen map[string]uint64  // length of every array value
	params   int64
	bytes    int64 // exact tensor data bytes; -1 when a tensor type is unknown
	byType   map[ggml.Type]int64
	names    map[string][2]uint64 // first two dims of the tensors planning looks at
	// perLayer holds the per-layer arrays of perLayerKeys, in order.
	perLayer map[string][]float64
}

// perLayerKeys are the metadata arrays kept element by element: llama.cpp
// writes head_count_kv (0 on a layer without attention) and
// feed_forward_length (0 on a layer without FFN) per layer for its hybrid
// architectures (nemotron_h, granitehybrid, jamba, lfm2), and marks a
// layer recurrent from them (llama_hparams::recurrent_layer_arr, set in
// llama_model::load_hparams, src/llama-model.cpp of ggml-org/llama.cpp).
// .attention.indexer.types marks each layer whose DSA indexer is its own
// (1) or reuses the previous one's choice (0; ggufIndexerLayers).
var perLayerKeys = []string{".attention.head_count_kv", ".feed_forward_length", ".attention.indexer.types"}

func isPerLayerKey(key string) bool {
	for _, k := range perLayerKeys {
		if strings.HasSuffix(key, k) {
			return true
		}
	}
	return false
}

type ggufReader struct {
	r       *bufio.Reader
	read    int64
	err     error
	scratch [8]byte // fixed-width values are read here, not into a new slice each
	chunk   []byte  // strings and numeric arrays are read here (readChunk)
}

var errGGUFTooLarge = errors.New("header larger than 1 GiB")

func (g *ggufReader) fail(err error) {
	if g.err == nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		g.err = err
	}
}

// readChunk reads n bytes into the reader's reusable buffer (valid until the
// next read): strings and numeric arrays cost no allocation per value.
func (g *ggufReader) readChunk(n int) []byte {
	if cap(g.chunk) < n {
		g.chunk = make([]byte, max(n, 4096))
	}
	return g.readInto(g.chunk[:n])
}

// readInto fills b from the header, counting it against maxGGUFHeader; nil
// once reading has failed.
func (g *ggufReader) readInto(b []byte) []byte {
	if g.err != nil {
		return nil
	}
	g.read += int64(len(b))
	if g.read > maxGGUFHeader {
		g.fail(errGGUFTooLarge)
		return nil
	}
	if _, err := io.ReadFull(g.r, b); err != nil {
		g.fail(err)
		return nil
	}
	return b
}

func (g *ggufReader) skip(n uint64) {
	if g.err != nil {
		return
	}
	if n > maxGGUFHeader || g.read+int64(n) > maxGGUFHeader {
		g.fail(errGGUFTooLarge)
		return
	}
	g.read += int64(n)
	if _, err := g.r.Discard(int(n)); err != nil {
		g.fail(err)
	}
}

// fixed reads a fixed-width value (at most 8 bytes) into the scratch
// buffer: one allocation per number read made a header of millions of small
// values cost several times its size in garbage.
func (g *ggufReader) fixed(n int) []byte {
	return g.readInto(g.scratch[:n])
}

func (g *ggufReader) u32() uint32 {
	b := g.fixed(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (g *ggufReader) u64() uint64 {
	b := g.fixed(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// str reads a gguf_string; a string longer than keep is skipped and
// returned empty (its length is still bounded by limit).
func (g *ggufReader) str(limit, keep uint64, what string) string {
	n := g.u64()
	if g.err != nil {
		return ""
	}
	if n > limit {
		g.fail(fmt.Errorf("%s length %d exceeds the limit %d", what, n, limit))
		return ""
	}
	if n > keep {
		g.skip(n)
		return ""
	}
	// string() of the reusable buffer is the only copy of a key or value.
	b := g.readChunk(int(n))
	return string(b)
}

// readGGUF parses a GGUF v2/v3 header from r: metadata and tensor infos.
// Tensor data is never read.
func readGGUF(r io.Reader) (*ggufHeader, error) {
	g := &ggufReader{r: bufio.NewReaderSize(r, 64<<10)}
	if magic := g.u32(); g.err == nil && magic != ggufMagic {
		return nil, fmt.Errorf("not a GGUF file (magic %#08x)", magic)
	}
	h := &ggufHeader{
		nums: map[string]float64{}, strs: map[string]string{}, arrayLen: map[string]uint64{},
		byType: map[ggml.Type]int64{}, names: map[string][2]uint64{}, perLayer: map[string][]float64{},
	}
	h.version = g.u32()
	if g.err == nil && (h.version < 2 || h.version > 3) {
		if h.version == 1 {
			return nil, errors.New("GGUF version 1 (32-bit counts) is not supported; re-convert the model")
		}
		if bits.ReverseBytes32(h.version) <= 3 {
			return nil, errors.New("big-endian GGUF files are not supported")
		}
		return nil, fmt.Errorf("unsupported GGUF version %d", h.version)
	}
	nTensors, nKV := g.u64(), g.u64()
	if g.err == nil && nTensors > maxGGUFTensors {
		return nil, fmt.Errorf("tensor count %d exceeds the limit %d", nTensors, maxGGUFTensors)
	}
	if g.err == nil && nKV > maxGGUFKVs {
		return nil, fmt.Errorf("metadata count %d exceeds the limit %d", nKV, maxGGUFKVs)
	}
	for i := uint64(0); i < nKV && g.err == nil; i++ {
		// A key longer than maxKeptKeyLen comes back "": its value is read
		// past and not kept.
		key := g.str(maxGGUFKeyLen, maxKeptKeyLen, "metadata key")
		typ := g.u32()
		g.value(h, key, typ, 0)
	}
	for i := uint64(0); i < nTensors && g.err == nil; i++ {
		g.tensorInfo(h)
	}
	if g.err != nil {
		return nil, g.err
	}
	return h, nil
}

// value reads one metadata value of type typ, keeping what planning needs.
func (g *ggufReader) value(h *ggufHeader, key string, typ uint32, depth int) {
	if g.err != nil {
		return
	}
	if typ == gString {
		// Only top-level strings of kept keys are kept; array elements
		// (vocabularies: one string per token) are read past without a copy.
		keep := uint64(maxKeptString)
		if depth > 0 || key == "" {
			keep = 0
		}
		s := g.str(maxGGUFStringLen, keep, "string value")
		if depth == 0 && s != "" && key != "" {
			h.strs[key] = s
		}
		return
	}
	if typ == gArray {
		if depth >= maxGGUFArrayNest {
			g.fail(fmt.Errorf("metadata %q: arrays nested deeper than %d", key, maxGGUFArrayNest))
			return
		}
		et := g.u32()
		n := g.u64()
		if g.err != nil {
			return
		}
		if n > maxGGUFArrayLen {
			g.fail(fmt.Errorf("metadata %q: array length %d exceeds the limit %d", key, n, maxGGUFArrayLen))
			return
		}
		if depth == 0 && key != "" {
			h.arrayLen[key] = n
		}
		if size, fixed := ggufFixedSize[et]; fixed {
			if depth > 0 || n > 1<<16 || key == "" {
				g.skip(n * uint64(size))
				return
			}
			// Small numeric arrays (per-layer head counts): keep the
			// maximum, stored once: a map update per element hashed the
			// key (up to 64 KiB) once per element, time quadratic in the
			// bytes of the header.
			var list *[]float64
			if isPerLayerKey(key) {
				l := make([]float64, 0, n)
				list = &l
			}
			if most, found := g.numbersMax(et, n, list); found && g.err == nil {
				h.nums[key] = most
				if list != nil {
					h.perLayer[key] = *list
				}
			}
			return
		}
		if et != gString && et != gArray {
			g.fail(fmt.Errorf("metadata %q: unknown array element type %d", key, et))
			return
		}
		for j := uint64(0); j < n && g.err == nil; j++ {
			g.value(h, key, et, depth+1)
		}
		return
	}
	if _, fixed := ggufFixedSize[typ]; !fixed {
		g.fail(fmt.Errorf("metadata %q: unknown value type %d", key, typ))
		return
	}
	if v, ok := g.number(typ); ok && depth == 0 && key != "" {
		h.nums[key] = v
	}
}

// numbersMax reads n fixed-width values of type typ, a few KiB at a time,
// and returns their maximum (found is false when none is a number),
// appending each to list when list is not nil.
func (g *ggufReader) numbersMax(typ uint32, n uint64, list *[]float64) (most float64, found bool) {
	size := uint64(ggufFixedSize[typ])
	for n > 0 && g.err == nil {
		k := min(n, 4096/size)
		b := g.readChunk(int(k * size))
		if b == nil {
			break
		}
		for j := uint64(0); j < k; j++ {
			v, ok := decodeNumber(typ, b[j*size:])
			if list != nil {
				*list = append(*list, v)
			}
			if ok && (!found || v > most) {
				most, found = v, true
			}
		}
		n -= k
	}
	return most, found
}

// number reads a fixed-width value as float64 (bool as 0/1).
func (g *ggufReader) number(typ uint32) (float64, bool) {
	b := g.fixed(ggufFixedSize[typ])
	if b == nil {
		return 0, false
	}
	return decodeNumber(typ, b)
}

// decodeNumber decodes the fixed-width value of type typ at the start of b.
func decodeNumber(typ uint32, b []byte) (float64, bool) {
	le := binary.LittleEndian
	switch typ {
	case gUint8, gBool:
		return float64(b[0]), true
	case gInt8:
		return float64(int8(b[0])), true
	case gUint16:
		return float64(le.Uint16(b)), true
	case gInt16:
		return float64(int16(le.Uint16(b))), true
	case gUint32:
		return float64(le.Uint32(b)), true
	case gInt32:
		return float64(int32(le.Uint32(b))), true
	case gFloat32:
		f := float64(math.Float32frombits(le.Uint32(b)))
		return f, !math.IsNaN(f)
	case gUint64:
		return float64(le.Uint64(b)), true
	case gInt64:
		return float64(int64(le.Uint64(b))), true
	case gFloat64:
		f := math.Float64frombits(le.Uint64(b))
		return f, !math.IsNaN(f)
	}
	return 0, false
}

// maxTensorElements bounds one tensor (2^50 ≈ 10^15 elements) and the sum
// (checked against MaxParams) so products cannot overflow int64.
const maxTensorElements = 1 << 50

func (g *ggufReader) tensorInfo(h *ggufHeader) {
	name := g.str(maxGGUFNameLen, maxGGUFNameLen, "tensor name")
	nd := g.u32()
	if g.err != nil {
		return
	}
	if nd == 0 || nd > maxGGUFDims {
		g.fail(fmt.Errorf("tensor %q: %d dimensions (want 1..%d)", name, nd, maxGGUFDims))
		return
	}
	var dims [maxGGUFDims]uint64
	n := uint64(1)
	for d := uint32(0); d < nd; d++ {
		dims[d] = g.u64()
		hi, lo := bits.Mul64(n, dims[d])
		if hi != 0 || lo > maxTensorElements {
			g.fail(fmt.Errorf("tensor %q: element count overflows", name))
			return
		}
		n = lo
	}
	typ := ggml.Type(g.u32())
	g.u64() // data offset
	if g.err != nil {
		return
	}
	h.params += int64(n)
	if float64(h.params) > model.MaxParams {
		g.fail(fmt.Errorf("tensor element total exceeds 1e14"))
		return
	}
	if b, ok := typ.RowBytes(int64(n)); ok && h.bytes >= 0 {
		h.bytes += b
		h.byType[typ] += b
	} else {
		h.bytes = -1 // unknown type or a size the block does not divide
	}
	switch name {
	case "token_embd.weight", "output.weight":
		h.names[name] = [2]uint64{dims[0], dims[1]}
	}
}

// modelFromGGUF turns a parsed header into a Model.
func modelFromGGUF(h *ggufHeader) (*model.Model, error) {
	arch := h.strs["general.architecture"]
	if arch == "" {
		return nil, errors.New("general.architecture is missing")
	}
	num := func(key string) int {
		v := h.nums[arch+"."+key]
		if v < 0 || v >= model.MaxDim || v != math.Trunc(v) {
			return 0
		}
		return int(v)
	}
	m := &model.Model{Source: "gguf header", Name: h.strs["general.name"]}
	m.Architecture = arch
	if hf, ok := model.HFArchitecture(arch); ok {
		m.Architecture = hf
	}
	m.Layers = num("block_count")
	m.Hidden = num("embedding_length")
	m.Heads = num("attention.head_count")
	m.KVHeads = num("attention.head_count_kv")
	m.MaxContext = num("context_length")
	m.Intermediate = num("feed_forward_length")
	m.Experts = num("expert_count")
	m.ExpertsPerToken = num("expert_used_count")
	m.SharedExperts = num("expert_shared_count")
	m.MoEIntermediate = num("expert_feed_forward_length")
	m.DenseLayers = num("leading_dense_block_count")
	m.KVLoRARank = num("attention.kv_lora_rank")
	m.QLoRARank = num("attention.q_lora_rank")
	if m.KVLoRARank > 0 {
		m.QKRopeHeadDim = num("rope.dimension_count")
		// A head's decompressed widths: key_length_mla (nope + rope) and
		// value_length_mla where the file has them, as llama.cpp's
		// converter writes since it absorbs MLA, its key_length and
		// value_length then being the latent's 576 and 512 (DeepSeek-V3-0324's
		// loader logs in https://github.com/ggml-org/llama.cpp/issues/13252,
		// "key_length u32 = 576", and issues/13461, "value_length u32 =
		// 512", "key_length_mla u32 = 192", "value_length_mla u32 = 128");
		// older files (issues/11141 there) have key_length 192 and
		// value_length 128 alone. The nope dimension absent or not above
		// rope is unknown (0), never negative.
		key, value := num("attention.key_length_mla"), num("attention.value_length_mla")
		if key == 0 || value == 0 {
			key, value = num("attention.key_length"), num("attention.value_length")
		}
		if key > m.QKRopeHeadDim {
			m.QKNopeHeadDim = key - m.QKRopeHeadDim
		}
		m.VHeadDim = value
		ggufIndexer(h, arch, m, num)
		if arch == "deepseek32" || arch == "glm-dsa" {
			// llama.cpp caches the latent of the trunk only
			// (model.Model.UncachedLayers).
			m.UncachedLayers = min(num("nextn_predict_layers"), m.Layers)
		}
	} else {
		m.HeadDim = num("attention.key_length")
	}
	m.Vocab = num("vocab_size")
	if m.Vocab == 0 {
		if emb, ok := h.names["token_embd.weight"]; ok && emb[1] < model.MaxDim {
			m.Vocab = int(emb[1])
		} else if n := h.arrayLen["tokenizer.ggml.tokens"]; n < model.MaxDim {
			m.Vocab = int(n)
		}
	}
	_, hasOutput := h.names["output.weight"]
	m.TieEmbeddings = !hasOutput
	if w := num("attention.sliding_window"); w > 0 {
		// A GGUF file does not list which layers use the window: llama.cpp
		// sets the pattern per architecture on load (Arch.GGUFGlobalEvery).
		m.LayerKinds = model.SlidingPattern(w, m.Arch().GGUFGlobalEvery)
	}
	if kinds := ggufRecurrentKinds(h, arch, m, num); kinds != nil {
		m.LayerKinds = kinds
	}
	if m.Experts > 0 && m.ExpertsPerToken > m.Experts {
		// As FromConfig: more experts per token than experts would make the
		// active count exceed the total.
		return nil, fmt.Errorf("expert_used_count %d exceeds expert_count %d", m.ExpertsPerToken, m.Experts)
	}
	m.Params = h.params
	m.ActiveParams = h.params
	if m.IsMoE() && m.Layers > 0 && m.Hidden > 0 {
		if total, active, err := model.ShapeParams(m); err == nil && total > 0 {
			m.ActiveParams = int64(float64(h.params) * float64(active) / float64(total))
		}
	}
	if ft, ok := h.nums["general.file_type"]; ok && ft >= 0 && ft < 1<<16 {
		m.FileQuant = ggml.FileType(ft).String()
	}
	if m.FileQuant == "" {
		m.FileQuant = dominantType(h.byType)
	}
	if h.bytes > 0 {
		m.FileWeightBytes = h.bytes
	} else if h.bytes < 0 {
		m.Notes = append(m.Notes, "a tensor type of this GGUF file is unknown to this library: weight bytes are estimated from the parameter count")
	}
	if m.Params == 0 {
		return nil, errors.New("the file has no tensors")
	}
	return m, nil
}

// ggufIndexer reads the lightning indexer of DeepSeek Sparse Attention
// (model.Model.IndexerHeads) from llama.cpp's keys {arch}.attention.
// indexer.head_count, .key_length and .top_k (LLM_KV_ATTENTION_INDEXER_*
// in src/llama-arch.cpp of ggml-org/llama.cpp, read by
// src/models/deepseek32.cpp and glm-dsa.cpp). llama.cpp caches the keys
// of every layer but the MTP ones (nextn_predict_layers; filter_lid in
// llama_model::create_memory, src/llama-model.cpp), of a glm-dsa file
// only those .attention.indexer.types marks full; without that array
// glm-dsa takes every layer full when its context_length is below
// 1048576 (GLM-5, 5.1) and GLM-5.2's built-in pattern otherwise, which
// is not read here: such a file is planned with an indexer on every
// layer, and a note says so.
func ggufIndexer(h *ggufHeader, arch string, m *model.Model, num func(string) int) {
	heads, dim := num("attention.indexer.head_count"), num("attention.indexer.key_length")
	if heads <= 0 || dim <= 0 {
		return
	}
	m.IndexerHeads, m.IndexerHeadDim, m.IndexerTopK = heads, dim, num("attention.indexer.top_k")
	layers := max(m.Layers-num("nextn_predict_layers"), 0)
	m.IndexerLayers = layers
	types, listed := h.perLayer[arch+".attention.indexer.types"]
	switch {
	case listed:
		full := 0
		for _, t := range types[:min(len(types), layers)] {
			if t != 0 {
				full++
			}
		}
		m.IndexerLayers = full
	case arch == "glm-dsa" && num("context_length") >= 1048576:
		m.Notes = append(m.Notes, "this glm-dsa file does not list its indexer layers (attention.indexer.types): llama.cpp then uses GLM-5.2's pattern, which this planner does not hold, so every layer is costed with an indexer")
	}
}

// dominantType names the ggml type holding the most bytes.
func dominantType(byType map[ggml.Type]int64) string {
	types := make([]ggml.Type, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	var best ggml.Type
	var most int64 = -1
	for _, t := range types {
		if byType[t] > most {
			best, most = t, byType[t]
		}
	}
	if most <= 0 {
		return ""
	}
	return best.String()
}

// ReadGGUF reads the model facts from a GGUF stream's header.
func ReadGGUF(r io.Reader) (*model.Model, error) {
	h, err := readGGUF(r)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "gguf")
	}
	m, err := modelFromGGUF(h)
	if err != nil {
		return nil, errs.Wrap(errs.ModelFile, err, "gguf")
	}
	return m, nil
}

// ggufRecurrentKinds is the layer pattern of a hybrid or recurrent GGUF
// model, nil for the others. Keys (LLM_KV_* in src/llama-arch.cpp of
// ggml-org/llama.cpp): {arch}.ssm.conv_kernel, .ssm.inner_size,
// .ssm.state_size, .ssm.time_step_rank, .ssm.group_count,
// .full_attention_interval, .shortconv.l_cache, and the per-layer
// .attention.head_count_kv and .feed_forward_length arrays (perLayerKeys).
//   - qwen3next, qwen35, qwen35moe: every full_attention_interval-th layer
//     attends, the others are gated DeltaNet with group_count key heads of
//     state_size and time_step_rank value heads of inner_size /
//     time_step_rank (the convert_hf_to_gguf.py mapping of linear_*);
//   - lfm2: layers without KV heads are short convolutions of l_cache taps;
//   - mamba, mamba2: every layer is recurrent; falcon-h1: every layer runs
//     attention and a Mamba2 mixer in parallel;
//   - nemotron_h, granitehybrid, jamba: layers without KV heads are Mamba2
//     (Mamba for jamba) mixers, those without KV heads but with an FFN
//     width are MLP blocks (nemotron_h).
//
// Published files carry these keys: qwen35moe.ssm.conv_kernel 4,
// .state_size 128, .group_count 16, .time_step_rank 32, .inner_size 4096,
// .full_attention_interval 4 (a Qwen3.5-35B-A3B load log,
// https://github.com/ggml-org/llama.cpp/issues/25121); granitehybrid's
// head_count_kv [0, 0, 0, ...] beside its ssm.* keys (ollama's
// granite4:350m-h metadata,
// https://ollama.com/ibm/granite4:350m-h-base-q4_K_S/blobs/fe0b87f28220).
// The mixers' weights need not be known here: a GGUF model's count is its
// tensors'.
func ggufRecurrentKinds(h *ggufHeader, arch string, m *model.Model, num func(string) int) []model.Layer {
	conv, inner, state := num("ssm.conv_kernel"), num("ssm.inner_size"), num("ssm.state_size")
	rank, groups := num("ssm.time_step_rank"), num("ssm.group_count")
	mamba := model.Mamba2State(inner, groups, state, conv)
	if arch == "mamba" || arch == "jamba" {
		mamba = model.Mamba2State(inner, 0, state, conv)
	}
	switch arch {
	case "qwen3next", "qwen35", "qwen35moe":
		every := num("full_attention_interval")
		if every <= 0 || rank <= 0 {
			return nil
		}
		gdn := model.GatedDeltaNetState(groups, state, rank, inner/rank, conv)
		kinds := make([]model.Layer, every)
		for i := range kinds[:every-1] {
			kinds[i] = gdn
		}
		kinds[every-1] = model.Layer{Kind: model.FullAttention}
		return kinds
	case "mamba", "mamba2":
		return []model.Layer{mamba}
	case "falcon-h1":
		mamba.Kind = model.FullAttention
		return []model.Layer{mamba}
	case "lfm2", "lfm2moe":
		mamba = model.ShortConvState(m.Hidden, num("shortconv.l_cache"))
	case "nemotron_h", "nemotron_h_moe", "granitehybrid", "jamba":
	default:
		return nil
	}
	kv := h.perLayer[arch+".attention.head_count_kv"]
	if len(kv) == 0 || m.Layers <= 0 || m.Layers > model.MaxListedLayers {
		return nil
	}
	ffn := h.perLayer[arch+".feed_forward_length"]
	kinds := make([]model.Layer, m.Layers)
	for i := range kinds {
		switch {
		case i < len(kv) && kv[i] > 0:
			kinds[i] = model.Layer{Kind: model.FullAttention, KVHeads: int(kv[i])}
		case strings.HasPrefix(arch, "nemotron_h") && i < len(ffn) && ffn[i] > 0:
			kinds[i] = model.Layer{Kind: model.FeedForward}
		default:
			kinds[i] = mamba
		}
	}
	return kinds
}
