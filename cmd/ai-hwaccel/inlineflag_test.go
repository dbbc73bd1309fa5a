package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --inline-kernel-reads reaches the engine as the detection option
// inline_kernel_reads, and a detection of this machine with it finds what
// one without it finds (the inline runs read the same files on another
// goroutine: internal/detect TestInlineRunsAnswerAsWorkers).
func TestInlineKernelReadsFlag(t *testing.T) {
	var sent []map[string]any
	detect := func(extra ...string) map[string]any {
		var out, errOut bytes.Buffer
		a := testApp(&out, &errOut)
		a.sent = func(kind string, body []byte) {
			checkRequest(t, kind, body)
			var req map[string]any
			require.NoError(t, json.Unmarshal(body, &req))
			sent = append(sent, req)
		}
		require.Equal(t, 0, a.run(append([]string{"--no-exec"}, extra...)), errOut.String())
		var reg map[string]any
		require.NoError(t, json.Unmarshal(out.Bytes(), &reg), out.String())
		return reg
	}
	with := detect("--inline-kernel-reads")
	require.NotEmpty(t, sent)
	assert.Equal(t, true, sent[len(sent)-1]["inline_kernel_reads"], "the option sent: %v", sent[len(sent)-1])
	without := detect()
	assert.NotContains(t, sent[len(sent)-1], "inline_kernel_reads")
	ids := func(reg map[string]any) []any {
		var out []any
		devs, _ := reg["devices"].([]any)
		for _, d := range devs {
			out = append(out, d.(map[string]any)["id"])
		}
		return out
	}
	assert.Equal(t, ids(without), ids(with))
}
