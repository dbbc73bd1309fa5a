package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// Watch is the --watch loop: detect, print the table with free-memory
// deltas against the previous refresh and, when the tools give them, each
// device's utilisation, power and temperature, sleep, repeat.
type Watch struct {
	Interval time.Duration
	// Count stops the loop after that many refreshes; 0 runs until ctx ends.
	Count int
	// Detect runs one detection (uncached, so free memory is current).
	Detect func(ctx context.Context) (*registry.Registry, error)
	// Sleep waits d or until ctx ends; nil uses a timer. Tests pass a fake.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now stamps each refresh; nil uses time.Now.
	Now func() time.Time
	// Clear writes an ANSI clear-screen before each refresh (terminals only).
	Clear bool
}

// Run loops until ctx ends (nil error: an interrupt is the normal way to
// stop), Count refreshes are done, or a detection fails (its error).
func (wt Watch) Run(ctx context.Context, w io.Writer) error {
	if wt.Interval <= 0 {
		return errors.New("watch interval must be positive")
	}
	sleep, now := wt.Sleep, wt.Now
	if sleep == nil {
		sleep = sleepCtx
	}
	if now == nil {
		now = time.Now
	}
	var prev FreeMemory
	for n := 1; wt.Count == 0 || n <= wt.Count; n++ {
		reg, err := wt.Detect(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if wt.Clear {
			fmt.Fprint(w, "\x1b[H\x1b[2J")
		}
		fmt.Fprintf(w, "ai-hwaccel watch: %s\n\n", wt.header(n, now()))
		if err := writeTable(w, reg, prev, true); err != nil {
			return err
		}
		prev = Snapshot(reg)
		if wt.Count != 0 && n == wt.Count {
			break
		}
		if err := sleep(ctx, wt.Interval); err != nil {
			return nil
		}
		if !wt.Clear {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// header is the first line of refresh n: with a Count, which refresh of how
// many (the loop then ends by itself); without, that Ctrl-C ends it.
func (wt Watch) header(n int, at time.Time) string {
	if wt.Count != 0 {
		return fmt.Sprintf("refresh %d of %d at %s, every %s", n, wt.Count, at.Format("15:04:05"), wt.Interval)
	}
	return fmt.Sprintf("refresh %d at %s, every %s (Ctrl-C stops)", n, at.Format("15:04:05"), wt.Interval)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
