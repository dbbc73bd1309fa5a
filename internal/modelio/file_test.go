package modelio

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ai-hwaccel/ai-hwaccel/internal/ggml"
	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/model"
)

// ggufWriter builds GGUF headers for tests, following the layout of the
// GGUF specification (ggml docs/gguf.md): magic, version, tensor count,
// metadata count, metadata key/values, tensor infos.
type ggufWriter struct{ bytes.Buffer }

func (w *ggufWriter) u32(v uint32) { _ = binary.Write(&w.Buffer, binary.LittleEndian, v) }
func (w *ggufWriter) u64(v uint64) { _ = binary.Write(&w.Buffer, binary.LittleEndian, v) }
func (w *ggufWriter) str(s string) { w.u64(uint64(len(s))); w.WriteString(s) }

func (w *ggufWriter) header(version uint32, tensors, kvs uint64) {
	w.u32(ggufMagic)
	w.u32(version)
	w.u64(tensors)
	w.u64(kvs)
}

func (w *ggufWriter) kvString(k, v string) { w.str(k); w.u32(gString); w.str(v) }
func (w *ggufWriter) kvU32(k string, v uint32) {
	w.str(k)
	w.u32(gUint32)
	w.u32(v)
}

func (w *ggufWriter) tensor(name string, typ ggml.Type, dims ...uint64) {
	w.str(name)
	w.u32(uint32(len(dims)))
	for _, d := range dims {
		w.u64(d)
	}
	w.u32(uint32(typ))
	w.u64(0)
}

// tinyLlama writes a 2-layer llama-shaped GGUF: hidden 256, 4 heads, 2 KV
// heads, FFN 512, vocab 1000, untied output, file type Q4_K_M, with
// metadata of every value type (including nested arrays) to exercise the
// skipping code.
func tinyLlama() []byte {
	var w ggufWriter
	const layers, hidden, ffn, vocab, kvDim = 2, 256, 512, 1000, 128
	tensors := 2 + layers*9 + 1
	w.header(3, uint64(tensors), 17)
	w.kvString("general.architecture", "llama")
	w.kvString("general.name", "Tiny Test")
	w.kvU32("general.file_type", 15) // Q4_K_M
	w.kvU32("llama.block_count", layers)
	w.kvU32("llama.embedding_length", hidden)
	w.kvU32("llama.attention.head_count", 4)
	w.kvU32("llama.attention.head_count_kv", 2)
	w.kvU32("llama.context_length", 4096)
	w.kvU32("llama.feed_forward_length", ffn)
	// Other value types.
	w.str("test.u8")
	w.u32(gUint8)
	w.WriteByte(7)
	w.str("test.i16")
	w.u32(gInt16)
	_ = binary.Write(&w.Buffer, binary.LittleEndian, int16(-3))
	w.str("test.f32")
	w.u32(gFloat32)
	_ = binary.Write(&w.Buffer, binary.LittleEndian, float32(1e-5))
	w.str("test.bool")
	w.u32(gBool)
	w.WriteByte(1)
	w.str("test.f64")
	w.u32(gFloat64)
	_ = binary.Write(&w.Buffer, binary.LittleEndian, 0.5)
	w.str("test.i64")
	w.u32(gInt64)
	_ = binary.Write(&w.Buffer, binary.LittleEndian, int64(-1))
	w.str("tokenizer.ggml.tokens") // array of strings
	w.u32(gArray)
	w.u32(gString)
	w.u64(3)
	for _, s := range []string{"<s>", "</s>", "hi"} {
		w.str(s)
	}
	w.str("test.nested") // array of arrays of int32
	w.u32(gArray)
	w.u32(gArray)
	w.u64(2)
	for i := 0; i < 2; i++ {
		w.u32(gInt32)
		w.u64(2)
		w.u32(1)
		w.u32(2)
	}
	q4k, q6k, f32 := ggml.Q4_K, ggml.Q6_K, ggml.F32
	w.tensor("token_embd.weight", q4k, hidden, vocab)
	for i := 0; i < layers; i++ {
		p := "blk." + string(rune('0'+i)) + "."
		w.tensor(p+"attn_norm.weight", f32, hidden)
		w.tensor(p+"attn_q.weight", q4k, hidden, hidden)
		w.tensor(p+"attn_k.weight", q4k, hidden, kvDim)
		w.tensor(p+"attn_v.weight", q6k, hidden, kvDim)
		w.tensor(p+"attn_output.weight", q4k, hidden, hidden)
		w.tensor(p+"ffn_norm.weight", f32, hidden)
		w.tensor(p+"ffn_gate.weight", q4k, hidden, ffn)
		w.tensor(p+"ffn_up.weight", q4k, hidden, ffn)
		w.tensor(p+"ffn_down.weight", q6k, ffn, hidden)
	}
	w.tensor("output_norm.weight", f32, hidden)
	w.tensor("output.weight", q6k, hidden, vocab)
	return w.Bytes()
}

