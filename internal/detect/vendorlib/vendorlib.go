// Package vendorlib holds what the in-process readers of vendor management
// libraries (internal/detect/nvidia/nvml, internal/detect/amd/amdsmi)
// share: a library is loaded and initialised once per process and path,
// bounded by the caller's context (Loader), and every later call runs on
// the OS thread that loaded it, one at a time, again bounded by the
// caller's context (Thread). A load or call still running when the context
// ends is abandoned and remembered as hung, so a driver that hangs costs at
// most one detection timeout and one thread per process.
package vendorlib

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// Loader opens each library path once per process with Load; a path ""
// is Default. Hung is the error (the reader's ErrHung) that a load
// abandoned at its deadline wraps.
type Loader[L any] struct {
	Default string
	Load    func(path string) (L, error)
	Hung    error

	mu   sync.Mutex
	libs map[string]*loadResult[L]
}

type loadResult[L any] struct {
	once  sync.Once
	lib   L
	err   error
	hung  bool // the load never returned
	begun bool // an Open or Start asked for it
}

// Open returns Load(path), running it only on the first Open of path and
// remembering its library or error, and waits for it at most until ctx
// ends: a load still running then is abandoned, and this and every later
// Open of path fail with Hung.
func (ld *Loader[L]) Open(ctx context.Context, path string) (L, error) {
	var none L
	path, lr, hung, _ := ld.result(path)
	if hung {
		return none, fmt.Errorf("%w (loading %s)", ld.Hung, path)
	}
	done := make(chan struct{})
	go func() {
		lr.once.Do(func() { lr.lib, lr.err = ld.Load(path) })
		close(done)
	}()
	select {
	case <-done:
		return lr.lib, lr.err
	case <-ctx.Done():
		ld.mu.Lock()
		lr.hung = true
		ld.mu.Unlock()
		return none, fmt.Errorf("%w (loading %s: %v)", ld.Hung, path, ctx.Err())
	}
}

// Start begins the load of path that Open would run, without waiting for
// it, unless it began already or hung: a later Open of path waits for that
// load, bounded by its own context as always, and it is that Open which
// marks a load hung. A load nobody opens keeps its goroutine (and, when it
// hangs, its thread) as an abandoned one would.
func (ld *Loader[L]) Start(path string) {
	path, lr, hung, begun := ld.result(path)
	if hung || begun {
		return
	}
	go lr.once.Do(func() { lr.lib, lr.err = ld.Load(path) })
}

// result is the load of path ("" for Default) under its full name, made
// if missing, whether it hung, and whether it was asked for before (it is
// now).
func (ld *Loader[L]) result(path string) (string, *loadResult[L], bool, bool) {
	if path == "" {
		path = ld.Default
	}
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if ld.libs == nil {
		ld.libs = map[string]*loadResult[L]{}
	}
	lr := ld.libs[path]
	if lr == nil {
		lr = &loadResult[L]{}
		ld.libs[path] = lr
	}
	begun := lr.begun
	lr.begun = true
	return path, lr, lr.hung, begun
}

// Thread is an OS thread that belongs to one loaded library: it ran the
// library's load and init, and runs each of its reads, one at a time.
type Thread[R any] struct {
	path string
	hung error

	mu     sync.Mutex // one read at a time
	isHung bool
	jobs   chan chan outcome[R]
}

type outcome[R any] struct {
	r   R
	err error
}

// Start runs setup on a new goroutine locked to its OS thread for good
// (dlopen, init: the library's thread-affine state lives there) and waits
// for it. When setup fails, its error is returned and the goroutine ends;
// otherwise the goroutine stays, and each Call of the Thread returned runs
// read(state) on it. path names the library and hung is the error a Call
// that outlives its context wraps.
func Start[S, R any](path string, hung error, setup func() (S, error), read func(S) (R, error)) (S, *Thread[R], error) {
	type started struct {
		s   S
		t   *Thread[R]
		err error
	}
	ready := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is the library's
		s, err := setup()
		if err != nil {
			ready <- started{err: err}
			return
		}
		t := &Thread[R]{path: path, hung: hung, jobs: make(chan chan outcome[R])}
		ready <- started{s: s, t: t}
		for done := range t.jobs { // this thread stays the library's for the process
			r, err := read(s)
			done <- outcome[R]{r, err}
		}
	}()
	st := <-ready
	return st.s, st.t, st.err
}

// Call runs the read on the library's thread and waits at most until ctx
// ends. A read that outlives ctx marks the thread hung: it fails with the
// hung error, and so does every later Call, at once.
func (t *Thread[R]) Call(ctx context.Context) (R, error) {
	var none R
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.isHung {
		return none, t.hung
	}
	done := make(chan outcome[R], 1)
	select {
	case t.jobs <- done:
	case <-ctx.Done():
		return none, ctx.Err()
	}
	select {
	case o := <-done:
		return o.r, o.err
	case <-ctx.Done():
		t.isHung = true
		return none, fmt.Errorf("%w (a read of %s outlived the detection deadline: %v)", t.hung, t.path, ctx.Err())
	}
}
