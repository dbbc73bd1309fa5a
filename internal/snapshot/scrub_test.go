package snapshot

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uuidsIn returns the UUIDs (GPU-..., MIG-..., bare) written in a file.
func uuidsIn(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	return uuidText.FindAllString(string(b), -1)
}

// The GPU UUIDs of nvidia-smi (--query-gpu, -L), of
// /proc/driver/nvidia/gpus/*/information and of CUDA_VISIBLE_DEVICES are all
// replaced, and the same UUID gets the same fake everywhere.
func TestScrubNvidiaUUIDsKeepCrossReferences(t *testing.T) {
	rec := NewRecorder(fixtureSource(t, "dgx-h100"), Options{Created: created})
	recordTree(t, rec)
	recordTools(t, rec, "dgx-h100", "nvidia-smi")
	rec.RecordEnv("CUDA_VISIBLE_DEVICES", "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1,GPU-33135771-a848-ece1-b61e-489e221d663c", true)
	s, raw := writeAndRead(t, rec)

	orig := uuidsIn(t, filepath.Join(machineDir("dgx-h100"), "bin", "nvidia-smi"))
	require.Len(t, orig, 16, "8 GPUs in --query-gpu and in -L")
	tarText := string(gunzip(t, raw))
	for _, u := range orig {
		assert.NotContains(t, tarText, u)
		assert.NotContains(t, strings.ToUpper(tarText), strings.ToUpper(u))
	}

	info, err := s.ReadFile("proc/driver/nvidia/gpus/0000:18:00.0/information")
	require.NoError(t, err)
	procUUID := regexp.MustCompile(`GPU UUID: \t (GPU-\S+)`).FindSubmatch(info)
	require.NotNil(t, procUUID, string(info))
	fake := string(procUUID[1])
	assert.Regexp(t, `^GPU-[0-9]{8}-[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{12}$`, fake)
	assert.Contains(t, string(info), "Video BIOS: \t 96.00.74.00.01", "a dotted version is not an address")

	query := fixtureArgvs(t, "dgx-h100", "nvidia-smi")[0]
	out, ok := s.Tool(query...)
	require.True(t, ok)
	assert.Contains(t, string(out.Stdout), "0, NVIDIA H100 80GB HBM3, "+fake+", 00000000:18:00.0, 81559")
	list, ok := s.Tool("nvidia-smi", "-L")
	require.True(t, ok)
	assert.Contains(t, string(list.Stdout), "GPU 0: NVIDIA H100 80GB HBM3 (UUID: "+fake+")")

	env, ok := s.LookupEnv("CUDA_VISIBLE_DEVICES")
	require.True(t, ok)
	first, last, _ := strings.Cut(env, ",")
	assert.Equal(t, fake, first)
	assert.Contains(t, string(list.Stdout), "GPU 7: NVIDIA H100 80GB HBM3 (UUID: "+last+")")
	assert.NotEqual(t, first, last)
}

// MIG instance UUIDs are scrubbed like GPU UUIDs, and a MIG UUID in
// CUDA_VISIBLE_DEVICES still names its instance in -L.
func TestScrubMIGUUIDs(t *testing.T) {
	rec := NewRecorder(fixtureSource(t, "nvidia-mig"), Options{Created: created})
	recordTools(t, rec, "nvidia-mig", "nvidia-smi")
	rec.RecordEnv("CUDA_VISIBLE_DEVICES", "MIG-00000001-0000-0000-0000-000000000001", true)
	s, raw := writeAndRead(t, rec)
	for _, u := range uuidsIn(t, filepath.Join(machineDir("nvidia-mig"), "bin", "nvidia-smi")) {
		assert.NotContains(t, string(gunzip(t, raw)), u)
	}
	list, ok := s.Tool("nvidia-smi", "-L")
	require.True(t, ok)
	env, _ := s.LookupEnv("CUDA_VISIBLE_DEVICES")
	assert.Regexp(t, `^MIG-[0-9-]{36}$`, env)
	assert.Contains(t, string(list.Stdout), "  MIG 2g.20gb     Device  1: (UUID: "+env+")")
}

// With KeepIDs the UUIDs stay, and the manifest says so.
func TestKeepIDsKeepsUUIDs(t *testing.T) {
	rec := NewRecorder(fixtureSource(t, "nvidia-mig"), Options{Created: created, KeepIDs: true})
	runs := recordTools(t, rec, "nvidia-mig", "nvidia-smi")
	s, _ := writeAndRead(t, rec)
	assert.True(t, s.Manifest().KeptIDs)
	list, ok := s.Tool("nvidia-smi", "-L")
	require.True(t, ok)
	assert.Equal(t, string(runs["nvidia-smi\x00-L"].Stdout), string(list.Stdout))
	assert.Contains(t, string(list.Stdout), "MIG-00000000-0000-0000-0000-000000000000")
}

