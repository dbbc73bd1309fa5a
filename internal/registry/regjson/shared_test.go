package regjson

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
)

func sharedJSON(memory int64) []byte {
	return []byte(fmt.Sprintf(`{"devices":[{"kind":"cuda_gpu","index":0,"available":true,"memory_bytes":%d}]}`, memory))
}

func TestDecodeSharedDecodesEachRegistryOnce(t *testing.T) {
	data := sharedJSON(1 << 30)
	a, err := DecodeShared(data)
	require.NoError(t, err)
	b, err := DecodeShared(append([]byte(nil), data...))
	require.NoError(t, err)
	assert.Same(t, a, b, "equal bytes give the one decoded registry")
	fresh, err := Decode(data)
	require.NoError(t, err)
	assert.Equal(t, fresh, a, "the shared value is what Decode gives")

	c, err := DecodeShared(sharedJSON(2 << 30))
	require.NoError(t, err)
	assert.NotSame(t, a, c)
	assert.Equal(t, int64(2<<30), c.Devices[0].MemoryBytes)
}

func TestDecodeSharedKeepsItsOwnCopyOfTheBytes(t *testing.T) {
	data := sharedJSON(3 << 30)
	a, err := DecodeShared(data)
	require.NoError(t, err)
	copy(data, sharedJSON(4<<30)) // a host reusing its buffer
	b, err := DecodeShared(data)
	require.NoError(t, err)
	assert.NotSame(t, a, b)
	assert.Equal(t, int64(4<<30), b.Devices[0].MemoryBytes)
	assert.Equal(t, int64(3<<30), a.Devices[0].MemoryBytes)
}

func TestDecodeSharedDoesNotRememberErrors(t *testing.T) {
	bad := []byte(`{"devices":[{"kind":"cuda_gpu","memory_bytes":-1}]}`)
	for i := 0; i < 2; i++ {
		_, err := DecodeShared(bad)
		assert.Equal(t, errs.InvalidArgument, errs.CodeOf(err))
	}
	_, err := DecodeShared([]byte(`{"devices":[],"devices":[]}`))
	assert.Equal(t, errs.InvalidJSON, errs.CodeOf(err))
}

func TestDecodeSharedIsBounded(t *testing.T) {
	for i := 0; i < 3*sharedEntries; i++ {
		_, err := DecodeShared(sharedJSON(int64(i+1) << 20))
		require.NoError(t, err)
	}
	decoded.mu.Lock()
	n, size := len(decoded.entries), decoded.bytes
	decoded.mu.Unlock()
	assert.Equal(t, sharedEntries, n)
	assert.LessOrEqual(t, size, sharedMaxBytes)
}
