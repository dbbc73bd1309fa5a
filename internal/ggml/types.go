// Package ggml holds the facts of the ggml tensor types and llama.cpp file
// types that GGUF files record: ids, names and block layouts. It is the one
// table model parsing (internal/model) and weight sizing (internal/quant)
// read; names are for the edges only (parsing user input, printing).
package ggml

import "strings"

// Type is a ggml tensor type id as stored in GGUF tensor infos (enum
// ggml_type in ggml/include/ggml.h,
// https://github.com/ggml-org/llama.cpp/blob/master/ggml/include/ggml.h).
type Type uint32

// The ggml types. Ids 4, 5, 31-33 and 36-38 were removed from ggml and are
// unknown here, as they are to current GGUF readers.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// layout is the block layout of one type: blockSize weights are stored in
// typeSize bytes, scales included.
type layout struct {
	name      string
	blockSize int
	typeSize  int
}

// layouts is indexed by Type. Block sizes and type sizes are the
// blck_size/type_size of the type_traits table in ggml/src/ggml.c
// (https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml.c), which
// are QK_* and sizeof(block_*) of ggml/src/ggml-common.h
// (https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-common.h,
// whose static_asserts state each block's bytes); names are type_name.
var layouts = [...]layout{
	F32:     {"F32", 1, 4},
	F16:     {"F16", 1, 2},
	Q4_0:    {"Q4_0", 32, 18},
	Q4_1:    {"Q4_1", 32, 20},
	Q5_0:    {"Q5_0", 32, 22},
	Q5_1:    {"Q5_1", 32, 24},
	Q8_0:    {"Q8_0", 32, 34},
	Q8_1:    {"Q8_1", 32, 36},
	Q2_K:    {"Q2_K", 256, 84},
	Q3_K:    {"Q3_K", 256, 110},
	Q4_K:    {"Q4_K", 256, 144},
	Q5_K:    {"Q5_K", 256, 176},
	Q6_K:    {"Q6_K", 256, 210},
	Q8_K:    {"Q8_K", 256, 292},
	IQ2_XXS: {"IQ2_XXS", 256, 66},
	IQ2_XS:  {"IQ2_XS", 256, 74},
	IQ3_XXS: {"IQ3_XXS", 256, 98},
	IQ1_S:   {"IQ1_S", 256, 50},
	IQ4_NL:  {"IQ4_NL", 32, 18},
	IQ3_S:   {"IQ3_S", 256, 110},
	IQ2_S:   {"IQ2_S", 256, 82},
	IQ4_XS:  {"IQ4_XS", 256, 136},
	I8:      {"I8", 1, 1},
	I16:     {"I16", 1, 2},
	I32:     {"I32", 1, 4},
	I64:     {"I64", 1, 8},
	F64:     {"F64", 1, 8},
	IQ1_M:   {"IQ1_M", 256, 56},
	BF16:    {"BF16", 1, 2},
	TQ1_0:   {"TQ1_0", 256, 54},
	TQ2_0:   {"TQ2_0", 256, 66},
	MXFP4:   {"MXFP4", 32, 17},
}

func (t Type) layout() (layout, bool) {
	if int(t) >= len(layouts) || layouts[t].blockSize == 0 {
		return layout{}, false
	}
	return layouts[t], true
}

// Known reports whether t is a current ggml type.
func (t Type) Known() bool { _, ok := t.layout(); return ok }

// String is the ggml name of the type ("Q4_K"), "" for an unknown id.
func (t Type) String() string { l, _ := t.layout(); return l.name }

// BlockSize is the number of weights one block holds (1 for plain float and
// integer types), 0 for an unknown type.
func (t Type) BlockSize() int { l, _ := t.layout(); return l.blockSize }

// BlockBytes is the storage of one block, scales included; 0 when unknown.
func (t Type) BlockBytes() int { l, _ := t.layout(); return l.typeSize }

// BitsPerWeight is the storage cost of one weight including block scales
// (BlockBytes·8 / BlockSize), 0 for an unknown type.
func (t Type) BitsPerWeight() float64 {
	l, ok := t.layout()
	if !ok {
		return 0
	}
	return float64(l.typeSize) * 8 / float64(l.blockSize)
}

// RowBytes is the storage of n weights of this type, as ggml_row_size
// computes it: n must be a multiple of the block size; ok is false when it
// is not or the type is unknown.
func (t Type) RowBytes(n int64) (int64, bool) {
	l, known := t.layout()
	if !known || n < 0 || n%int64(l.blockSize) != 0 {
		return 0, false
	}
	return n / int64(l.blockSize) * int64(l.typeSize), true
}

// IsWeightFormat reports whether t is a quantized weight storage format:
// not a float type, not an integer tensor type, and not one of the Q8_1/Q8_K
// types ggml uses only for activations in dot products (their from_float is
// the vec_dot_type of other types, type_traits in ggml/src/ggml.c).
func (t Type) IsWeightFormat() bool {
	switch t {
	case F32, F16, BF16, F64, I8, I16, I32, I64, Q8_1, Q8_K:
		return false
	}
	return t.Known()
}

// ParseType reads a ggml type name in any case ("q4_k"); for user input.
func ParseType(name string) (Type, bool) {
	up := strings.ToUpper(strings.TrimSpace(name))
	for i, l := range layouts {
		if l.blockSize != 0 && l.name == up {
			return Type(i), true
		}
	}
	return 0, false
}
