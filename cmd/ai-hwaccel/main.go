// Command ai-hwaccel detects the AI accelerators of a machine and plans
// models on them, printing the same JSON as the C library
// (hwaccel_detect_json and friends) or a human rendering of it. See
// docs/cli.md.
//
// The command is thin on purpose: it turns flags into the JSON requests of
// the wire contract, calls the engine through internal/api (exactly what the
// C exports call), and formats the answers with internal/cli.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ai-hwaccel/ai-hwaccel/internal/api"
	"github.com/ai-hwaccel/ai-hwaccel/internal/cli"
)

// version is the release of the command: the library's version
// (HWACCEL_VERSION_STRING in include/ai_hwaccel.h; a test keeps them equal).
// Release builds may set it with -ldflags "-X main.version=...".
var version = "0.2.0"

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the engine answered an error (detection failed, unknown model, ...)
	exitUsage = 2 // the command line is wrong: unknown flag or command, bad value
	// exitInterrupted is 128+SIGINT, what a shell reports for a command
	// ended by Ctrl-C (also used for SIGTERM: the command did not finish).
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	a := newApp(os.Stdout, os.Stderr)
	a.ctx = ctx
	a.terminal = isTerminal(os.Stdout)
	if isTerminal(os.Stderr) {
		a.progress = os.Stderr
	}
	code := a.run(os.Args[1:])
	stop()
	os.Exit(code)
}

// run is the whole command: arguments in, output written, exit status out.
// Tests call it in-process.
func run(args []string, stdout, stderr io.Writer) int {
	return newApp(stdout, stderr).run(args)
}

// app carries what the commands need from the process, so tests can replace
// the environment, the clock and the sleeper of --watch.
type app struct {
	stdout, stderr io.Writer
	getenv         api.Env
	ctx            context.Context
	terminal       bool // stdout is a terminal: --watch clears the screen
	sleep          func(context.Context, time.Duration) error
	now            func() time.Time
	// sent, when set, sees every request the command sends the engine:
	// "detect" options and "planning" requests (tests validate them against
	// schema/detect-options.schema.json and schema/request.schema.json).
	sent func(kind string, body []byte)
	// progress, when set (stderr is a terminal), receives "waiting for
	// <tool>" lines when a vendor tool runs longer than progressDelay.
	progress      io.Writer
	progressDelay time.Duration
	// hubHTTP, when set, fetches a Hugging Face id given as --model
	// (tests: a client that reaches only the local test server).
	hubHTTP *http.Client
}

// send reports a request to a.sent.
func (a *app) send(kind string, body []byte) {
	if a.sent != nil && body != nil {
		a.sent(kind, body)
	}
}

func newApp(stdout, stderr io.Writer) *app {
	return &app{stdout: stdout, stderr: stderr, getenv: os.LookupEnv, ctx: context.Background(), now: time.Now,
		progressDelay: progressDelay}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// usageError is a wrong command line (exit 2).
type usageError struct {
	cmd string // command whose --help to point at ("" for the root)
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// engineError is an error object answered by the engine (exit 1).
type engineError struct {
	code, message string
	// field is the request member the library's message is about ("request:
	// draft_model: ..."), "" when it names none (the plan's own model).
	field string
}

func (e *engineError) Error() string { return e.code + ": " + e.message }

func (a *app) run(args []string) int {
	if len(args) > 0 {
		if c := findCommand(args[0]); c != nil {
			return a.exit(c.run(a, args[1:]))
		}
	}
	return a.exit(a.root(args))
}

// exit prints err as "ai-hwaccel: <code>: <message>" on stderr and maps it
// to an exit status. Usage errors use the code "usage".
func (a *app) exit(err error) int {
	if err != nil && a.ctx.Err() != nil {
		// Ctrl-C or SIGTERM cut the work short: the error the engine answered
		// (a detection_failed "context canceled") is not the answer. (--watch
		// ends on Ctrl-C without an error: status 0, as documented.)
		fmt.Fprintln(a.stderr, "ai-hwaccel: interrupted")
		return exitInterrupted
	}
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(a.stderr, "ai-hwaccel: usage: %s\n", cli.Text(ue.msg))
		help := "ai-hwaccel --help"
		if ue.cmd != "" {
			help = "ai-hwaccel " + ue.cmd + " --help"
		}
		fmt.Fprintf(a.stderr, "Run '%s' for usage.\n", help)
		return exitUsage
	}
	var ee *engineError
	if errors.As(err, &ee) {
		fmt.Fprintf(a.stderr, "ai-hwaccel: %s: %s\n", cli.Text(ee.code), cli.Text(ee.message))
		return exitError
	}
	fmt.Fprintf(a.stderr, "ai-hwaccel: error: %s\n", cli.Text(err.Error()))
	return exitError
}
