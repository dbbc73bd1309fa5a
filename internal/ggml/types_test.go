package ggml

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlockBytes checks every block size against the byte count the
// static_assert of its block struct states in ggml/src/ggml-common.h
// (https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-common.h),
// written here as that file writes it: ggml_half is 2 bytes, QK_K 256,
// K_SCALE_SIZE 12.
func TestBlockBytes(t *testing.T) {
	const half, qkK, kScale = 2, 256, 12
	want := map[Type][2]int{ // {block size, bytes}
		Q4_0:    {32, half + 32/2},
		Q4_1:    {32, 2*half + 32/2},
		Q5_0:    {32, half + 4 + 32/2},
		Q5_1:    {32, 2*half + 4 + 32/2},
		Q8_0:    {32, half + 32},
		Q8_1:    {32, 2*half + 32},
		MXFP4:   {32, 1 + 32/2},
		IQ4_NL:  {32, half + 32/2},
		Q2_K:    {qkK, 2*half + qkK/16 + qkK/4},
		Q3_K:    {qkK, qkK/8 + qkK/4 + 12 + half},
		Q4_K:    {qkK, 2*half + kScale + qkK/2},
		Q5_K:    {qkK, 2*half + kScale + qkK/2 + qkK/8},
		Q6_K:    {qkK, qkK/2 + qkK/4 + qkK/16 + half},
		Q8_K:    {qkK, 4 + qkK + qkK/16*2},
		IQ2_XXS: {qkK, half + qkK/8*2}, // uint16_t qs[QK_K/8]
		IQ2_XS:  {qkK, half + qkK/8*2 + qkK/32},
		IQ2_S:   {qkK, half + qkK/4 + qkK/32 + qkK/32},
		IQ3_XXS: {qkK, half + 3*(qkK/8)},
		IQ3_S:   {qkK, half + qkK/4 + qkK/32 + qkK/8 + qkK/64},
		IQ1_S:   {qkK, half + qkK/8 + qkK/32*2},
		IQ1_M:   {qkK, qkK/8 + qkK/16 + qkK/32},
		IQ4_XS:  {qkK, half + 2 + qkK/64 + qkK/2},
		TQ1_0:   {qkK, (qkK-4*qkK/64)/5 + qkK/64 + half},
		TQ2_0:   {qkK, half + qkK/4},
		F32:     {1, 4}, F16: {1, 2}, BF16: {1, 2}, F64: {1, 8},
		I8: {1, 1}, I16: {1, 2}, I32: {1, 4}, I64: {1, 8},
	}
	for typ, w := range want {
		assert.Equal(t, w[0], typ.BlockSize(), typ)
		assert.Equal(t, w[1], typ.BlockBytes(), typ)
	}
	n := 0
	for i := Type(0); i < 64; i++ {
		if i.Known() {
			n++
		}
	}
	assert.Equal(t, len(want), n, "every known type is checked")
}

// TestIDs pins the enum ggml_type values of ggml/include/ggml.h.
func TestIDs(t *testing.T) {
	assert.Equal(t, Type(12), Q4_K)
	assert.Equal(t, Type(30), BF16)
	assert.Equal(t, Type(39), MXFP4)
	for _, removed := range []Type{4, 5, 31, 32, 33, 36, 37, 38, 40} {
		assert.False(t, removed.Known(), removed)
		assert.Equal(t, "", removed.String())
		assert.Zero(t, removed.BitsPerWeight())
	}
}

func TestBitsAndRows(t *testing.T) {
	assert.InDelta(t, 4.5, Q4_K.BitsPerWeight(), 1e-9)
	assert.InDelta(t, 8.5, Q8_0.BitsPerWeight(), 1e-9)
	assert.InDelta(t, 6.5625, Q6_K.BitsPerWeight(), 1e-9)
	b, ok := Q4_K.RowBytes(4096)
	require.True(t, ok)
	assert.Equal(t, int64(16*144), b)
	_, ok = Q4_K.RowBytes(100) // not a multiple of 256
	assert.False(t, ok)
	_, ok = Type(4).RowBytes(32)
	assert.False(t, ok)
	_, ok = F32.RowBytes(-1)
	assert.False(t, ok)
}

func TestParseType(t *testing.T) {
	for i := Type(0); i < Type(len(layouts)); i++ {
		if !i.Known() {
			continue
		}
		got, ok := ParseType(i.String())
		require.True(t, ok, i)
		assert.Equal(t, i, got)
	}
	got, ok := ParseType(" iq4_xs ")
	assert.True(t, ok)
	assert.Equal(t, IQ4_XS, got)
	_, ok = ParseType("q4_k_m") // a file type, not a tensor type
	assert.False(t, ok)
	_, ok = ParseType("")
	assert.False(t, ok)
}

func TestIsWeightFormat(t *testing.T) {
	for _, typ := range []Type{Q4_0, Q4_K, IQ4_XS, MXFP4, TQ1_0} {
		assert.True(t, typ.IsWeightFormat(), typ)
	}
	for _, typ := range []Type{F32, F16, BF16, F64, I8, I32, Q8_1, Q8_K, Type(4)} {
		assert.False(t, typ.IsWeightFormat(), typ)
	}
}

// TestFileTypes pins enum llama_ftype of llama.cpp include/llama.h and the default
// types of llama_model_quantize_impl (src/llama-quant.cpp).
func TestFileTypes(t *testing.T) {
	cases := []struct {
		ft   FileType
		name string
		base Type
	}{
		{15, "Q4_K_M", Q4_K}, {7, "Q8_0", Q8_0}, {18, "Q6_K", Q6_K},
		{21, "Q2_K_S", Q2_K}, {22, "IQ3_XS", IQ3_S}, {28, "IQ2_S", IQ2_XS},
		{29, "IQ2_M", IQ2_S}, {32, "BF16", BF16}, {38, "MXFP4_MOE", MXFP4},
	}
	for _, c := range cases {
		assert.Equal(t, c.name, c.ft.String())
		base, ok := c.ft.Base()
		assert.True(t, ok)
		assert.Equal(t, c.base, base, c.name)
	}
	for _, removed := range []FileType{4, 5, 6, 33, 34, 35, 39} {
		assert.Equal(t, "", removed.String(), removed)
		_, ok := removed.Base()
		assert.False(t, ok, removed)
	}
}