// amdgpu unique_id files are replaced whole, one fake per device, with the
// shape kept; KeepIDs keeps them.
func TestScrubSysfsSerialFiles(t *testing.T) {
	ids := map[string]string{}
	for _, keep := range []bool{false, true} {
		rec := NewRecorder(fixtureSource(t, "mi300x-8"), Options{Created: created, KeepIDs: keep})
		recordTree(t, rec)
		s, _ := writeAndRead(t, rec)
		live := os.DirFS(filepath.Join(machineDir("mi300x-8"), "root"))
		matches, err := fs.Glob(live, "sys/devices/pci0000:00/*/unique_id")
		require.NoError(t, err)
		require.Len(t, matches, 8)
		fakes := map[string]bool{}
		for _, p := range matches {
			want, err := fs.ReadFile(live, p)
			require.NoError(t, err)
			got, err := s.ReadFile(p)
			require.NoError(t, err)
			if keep {
				assert.Equal(t, string(want), string(got))
				continue
			}
			assert.NotEqual(t, string(want), string(got))
			assert.Regexp(t, `^[0-9]{16}\n$`, string(got))
			fakes[string(got)] = true
			ids[p] = string(got)
		}
		if !keep {
			assert.Len(t, fakes, 8, "distinct devices keep distinct fakes")
		}
	}
}

// MAC and IP addresses are scrubbed even with KeepIDs: in a real ipmitool
// capture, and in a sysfs net address file holding the same MAC, which gets
// the same fake. Look-alikes stay: the version, "0.0.0.0", "0.0 seconds".
func TestScrubAddressesAlways(t *testing.T) {
	lan, err := os.ReadFile(filepath.Join("testdata", "ipmitool-lan-print.txt"))
	require.NoError(t, err)
	root := t.TempDir()
	dev := filepath.Join(root, "sys", "devices", "pci0000:00", "0000:00:03.0", "net", "eth0")
	require.NoError(t, os.MkdirAll(dev, 0o755))
	// the kernel prints the address and a newline (sysfs-class-net "address")
	require.NoError(t, os.WriteFile(filepath.Join(dev, "address"), []byte("00:30:48:f4:4d:83\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys", "class", "net"), 0o755))
	require.NoError(t, os.Symlink("../../devices/pci0000:00/0000:00:03.0/net/eth0", filepath.Join(root, "sys", "class", "net", "eth0")))
	src, err := DirSource(os.DirFS(root))
	require.NoError(t, err)

	for _, keep := range []bool{true, false} {
		rec := NewRecorder(src, Options{Created: created, KeepIDs: keep})
		_, err = rec.ReadFile("sys/class/net/eth0/address")
		require.NoError(t, err)
		rec.RecordTool([]string{"ipmitool", "lan", "print"}, ToolResult{Stdout: lan})
		s, raw := writeAndRead(t, rec)
		text := string(gunzip(t, raw))
		for _, a := range []string{"00:30:48:f4:4d:83", "10.151.68.13", "10.151.68.3", "255.255.255.0"} {
			assert.NotContains(t, text, a, "keep_ids=%v", keep)
		}
		out, ok := s.Tool("ipmitool", "lan", "print")
		require.True(t, ok)
		addr, err := s.ReadFile("sys/class/net/eth0/address")
		require.NoError(t, err)
		assert.Regexp(t, `^00:00:00:00:00:[0-9]{2}\n$`, string(addr))
		assert.Contains(t, string(out.Stdout), "MAC Address             : "+strings.TrimSpace(string(addr))+"\n")
		assert.Regexp(t, `IP Address              : 240\.0\.0\.[0-9]+\n`, string(out.Stdout))
		for _, kept := range []string{"Backup Gateway IP       : 0.0.0.0\n", "Gratituous ARP Intrvl   : 0.0 seconds\n",
			"RMCP+ Cipher Suites     : 1,2,3,6,7,8,11,12,0\n", "IP Header               : TTL=0x00 Flags=0x00"} {
			assert.Contains(t, string(out.Stdout), kept)
		}
		assert.Equal(t, strings.Count(string(lan), "\n"), strings.Count(string(out.Stdout), "\n"))
		link, err := s.ReadLink("sys/class/net/eth0")
		require.NoError(t, err)
		assert.Equal(t, "../../devices/pci0000:00/0000:00:03.0/net/eth0", link)
	}
}

