package detect

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// cacheKeyVars are the environment variables that change what detection
// reports (device visibility and ordering); they are part of the cache key.
var cacheKeyVars = []string{"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
	"ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ZE_AFFINITY_MASK", "NEURON_RT_VISIBLE_CORES",
	"HABANA_VISIBLE_DEVICES", "TPU_VISIBLE_CHIPS"}

// Cache reuses recent registries for identical options and lets concurrent
// callers with the same options share one detection in flight. Unlike the
// Rust crate's CachedRegistry (ai-hwaccel 1.2.0,
// https://docs.rs/ai-hwaccel/1.2.0), callers
// arriving while a detection runs wait for it instead of starting their own.
type Cache struct {
	mu       sync.Mutex
	entries  map[string]*cacheEntry
	inflight map[string]*flight
	// run performs a detection; nil means Detect (tests count runs with it).
	run func(context.Context, Options) (*registry.Registry, error)
	// landed, when set (tests), is called on the goroutine that flew a
	// flight, which merged its answer, as it releases the waiters.
	landed func()
}

type cacheEntry struct {
	at  time.Time
	reg *registry.Registry
	// hitJSON is the encoded answer of a cache hit (timing.cached = true),
	// made at the first hit and shared read-only by later ones, so a hit
	// costs neither a deep copy nor an encode.
	hitJSON []byte
}

