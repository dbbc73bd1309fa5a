package vendorlib

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errHung = errors.New("test: hung")

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A load runs once per path ("" is the default one); its library or error
// is what every later Open of that path gets.
func TestLoaderLoadsOncePerPath(t *testing.T) {
	calls := 0
	ld := Loader[string]{Default: "good", Load: func(p string) (string, error) {
		calls++
		if p == "bad" {
			return "", errors.New("no such library")
		}
		return "lib at " + p, nil
	}}
	for range 2 {
		for _, path := range []string{"good", ""} {
			l, err := ld.Open(ctxFor(t, time.Second), path)
			require.NoError(t, err)
			assert.Equal(t, "lib at good", l)
		}
		_, err := ld.Open(ctxFor(t, time.Second), "bad")
		assert.EqualError(t, err, "no such library")
	}
	assert.Equal(t, 2, calls)
}

// A load that never returns costs Open its deadline; later Opens of that
// path fail at once with the hung error, other paths still load.
func TestLoaderHungLoad(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	ld := Loader[string]{Hung: errHung, Load: func(p string) (string, error) {
		if p == "stuck" {
			<-block
		}
		return p, nil
	}}
	_, err := ld.Open(ctxFor(t, 50*time.Millisecond), "stuck")
	assert.ErrorIs(t, err, errHung)
	start := time.Now()
	_, err = ld.Open(ctxFor(t, time.Second), "stuck")
	assert.ErrorIs(t, err, errHung)
	assert.Less(t, time.Since(start), 100*time.Millisecond)
	l, err := ld.Open(ctxFor(t, time.Second), "other")
	require.NoError(t, err)
	assert.Equal(t, "other", l)
}

// A setup error is Start's error; otherwise each Call is read of the
// state setup made.
func TestStartCallsOnOneThread(t *testing.T) {
	_, _, err := Start("lib", errHung, func() (int, error) { return 0, errors.New("init failed") },
		func(int) (int, error) { return 0, nil })
	assert.EqualError(t, err, "init failed")

	n, th, err := Start("lib", errHung, func() (int, error) { return 40, nil },
		func(s int) (int, error) { return s + 2, nil })
	require.NoError(t, err)
	assert.Equal(t, 40, n)
	r, err := th.Call(ctxFor(t, time.Second))
	require.NoError(t, err)
	assert.Equal(t, 42, r)
}

// A read that outlives its context marks the thread hung: that Call and
// every later one fail with the hung error.
func TestCallHungRead(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	_, th, err := Start("lib", errHung, func() (int, error) { return 0, nil },
		func(int) (int, error) { <-block; return 1, nil })
	require.NoError(t, err)
	_, err = th.Call(ctxFor(t, 50*time.Millisecond))
	assert.ErrorIs(t, err, errHung)
	assert.Contains(t, err.Error(), "a read of lib outlived the detection deadline")
	start := time.Now()
	_, err = th.Call(ctxFor(t, time.Second))
	assert.Equal(t, errHung, err)
	assert.Less(t, time.Since(start), 100*time.Millisecond)
}

// Start begins the load and returns before it ends; the Open after it
// waits for that same load (Load runs once) and gets its library.
func TestLoaderStartThenOpen(t *testing.T) {
	release := make(chan struct{})
	calls := 0
	ld := Loader[string]{Default: "lib", Hung: errHung, Load: func(p string) (string, error) {
		<-release
		calls++
		return "lib at " + p, nil
	}}
	ld.Start("") // returns although the load waits for release
	ld.Start("lib")
	close(release)
	l, err := ld.Open(ctxFor(t, time.Second), "lib")
	require.NoError(t, err)
	assert.Equal(t, "lib at lib", l)
	assert.Equal(t, 1, calls)
}

// A load begun by Start that never returns is marked hung by the Open that
// waits for it, at that Open's deadline; Start of a hung path begins
// nothing.
func TestLoaderStartHungLoad(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	var loads atomic.Int32
	ld := Loader[string]{Hung: errHung, Load: func(p string) (string, error) {
		loads.Add(1)
		<-block
		return p, nil
	}}
	ld.Start("stuck")
	start := time.Now()
	_, err := ld.Open(ctxFor(t, 50*time.Millisecond), "stuck")
	assert.ErrorIs(t, err, errHung)
	assert.Less(t, time.Since(start), time.Second)
	ld.Start("stuck")
	_, err = ld.Open(ctxFor(t, time.Second), "stuck")
	assert.ErrorIs(t, err, errHung)
	assert.Equal(t, int32(1), loads.Load())
}
