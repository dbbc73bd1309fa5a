package quant

// mix is a llama.cpp quantization mix (llama_ftype): most weight matrices
// in the base type, some raised to higher types by llama-quant's per-tensor
// rules.
type mix struct {
	base string // ggml type of the bulk of the weights
	// effectiveBits is the whole-file bits per weight, used when the model's
	// shape is unknown.
	effectiveBits float64
}

// mixes lists the llama.cpp mixes. effectiveBits: see docs/accuracy.md
// ("Weights") for the source of each figure.
var mixes = map[Level]mix{
	"q2_k":   {base: "Q2_K", effectiveBits: 2.96},
	"q3_k_s": {base: "Q3_K", effectiveBits: 3.5},
	"q3_k_m": {base: "Q3_K", effectiveBits: 3.91},
	"q3_k_l": {base: "Q3_K", effectiveBits: 4.27},
	"q4_k_s": {base: "Q4_K", effectiveBits: 4.66},
	"q4_k_m": {base: "Q4_K", effectiveBits: 4.89},
	"q5_k_s": {base: "Q5_K", effectiveBits: 5.57},
	"q5_k_m": {base: "Q5_K", effectiveBits: 5.7},
	"q6_k":   {base: "Q6_K", effectiveBits: 6.56},
}
