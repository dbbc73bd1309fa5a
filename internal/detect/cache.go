package detect

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// cacheKeyVars are the environment variables that change what detection
// reports (device visibility and ordering); they are part of the cache key.
var cacheKeyVars = []string{"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
	"ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK", "NEURON_RT_VISIBLE_CORES",
	"HABANA_VISIBLE_DEVICES", "TPU_VISIBLE_CHIPS"}

// Cache reuses recent registries for identical options and lets concurrent
// callers with the same options share one detection in flight.
type Cache struct {
	mu       sync.Mutex
	entries  map[string]*cacheEntry
	inflight map[string]*flight
}

type cacheEntry struct {
	at  time.Time
	reg *registry.Registry
}

type flight struct {
	done chan struct{}
	reg  *registry.Registry
	err  error
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{entries: map[string]*cacheEntry{}, inflight: map[string]*flight{}}
}

// Shared is the process-wide cache used by the C ABI and the CLI.
var Shared = NewCache()

// Detect returns a registry for opts: a cached one no older than
// opts.CacheTTL when there is one, else the result of a detection shared with
// every concurrent caller that has the same options. The caller owns the
// returned registry (it is a copy).
func (c *Cache) Detect(ctx context.Context, opts Options) (*registry.Registry, error) {
	opts = opts.withDefaults()
	key := cacheKey(opts)
	now := time.Now()
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && opts.CacheTTL > 0 && now.Sub(e.at) <= opts.CacheTTL {
		c.mu.Unlock()
		r := clone(e.reg)
		if r.Timing != nil {
			r.Timing.Cached = true
		}
		return r, nil
	}
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			if f.err != nil {
				return nil, f.err
			}
			return clone(f.reg), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	c.mu.Unlock()

	f.reg, f.err = Detect(ctx, opts)
	c.mu.Lock()
	delete(c.inflight, key)
	if f.err == nil {
		c.entries[key] = &cacheEntry{at: time.Now(), reg: f.reg}
		c.evict(time.Now())
	}
	c.mu.Unlock()
	close(f.done)
	if f.err != nil {
		return nil, f.err
	}
	return clone(f.reg), nil
}

// evict drops entries older than an hour and keeps at most 64; called with mu held.
func (c *Cache) evict(now time.Time) {
	for k, e := range c.entries {
		if now.Sub(e.at) > time.Hour {
			delete(c.entries, k)
		}
	}
	for len(c.entries) > 64 {
		var oldest string
		var at time.Time
		for k, e := range c.entries {
			if oldest == "" || e.at.Before(at) {
				oldest, at = k, e.at
			}
		}
		delete(c.entries, oldest)
	}
}

// cacheKey identifies the options that change the answer, including the
// visibility variables as seen now.
func cacheKey(o Options) string {
	var b strings.Builder
	b.WriteString(o.Sysroot + "\x00" + o.Path + "\x00")
	b.WriteString(strings.Join(o.Backends, ",") + "\x00" + strings.Join(o.Exclude, ",") + "\x00")
	if o.NoExec {
		b.WriteString("noexec")
	}
	b.WriteString("\x00" + o.Timeout.String())
	for _, v := range cacheKeyVars {
		val, _ := o.lookupEnv(v)
		b.WriteString("\x00" + v + "=" + val)
	}
	keys := make([]string, 0, len(o.Env))
	for k := range o.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("\x00env:" + k + "=" + o.Env[k])
	}
	return b.String()
}

// clone deep-copies a registry through its own fields (cheap: no JSON).
func clone(r *registry.Registry) *registry.Registry {
	c := *r
	c.Devices = make([]registry.Device, len(r.Devices))
	for i, d := range r.Devices {
		if d.MemoryFreeBytes != nil {
			v := *d.MemoryFreeBytes
			d.MemoryFreeBytes = &v
		}
		if d.NUMANode != nil {
			v := *d.NUMANode
			d.NUMANode = &v
		}
		if d.PCIe != nil {
			v := *d.PCIe
			d.PCIe = &v
		}
		if d.MIG != nil {
			v := *d.MIG
			v.Children = append([]string(nil), v.Children...)
			d.MIG = &v
		}
		d.Quantizations = append([]string(nil), d.Quantizations...)
		if d.Sources != nil {
			s := make(map[string]string, len(d.Sources))
			for k, v := range d.Sources {
				s[k] = v
			}
			d.Sources = s
		}
		c.Devices[i] = d
	}
	c.SystemIO.Interconnects = make([]registry.Interconnect, len(r.SystemIO.Interconnects))
	for i, ic := range r.SystemIO.Interconnects {
		ic.Devices = append([]string{}, ic.Devices...)
		c.SystemIO.Interconnects[i] = ic
	}
	c.SystemIO.NUMANodes = append([]registry.NUMANode{}, r.SystemIO.NUMANodes...)
	c.SystemIO.Storage = append([]registry.Storage(nil), r.SystemIO.Storage...)
	if r.SystemIO.Environment != nil {
		e := *r.SystemIO.Environment
		c.SystemIO.Environment = &e
	}
	c.Warnings = append([]registry.Warning{}, r.Warnings...)
	if r.Timing != nil {
		t := *r.Timing
		t.Backends = make(map[string]float64, len(r.Timing.Backends))
		for k, v := range r.Timing.Backends {
			t.Backends[k] = v
		}
		c.Timing = &t
	}
	return &c
}
