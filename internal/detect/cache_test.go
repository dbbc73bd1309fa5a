//go:build linux

package detect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry/regjson"
)

// countingCache returns a cache whose detections are counted and answer one
// device whose name records the CUDA_VISIBLE_DEVICES value the run saw.
func countingCache(runs *atomic.Int32, gate <-chan struct{}) *Cache {
	c := NewCache()
	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) {
		runs.Add(1)
		if gate != nil {
			<-gate
		}
		vis, _ := o.lookupEnv("CUDA_VISIBLE_DEVICES")
		reg := registry.New()
		reg.Devices = []registry.Device{{ID: "cuda:0", Kind: registry.KindCUDA, Name: "visible=" + vis,
			Sources: map[string]string{"name": "test"}}}
		reg.Timing = &registry.Timing{TotalMs: 1, Backends: map[string]float64{"test": 1}}
		return reg, nil
	}
	return c
}

func cacheOptions(ttl time.Duration, env map[string]string) Options {
	return Options{Sysroot: "/nonexistent-sysroot", Path: "/nonexistent-bin", CacheTTL: ttl, Env: env,
		LookupEnv: func(string) (string, bool) { return "", false }}
}

func TestCacheReusesWithinTTL(t *testing.T) {
	var runs atomic.Int32
	c := countingCache(&runs, nil)
	opts := cacheOptions(time.Hour, nil)

	first, err := c.Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.False(t, first.Timing.Cached)
	second, err := c.Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.True(t, second.Timing.Cached)
	assert.Equal(t, int32(1), runs.Load())
	assert.Equal(t, first.Devices, second.Devices)
}

func TestCacheTTLExpiry(t *testing.T) {
	var runs atomic.Int32
	c := countingCache(&runs, nil)
	opts := cacheOptions(50*time.Millisecond, nil)
	_, err := c.Detect(context.Background(), opts)
	require.NoError(t, err)
	_, err = c.Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, int32(1), runs.Load(), "fresh entry reused")
	time.Sleep(80 * time.Millisecond)
	reg, err := c.Detect(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, int32(2), runs.Load(), "expired entry detected anew")
	assert.False(t, reg.Timing.Cached)
}

func TestCacheZeroTTLNeverReuses(t *testing.T) {
	var runs atomic.Int32
	c := countingCache(&runs, nil)
	for i := 0; i < 3; i++ {
		_, err := c.Detect(context.Background(), cacheOptions(0, nil))
		require.NoError(t, err)
	}
	assert.Equal(t, int32(3), runs.Load())
}

func TestCacheKeyIncludesVisibility(t *testing.T) {
	var runs atomic.Int32
	c := countingCache(&runs, nil)
	get := func(opts Options) string {
		reg, err := c.Detect(context.Background(), opts)
		require.NoError(t, err)
		return reg.Devices[0].Name
	}
	assert.Equal(t, "visible=0", get(cacheOptions(time.Hour, map[string]string{"CUDA_VISIBLE_DEVICES": "0"})))
	assert.Equal(t, "visible=1", get(cacheOptions(time.Hour, map[string]string{"CUDA_VISIBLE_DEVICES": "1"})))
	assert.Equal(t, "visible=", get(cacheOptions(time.Hour, map[string]string{"CUDA_VISIBLE_DEVICES": ""})))
	assert.Equal(t, "visible=", get(cacheOptions(time.Hour, nil)))
	assert.Equal(t, int32(4), runs.Load(), `"0", "1", set-empty and unset are four answers`)
	assert.Equal(t, "visible=0", get(cacheOptions(time.Hour, map[string]string{"CUDA_VISIBLE_DEVICES": "0"})))
	assert.Equal(t, int32(4), runs.Load())

	// Through the host environment at call time (C getenv), not only the option.
	host := "2"
	opts := cacheOptions(time.Hour, nil)
	opts.LookupEnv = func(name string) (string, bool) {
		if name == "CUDA_VISIBLE_DEVICES" {
			return host, true
		}
		return "", false
	}
	assert.Equal(t, "visible=2", get(opts))
	host = "3" // the host called setenv
	assert.Equal(t, "visible=3", get(opts))
	assert.Equal(t, int32(6), runs.Load())
}

