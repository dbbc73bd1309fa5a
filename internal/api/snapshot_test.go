package api

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/detecttest"
	"github.com/ai-hwaccel/ai-hwaccel/internal/errs"
	"github.com/ai-hwaccel/ai-hwaccel/internal/snapshot"
)

// Every fixture machine round-trips through the public options: a capture
// ("snapshot_out", with identifiers kept) of the fixture's tree and tools,
// then a replay ("snapshot"), answer the registry a plain detection of the
// fixture answers, timing aside. The machines the golden answers skip are
// skipped for the same reason: their tools hang or sleep until the timeout,
// so their answers depend on wall time.
func TestSnapshotRoundTripEveryFixture(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	machines, err := os.ReadDir(filepath.Join(root, "testdata", "machines"))
	require.NoError(t, err)
	tested := 0
	for _, m := range machines {
		if !m.IsDir() || goldenSkip[m.Name()] {
			continue
		}
		tested++
		t.Run(m.Name(), func(t *testing.T) {
			dir := filepath.Join(root, "testdata", "machines", m.Name())
			live := fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{}`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
			out := filepath.Join(t.TempDir(), "machine.tar.gz")
			want := withoutTiming(t, Detect(context.Background(), []byte(live+`}`), NoEnv))
			captured := withoutTiming(t, Detect(context.Background(), []byte(live+fmt.Sprintf(`,"snapshot_out":%q,"snapshot_keep_ids":true}`, out)), NoEnv))
			require.JSONEq(t, string(want), string(captured), "a capture answers what a detection answers")
			got := withoutTiming(t, Detect(context.Background(), []byte(fmt.Sprintf(`{"snapshot":%q}`, out)), NoEnv))
			require.JSONEq(t, string(want), string(got), "the replay answers what the live detection answered")
			st, err := os.Stat(out)
			require.NoError(t, err)
			assert.Less(t, st.Size(), int64(1<<20), "archive size")
		})
	}
	assert.GreaterOrEqual(t, tested, 40, "fixture machines")
}

// A replay starts no process: with the tools of the capture deleted, it
// still answers what they printed (nvidia-smi's free memory, which sysfs
// does not have). Without identifiers kept, the archive holds no UUID.
func TestSnapshotReplayRunsNoTool(t *testing.T) {
	dir := fixture("dgx-h100")
	bin := filepath.Join(t.TempDir(), "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	tools, err := os.ReadDir(filepath.Join(dir, "bin"))
	require.NoError(t, err)
	for _, e := range tools {
		b, err := os.ReadFile(filepath.Join(dir, "bin", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(bin, e.Name()), b, 0o755))
	}
	out := filepath.Join(t.TempDir(), "m.tar.gz")
	captured := Detect(context.Background(), []byte(fmt.Sprintf(`{"sysroot":%q,"path":%q,"env":{},"snapshot_out":%q}`, filepath.Join(dir, "root"), bin, out)), NoEnv)
	require.Empty(t, errorCode(t, captured), "%s", captured)
	require.NoError(t, os.RemoveAll(bin))

	s, err := snapshot.Open(out)
	require.NoError(t, err)
	assert.NotEmpty(t, s.Manifest().Tools)
	assert.False(t, s.Manifest().KeptIDs)
	got := Detect(context.Background(), []byte(fmt.Sprintf(`{"snapshot":%q}`, out)), NoEnv)
	require.Empty(t, errorCode(t, got), "%s", got)
	var reg struct {
		Devices []struct {
			ID              string `json:"id"`
			MemoryFreeBytes *int64 `json:"memory_free_bytes"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal(got, &reg))
	gpus := 0
	for _, d := range reg.Devices {
		if strings.HasPrefix(d.ID, "cuda:") {
			gpus++
			assert.NotNil(t, d.MemoryFreeBytes, "%s: free memory comes from nvidia-smi's output", d.ID)
		}
	}
	assert.Equal(t, 8, gpus)
	assert.Equal(t, deviceKinds(t, captured), deviceKinds(t, got))
	assert.Regexp(t, `GPU-[0-9a-f]{8}-`, string(captured), "the capture's own answer has the real UUIDs")
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	unpacked, err := io.ReadAll(zr)
	require.NoError(t, err)
	for _, uuid := range regexp.MustCompile(`GPU-[0-9a-f-]{36}`).FindAllString(string(captured), -1) {
		assert.NotContains(t, string(unpacked), uuid)
	}
}

