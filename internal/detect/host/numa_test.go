package host

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

func TestNUMABackend(t *testing.T) {
	node := func(id, total string) string {
		return "Node " + id + " MemTotal:       " + total + " kB\nNode " + id + " MemFree:         1000 kB\nNode " + id + " HugePages_Total:     0\n"
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []registry.NUMANode
		codes []string
	}{
		{"no node directory: nothing, no warning", map[string]string{"sys/.keep": ""}, nil, nil},
		{"two nodes", map[string]string{
			machine.PathNodes + "/online": "0-1\n", machine.PathNodes + "/node0/cpulist": "0-55,112-167\n", machine.PathNodes + "/node0/meminfo": node("0", "1056714966"),
			machine.PathNodes + "/node1/cpulist": "56-111,168-223\n", machine.PathNodes + "/node1/meminfo": node("1", "1056714966")},
			[]registry.NUMANode{{ID: 0, MemoryBytes: 1056714966 * 1024, CPUs: "0-55,112-167"}, {ID: 1, MemoryBytes: 1056714966 * 1024, CPUs: "56-111,168-223"}}, nil},
		{"no online file: node directories", map[string]string{
			machine.PathNodes + "/node0/cpulist": "0-3\n", machine.PathNodes + "/node0/meminfo": node("0", "100"), machine.PathNodes + "/possible": "0\n"},
			[]registry.NUMANode{{ID: 0, MemoryBytes: 100 * 1024, CPUs: "0-3"}}, nil},
		{"memory-only node (CXL) has no CPUs", map[string]string{
			machine.PathNodes + "/online": "0,2\n", machine.PathNodes + "/node0/cpulist": "0-3\n", machine.PathNodes + "/node0/meminfo": node("0", "100"),
			machine.PathNodes + "/node2/cpulist": "\n", machine.PathNodes + "/node2/meminfo": node("2", "200")},
			[]registry.NUMANode{{ID: 0, MemoryBytes: 100 * 1024, CPUs: "0-3"}, {ID: 2, MemoryBytes: 200 * 1024}}, nil},
		{"garbage online", map[string]string{machine.PathNodes + "/online": "zero\n"}, nil, []string{"numa/parse_error"}},
		{"garbage meminfo and cpulist", map[string]string{
			machine.PathNodes + "/online": "0\n", machine.PathNodes + "/node0/cpulist": "3-1\n", machine.PathNodes + "/node0/meminfo": "Node 0 MemTotal:       many kB\n"},
			[]registry.NUMANode{{ID: 0}}, []string{"numa/parse_error", "numa/parse_error"}},
		{"absurd memory", map[string]string{
			machine.PathNodes + "/online": "0\n", machine.PathNodes + "/node0/meminfo": node("0", "99999999999999")},
			[]registry.NUMANode{{ID: 0}}, []string{"numa/absurd_value"}},
		{"negative memory", map[string]string{
			machine.PathNodes + "/online": "0\n", machine.PathNodes + "/node0/meminfo": node("0", "-100")},
			[]registry.NUMANode{{ID: 0}}, []string{"numa/absurd_value"}},
		{"memory beyond int64", map[string]string{
			machine.PathNodes + "/online": "0\n", machine.PathNodes + "/node0/meminfo": node("0", "99999999999999999999")},
			[]registry.NUMANode{{ID: 0}}, []string{"numa/absurd_value"}},
		{"another node's line is not ours", map[string]string{
			machine.PathNodes + "/online": "1\n", machine.PathNodes + "/node1/meminfo": node("0", "100")},
			[]registry.NUMANode{{ID: 1}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := detectNUMA(context.Background(), machineFS(tc.files))
			assert.Equal(t, tc.want, f.NUMANodes)
			var codes []string
			for _, w := range f.Warnings {
				codes = append(codes, w.Backend+"/"+w.Code)
			}
			assert.Equal(t, tc.codes, codes)
		})
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"0-3,8,10-11", []int{0, 1, 2, 3, 8, 10, 11}, false},
		{"0", []int{0}, false},
		{"", nil, false},
		{" 1-2 \n", []int{1, 2}, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"1,,2", nil, true},
		{"-1", nil, true},
		{"0-999999999", nil, true},
	}
	for _, tc := range tests {
		got, err := ParseCPUList(tc.in)
		if tc.err {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func FuzzParseCPUList(f *testing.F) {
	f.Add("0-55,112-167")
	f.Add("0")
	f.Add("5-2,,x")
	f.Fuzz(func(t *testing.T, in string) {
		ids, err := ParseCPUList(in)
		if err != nil {
			return
		}
		if len(ids) > maxListed {
			t.Fatalf("%d ids", len(ids))
		}
		for _, id := range ids {
			if id < 0 {
				t.Fatalf("negative id %d", id)
			}
		}
	})
}

func FuzzParseNodeMemTotal(f *testing.F) {
	f.Add("Node 0 MemTotal:       1056714966 kB\nNode 0 MemFree:       1 kB\n")
	f.Add("Node 0 MemTotal: -1 kB\n")
	f.Add("Node 0 MemTotal:\n")
	f.Fuzz(func(t *testing.T, in string) {
		v, ok, err := parseNodeMemTotal(in, 0)
		if err != nil && ok {
			t.Fatal("ok with an error")
		}
		if ok && v < 0 {
			t.Fatalf("negative %d", v)
		}
	})
}

// statCountingFS counts the Stat calls that reach the filesystem.
type statCountingFS struct {
	fstest.MapFS
	stats map[string]int
}

func (s statCountingFS) Stat(name string) (fs.FileInfo, error) {
	s.stats[name]++
	return s.MapFS.Stat(name)
}

// A readable "online" says the node directory is there, so it is not
// stat'ed; without "online" it is, and its absence still means no NUMA.
func TestNUMAStatsNodeDirectoryOnlyWithoutOnline(t *testing.T) {
	detect := func(files map[string]string) (machine.Findings, map[string]int) {
		fsys := statCountingFS{MapFS: fstest.MapFS{}, stats: map[string]int{}}
		for name, text := range files {
			fsys.MapFS[name] = &fstest.MapFile{Data: []byte(text)}
		}
		m, err := machine.New(machine.Config{FS: fsys, NoExec: true})
		require.NoError(t, err)
		return detectNUMA(context.Background(), m), fsys.stats
	}
	f, stats := detect(map[string]string{machine.PathNodes + "/online": "0\n", machine.PathNodes + "/node0/cpulist": "0-3\n"})
	assert.Equal(t, []registry.NUMANode{{ID: 0, CPUs: "0-3"}}, f.NUMANodes)
	assert.Zero(t, stats[machine.PathNodes], "online was read: no stat of the directory")

	f, stats = detect(map[string]string{machine.PathNodes + "/node0/cpulist": "0-3\n"})
	assert.Equal(t, []registry.NUMANode{{ID: 0, CPUs: "0-3"}}, f.NUMANodes)
	assert.NotZero(t, stats[machine.PathNodes], "no online: the directory is stat'ed")

	f, _ = detect(map[string]string{"sys/.keep": ""})
	assert.Empty(t, f.NUMANodes)
	assert.Empty(t, f.Warnings)
}