func TestCacheKeyIncludesOptions(t *testing.T) {
	base := cacheOptions(time.Hour, nil).withDefaults()
	variants := map[string]func(o *Options){
		"sysroot":  func(o *Options) { o.Sysroot = "/other" },
		"path":     func(o *Options) { o.Path = "/other/bin" },
		"backends": func(o *Options) { o.Backends = []string{"cuda"} },
		"exclude":  func(o *Options) { o.Exclude = []string{"vulkan"} },
		"no_exec":  func(o *Options) { o.NoExec = true },
		"inline":   func(o *Options) { o.InlineKernelReads = true },
		"timeout":  func(o *Options) { o.Timeout = time.Second },
		"env":      func(o *Options) { o.Env = map[string]string{"HIP_VISIBLE_DEVICES": "0"} },
	}
	seen := map[string]string{cacheKey(base): "base"}
	for name, change := range variants {
		o := base
		change(&o)
		k := cacheKey(o)
		_, dup := seen[k]
		assert.False(t, dup, "%s does not change the key", name)
		seen[k] = name
	}
	o := base
	o.CacheTTL = time.Minute
	assert.Equal(t, cacheKey(base), cacheKey(o), "the TTL is how old an answer may be, not another question")
}

func TestCacheConcurrentCallersShareOneDetection(t *testing.T) {
	var runs atomic.Int32
	gate := make(chan struct{})
	c := countingCache(&runs, gate)
	const n = 16
	regs := make([]*registry.Registry, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			reg, err := c.Detect(context.Background(), cacheOptions(0, nil))
			assert.NoError(t, err)
			regs[i] = reg
		}(i)
	}
	time.Sleep(50 * time.Millisecond)
	close(gate)
	wg.Wait()
	assert.Equal(t, int32(1), runs.Load(), "16 callers, one detection")
	for i := 1; i < n; i++ {
		require.NotNil(t, regs[i])
		assert.Equal(t, regs[0].Devices, regs[i].Devices)
		assert.NotSame(t, regs[0], regs[i], "each caller owns its copy")
		regs[i].Devices[0].Name = fmt.Sprint(i)
	}
	assert.Equal(t, "visible=", regs[0].Devices[0].Name)
}

// TestCacheConcurrentCallersShareOneToolRun runs the real detection path:
// 16 goroutines, one tool script that appends to a counter file.
func TestCacheConcurrentCallersShareOneToolRun(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "count")
	detecttest.WriteTool(t, dir, "nvidia-smi", "echo run >>"+counter+"; sleep 0.2; echo GPU 0")
	probe := machine.Backend{Name: "probe", Detect: func(ctx context.Context, m *machine.Machine) machine.Findings {
		out, w, ok := m.Tool(ctx, "probe", "nvidia-smi", "-L")
		var f machine.Findings
		if !ok {
			f.AddWarning(w)
			return f
		}
		f.Devices = []registry.Device{{ID: "0", Kind: registry.KindCUDA, Name: string(out)}}
		return f
	}}
	c := NewCache()
	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) {
		return detectWith(ctx, o, []machine.Backend{probe})
	}
	opts := Options{Sysroot: t.TempDir(), Path: dir, Timeout: 5 * time.Second, CacheTTL: time.Hour,
		LookupEnv: func(string) (string, bool) { return "", false }}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reg, err := c.Detect(context.Background(), opts)
			if assert.NoError(t, err) && assert.Len(t, reg.Devices, 1) {
				// The tool's newline reaches the name replaced (issue 23 item 11).
				assert.Equal(t, "GPU 0\uFFFD", reg.Devices[0].Name)
			}
		}()
	}
	wg.Wait()
	b, err := os.ReadFile(counter)
	require.NoError(t, err)
	assert.Equal(t, "run\n", string(b))
}

func TestCacheFailedDetectionIsNotCached(t *testing.T) {
	var runs atomic.Int32
	c := NewCache()
	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) {
		runs.Add(1)
		return nil, errors.New("bad sysroot")
	}
	for i := 0; i < 2; i++ {
		_, err := c.Detect(context.Background(), cacheOptions(time.Hour, nil))
		require.Error(t, err)
	}
	assert.Equal(t, int32(2), runs.Load())
}

