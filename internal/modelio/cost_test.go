package modelio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Issue 14 item 5: a crafted header must cost memory and time linear in its
// bytes. Each header here is a few MB shaped to hit one amplifying path
// that existed: a map update per numeric array element (hashing a 60 KiB key
// 65 536 times per array: quadratic time), an allocation per number read,
// two copies of every key, and safetensors headers decoded into a map of raw
// messages and then decoded again per tensor (about 8x the header in
// allocations). The bound is 3x the header plus 1 MiB of allocations, and
// a few seconds of time (generous: the CI machine is shared and -race is
// slower).
func TestHeaderCostIsLinearInBytes(t *testing.T) {
	gguf := func(build func(w *ggufWriter)) func() []byte {
		return func() []byte {
			var w ggufWriter
			build(&w)
			return w.Bytes()
		}
	}
	safetensors := func(body func(b *strings.Builder)) func() []byte {
		return func() []byte {
			var b strings.Builder
			body(&b)
			var out bytes.Buffer
			_ = binary.Write(&out, binary.LittleEndian, uint64(b.Len()))
			out.WriteString(b.String())
			return out.Bytes()
		}
	}
	longKey := strings.Repeat("k", 60<<10)
	cases := []struct {
		name string
		data func() []byte
		read func([]byte) error
	}{
		{"gguf numeric arrays under long keys", gguf(func(w *ggufWriter) {
			w.header(3, 0, 64)
			for i := 0; i < 64; i++ {
				w.str(fmt.Sprintf("%s%02d", longKey, i))
				w.u32(gArray)
				w.u32(gUint8)
				w.u64(1 << 16)
				w.Write(make([]byte, 1<<16))
			}
		}), readGGUFBytes},
		{"gguf many tensors", gguf(func(w *ggufWriter) {
			w.header(3, 1<<17, 1)
			w.kvString("general.architecture", "llama")
			for i := 0; i < 1<<17; i++ {
				w.tensor(fmt.Sprintf("t%d", i), 0, 4, 4)
			}
		}), readGGUFBytes},
		{"gguf many long keys", gguf(func(w *ggufWriter) {
			w.header(3, 0, 4096)
			for i := 0; i < 4096; i++ {
				w.kvU32(fmt.Sprintf("%01000d", i), 1)
			}
		}), readGGUFBytes},
		{"gguf millions of empty strings", gguf(func(w *ggufWriter) {
			w.header(3, 0, 1)
			w.str("k")
			w.u32(gArray)
			w.u32(gString)
			w.u64(1 << 20)
			for i := 0; i < 1<<20; i++ {
				w.u64(0)
			}
		}), readGGUFBytes},
		{"safetensors many tensors", safetensors(func(b *strings.Builder) {
			b.WriteString("{")
			for i := 0; i < 1<<17; i++ {
				fmt.Fprintf(b, `"t%d":{"dtype":"F16","shape":[1,1],"data_offsets":[0,2]},`, i)
			}
			b.WriteString(`"last":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`)
		}), readSafetensorsBytes},
		{"safetensors long metadata", safetensors(func(b *strings.Builder) {
			b.WriteString(`{"__metadata__":{"a":"` + strings.Repeat("x", 8<<20) + `"},"t":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`)
		}), readSafetensorsBytes},
	}
	for _, tc := range cases {
		data := tc.data()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		_ = tc.read(data)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes read in %v, %d bytes allocated", tc.name, len(data), elapsed, allocated)
		assert.LessOrEqual(t, allocated, uint64(3*len(data)+1<<20), tc.name)
		assert.Less(t, elapsed, 5*time.Second, tc.name)
	}
}

// Issue 23 item 12: a GGUF header costs the memory of what planning keeps
// from it, not of its size. A crafted header of 64 KiB keys (+1006 MB peak
// RSS for 1 GiB of keys, all kept) and one whose array holds a million
// strings (each copied, then dropped) must each allocate less than 2 MiB
// while reading 64 MiB and 24 MiB. Real headers of these sizes are mostly a
// vocabulary array, which planning needs only the length of.
func TestHeaderMemoryIsWhatPlanningKeeps(t *testing.T) {
	hugeKeys := func() []byte {
		var w ggufWriter
		w.header(3, 0, 1024)
		for i := 0; i < 1024; i++ {
			w.kvU32(fmt.Sprintf("%065535d", i), 1)
		}
		return w.Bytes()
	}
	hugeArray := func() []byte {
		var w ggufWriter
		w.header(3, 0, 1)
		w.str("tokenizer.ggml.tokens")
		w.u32(gArray)
		w.u32(gString)
		w.u64(1 << 20)
		for i := 0; i < 1<<20; i++ {
			w.str(fmt.Sprintf("token%010d", i))
		}
		return w.Bytes()
	}
	for name, data := range map[string][]byte{"64 KiB keys": hugeKeys(), "a million strings": hugeArray()} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := readGGUFBytes(data)
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes read, %d bytes allocated, %v", name, len(data), allocated, err)
		assert.Contains(t, fmt.Sprint(err), "general.architecture", name)
		assert.Less(t, allocated, uint64(2<<20), name)
	}
}

func readGGUFBytes(b []byte) error {
	_, err := ReadGGUF(bytes.NewReader(b))
	return err
}

func readSafetensorsBytes(b []byte) error {
	_, err := ReadSafetensors(bytes.NewReader(b))
	return err
}
