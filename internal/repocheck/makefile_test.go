package repocheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `make -n test` runs nothing but sub-makes (themselves dry): GNU make runs a
// recipe line that names $(MAKE) even under -n ("How the MAKE Variable
// Works", https://www.gnu.org/software/make/manual/html_node/MAKE-Variable.html),
// so a line that also starts a script (packaging/test-install.sh installs
// and builds for real) would run it. Every command make hands to the shell
// is recorded by a SHELL that logs its arguments before running them; the
// sub-makes are `true` here (MAKE=true), and TEST_TOOLS is emptied so that
// the check for cmake, valgrind... does not stop a host without them.
func TestMakeDryRunRunsNoScript(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not on PATH")
	}
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	dir := t.TempDir()
	log := filepath.Join(dir, "commands.log")
	shell := filepath.Join(dir, "shell.sh")
	require.NoError(t, os.WriteFile(shell, []byte("#!"+bash+"\nprintf '%s\\n' \"$*\" >> '"+log+"'\nexec "+bash+" \"$@\"\n"), 0o755))

	cmd := exec.Command(makeBin, "-n", "test", "MAKE=true", "SHELL="+shell, "TEST_TOOLS=")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "packaging/test-install.sh", "the dry run lists the script")
	logged, err := os.ReadFile(log)
	require.NoError(t, err, "make ran no command through SHELL at all: the recorder is not used")
	for _, line := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		assert.NotContains(t, line, "test-install.sh", "make -n ran: %s", line)
	}
}
