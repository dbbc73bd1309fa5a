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

// With several counts out of range the error names the first in the
// documented order (seq_len, micro_batch, num_devices, tensor_parallel,
// lora_rank: docs/requests.md, training), the same every time: checkBounds
// walked a map, so which one it named was Go's map order.
func TestTrainingBoundsNameTheFirstOutOfRangeEveryTime(t *testing.T) {
	req := planningOf(t, request(t, `{"model":{"params_b":7}}`, trainGPUs(t, 1, 80<<30)))
	for _, c := range []struct {
		opts TrainingOptions
		want string
	}{
		{TrainingOptions{SeqLen: -1, MicroBatch: -1, NumDevices: maxTrainingDevices + 1, TensorParallel: -1, LoRARank: maxLoRARank + 1},
			"request: training.seq_len -1 is outside [1, "},
		{TrainingOptions{MicroBatch: -1, NumDevices: maxTrainingDevices + 1, TensorParallel: -1, LoRARank: maxLoRARank + 1},
			"request: training.micro_batch -1 is outside [1, "},
		{TrainingOptions{NumDevices: maxTrainingDevices + 1, TensorParallel: -1, LoRARank: maxLoRARank + 1},
			fmt.Sprintf("request: training.num_devices %d is outside [1, ", maxTrainingDevices+1)},
		{TrainingOptions{TensorParallel: -1, LoRARank: maxLoRARank + 1},
			"request: training.tensor_parallel -1 is outside [1, "},
	} {
		seen := map[string]bool{}
		for range 50 {
			_, err := validateTraining(c.opts, req)
			require.Error(t, err)
			seen[err.Error()] = true
		}
		require.Len(t, seen, 1, "one input, one message: %v", seen)
		for msg := range seen {
			assert.Contains(t, msg, c.want)
		}
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
