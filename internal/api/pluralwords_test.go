package api

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pluralMark is a "noun(s)" in an answer's text.
var pluralMark = regexp.MustCompile(`[A-Za-z]\(s\)`)

// The answers' texts wrote "1 cuda_gpu (nvidia) device(s)", "4 such
// replica(s)", "4096 token(s) x 1 sequence(s)" where the number is known,
// so that every reader (the CLI, the Python, Rust and C callers) had to
// undo it. Over every fixture machine's golden questions (refusals on one
// device and on several, plans, suggestions, training) no text writes
// "(s)", and both forms of the memory refusal occur.
func TestNoAnswerWritesPluralMark(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	machines, err := os.ReadDir(filepath.Join(root, "testdata", "machines"))
	require.NoError(t, err)
	oneDevice := regexp.MustCompile(`needs [0-9.]+ GiB on one device \([^"]*\) and the one [a-z_]+ \([a-z]+\) device has [0-9.]+ GiB free`)
	severalDevices := regexp.MustCompile(`does not fit split over the [2-9][0-9]* [a-z_]+ \([a-z]+\) devices \(`)
	var sawOne, sawSeveral bool
	for _, m := range machines {
		if !m.IsDir() || goldenSkip[m.Name()] {
			continue
		}
		got := goldenAnswers(t, root, m.Name())
		for _, mark := range pluralMark.FindAllIndex(got, 3) {
			from, to := max(mark[0]-120, 0), min(mark[1]+40, len(got))
			assert.Fail(t, "an answer writes (s)", "%s: ...%s...", m.Name(), got[from:to])
		}
		sawOne = sawOne || oneDevice.Match(got)
		sawSeveral = sawSeveral || severalDevices.Match(got)
	}
	assert.True(t, sawOne, "no fixture answer refuses a level on one device")
	assert.True(t, sawSeveral, "no fixture answer refuses a level on several devices")
}