// tinyLlamaParams and tinyLlamaBytes are computed by hand from the tensors.
const (
	tinyLlamaParams = 256*1000*2 + 2*(256+256*256*2+256*128*2+256+3*256*512) + 256
	tinyLlamaBytes  = 256*1000/256*144 + // token_embd Q4_K
		2*(256*4+ // attn_norm f32
			256*256/256*144*2+ // q, o Q4_K
			256*128/256*144+ // k Q4_K
			256*128/256*210+ // v Q6_K
			256*4+ // ffn_norm
			2*256*512/256*144+ // gate, up Q4_K
			512*256/256*210) + // down Q6_K
		256*4 + // output_norm
		256*1000/256*210 // output Q6_K
)

func TestReadGGUF(t *testing.T) {
	m, err := ReadGGUF(bytes.NewReader(tinyLlama()))
	require.NoError(t, err)
	assert.Equal(t, "Tiny Test", m.Name)
	assert.Equal(t, "llama", m.Architecture)
	assert.Equal(t, int64(tinyLlamaParams), m.Params)
	assert.Equal(t, int64(tinyLlamaBytes), m.FileWeightBytes)
	assert.Equal(t, "Q4_K_M", m.FileQuant)
	assert.Equal(t, 2, m.Layers)
	assert.Equal(t, 256, m.Hidden)
	assert.Equal(t, 4, m.Heads)
	assert.Equal(t, 2, m.KVHeads)
	assert.Equal(t, 4096, m.MaxContext)
	assert.Equal(t, 512, m.Intermediate)
	assert.Equal(t, 1000, m.Vocab) // from token_embd dims
	assert.False(t, m.TieEmbeddings)
	assert.Equal(t, "gguf header", m.Source)
	// The shape formula agrees with the tensor count of the file.
	total, _, err := model.ShapeParams(m)
	require.NoError(t, err)
	assert.Equal(t, m.Params, total)
}

func TestResolveGGUFPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, os.WriteFile(p, tinyLlama(), 0o600))
	m, err := Resolve(model.Spec{Path: p})
	require.NoError(t, err)
	assert.Equal(t, int64(tinyLlamaParams), m.Params)
}

