package model

import "strings"

// GGMLType is a ggml tensor type id as stored in GGUF tensor infos.
type GGMLType uint32

// ggmlTypeInfo is the block layout of one ggml type: BlockSize weights are
// stored in TypeSize bytes (scales included). Facts from the type_traits
// table of ggml/src/ggml.c and the block structs of ggml/src/ggml-common.h
// (github.com/ggml-org/llama.cpp); ids from enum ggml_type in
// ggml/include/ggml.h. Removed ids (4, 5, 31-33, 36-38) are absent.
type ggmlTypeInfo struct {
	Name      string
	BlockSize int
	TypeSize  int
}

var ggmlTypes = map[GGMLType]ggmlTypeInfo{
	0:  {"F32", 1, 4},
	1:  {"F16", 1, 2},
	2:  {"Q4_0", 32, 18},
	3:  {"Q4_1", 32, 20},
	6:  {"Q5_0", 32, 22},
	7:  {"Q5_1", 32, 24},
	8:  {"Q8_0", 32, 34},
	9:  {"Q8_1", 32, 36},
	10: {"Q2_K", 256, 84},
	11: {"Q3_K", 256, 110},
	12: {"Q4_K", 256, 144},
	13: {"Q5_K", 256, 176},
	14: {"Q6_K", 256, 210},
	15: {"Q8_K", 256, 292},
	16: {"IQ2_XXS", 256, 66},
	17: {"IQ2_XS", 256, 74},
	18: {"IQ3_XXS", 256, 98},
	19: {"IQ1_S", 256, 50},
	20: {"IQ4_NL", 32, 18},
	21: {"IQ3_S", 256, 110},
	22: {"IQ2_S", 256, 82},
	23: {"IQ4_XS", 256, 136},
	24: {"I8", 1, 1},
	25: {"I16", 1, 2},
	26: {"I32", 1, 4},
	27: {"I64", 1, 8},
	28: {"F64", 1, 8},
	29: {"IQ1_M", 256, 56},
	30: {"BF16", 1, 2},
	34: {"TQ1_0", 256, 54},
	35: {"TQ2_0", 256, 66},
	39: {"MXFP4", 32, 17},
}

// GGMLTypeByName returns the ggml type of a name such as "q4_k" (any case).
func GGMLTypeByName(name string) (GGMLType, bool) {
	up := strings.ToUpper(name)
	for id, t := range ggmlTypes {
		if t.Name == up {
			return id, true
		}
	}
	return 0, false
}

// Name is the ggml name of the type ("Q4_K"), or "" for an unknown id.
func (t GGMLType) Name() string { return ggmlTypes[t].Name }

// Known reports whether the id is a current ggml type.
func (t GGMLType) Known() bool { _, ok := ggmlTypes[t]; return ok }

// BitsPerWeight is the storage cost of one weight including block scales
// (TypeSize·8 / BlockSize), 0 for an unknown type.
func (t GGMLType) BitsPerWeight() float64 {
	info, ok := ggmlTypes[t]
	if !ok {
		return 0
	}
	return float64(info.TypeSize) * 8 / float64(info.BlockSize)
}

// RowBytes is the storage of n weights of this type, as ggml_row_size
// computes it: n must be a multiple of the block size; ok is false when it
// is not or the type is unknown.
func (t GGMLType) RowBytes(n int64) (int64, bool) {
	info, known := ggmlTypes[t]
	if !known || n < 0 || n%int64(info.BlockSize) != 0 {
		return 0, false
	}
	return n / int64(info.BlockSize) * int64(info.TypeSize), true
}

// ggufFileTypes maps general.file_type (enum llama_ftype in
// include/llama.h) to the name of the whole-file quantization mix.
var ggufFileTypes = map[uint32]string{
	0:  "F32",
	1:  "F16",
	2:  "Q4_0",
	3:  "Q4_1",
	7:  "Q8_0",
	8:  "Q5_0",
	9:  "Q5_1",
	10: "Q2_K",
	11: "Q3_K_S",
	12: "Q3_K_M",
	13: "Q3_K_L",
	14: "Q4_K_S",
	15: "Q4_K_M",
	16: "Q5_K_S",
	17: "Q5_K_M",
	18: "Q6_K",
	19: "IQ2_XXS",
	20: "IQ2_XS",
	21: "Q2_K_S",
	22: "IQ3_XS",
	23: "IQ3_XXS",
	24: "IQ1_S",
	25: "IQ4_NL",
	26: "IQ3_S",
	27: "IQ3_M",
	28: "IQ2_S",
	29: "IQ2_M",
	30: "IQ4_XS",
	31: "IQ1_M",
	32: "BF16",
	36: "TQ1_0",
	37: "TQ2_0",
	38: "MXFP4_MOE",
}

// FileTypeName is the quantization mix name of a general.file_type value,
// "" when unknown.
func FileTypeName(ft uint32) string { return ggufFileTypes[ft] }
