package regjson

import (
	"bytes"
	"hash/maphash"
	"sync"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// DecodeShared is Decode for a registry its caller only reads: a host that
// plans on the same machine asks with the same registry bytes every time,
// and decoding them was most of a plan's cost (docs/performance.md). The
// same bytes decode once; later calls return the same *registry.Registry, which is
// shared between callers and goroutines and must never be modified (the
// planner copies the devices it works on). Errors are not remembered.
func DecodeShared(data []byte) (*registry.Registry, error) {
	h := maphash.Bytes(decoded.seed, data)
	if r := decoded.find(h, data); r != nil {
		return r, nil
	}
	r, err := Decode(data)
	if err != nil {
		return nil, err
	}
	decoded.add(h, data, r)
	return r, nil
}

// Bounds of the remembered registries: a few machines' registries, and
// none so large that keeping its bytes would matter (a 4096-device registry
// is about 3 MB).
const (
	sharedEntries  = 16
	sharedMaxBytes = 16 << 20
	sharedMaxOne   = 4 << 20
)

type sharedEntry struct {
	hash uint64
	data []byte // a copy: the caller's buffer may be reused
	reg  *registry.Registry
}

// decoded holds recently decoded registries, oldest first.
var decoded = &sharedRegistries{seed: maphash.MakeSeed()}

type sharedRegistries struct {
	seed    maphash.Seed
	mu      sync.Mutex
	entries []sharedEntry
	bytes   int
}

func (s *sharedRegistries) find(h uint64, data []byte) *registry.Registry {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.hash == h && bytes.Equal(e.data, data) {
			return e.reg
		}
	}
	return nil
}

func (s *sharedRegistries) add(h uint64, data []byte, r *registry.Registry) {
	if len(data) > sharedMaxOne {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.hash == h && bytes.Equal(e.data, data) {
			return // another goroutine decoded it meanwhile
		}
	}
	for len(s.entries) > 0 && (len(s.entries) >= sharedEntries || s.bytes+len(data) > sharedMaxBytes) {
		s.bytes -= len(s.entries[0].data)
		s.entries = s.entries[1:]
	}
	s.entries = append(s.entries, sharedEntry{hash: h, data: bytes.Clone(data), reg: r})
	s.bytes += len(data)
}