// TestModelFileNamesAndErrors: a file of either format is named after the
// file when its header has no name, and a broken file's error names the path
// once, without the reader's format prefix.
func TestModelFileNamesAndErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file   string
		good   []byte
		prefix string
	}{
		{"nameless.safetensors", safetensorsFile(t, map[string]any{"w": st("F16", 4, 4)}), "safetensors: "},
		{"nameless.gguf", func() []byte {
			var w ggufWriter
			w.header(3, 1, 1)
			w.kvString("general.architecture", "llama")
			w.tensor("t", 0, 4, 4)
			return w.Bytes()
		}(), "gguf: "},
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			require.NoError(t, os.WriteFile(p, tc.good, 0o600))
			m, err := FromPath(p)
			require.NoError(t, err)
			assert.Equal(t, "nameless", m.Name)

			bad := filepath.Join(dir, "broken-"+tc.file)
			require.NoError(t, os.WriteFile(bad, tc.good[:5], 0o600))
			_, err = FromPath(bad)
			require.Error(t, err)
			assert.Equal(t, errs.ModelFile, errs.CodeOf(err))
			msg := errs.MessageOf(err)
			rest, found := strings.CutPrefix(msg, bad+": ")
			assert.True(t, found, msg)
			assert.False(t, strings.HasPrefix(rest, tc.prefix), msg)
		})
	}
}

func TestReadGGUFHostile(t *testing.T) {
	good := tinyLlama()
	header := func(version uint32, tensors, kvs uint64) []byte {
		var w ggufWriter
		w.header(version, tensors, kvs)
		return w.Bytes()
	}
	withKV := func(f func(w *ggufWriter)) []byte {
		var w ggufWriter
		w.header(3, 0, 1)
		f(&w)
		return w.Bytes()
	}
	withTensor := func(f func(w *ggufWriter)) []byte {
		var w ggufWriter
		w.header(3, 1, 1)
		w.kvString("general.architecture", "llama")
		f(&w)
		return w.Bytes()
	}
	cases := map[string][]byte{
		"empty":             nil,
		"bad magic":         []byte("GGML\x03\x00\x00\x00"),
		"version 1":         header(1, 0, 0),
		"version 99":        header(99, 0, 0),
		"big endian":        append([]byte("GGUF"), 0, 0, 0, 3),
		"huge tensor count": header(3, 1<<40, 0),
		"huge kv count":     header(3, 0, 1<<40),
		"huge key length":   withKV(func(w *ggufWriter) { w.u64(1 << 62) }),
		"huge string": withKV(func(w *ggufWriter) {
			w.str("k")
			w.u32(gString)
			w.u64(1 << 60)
		}),
		"huge array": withKV(func(w *ggufWriter) {
			w.str("k")
			w.u32(gArray)
			w.u32(gUint8)
			w.u64(1 << 60)
		}),
		"unknown value type": withKV(func(w *ggufWriter) {
			w.str("k")
			w.u32(99)
		}),
		"deep arrays": withKV(func(w *ggufWriter) {
			w.str("k")
			for i := 0; i < 10; i++ {
				w.u32(gArray)
				w.u32(gArray)
				w.u64(1)
			}
		}),
		"five dims":  withTensor(func(w *ggufWriter) { w.tensor("t", 0, 1, 1, 1, 1, 1) }),
		"zero dims":  withTensor(func(w *ggufWriter) { w.tensor("t", 0) }),
		"overflow":   withTensor(func(w *ggufWriter) { w.tensor("t", 0, 1<<40, 1<<40) }),
		"over 1e14":  withTensor(func(w *ggufWriter) { w.tensor("t", 0, 1<<30, 1<<20) }),
		"long name":  withTensor(func(w *ggufWriter) { w.str(string(make([]byte, 1<<13))) }),
		"truncated":  good[:len(good)/2],
		"no tensors": withKV(func(w *ggufWriter) { w.kvString("general.architecture", "llama") }),
		"no architecture": func() []byte {
			var w ggufWriter
			w.header(3, 1, 0)
			w.tensor("t", 0, 4)
			return w.Bytes()
		}(),
	}
	for name, data := range cases {
		_, err := ReadGGUF(bytes.NewReader(data))
		require.Error(t, err, name)
		assert.Equal(t, errs.ModelFile, errs.CodeOf(err), name)
	}
}

