package snapshot

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree makes a sysroot in a temporary directory: files (name → content) and
// links (name → target).
func tree(t *testing.T, files, links map[string]string) string {
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	for name, target := range links {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(target, p))
	}
	return root
}

// failingSource answers one name with an error, as a file only root may read.
type failingSource struct {
	Source
	name string
	err  error
}

func (f failingSource) ReadFile(name string) ([]byte, error) {
	if name == f.name {
		return nil, &fs.PathError{Op: "open", Path: name, Err: f.err}
	}
	return f.Source.ReadFile(name)
}

// The layout of sysfs (class links into the device tree, a device link back
// up) replays with links as links; reads that lead out of the recorded trees
// are answered live but nothing of them is kept.
func TestRecorderKeepsLinksAndStaysInTheTrees(t *testing.T) {
	dev := "sys/devices/pci0000:00/0000:01:00.0"
	root := tree(t, map[string]string{
		dev + "/vendor":           "0x10de\n",
		dev + "/class":            "0x030200\n",
		dev + "/drm/card0/uevent": "MAJOR=226\n",
		"home/user/.ssh/id_rsa":   "PRIVATE KEY",
		"proc/1/environ":          "AWS_SECRET_ACCESS_KEY=abc",
		"proc/1/cgroup":           "0::/\n",
		"etc/hostname":            "secret-host\n",
	}, map[string]string{
		"sys/class/drm/card0":     "../../devices/pci0000:00/0000:01:00.0/drm/card0",
		dev + "/drm/card0/device": "../../../0000:01:00.0",
		dev + "/secret":           "../../../../home/user/.ssh/id_rsa",
		"sys/abs":                 "/home/user",
		"sys/hostname":            "/etc/hostname",
		"sys/loop":                "loop",
		"proc/self":               "1",
	})
	src, err := DirSource(os.DirFS(root))
	require.NoError(t, err)
	rec := NewRecorder(src, Options{Created: created, KeepIDs: true})

	b, err := rec.ReadFile("sys/class/drm/card0/device/vendor")
	require.NoError(t, err)
	assert.Equal(t, "0x10de\n", string(b))
	_, err = rec.Stat(dev + "/class")
	require.NoError(t, err)
	for _, name := range []string{dev + "/secret", "proc/1/environ", "proc/self/environ"} {
		b, err := rec.ReadFile(name)
		require.NoError(t, err, name)
		assert.NotEmpty(t, b, "answered live: %s", name)
	}
	// absolute links: os.DirFS would follow them on the host, so only
	// their text is read
	for _, name := range []string{"sys/abs", "sys/hostname"} {
		_, err = rec.ReadLink(name)
		require.NoError(t, err)
		_, err = rec.Lstat(name)
		require.NoError(t, err)
	}
	_, err = rec.ReadFile("proc/self/cgroup")
	require.NoError(t, err)
	_, err = rec.ReadFile("sys/loop/x")
	require.Error(t, err)

	s, raw := writeAndRead(t, rec)
	text := string(gunzip(t, raw))
	for _, secret := range []string{"PRIVATE KEY", "AWS_SECRET", "home/user", "secret-host", "etc/hostname", "environ"} {
		assert.NotContains(t, text, secret)
	}
	assert.GreaterOrEqual(t, s.Manifest().Withheld, 6)

	l, err := s.Lstat("sys/class/drm/card0")
	require.NoError(t, err)
	assert.Equal(t, fs.ModeSymlink, l.Mode().Type())
	target, err := s.ReadLink("sys/class/drm/card0")
	require.NoError(t, err)
	assert.Equal(t, "../../devices/pci0000:00/0000:01:00.0/drm/card0", target)
	b, err = s.ReadFile("sys/class/drm/card0/device/vendor")
	require.NoError(t, err)
	assert.Equal(t, "0x10de\n", string(b))
	b, err = s.ReadFile("proc/self/cgroup")
	require.NoError(t, err)
	assert.Equal(t, "0::/\n", string(b))

	// stat'ed, never read: the type is known, the content is not
	st, err := s.Stat(dev + "/class")
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular())
	_, err = s.ReadFile(dev + "/class")
	require.ErrorIs(t, err, ErrNotRecorded)
	require.ErrorIs(t, err, fs.ErrNotExist)
	// traversed, never listed
	_, err = s.ReadDir("sys/devices")
	require.ErrorIs(t, err, ErrNotRecorded)
	// withheld reads replay as absent
	for _, name := range []string{dev + "/secret", "sys/abs/.ssh/id_rsa", "proc/1/environ", "home/user/.ssh/id_rsa"} {
		_, err := s.ReadFile(name)
		require.ErrorIs(t, err, fs.ErrNotExist, name)
	}
	// a link cycle fails at once, as on the live machine
	_, err = s.ReadFile("sys/loop/x")
	require.Error(t, err)
}

// A read that failed at capture for lack of permission fails the same way
// on replay; one that failed because the file was missing stays missing.
func TestReplayKeepsReadErrors(t *testing.T) {
	root := tree(t, map[string]string{"sys/class/dmi/id/product_name": "DGX H100\n", "sys/firmware/x": "1"}, nil)
	src, err := DirSource(os.DirFS(root))
	require.NoError(t, err)
	rec := NewRecorder(failingSource{Source: src, name: "sys/firmware/x", err: fs.ErrPermission}, Options{Created: created})
	_, err = rec.ReadFile("sys/firmware/x")
	require.ErrorIs(t, err, fs.ErrPermission)
	_, err = rec.ReadFile("sys/class/dmi/id/missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
	s, _ := writeAndRead(t, rec)
	_, err = s.ReadFile("sys/firmware/x")
	require.ErrorIs(t, err, fs.ErrPermission)
	_, err = s.ReadFile("sys/class/dmi/id/missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, []ReadError{{Path: "sys/firmware/x", Kind: ErrorPermission}}, s.Manifest().Errors)
}

// Device nodes keep their type; reading one is refused as on the live view.
func TestReplayDeviceNodes(t *testing.T) {
	root := tree(t, map[string]string{"dev/nvidia0": ""}, nil)
	src, err := DirSource(os.DirFS(root))
	require.NoError(t, err)
	rec := NewRecorder(src, Options{Created: created})
	rec.mu.Lock()
	rec.addStub("dev/nvidiactl", fs.ModeDevice|fs.ModeCharDevice)
	rec.mu.Unlock()
	s, _ := writeAndRead(t, rec)
	st, err := s.Stat("dev/nvidiactl")
	require.NoError(t, err)
	assert.Equal(t, fs.ModeDevice|fs.ModeCharDevice, st.Mode().Type())
	_, err = s.ReadFile("dev/nvidiactl")
	require.ErrorIs(t, err, errNotRegular)
}