func TestCachePanickingDetectionReleasesWaiters(t *testing.T) {
	c := NewCache()
	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) { panic("bug") }
	_, err := c.Detect(context.Background(), cacheOptions(time.Hour, nil))
	require.Error(t, err)
	assert.Equal(t, errs.Internal, errs.CodeOf(err))
	assert.Empty(t, c.inflight)
	assert.Empty(t, c.entries)
}

func TestCacheCallerGivingUpDoesNotSpoilOthers(t *testing.T) {
	var runs atomic.Int32
	gate := make(chan struct{})
	c := countingCache(&runs, gate)
	done := make(chan *registry.Registry)
	go func() {
		reg, err := c.Detect(context.Background(), cacheOptions(time.Hour, nil))
		assert.NoError(t, err)
		done <- reg
	}()
	require.Eventually(t, func() bool { return runs.Load() == 1 }, 5*time.Second, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := c.Detect(ctx, cacheOptions(time.Hour, nil))
	require.ErrorIs(t, err, context.DeadlineExceeded, "the impatient caller gets its own error")

	close(gate)
	reg := <-done
	require.NotNil(t, reg)
	assert.Len(t, reg.Devices, 1)
	assert.Equal(t, int32(1), runs.Load(), "both callers waited on one detection")
	reg, err = c.Detect(context.Background(), cacheOptions(time.Hour, nil))
	require.NoError(t, err)
	assert.True(t, reg.Timing.Cached, "and its result was cached")
}

// When the only caller gives up (the CLI's Ctrl-C), the detection is
// cancelled, so its vendor tools stop, and its cut-short result is not
// cached: the next caller runs a detection of its own.
func TestCacheLastCallerGivingUpCancelsDetection(t *testing.T) {
	var runs atomic.Int32
	cancelled := make(chan struct{})
	c := NewCache()
	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) {
		if runs.Add(1) == 1 {
			<-ctx.Done()
			close(cancelled)
		}
		reg := registry.New()
		reg.Timing = &registry.Timing{TotalMs: 1}
		return reg, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := c.Detect(ctx, cacheOptions(time.Hour, nil))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the abandoned detection was not cancelled")
	}
	reg, err := c.Detect(context.Background(), cacheOptions(time.Hour, nil))
	require.NoError(t, err)
	assert.False(t, reg.Timing.Cached, "the abandoned result was not cached")
	assert.Equal(t, int32(2), runs.Load())
}

func TestCacheReturnedRegistriesAreIndependent(t *testing.T) {
	var runs atomic.Int32
	c := countingCache(&runs, nil)
	opts := cacheOptions(time.Hour, nil)
	a, err := c.Detect(context.Background(), opts)
	require.NoError(t, err)
	a.Devices[0].Name = "changed"
	a.Devices[0].Sources["name"] = "changed"
	a.Devices = append(a.Devices, registry.Device{Name: "extra"})
	a.Timing.Backends["test"] = 99
	a.Warnings = append(a.Warnings, registry.Warning{Code: "x"})

	b, err := c.Detect(context.Background(), opts)
	require.NoError(t, err)
	require.Len(t, b.Devices, 1)
	assert.Equal(t, "visible=", b.Devices[0].Name)
	assert.Equal(t, "test", b.Devices[0].Sources["name"])
	assert.Equal(t, 1.0, b.Timing.Backends["test"])
	assert.Empty(t, b.Warnings)
}

