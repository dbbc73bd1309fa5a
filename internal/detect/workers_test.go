package detect

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker busy with a backend that never returns is not handed more work:
// every function starts at once, however many are still running, and at
// most cap(idleWorkers) workers wait afterwards.
func TestRunOnWorkerNeverWaitsForABusyWorker(t *testing.T) {
	n := 3 * cap(idleWorkers)
	release := make(chan struct{})
	var started, finished sync.WaitGroup
	started.Add(n)
	finished.Add(n)
	for range n {
		runOnWorker(funcJob(func() {
			started.Done()
			<-release
			finished.Done()
		}))
	}
	waitOrFail(t, &started, "every function started while the others block")
	close(release)
	waitOrFail(t, &finished, "every function finished")
	require.Eventually(t, func() bool { return len(idleWorkers) == cap(idleWorkers) }, 5*time.Second, time.Millisecond)

	// An idle worker is reused: the function runs on one taken from the list.
	hold := make(chan struct{})
	ran := make(chan struct{})
	runOnWorker(funcJob(func() { close(ran); <-hold }))
	<-ran
	assert.Equal(t, cap(idleWorkers)-1, len(idleWorkers))
	close(hold)
}

func waitOrFail(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(what + ": timed out")
	}
}