type flight struct {
	done chan struct{}
	reg  *registry.Registry
	err  error
	// waiters counts the callers waiting on the flight; when the last one
	// gives up the flight is abandoned: cancel ends its tools and its
	// result, likely cut short, is neither cached nor joined. Guarded by
	// Cache.mu.
	waiters   int
	abandoned bool
	cancel    context.CancelFunc
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
// returned registry (it is a deep copy).
//
// The shared detection runs detached from any one caller's ctx (it is bounded
// by opts.Timeout on its own), so a caller that gives up early neither cuts
// the others' answer short nor leaves a truncated registry in the cache; that
// caller alone gets ctx's error. When every waiting caller has given up, the
// detection is cancelled: its tools are stopped (a CLI's Ctrl-C leaves no
// vendor tool running) and nothing of it is cached.
func (c *Cache) Detect(ctx context.Context, opts Options) (*registry.Registry, error) {
	opts = opts.withDefaults()
	key := cacheKey(opts)
	c.mu.Lock()
	if e, ok := c.entries[key]; ok && opts.CacheTTL > 0 && time.Since(e.at) <= opts.CacheTTL {
		c.mu.Unlock()
		r := clone(e.reg)
		if r.Timing != nil {
			r.Timing.Cached = true
		}
		return r, nil
	}
	c.mu.Unlock()
	reg, err := c.fresh(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return clone(reg), nil
}

// fresh joins the detection in flight for key, or starts one, and returns
// its registry. The registry is shared with the cache and every other
// waiter: callers must copy it before changing it (Detect) or only read it
// (DetectJSON's encode).
func (c *Cache) fresh(ctx context.Context, key string, opts Options) (*registry.Registry, error) {
	c.mu.Lock()
	f, ok := c.inflight[key]
	if !ok {
		flyCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f = &flight{done: make(chan struct{}), cancel: cancel}
		c.inflight[key] = f
		if ctx.Done() == nil && opts.InlineKernelReads {
			// A caller that cannot give up (the C ABI's) flies a detection
			// with inline runs itself: waiting for another goroutine would
			// hand its thread's P away and back (docs/performance.md,
			// "Fifth pass"), which is what the inline runs save.
			f.waiters++
			c.mu.Unlock()
			c.fly(flyCtx, key, opts, f)
			return f.reg, f.err
		}
		// On a reused worker, not a new goroutine: a new one grew its stack
		// on every detection and woke an idle P to start it
		// (docs/performance.md, "Seventh pass"). It is still not the
		// caller's goroutine: a read that hangs holds a worker, never the
		// caller past the deadline.
		runOnWorker(flightJob{c: c, ctx: flyCtx, key: key, opts: opts, f: f})
	}
	f.waiters++
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.reg, f.err
	case <-ctx.Done():
		c.leave(key, f)
		return nil, ctx.Err()
	}
}

// leave records that one waiter of f gave up, and abandons f when it was
// the last.
func (c *Cache) leave(key string, f *flight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.waiters--
	if f.waiters > 0 || f.abandoned {
		return
	}
	f.abandoned = true
	if c.inflight[key] == f {
		delete(c.inflight, key)
	}
	f.cancel()
}

// DetectJSON is Detect for callers that want the answer encoded: a cache
// hit returns bytes encoded once per cache entry (callers must not modify
// them); a miss encodes the fresh registry. encode must be deterministic.
func (c *Cache) DetectJSON(ctx context.Context, opts Options, encode func(*registry.Registry) ([]byte, error)) ([]byte, error) {
	opts = opts.withDefaults()
	key := cacheKey(opts)
	if opts.CacheTTL > 0 {
		c.mu.Lock()
		if e, ok := c.entries[key]; ok && time.Since(e.at) <= opts.CacheTTL {
			if e.hitJSON == nil {
				r := clone(e.reg)
				if r.Timing != nil {
					r.Timing.Cached = true
				}
				b, err := encode(r)
				if err != nil {
					c.mu.Unlock()
					return nil, err
				}
				e.hitJSON = b
			}
			b := e.hitJSON
			c.mu.Unlock()
			return b, nil
		}
		c.mu.Unlock()
	}
	// A miss encodes the shared registry as it is: encoding only reads it,
	// so the deep copy Detect makes for its callers is not needed here.
	reg, err := c.fresh(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return encode(reg)
}

// flightJob is a flight run on a worker (workers.go).
type flightJob struct {
	c    *Cache
	ctx  context.Context
	key  string
	opts Options
	f    *flight
}

func (j flightJob) run() { j.c.fly(j.ctx, j.key, j.opts, j.f) }

// fly runs the detection of one flight, stores a successful result and
// releases every waiter. A panic becomes an internal error for the waiters:
// this goroutine is not under any caller's recover.
func (c *Cache) fly(ctx context.Context, key string, opts Options, f *flight) {
	defer func() {
		if p := recover(); p != nil {
			f.reg, f.err = nil, errs.New(errs.Internal, "detection panicked: %v", p)
		}
		c.mu.Lock()
		if c.inflight[key] == f {
			delete(c.inflight, key)
		}
		f.cancel()
		if f.err == nil && f.reg != nil && !f.abandoned {
			c.entries[key] = &cacheEntry{at: time.Now(), reg: f.reg}
			c.evict(time.Now())
		}
		c.mu.Unlock()
		if c.landed != nil {
			c.landed()
		}
		close(f.done)
	}()
	run := c.run
	if run == nil {
		run = Detect
	}
	f.reg, f.err = run(ctx, opts)
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
	b.WriteString(o.Sysroot + "\x00" + o.Path + "\x00" + o.Snapshot + "\x00")
	b.WriteString(strings.Join(o.Backends, ",") + "\x00" + strings.Join(o.Exclude, ",") + "\x00")
	if o.NoExec {
		b.WriteString("noexec")
	}
	if o.InlineKernelReads {
		// Its own flight: a caller that did not ask for inline reads must
		// not wait on one that is held by them past its deadline.
		b.WriteString("\x00inline")
	}
	b.WriteString("\x00" + o.Timeout.String())
	for _, v := range cacheKeyVars {
		// Set-but-empty hides every device; unset hides none.
		if val, ok := o.lookupEnv(v); ok {
			b.WriteString("\x00" + v + "=" + val)
		} else {
			b.WriteString("\x00" + v + " unset")
		}
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

// clone deep-copies a registry, so no caller can change what another caller
// or the cache holds. It walks the value by reflection rather than naming
// fields, so a field added to the data model later is copied too.
func clone(r *registry.Registry) *registry.Registry {
	if r == nil {
		return nil
	}
	c := &registry.Registry{}
	deepCopy(reflect.ValueOf(c).Elem(), reflect.ValueOf(r).Elem())
	return c
}

// deepCopy copies src into dst (same type, dst settable), allocating new
// pointers, slices and maps all the way down. The data model has no cycles,
// channels, functions or interfaces holding references.
func deepCopy(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		deepCopy(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			deepCopy(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			v := reflect.New(src.Type().Elem()).Elem()
			deepCopy(v, it.Value())
			m.SetMapIndex(it.Key(), v)
		}
		dst.Set(m)
	case reflect.Struct:
		dst.Set(src) // value fields, including any unexported ones
		for i := 0; i < src.NumField(); i++ {
			if dst.Field(i).CanSet() {
				deepCopy(dst.Field(i), src.Field(i))
			}
		}
	default:
		dst.Set(src)
	}
}
