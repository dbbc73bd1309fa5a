package machine

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The public header states how many descriptors the library keeps between
// calls ("Host process state"); tests/c/test_held_fds.c checks a host sees
// no more than that. The numbers must be the ones the code enforces:
// MaxMemoSysroots sysroots, 3 + maxHeldSubs directories (the sysroot, sys/,
// proc/ and those below sys/) and maxHeldFiles files each.
func TestHeaderStatesTheHeldBounds(t *testing.T) {
	b, err := os.ReadFile("../../../include/ai_hwaccel.h")
	require.NoError(t, err)
	text := strings.Join(strings.Fields(strings.NewReplacer(" * ", " ", "\n *", " ").Replace(string(b))), " ")
	m := regexp.MustCompile(`for each sysroot it has detected \((\d+) at most\), up to (\d+) directories .*? and up to (\d+) sysfs, procfs and cgroup files`).FindStringSubmatch(text)
	require.NotNil(t, m, "the header's sentence on held descriptors")
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	assert.Equal(t, MaxMemoSysroots, num(m[1]), "sysroots")
	assert.Equal(t, 3+maxHeldSubs, num(m[2]), "directories per sysroot")
	assert.Equal(t, maxHeldFiles, num(m[3]), "files per sysroot")
}