func TestReadGGUFUnknownTensorType(t *testing.T) {
	var w ggufWriter
	w.header(3, 1, 1)
	w.kvString("general.architecture", "llama")
	w.tensor("t", 200, 64, 64)
	m, err := ReadGGUF(bytes.NewReader(w.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, int64(64*64), m.Params)
	assert.Zero(t, m.FileWeightBytes)
	assert.NotEmpty(t, m.Notes)
}

// safetensorsFile builds a safetensors header (8-byte length + JSON) with
// no data: planning never reads the data.
func safetensorsFile(t testing.TB, tensors map[string]any) []byte {
	hdr, err := json.Marshal(tensors)
	require.NoError(t, err)
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(hdr)))
	b.Write(hdr)
	return b.Bytes()
}

func st(dtype string, shape ...int64) map[string]any {
	return map[string]any{"dtype": dtype, "shape": shape, "data_offsets": []int64{0, 0}}
}

func TestReadSafetensors(t *testing.T) {
	data := safetensorsFile(t, map[string]any{
		"__metadata__": map[string]string{"format": "pt"},
		"a.weight":     st("BF16", 128, 256),
		"b.weight":     st("BF16", 256),
		"scalar":       st("BF16"),
	})
	m, err := ReadSafetensors(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, int64(128*256+256+1), m.Params)
	assert.Equal(t, "bf16", m.FileQuant)
	assert.Equal(t, 2*m.Params, m.FileWeightBytes)
}

func TestReadSafetensorsHostile(t *testing.T) {
	lenOnly := func(n uint64) []byte {
		var b bytes.Buffer
		_ = binary.Write(&b, binary.LittleEndian, n)
		b.WriteString("{}")
		return b.Bytes()
	}
	for name, data := range map[string][]byte{
		"empty":         nil,
		"short length":  {1, 2, 3},
		"huge header":   lenOnly(1 << 40),
		"truncated":     lenOnly(1000),
		"not json":      append(lenOnly(3)[:8], []byte("abc")...),
		"bad dtype":     safetensorsFile(t, map[string]any{"x": st("Q4", 2)}),
		"negative dim":  safetensorsFile(t, map[string]any{"x": map[string]any{"dtype": "F32", "shape": []int{-1}}}),
		"overflow":      safetensorsFile(t, map[string]any{"x": st("F32", 1<<40, 1<<40)}),
		"too many dims": safetensorsFile(t, map[string]any{"x": st("F32", 1, 1, 1, 1, 1, 1, 1, 1, 1)}),
		"no tensors":    safetensorsFile(t, map[string]any{"__metadata__": map[string]string{"format": "pt"}}),
		"empty header":  lenOnly(2),
		"zero elements": safetensorsFile(t, map[string]any{"x": st("F16", 0, 4096)}),
	} {
		_, err := ReadSafetensors(bytes.NewReader(data))
		require.Error(t, err, name)
		assert.Equal(t, errs.ModelFile, errs.CodeOf(err), name)
	}
}

func TestModelDirectory(t *testing.T) {
	dir := t.TempDir()
	cfg := map[string]any{
		"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128,
		"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 512,
	}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600))
	shard1 := safetensorsFile(t, map[string]any{"embed": st("BF16", 100, 64)})
	shard2 := safetensorsFile(t, map[string]any{"w": st("BF16", 64, 128), "v": st("BF16", 64)})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model-00001-of-00002.safetensors"), shard1, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), shard2, 0o600))
	m, err := Resolve(model.Spec{Path: dir})
	require.NoError(t, err)
	assert.Equal(t, int64(100*64+64*128+64), m.Params) // summed over shards, not from the shape
	assert.Equal(t, 2, m.Layers)
	assert.Equal(t, 512, m.MaxContext)
	assert.Equal(t, "bf16", m.FileQuant)

	// Safetensors files without tensors are a model_file error, not a model
	// of zero parameters.
	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "config.json"), b, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(empty, "model.safetensors"), safetensorsFile(t, map[string]any{}), 0o600))
	_, err = Resolve(model.Spec{Path: empty})
	assert.Equal(t, errs.ModelFile, errs.CodeOf(err))

	// A directory without config.json is a model_file error.
	_, err = Resolve(model.Spec{Path: t.TempDir()})
	assert.Equal(t, errs.ModelFile, errs.CodeOf(err))
	// So is an unsupported extension.
	p := filepath.Join(dir, "x.bin")
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
	_, err = Resolve(model.Spec{Path: p})
	assert.Equal(t, errs.ModelFile, errs.CodeOf(err))
}