// InfiniBand GUIDs in real ibstat output are identifiers: replaced unless
// KeepIDs; the firmware version is left alone.
func TestScrubInfiniBandGUIDs(t *testing.T) {
	card, err := os.ReadFile(filepath.Join("testdata", "ibstat-mlx4_0.txt"))
	require.NoError(t, err)
	port, err := os.ReadFile(filepath.Join("testdata", "ibstat-mlx4_0-2.txt"))
	require.NoError(t, err)
	for _, keep := range []bool{false, true} {
		rec := NewRecorder(fixtureSource(t, "cpu-only"), Options{Created: created, KeepIDs: keep})
		rec.RecordTool([]string{"ibstat", "mlx4_0", "-s"}, ToolResult{Stdout: card})
		rec.RecordTool([]string{"ibstat", "mlx4_0", "2"}, ToolResult{Stdout: port})
		s, _ := writeAndRead(t, rec)
		c, ok := s.Tool("ibstat", "mlx4_0", "-s")
		require.True(t, ok)
		p, ok := s.Tool("ibstat", "mlx4_0", "2")
		require.True(t, ok)
		assert.Contains(t, string(c.Stdout), " Firmware version: 2.9.1000\n")
		assert.Contains(t, string(p.Stdout), "Capability mask: 0x02510868\n")
		if keep {
			assert.Equal(t, string(card), string(c.Stdout))
			assert.Equal(t, string(port), string(p.Stdout))
			continue
		}
		assert.Regexp(t, ` Node GUID: 0x[0-9]{16}\n System image GUID: 0x[0-9]{16}\n$`, string(c.Stdout))
		assert.NotContains(t, string(c.Stdout), "0002c9030056b9e6")
		assert.Regexp(t, `Port GUID: 0x[0-9]{16}\n$`, string(p.Stdout))
	}
}

// Serial numbers after a label are replaced, and the same serial read from
// a sysfs serial_number file gets the same fake in tool output; placeholders
// stay. The label shape is nvidia-smi -q's "Serial Number" column
// (labels padded to a fixed column, then ": ", as in the `-q` captures of
// https://github.com/utkuozdemir/nvidia_gpu_exporter internal/captures).
func TestScrubLabelledSerials(t *testing.T) {
	sc := newScrubber(false)
	file := []byte("1654922006536\n")
	q := []byte("    Serial Number                         : 1654922006536\n    Board Id : [N/A]\n    Serial Number                         : N/A\n    Product Name : 1654922006536-board\n")
	for range 2 {
		file = sc.file("sys/class/drm/card0/device/serial_number", file)
		q = sc.text(q)
		if sc.collecting {
			sc.seal()
		}
	}
	fake := strings.TrimSpace(string(file))
	assert.Regexp(t, `^[0-9]{13}$`, fake)
	assert.NotEqual(t, "1654922006536", fake)
	assert.Equal(t, "    Serial Number                         : "+fake+"\n    Board Id : [N/A]\n    Serial Number                         : N/A\n    Product Name : "+fake+"-board\n", string(q))
}

// Over every fixture tree, scrubbing changes nothing but identifiers: each
// changed file is an identifier file or held a UUID (no false positive on
// versions, bus ids, cpu lists).
func TestScrubChangesOnlyIdentifiers(t *testing.T) {
	changed := 0
	for _, m := range fixtureMachines(t) {
		rec := NewRecorder(fixtureSource(t, m), Options{Created: created})
		recordTree(t, rec)
		s, _ := writeAndRead(t, rec)
		live := os.DirFS(filepath.Join(machineDir(m), "root"))
		require.NoError(t, fs.WalkDir(live, ".", func(p string, d fs.DirEntry, err error) error {
			if ok, content := mayRecord(p); !ok || !content || !d.Type().IsRegular() {
				return nil
			}
			want, _ := fs.ReadFile(live, p)
			got, err := s.ReadFile(p)
			require.NoError(t, err, p)
			if string(want) != string(got) {
				changed++
				assert.True(t, idFiles[filepath.Base(p)] || uuidText.Match(want), "%s/%s changed:\n%q\n%q", m, p, want, got)
			}
			return nil
		}))
	}
	assert.Greater(t, changed, 16, "the fixtures' unique_id and GPU UUID files")
}

// IPv6 addresses are scrubbed always. The GID is port 2's default GID of the
// ibstat capture in testdata: the link-local prefix fe80::/64 followed by
// the port GUID 0x0002c903005a7b7e (InfiniBand Architecture Specification
// vol. 1 §4.1.1, as sysfs ports/N/gids/0 prints it); loopback stays, and so
// do the look-alikes detection reads (PCI bus ids, clock times).
func TestScrubIPv6(t *testing.T) {
	sc := newScrubber(true)
	in := []byte("fe80:0000:0000:0000:0002:c903:005a:7b7e\n::1\nBus Location: 0000:18:00.0\n00000000:18:00.0\n12:34:56\n")
	var out []byte
	for range 2 {
		out = sc.file("sys/class/infiniband/mlx4_0/ports/2/gids/0", in)
		if sc.collecting {
			sc.seal()
		}
	}
	assert.Equal(t, "2001:db8::1\n::1\nBus Location: 0000:18:00.0\n00000000:18:00.0\n12:34:56\n", string(out))
}