func deviceKinds(t *testing.T, answer []byte) []string {
	var r struct {
		Devices []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"devices"`
	}
	require.NoError(t, json.Unmarshal(answer, &r))
	var out []string
	for _, d := range r.Devices {
		out = append(out, d.ID+" "+d.Kind)
	}
	return out
}

// Crafted archives are refused with invalid_argument through the public
// option, by detection and by planning on it: a name with "../", an
// absolute link, a 1 GiB member (refused on its header: the archive holds
// none of its bytes).
func TestSnapshotRefusesCraftedArchives(t *testing.T) {
	manifest := []byte(`{"format":1,"tools":[],"env":[]}`)
	cases := []struct {
		name, file, want string
	}{
		{"dot-dot", writeCraftedWith(t, manifest, false, tar.Header{Typeflag: tar.TypeReg, Name: "root/sys/../../etc/passwd", Size: 4, Mode: 0o644}), "clean relative path"},
		{"absolute link", writeCraftedWith(t, manifest, false, tar.Header{Typeflag: tar.TypeSymlink, Name: "root/sys/class", Linkname: "/etc", Mode: 0o777}), "leaves the tree"},
		{"1 GiB member", writeCraftedWith(t, manifest, true, tar.Header{Typeflag: tar.TypeReg, Name: "root/sys/huge", Size: 1 << 30, Mode: 0o644}), "over the 8388608 bytes a member may hold"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := os.Stat(c.file)
			require.NoError(t, err)
			assert.Less(t, st.Size(), int64(64<<10))
			for _, ans := range [][]byte{
				Detect(context.Background(), []byte(fmt.Sprintf(`{"snapshot":%q}`, c.file)), NoEnv),
				PlanSharding(context.Background(), []byte(fmt.Sprintf(`{"model":{"params_b":8},"detect":{"snapshot":%q}}`, c.file)), NoEnv),
			} {
				assert.Equal(t, errs.InvalidArgument, errorCode(t, ans), "%s", ans)
				assert.Contains(t, string(ans), c.want)
			}
		})
	}
}

// writeCraftedWith is writeCrafted with a manifest member first.
func writeCraftedWith(t *testing.T, manifest []byte, stop bool, h tar.Header) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "manifest.json", Size: int64(len(manifest)), Mode: 0o644}))
	_, err := tw.Write(manifest)
	require.NoError(t, err)
	require.NoError(t, tw.WriteHeader(&h))
	if h.Typeflag == tar.TypeReg && !stop {
		_, err := tw.Write(bytes.Repeat([]byte("0"), int(h.Size)))
		require.NoError(t, err)
	}
	if stop {
		// the stream ends after the header: none of the member's bytes
		require.NoError(t, zw.Close())
	} else {
		require.NoError(t, tw.Close())
		require.NoError(t, zw.Close())
	}
	p := filepath.Join(t.TempDir(), "crafted.tar.gz")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p
}

// The snapshot options are checked when decoded: absolute paths only, a
// replay names no sysroot or path, keep_ids only with a capture, a missing
// archive is invalid_argument.
func TestSnapshotOptionErrors(t *testing.T) {
	for _, in := range []string{
		`{"snapshot":"relative.tar.gz"}`,
		`{"snapshot_out":"relative.tar.gz"}`,
		`{"snapshot":"/x.tar.gz","sysroot":"/"}`,
		`{"snapshot":"/x.tar.gz","path":"/bin"}`,
		`{"snapshot":"/x.tar.gz","snapshot_out":"/y.tar.gz"}`,
		`{"snapshot_keep_ids":true}`,
		`{"snapshot":"/no/such/snapshot.tar.gz"}`,
	} {
		assert.Equal(t, errs.InvalidArgument, errorCode(t, Detect(context.Background(), []byte(in), NoEnv)), in)
	}
	o, err := DecodeOptions([]byte(`{"snapshot_out":"/tmp/m.tar.gz","snapshot_keep_ids":true}`), NoEnv)
	require.NoError(t, err)
	assert.Equal(t, "/tmp/m.tar.gz", o.SnapshotOut)
	assert.True(t, o.SnapshotKeepIDs)
}

// LibraryVersion, written in every snapshot, is the header's version.
func TestLibraryVersionMatchesHeader(t *testing.T) {
	h, err := os.ReadFile(filepath.Join("..", "..", "include", "ai_hwaccel.h"))
	require.NoError(t, err)
	m := regexp.MustCompile(`#define HWACCEL_VERSION_STRING "([^"]+)"`).FindSubmatch(h)
	require.NotNil(t, m)
	assert.Equal(t, string(m[1]), LibraryVersion)
}

// A capture of this machine (sysroot "/", the process PATH and
// environment, identifiers kept) replays to the registry the capture
// answered, timing aside.
func TestSnapshotOfThisMachineReplays(t *testing.T) {
	out := filepath.Join(t.TempDir(), "this.tar.gz")
	captured := Detect(context.Background(), []byte(fmt.Sprintf(`{"snapshot_out":%q,"snapshot_keep_ids":true}`, out)), os.LookupEnv)
	require.Empty(t, errorCode(t, captured), "%s", captured)
	got := Detect(context.Background(), []byte(fmt.Sprintf(`{"snapshot":%q}`, out)), NoEnv)
	require.Empty(t, errorCode(t, got), "%s", got)
	require.JSONEq(t, string(withoutTiming(t, captured)), string(withoutTiming(t, got)))
	s, err := snapshot.Open(out)
	require.NoError(t, err)
	st, err := os.Stat(out)
	require.NoError(t, err)
	t.Logf("this machine: %d bytes, %d tool runs, %d variables, %d withheld reads; devices %v",
		st.Size(), len(s.Manifest().Tools), len(s.Manifest().Env), s.Manifest().Withheld, deviceKinds(t, got))
}

// The environment of a replay is the archive's: a capture under
// CUDA_VISIBLE_DEVICES=0 replays with one GPU visible whatever the
// replaying process has set; the env option still overrides it.
func TestSnapshotReplaysTheCapturedEnvironment(t *testing.T) {
	dir := fixture("dgx-h100")
	out := filepath.Join(t.TempDir(), "m.tar.gz")
	live := fmt.Sprintf(`{"sysroot":%q,"path":%q`, filepath.Join(dir, "root"), filepath.Join(dir, "bin"))
	captured := Detect(context.Background(), []byte(live+fmt.Sprintf(`,"env":{"CUDA_VISIBLE_DEVICES":"0"},"snapshot_out":%q,"snapshot_keep_ids":true}`, out)), NoEnv)
	require.Empty(t, errorCode(t, captured), "%s", captured)
	everyGPU := Detect(context.Background(), []byte(live+`,"env":{}}`), NoEnv)
	require.NotEqual(t, deviceKinds(t, everyGPU), deviceKinds(t, captured), "the variable changes the answer")

	host := func(name string) (string, bool) {
		if name == "CUDA_VISIBLE_DEVICES" {
			return "0,1,2,3", true
		}
		return "", false
	}
	replayed := Detect(context.Background(), []byte(fmt.Sprintf(`{"snapshot":%q}`, out)), host)
	require.JSONEq(t, string(withoutTiming(t, captured)), string(withoutTiming(t, replayed)))
	overridden := Detect(context.Background(), []byte(fmt.Sprintf(`{"snapshot":%q,"env":{"CUDA_VISIBLE_DEVICES":"0,1"}}`, out)), host)
	assert.NotEqual(t, deviceKinds(t, replayed), deviceKinds(t, overridden))
}

// A capture never follows a link out of the machine's trees: a DRM card
// linked to the host's /etc, and one linked past the sysroot to a file
// beside it, are withheld, and nothing of what they lead to is in the
// archive.
func TestSnapshotCaptureStaysInTheTrees(t *testing.T) {
	root := detecttest.CopyFixtureRoot(t, "cpu-only")
	secret := "SECRET-beside-the-sysroot"
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(root), "outside"), []byte(secret), 0o644))
	drm := filepath.Join(root, "sys", "class", "drm")
	require.NoError(t, os.MkdirAll(drm, 0o755))
	require.NoError(t, os.Symlink("/etc", filepath.Join(drm, "card0")))
	require.NoError(t, os.Symlink("../../../../outside", filepath.Join(drm, "card1")))
	out := filepath.Join(t.TempDir(), "m.tar.gz")
	ans := Detect(context.Background(), []byte(fmt.Sprintf(`{"sysroot":%q,"path":"","snapshot_out":%q,"snapshot_keep_ids":true}`, root, out)), NoEnv)
	require.Empty(t, errorCode(t, ans), "%s", ans)

	s, err := snapshot.Open(out)
	require.NoError(t, err)
	es, err := s.ReadDir("sys/class/drm")
	require.NoError(t, err, "detection listed the DRM cards")
	assert.Empty(t, es, "links leading out are not kept")
	assert.Positive(t, s.Manifest().Withheld)
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		assert.NotContains(t, h.Name, "etc/", h.Name)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		assert.NotContains(t, string(b), secret, h.Name)
	}
}