// fillValue sets every field reachable from v to a non-zero value, making
// each pointer, slice (two elements) and map (one entry) non-nil.
func fillValue(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillValue(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fillValue(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fillValue(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fillValue(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				fillValue(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	}
}

// sharedMemory lists the paths at which a and b share a pointer, a slice's
// backing array or a map.
func sharedMemory(a, b reflect.Value, path string) []string {
	var out []string
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			out = append(out, path)
		}
		out = append(out, sharedMemory(a.Elem(), b.Elem(), path)...)
	case reflect.Slice:
		if a.Len() == 0 {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			out = append(out, path)
		}
		for i := 0; i < a.Len(); i++ {
			out = append(out, sharedMemory(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		if a.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			out = append(out, path)
		}
		it := a.MapRange()
		for it.Next() {
			out = append(out, sharedMemory(it.Value(), b.MapIndex(it.Key()), fmt.Sprintf("%s[%v]", path, it.Key()))...)
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			out = append(out, sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
		}
	}
	return out
}

// TestCacheCloneSharesNothing fills every field of the data model, including
// fields added after this test was written, and checks the clone is equal but
// shares no memory with the original.
func TestCacheCloneSharesNothing(t *testing.T) {
	var r registry.Registry
	fillValue(reflect.ValueOf(&r).Elem(), 0)
	require.NotEmpty(t, r.Devices)
	require.NotNil(t, r.Devices[0].NUMANode)
	require.NotNil(t, r.SystemIO.Environment)

	c := clone(&r)
	assert.Equal(t, &r, c)
	assert.Empty(t, sharedMemory(reflect.ValueOf(&r).Elem(), reflect.ValueOf(c).Elem(), "Registry"))
	assert.Nil(t, clone(nil))
	shallow := r
	assert.NotEmpty(t, sharedMemory(reflect.ValueOf(&r).Elem(), reflect.ValueOf(&shallow).Elem(), "Registry"),
		"the checker sees sharing in a shallow copy")

	// Nil and empty stay as they were (JSON shows null and [] differently).
	e := registry.New()
	ce := clone(e)
	assert.Equal(t, e, ce)
	assert.NotNil(t, ce.Devices)
	assert.Nil(t, ce.Timing)
}

func TestDetectJSONEncodesAHitOnce(t *testing.T) {
	c := NewCache()
	runs := 0
	c.run = func(context.Context, Options) (*registry.Registry, error) {
		runs++
		r := registry.New()
		r.Timing = &registry.Timing{TotalMs: 1}
		r.Devices = append(r.Devices, registry.Device{ID: "cpu:0", Kind: registry.KindCPU})
		return r, nil
	}
	encodes := 0
	enc := func(r *registry.Registry) ([]byte, error) {
		encodes++
		return regjson.Encode(r)
	}
	opts := Options{Sysroot: "/", LookupEnv: func(string) (string, bool) { return "", false }, CacheTTL: time.Minute}
	miss, err := c.DetectJSON(context.Background(), opts, enc)
	require.NoError(t, err)
	assert.NotContains(t, string(miss), `"cached":true`)
	hit1, err := c.DetectJSON(context.Background(), opts, enc)
	require.NoError(t, err)
	hit2, err := c.DetectJSON(context.Background(), opts, enc)
	require.NoError(t, err)
	assert.Contains(t, string(hit1), `"cached":true`)
	assert.Equal(t, hit1, hit2)
	assert.Equal(t, 1, runs, "one detection")
	assert.Equal(t, 2, encodes, "the miss and the first hit; later hits reuse the bytes")

	// Without a TTL every call detects again.
	opts.CacheTTL = 0
	_, err = c.DetectJSON(context.Background(), opts, enc)
	require.NoError(t, err)
	assert.Equal(t, 2, runs)
}

// TestCacheCallerFliesInlineDetection: with inline runs, a caller that
// cannot give up runs the detection on its own goroutine (no flight
// goroutine to wait for), and callers arriving meanwhile share it as they
// share a flight; a panic is still an internal error for every one of them.
func TestCacheCallerFliesInlineDetection(t *testing.T) {
	var runs atomic.Int32
	gate := make(chan struct{})
	c := countingCache(&runs, gate)
	var flyer atomic.Value
	inner := c.run
	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) {
		flyer.Store(goroutineID())
		return inner(ctx, o)
	}
	opts := cacheOptions(0, nil)
	opts.InlineKernelReads = true
	const n = 4
	regs := make([]*registry.Registry, n)
	callers := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			callers[i] = goroutineID()
			reg, err := c.Detect(context.Background(), opts)
			assert.NoError(t, err)
			regs[i] = reg
		}(i)
	}
	time.Sleep(50 * time.Millisecond)
	close(gate)
	wg.Wait()
	assert.Equal(t, int32(1), runs.Load(), "one detection for every caller")
	assert.Contains(t, callers, flyer.Load(), "run on a caller's own goroutine")
	for i := range n {
		require.NotNil(t, regs[i])
		assert.Equal(t, regs[0].Devices, regs[i].Devices)
	}

	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) { panic("bug") }
	_, err := c.Detect(context.Background(), opts)
	require.Error(t, err)
	assert.Equal(t, errs.Internal, errs.CodeOf(err))
	assert.Empty(t, c.inflight)
}

// goroutineID is the number runtime.Stack prints for the calling goroutine.
func goroutineID() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(b), "goroutine "), " ")
	return id
}

