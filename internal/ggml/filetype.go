package ggml

// FileType is a GGUF file's general.file_type: the llama.cpp quantization
// mix the file was made with (enum llama_ftype in llama.cpp include/llama.h,
// https://github.com/ggml-org/llama.cpp/blob/master/include/llama.h). Ids 4-6
// and 33-35 were removed from llama.cpp and are unknown here.
type FileType uint32

// The llama.cpp file types (LLAMA_FTYPE_ALL_F32, LLAMA_FTYPE_MOSTLY_*).
const (
	AllF32         FileType = 0
	MostlyF16      FileType = 1
	MostlyQ4_0     FileType = 2
	MostlyQ4_1     FileType = 3
	MostlyQ8_0     FileType = 7
	MostlyQ5_0     FileType = 8
	MostlyQ5_1     FileType = 9
	MostlyQ2_K     FileType = 10
	MostlyQ3_K_S   FileType = 11
	MostlyQ3_K_M   FileType = 12
	MostlyQ3_K_L   FileType = 13
	MostlyQ4_K_S   FileType = 14
	MostlyQ4_K_M   FileType = 15
	MostlyQ5_K_S   FileType = 16
	MostlyQ5_K_M   FileType = 17
	MostlyQ6_K     FileType = 18
	MostlyIQ2_XXS  FileType = 19
	MostlyIQ2_XS   FileType = 20
	MostlyQ2_K_S   FileType = 21
	MostlyIQ3_XS   FileType = 22
	MostlyIQ3_XXS  FileType = 23
	MostlyIQ1_S    FileType = 24
	MostlyIQ4_NL   FileType = 25
	MostlyIQ3_S    FileType = 26
	MostlyIQ3_M    FileType = 27
	MostlyIQ2_S    FileType = 28
	MostlyIQ2_M    FileType = 29
	MostlyIQ4_XS   FileType = 30
	MostlyIQ1_M    FileType = 31
	MostlyBF16     FileType = 32
	MostlyTQ1_0    FileType = 36
	MostlyTQ2_0    FileType = 37
	MostlyMXFP4MoE FileType = 38
)

// fileType is one mix: its name (the LLAMA_FTYPE_ suffix, as llama-quantize
// and model file names spell it) and the ggml type of the bulk of the weights
// (default_type in llama_model_quantize_impl, src/llama-quant.cpp,
// https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp).
type fileType struct {
	name string
	base Type
}

var fileTypes = map[FileType]fileType{
	AllF32:         {"F32", F32},
	MostlyF16:      {"F16", F16},
	MostlyQ4_0:     {"Q4_0", Q4_0},
	MostlyQ4_1:     {"Q4_1", Q4_1},
	MostlyQ8_0:     {"Q8_0", Q8_0},
	MostlyQ5_0:     {"Q5_0", Q5_0},
	MostlyQ5_1:     {"Q5_1", Q5_1},
	MostlyQ2_K:     {"Q2_K", Q2_K},
	MostlyQ3_K_S:   {"Q3_K_S", Q3_K},
	MostlyQ3_K_M:   {"Q3_K_M", Q3_K},
	MostlyQ3_K_L:   {"Q3_K_L", Q3_K},
	MostlyQ4_K_S:   {"Q4_K_S", Q4_K},
	MostlyQ4_K_M:   {"Q4_K_M", Q4_K},
	MostlyQ5_K_S:   {"Q5_K_S", Q5_K},
	MostlyQ5_K_M:   {"Q5_K_M", Q5_K},
	MostlyQ6_K:     {"Q6_K", Q6_K},
	MostlyIQ2_XXS:  {"IQ2_XXS", IQ2_XXS},
	MostlyIQ2_XS:   {"IQ2_XS", IQ2_XS},
	MostlyQ2_K_S:   {"Q2_K_S", Q2_K},
	MostlyIQ3_XS:   {"IQ3_XS", IQ3_S},
	MostlyIQ3_XXS:  {"IQ3_XXS", IQ3_XXS},
	MostlyIQ1_S:    {"IQ1_S", IQ1_S},
	MostlyIQ4_NL:   {"IQ4_NL", IQ4_NL},
	MostlyIQ3_S:    {"IQ3_S", IQ3_S},
	MostlyIQ3_M:    {"IQ3_M", IQ3_S},
	MostlyIQ2_S:    {"IQ2_S", IQ2_XS},
	MostlyIQ2_M:    {"IQ2_M", IQ2_S},
	MostlyIQ4_XS:   {"IQ4_XS", IQ4_XS},
	MostlyIQ1_M:    {"IQ1_M", IQ1_M},
	MostlyBF16:     {"BF16", BF16},
	MostlyTQ1_0:    {"TQ1_0", TQ1_0},
	MostlyTQ2_0:    {"TQ2_0", TQ2_0},
	MostlyMXFP4MoE: {"MXFP4_MOE", MXFP4},
}

// String is the mix name ("Q4_K_M"), "" for an unknown id.
func (f FileType) String() string { return fileTypes[f].name }

// Base is the ggml type of the bulk of the weights of the mix; ok is false
// for an unknown file type.
func (f FileType) Base() (Type, bool) {
	ft, ok := fileTypes[f]
	return ft.base, ok
}
