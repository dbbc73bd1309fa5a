package plan

import "fmt"

// The request options an answer's hints tell the caller to set, spelled as
// the request names them (docs/requests.md). Each is one constant so that a
// front end with spellings of its own (the CLI's flags: internal/cli
// OptionWords) rewrites exactly these phrases, and the planner knows
// nothing of it.
const (
	HintCPUOffload      = "cpu_offload: true"
	HintIncludeCPU      = "include_cpu: true"
	HintPlacementFewest = `"placement": "fewest"`
	HintCheckpointing   = "gradient_checkpointing"
	HintZeRO3           = "zero_stage 3"
)

// HintEngine is the phrase that names engine e in a hint: "engine":
// "llama.cpp".
func HintEngine(e string) string {
	return fmt.Sprintf("%q: %q", "engine", e)
}

// HintQuant is the phrase that names level q in a hint: "quant": "q3_k_m".
func HintQuant(q string) string {
	return fmt.Sprintf("%q: %q", "quant", q)
}

// HintMethod is the phrase that names training method m in a hint:
// "method": "qlora".
func HintMethod(m string) string {
	return fmt.Sprintf("%q: %q", "method", m)
}

// HintOptimizer is the phrase that names training optimizer o in a hint:
// "optimizer": "adamw_8bit".
func HintOptimizer(o string) string {
	return fmt.Sprintf("%q: %q", "optimizer", o)
}

// HintLoRARank is the phrase that names LoRA rank r in a hint:
// "lora_rank": 16.
func HintLoRARank(r int) string {
	return fmt.Sprintf("%q: %d", "lora_rank", r)
}

// HintMicroBatch is the phrase that names micro-batch b in a hint:
// "micro_batch": 1.
func HintMicroBatch(b int) string {
	return fmt.Sprintf("%q: %d", "micro_batch", b)
}

// HintSeqLen is the phrase that names training sequence length n in a
// hint: "seq_len": 2048.
func HintSeqLen(n int) string {
	return fmt.Sprintf("%q: %d", "seq_len", n)
}