// TestCacheFlightRunsOnAWorker: without inline runs, the flight runs on a
// reused worker goroutine (worker.loop), not on the caller's goroutine and
// not on a goroutine started for it, whose stack grew anew every detection
// (docs/performance.md, "Seventh pass"). A second flight reuses a worker
// the first left idle.
func TestCacheFlightRunsOnAWorker(t *testing.T) {
	var runs atomic.Int32
	c := countingCache(&runs, nil)
	var stacks []string
	inner := c.run
	c.run = func(ctx context.Context, o Options) (*registry.Registry, error) {
		b := make([]byte, 8<<10)
		stacks = append(stacks, string(b[:runtime.Stack(b, false)]))
		return inner(ctx, o)
	}
	opts := cacheOptions(0, nil)
	caller := goroutineID()
	for range 2 {
		_, err := c.Detect(context.Background(), opts)
		require.NoError(t, err)
	}
	require.Len(t, stacks, 2)
	for _, s := range stacks {
		assert.Contains(t, s, "detect.worker.loop", "the flight runs on a worker")
		assert.NotContains(t, s, "detect.(*Cache).fresh.gowrap", "not on a goroutine started for it")
		assert.False(t, strings.HasPrefix(s, "goroutine "+caller+" "), "not on the caller's goroutine")
	}
}

// TestCacheMergesOffTheCallersGoroutine: without inline runs, the answer of
// a flight is merged on a worker, never on the caller's goroutine, whose
// thread is a C host's and must run no read (the merge reads sysfs:
// machine.EnrichPCI, EnrichNICAffinity); and a backend that hangs past the
// deadline, ignoring its context as a read of a hung file would, does not
// hold the caller's answer beyond backendGrace after the deadline
// (include/ai_hwaccel.h, "Blocking"; docs/performance.md, "Eleventh pass").
func TestCacheMergesOffTheCallersGoroutine(t *testing.T) {
	var mu sync.Mutex
	var mergers []string
	c := NewCache()
	c.landed = func() {
		b := make([]byte, 8<<10)
		mu.Lock()
		mergers = append(mergers, string(b[:runtime.Stack(b, false)]))
		mu.Unlock()
	}
	c.run = runBackends(deviceBackend("a"), deviceBackend("b"))
	caller := goroutineID()
	reg, err := c.Detect(context.Background(), emptyMachineOptions(t, "", 5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, deviceNames(reg))

	release := make(chan struct{})
	defer close(release)
	hung := machine.Backend{Name: "hung", Detect: func(context.Context, *machine.Machine) machine.Findings {
		<-release
		return machine.Findings{}
	}}
	c.run = runBackends(deviceBackend("a"), hung)
	opts := emptyMachineOptions(t, "", 200*time.Millisecond)
	start := time.Now()
	reg, err = c.Detect(context.Background(), opts)
	took := time.Since(start)
	require.NoError(t, err)
	assert.Less(t, took, opts.Timeout+backendGrace+300*time.Millisecond, "answered soon after the deadline")
	assert.Equal(t, []string{"a"}, deviceNames(reg))
	timeouts := warningsOf(reg, registry.WarnBackendTimeout)
	require.Len(t, timeouts, 1)
	assert.Equal(t, "hung", timeouts[0].Backend)
	assert.Empty(t, c.inflight)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, mergers, 2)
	for _, s := range mergers {
		assert.False(t, strings.HasPrefix(s, "goroutine "+caller+" "), "not merged on the caller's goroutine")
		assert.Contains(t, s, "detect.worker.loop", "merged on a worker")
	}
}

// runBackends is a Cache.run that detects with the given backends only.
func runBackends(list ...machine.Backend) func(context.Context, Options) (*registry.Registry, error) {
	return func(ctx context.Context, opts Options) (*registry.Registry, error) {
		return detectWith(ctx, opts, list)
	}
}
