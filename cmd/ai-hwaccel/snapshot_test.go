package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `ai-hwaccel snapshot` captures a fixture machine, and every command that
// detects answers from the archive with --snapshot what it answers on the
// machine: the registry, the table, the NFD labels, a plan.
func TestSnapshotCommandAndReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dgx.tar.gz")
	r := runCLI(t, withFixture(t, "dgx-h100", "snapshot", "-o", file, "--keep-ids")...)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "wrote "+file+": ")
	assert.Contains(t, r.stdout, "9 devices detected")
	assert.Contains(t, r.stdout, "serial numbers and UUIDs kept")
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a snapshot describes one user's machine")

	liveJSON := runCLI(t, withFixture(t, "dgx-h100")...)
	replayJSON := runCLI(t, "--snapshot", file)
	require.Equal(t, 0, replayJSON.code, replayJSON.stderr)
	assert.Equal(t, withoutTiming(t, []byte(liveJSON.stdout)), withoutTiming(t, []byte(replayJSON.stdout)))

	for _, args := range [][]string{
		{"--table"},
		{"nfd"},
		{"plan", "--model", "Llama-3.3-70B-Instruct"},
		{"suggest", "--model", "Llama-3.1-405B"},
		{"train", "--model", "Llama-3.1-8B", "--method", "lora"},
	} {
		live := runCLI(t, withFixture(t, "dgx-h100", args...)...)
		replay := runCLI(t, append(args, "--snapshot", file)...)
		require.Equal(t, 0, replay.code, "%v: %s", args, replay.stderr)
		// The headline's "plan it:" command repeats the detection flags given,
		// which differ (--sysroot/--path/--timeout against --snapshot).
		assert.Equal(t, detectionFlags.ReplaceAllString(live.stdout, "FLAGS"),
			detectionFlags.ReplaceAllString(replay.stdout, "FLAGS"), "%v", args)
	}
}

var detectionFlags = regexp.MustCompile(`--sysroot \S+ --path \S+ --timeout \S+|--snapshot \S+`)

// A relative --snapshot and -o are resolved against the working directory
// (the library takes absolute paths only); --snapshot with --sysroot or
// --path, or on the snapshot command, is a usage error; a file that is not
// a snapshot is the engine's invalid_argument.
func TestSnapshotFlags(t *testing.T) {
	fixture := withFixture(t, "cpu-only", "snapshot") // before the working directory changes
	dir := t.TempDir()
	t.Chdir(dir)
	r := runCLI(t, fixture...)
	require.Equal(t, 0, r.code, r.stderr)
	_, err := os.Stat(filepath.Join(dir, defaultSnapshotFile))
	require.NoError(t, err, "the default output is in the working directory")
	r = runCLI(t, "--snapshot", defaultSnapshotFile)
	require.Equal(t, 0, r.code, r.stderr)

	for _, args := range [][]string{
		{"--snapshot", defaultSnapshotFile, "--sysroot", "/"},
		{"plan", "--model", "Llama-3.1-8B", "--snapshot", defaultSnapshotFile, "--path", "/bin"},
		{"snapshot", "--snapshot", defaultSnapshotFile},
		{"snapshot", "-o", ""},
		{"--snapshot", ""},
	} {
		assert.Equal(t, exitUsage, runCLI(t, args...).code, "%v", args)
	}
	require.NoError(t, os.WriteFile("not-a-snapshot", []byte("hello"), 0o644))
	r = runCLI(t, "--snapshot", "not-a-snapshot")
	assert.Equal(t, exitError, r.code)
	assert.Contains(t, r.stderr, "ai-hwaccel: invalid_argument: ")
}
