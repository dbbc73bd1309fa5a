package snapshot

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A tool detection only looked up (found on PATH, never run) is found on
// replay, as is every tool that ran; a tool neither looked up nor run is not.
// Only names are kept: a path is not a tool name.
func TestToolsFoundReplay(t *testing.T) {
	rec := NewRecorder(fixtureSource(t, "dgx-h100"), Options{Created: created, KeepIDs: true})
	rec.RecordToolFound("system_profiler")
	rec.RecordToolFound("/home/someone/bin/nvidia-smi")
	rec.RecordTool([]string{"nvidia-smi", "-L"}, ToolResult{Stdout: []byte("GPU 0: NVIDIA H100 80GB HBM3\n")})
	s, _ := writeAndRead(t, rec)
	assert.Equal(t, []string{"system_profiler"}, s.Manifest().ToolsFound)
	assert.True(t, s.HasTool("system_profiler"))
	assert.True(t, s.HasTool("nvidia-smi"), "a tool that ran was found")
	assert.False(t, s.HasTool("rocm-smi"))
	assert.False(t, s.HasTool("/home/someone/bin/nvidia-smi"))
	_, ran := s.Tool("system_profiler")
	assert.False(t, ran, "found is not ran: its output is not in the archive")
}

// The failure text of a tool run is scrubbed like its output: an address in
// an error message is not kept.
func TestToolErrorTextScrubbed(t *testing.T) {
	rec := NewRecorder(fixtureSource(t, "dgx-h100"), Options{Created: created})
	rec.RecordTool([]string{"xpu-smi", "discovery"}, ToolResult{ExitStatus: 1,
		Error: "exit status 1: connecting to 10.1.2.3 failed: tool failed"})
	s, _ := writeAndRead(t, rec)
	r, ok := s.Tool("xpu-smi", "discovery")
	require.True(t, ok)
	assert.NotContains(t, r.Error, "10.1.2.3")
	assert.Contains(t, r.Error, "exit status 1: connecting to ")
	assert.Equal(t, 1, r.ExitStatus)
}