// FuzzGGUF: no input may panic, and parsing stays within the header limits.
func FuzzGGUF(f *testing.F) {
	f.Add(tinyLlama())
	f.Add(tinyLlama()[:100])
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadGGUF(bytes.NewReader(data))
		if err == nil {
			require.Positive(t, m.Params)
			require.LessOrEqual(t, float64(m.Params), model.MaxParams)
			checkFileModel(t, m)
		} else {
			require.Equal(t, errs.ModelFile, errs.CodeOf(err))
		}
	})
}

// checkFileModel asserts what holds for any model read from a file header:
// active parameters within the total, no negative shape figure or size.
func checkFileModel(t *testing.T, m *model.Model) {
	t.Helper()
	require.GreaterOrEqual(t, m.ActiveParams, int64(0), "negative active params")
	require.LessOrEqual(t, m.ActiveParams, m.Params, "more active params than params")
	require.GreaterOrEqual(t, m.FileWeightBytes, int64(0))
	for name, v := range map[string]int{"layers": m.Layers, "hidden": m.Hidden, "heads": m.Heads, "kv_heads": m.KVHeads,
		"head_dim": m.HeadDim, "intermediate": m.Intermediate, "vocab": m.Vocab, "max_context": m.MaxContext,
		"experts": m.Experts, "experts_per_token": m.ExpertsPerToken, "shared_experts": m.SharedExperts,
		"moe_intermediate": m.MoEIntermediate, "dense_layers": m.DenseLayers, "kv_lora_rank": m.KVLoRARank,
		"q_lora_rank": m.QLoRARank, "qk_rope_head_dim": m.QKRopeHeadDim, "qk_nope_head_dim": m.QKNopeHeadDim,
		"v_head_dim": m.VHeadDim} {
		require.GreaterOrEqual(t, v, 0, "negative %s", name)
	}
	for _, l := range m.LayerKinds {
		require.GreaterOrEqual(t, l.Window, 0, "negative window")
	}
}

// FuzzSafetensors: no input may panic.
func FuzzSafetensors(f *testing.F) {
	f.Add(safetensorsFile(f, map[string]any{"a": st("F16", 2, 3)}))
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadSafetensors(bytes.NewReader(data))
		if err == nil {
			require.Positive(t, m.Params)
			require.LessOrEqual(t, float64(m.Params), model.MaxParams)
			checkFileModel(t, m)
		} else {
			require.Equal(t, errs.ModelFile, errs.CodeOf(err))
		}
	})
}

// TestHostileHeadersAllocateLittle: lengths claimed by a header never turn
// into allocations; a short hostile file costs kilobytes, not gigabytes.
func TestHostileHeadersAllocateLittle(t *testing.T) {
	var w ggufWriter
	w.header(3, 1<<19, 1)
	w.str("k")
	w.u32(gString)
	w.u64(maxGGUFStringLen) // allowed length, absent bytes
	var st2 bytes.Buffer
	_ = binary.Write(&st2, binary.LittleEndian, uint64(maxSafetensorsHeader))
	st2.WriteString("{")
	for name, read := range map[string]func() error{
		"gguf":        func() error { _, err := ReadGGUF(bytes.NewReader(w.Bytes())); return err },
		"safetensors": func() error { _, err := ReadSafetensors(bytes.NewReader(st2.Bytes())); return err },
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		require.Error(t, read(), name)
		runtime.ReadMemStats(&after)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), name)
	}
}
