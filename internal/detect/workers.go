package detect

// Backends run on reused goroutines. A new goroutine starts with a small
// stack that every backend outgrew on each detection: growing and copying
// stacks (runtime.newstack) was an eighth of a steady-state detection's
// CPU on a machine without tools. A worker keeps the stack it grew; the
// garbage collector halves an idle one now and then (runtime stack
// shrinking), which costs one copy, not one per detection.

// worker is a goroutine that runs the jobs sent to it, one at a time.
type worker chan job

// job is what a worker runs.
type job interface{ run() }

// funcJob runs a function as a job.
type funcJob func()

func (f funcJob) run() { f() }

// idleWorkers holds the workers waiting between detections: enough for
// every backend of two detections at once; a worker finding no room exits.
var idleWorkers = make(chan worker, 2*len(backends))

// runOnWorker runs fn on an idle worker, or on a new one when none is idle
// (a worker still running an abandoned backend is not idle). It does not
// wait for fn.
func runOnWorker(fn job) {
	select {
	case w := <-idleWorkers:
		w <- fn
	default:
		w := make(worker, 1)
		w <- fn
		go w.loop()
	}
}

// loop runs what it is sent, offering itself as idle after each, and
// exits when the idle list is full.
func (w worker) loop() {
	for fn := range w {
		fn.run()
		select {
		case idleWorkers <- w:
		default:
			return
		}
	}
}
