package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

// validateTraining refuses, naming it and its bounds, a training option
// outside them, whichever one it is; the wire decoder refuses most such
// values first (TestTrainingRequestErrors), so the options are set here
// directly.
func TestTrainingOptionOutsideItsBoundsIsNamed(t *testing.T) {
	req := planningOf(t, request(t, `{"model":{"params_b":7}}`, trainGPUs(t, 1, 80<<30)))
	for _, c := range []struct {
		opts TrainingOptions
		name string
		v    int
	}{
		{TrainingOptions{SeqLen: MaxContextLength + 1}, "seq_len", MaxContextLength + 1},
		{TrainingOptions{MicroBatch: maxTrainingMicroBtch + 1}, "micro_batch", maxTrainingMicroBtch + 1},
		{TrainingOptions{TensorParallel: -2}, "tensor_parallel", -2},
		{TrainingOptions{NumDevices: maxTrainingDevices + 1}, "num_devices", maxTrainingDevices + 1},
		{TrainingOptions{LoRARank: maxLoRARank + 1}, "lora_rank", maxLoRARank + 1},
	} {
		_, err := validateTraining(c.opts, req)
		require.Error(t, err, c.name)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err), c.name)
		assert.Contains(t, err.Error(), fmt.Sprintf("training.%s %d is outside [1, ", c.name, c.v))
	}
}

// The optimizers' own names are taken as given, as their aliases are
// taken as them (adam: adamw; paged_adamw_8bit: adamw_8bit).
func TestTrainingOptimizerNamesAreKept(t *testing.T) {
	req := planningOf(t, request(t, `{"model":{"params_b":7}}`, trainGPUs(t, 1, 80<<30)))
	for given, want := range map[string]string{
		"adamw": OptAdamW, "ADAMW_8BIT": OptAdamW8bit, "sgd": OptSGD, "adafactor": OptAdafactor,
		"adam": OptAdamW, "paged_adamw_8bit": OptAdamW8bit, "": OptAdamW,
	} {
		s, err := validateTraining(TrainingOptions{Optimizer: given}, req)
		require.NoError(t, err, given)
		assert.Equal(t, want, s.Optimizer, given)
	}
}
