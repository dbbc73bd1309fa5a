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

// estimate_training refuses tensor_parallel_size, which splits an
// inference plan: a training run's is training.tensor_parallel.
func TestTrainingRefusesInferenceTensorParallel(t *testing.T) {
	_, err := EstimateTraining(request(t, `{"model":{"params_b":7},"tensor_parallel_size":2,"training":{"method":"lora"}}`, trainGPUs(t, 2, 80<<30)))
	require.Error(t, err)
	assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	assert.Contains(t, err.Error(), "estimate_training takes training.tensor_parallel")
}

// The devices trained on: num_devices as given, else every device found
// (at least tensor_parallel), rounded down to a multiple of
// tensor_parallel.
func TestTrainingDeviceCount(t *testing.T) {
	for _, c := range []struct{ numDevices, tp, found, want int }{
		{0, 1, 3, 3}, {0, 2, 5, 4}, {0, 2, 0, 2}, {0, 4, 2, 4}, {3, 1, 8, 3}, {6, 2, 1, 6},
	} {
		s := &trainingSetup{TrainingOptions: TrainingOptions{NumDevices: c.numDevices, TensorParallel: c.tp}}
		assert.Equal(t, c.want, trainingDeviceCount(s, c.found), "%+v", c)
	}
}
