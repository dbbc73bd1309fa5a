package detect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/host"
	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// qemu-q35-vm is a real QEMU/KVM guest (ghw snapshot): the cpuinfo
// hypervisor flag says virtualized; the snapshot has no DMI, so no hypervisor
// name and no cloud; no container marker and no cgroup file.
func TestEnvironmentFixtureQEMUVM(t *testing.T) {
	reg := detectFixture(t, "qemu-q35-vm", map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"})
	env := reg.SystemIO.Environment
	require.NotNil(t, env)
	assert.Empty(t, env.Container)
	assert.False(t, env.Kubernetes)
	assert.True(t, env.Virtualized)
	assert.Empty(t, env.Hypervisor, "no DMI in the snapshot")
	assert.Empty(t, env.Cloud)
	assert.Empty(t, env.InstanceType)
	assert.Zero(t, env.CgroupMemoryLimit)
	assert.Zero(t, env.CgroupCPULimit)
	assert.Equal(t, map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"}, env.Visibility)
	assert.Empty(t, backendWarnings(reg, host.BackendEnvironment))
	assert.Len(t, reg.Accelerators(), 0, "the QEMU PCI test device 1b36:0005 (class 0x120000, fake_pci_driver) is no accelerator")
}

// envMachine builds a sysroot from name -> content ("" makes an empty file).
func envMachine(t *testing.T, files map[string]string, env map[string]string) *machine.Machine {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	m, err := NewMachine(Options{Sysroot: root, NoExec: true, Env: env, LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	return m
}

func TestEnvironmentCases(t *testing.T) {
	dmi := func(k string) string { return "sys/devices/virtual/dmi/id/" + k }
	tests := []struct {
		name  string
		files map[string]string
		env   map[string]string
		want  *registry.Environment
	}{
		{name: "bare metal, nothing", files: map[string]string{"proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu sse\n"}, want: nil},
		{name: "podman", files: map[string]string{"run/.containerenv": ""},
			want: &registry.Environment{Container: "podman"}},
		{name: "kubernetes pod on docker cgroup v1", files: map[string]string{
			"proc/1/cgroup": "12:devices:/kubepods/burstable/pod1f/0123abc\n",
			"var/run/secrets/kubernetes.io/serviceaccount/namespace": "ml\n"},
			want: &registry.Environment{Container: "kubernetes", Kubernetes: true}},
		{name: "kubernetes pod whose /var/run links to the absolute /run", files: map[string]string{
			"run/secrets/kubernetes.io/serviceaccount/namespace": "ml\n"},
			want: &registry.Environment{Container: "kubernetes", Kubernetes: true}},
		{name: "kubernetes from env only", env: map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"},
			want: &registry.Environment{Container: "kubernetes", Kubernetes: true}},
		{name: "docker in kubernetes keeps the runtime", files: map[string]string{".dockerenv": ""},
			env:  map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"},
			want: &registry.Environment{Container: "docker", Kubernetes: true}},
		{name: "docker from cgroup v1 path", files: map[string]string{"proc/1/cgroup": "11:memory:/docker/4a3b\n0::/\n"},
			want: &registry.Environment{Container: "docker"}},
		{name: "lxc from systemd", files: map[string]string{"run/systemd/container": "lxc\n"},
			want: &registry.Environment{Container: "lxc"}},
		{name: "cgroup v1 limits", files: map[string]string{
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "8589934592\n",
			"sys/fs/cgroup/cpu/cpu.cfs_quota_us":         "150000\n",
			"sys/fs/cgroup/cpu/cpu.cfs_period_us":        "100000\n"},
			want: &registry.Environment{CgroupMemoryLimit: 8589934592, CgroupCPULimit: 1.5}},
		{name: "cgroup v2 unlimited", files: map[string]string{"sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/cpu.max": "max 100000\n"},
			want: nil},
		{name: "cgroup v1 unlimited", files: map[string]string{
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/cpu/cpu.cfs_quota_us":         "-1\n",
			"sys/fs/cgroup/cpu/cpu.cfs_period_us":        "100000\n"},
			want: nil},
		{name: "aws nitro instance", files: map[string]string{dmi("sys_vendor"): "Amazon EC2\n", dmi("product_name"): "p5.48xlarge\n",
			"proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu hypervisor sse\n"},
			want: &registry.Environment{Virtualized: true, Cloud: "aws", InstanceType: "p5.48xlarge"}},
		{name: "aws bare metal is not virtualized", files: map[string]string{dmi("sys_vendor"): "Amazon EC2\n", dmi("product_name"): "c5.metal\n",
			"proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu sse\n"},
			want: &registry.Environment{Cloud: "aws", InstanceType: "c5.metal"}},
		{name: "old aws xen by hypervisor uuid", files: map[string]string{dmi("sys_vendor"): "Xen\n", dmi("product_name"): "HVM domU\n",
			"sys/hypervisor/uuid": "ec2e1916-9099-7caf-fd21-012345abcdef\n"},
			want: &registry.Environment{Virtualized: true, Hypervisor: "xen", Cloud: "aws"}},
		{name: "any xen is not aws", files: map[string]string{dmi("sys_vendor"): "Xen\n", dmi("product_name"): "HVM domU\n"},
			want: &registry.Environment{Virtualized: true, Hypervisor: "xen"}},
		{name: "any hyper-v is not azure", files: map[string]string{dmi("sys_vendor"): "Microsoft Corporation\n", dmi("product_name"): "Virtual Machine\n"},
			want: &registry.Environment{Virtualized: true, Hypervisor: "hyperv"}},
		{name: "azure by asset tag", files: map[string]string{dmi("sys_vendor"): "Microsoft Corporation\n", dmi("product_name"): "Virtual Machine\n",
			dmi("chassis_asset_tag"): "7783-7084-3265-9085-8269-3286-77\n"},
			want: &registry.Environment{Virtualized: true, Hypervisor: "hyperv", Cloud: "azure"}},
		{name: "four groups of the azure tag are not azure", files: map[string]string{dmi("sys_vendor"): "Microsoft Corporation\n", dmi("product_name"): "Virtual Machine\n",
			dmi("chassis_asset_tag"): "7783-7084-3265-9085\n"},
			want: &registry.Environment{Virtualized: true, Hypervisor: "hyperv"}},
		{name: "gce", files: map[string]string{dmi("sys_vendor"): "Google\n", dmi("product_name"): "Google Compute Engine\n"},
			want: &registry.Environment{Cloud: "gcp"}},
		{name: "vmware", files: map[string]string{dmi("sys_vendor"): "VMware, Inc.\n", dmi("product_name"): "VMware7,1\n"},
			want: &registry.Environment{Virtualized: true, Hypervisor: "vmware"}},
		{name: "visibility set empty is reported", env: map[string]string{"HIP_VISIBLE_DEVICES": "", "NEURON_RT_VISIBLE_CORES": "0-3", "OTHER": "x"},
			want: &registry.Environment{Visibility: map[string]string{"HIP_VISIBLE_DEVICES": "", "NEURON_RT_VISIBLE_CORES": "0-3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := host.DetectEnvironment(context.Background(), envMachine(t, tt.files, tt.env))
			assert.Equal(t, tt.want, f.Environment)
			assert.Empty(t, f.Warnings)
		})
	}
}

// TestCloudFromCloudInitFixtures: the DMI and hypervisor files of cloud-init's
// ds-identify cases, verbatim (VALID_CFG in
// https://github.com/canonical/cloud-init/blob/a59a46d2305bd0dba148043873eb14fb6188088e/tests/unittests/test_ds_identify.py:
// "Azure-dmi-detection", "Azure-seed-detection", "Ec2-hvm", "Ec2-xen",
// "Ec2-brightbox", "GCE", "GCE-serial"), name the cloud ds-identify names
// from them; Brightbox runs cloud-init's Ec2 datasource but is not AWS, and
// a chassis tag of "No-match" is not Azure.
func TestCloudFromCloudInitFixtures(t *testing.T) {
	dmi := func(k string) string { return "sys/devices/virtual/dmi/id/" + k }
	tests := []struct {
		name  string
		files map[string]string
		cloud string
	}{
		{"Azure-dmi-detection", map[string]string{dmi("chassis_asset_tag"): "7783-7084-3265-9085-8269-3286-77\n"}, "azure"},
		{"Azure-seed-detection", map[string]string{dmi("chassis_asset_tag"): "No-match\n"}, ""},
		{"Ec2-hvm", map[string]string{dmi("product_serial"): "ec23aef5-54be-4843-8d24-8c819f88453e\n",
			dmi("product_uuid"): "EC23AEF5-54BE-4843-8D24-8C819F88453E\n"}, "aws"},
		{"Ec2-xen", map[string]string{"sys/hypervisor/uuid": "ec2c6e2f-5fac-4fc7-9c82-74127ec14bbb\n"}, "aws"},
		{"Ec2-brightbox", map[string]string{dmi("product_serial"): "srv-otuxg.gb1.brightbox.com\n"}, ""},
		{"GCE", map[string]string{dmi("product_name"): "Google Compute Engine\n"}, "gcp"},
		{"GCE-serial", map[string]string{dmi("product_serial"): "GoogleCloud-8f2e88f\n"}, "gcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := host.DetectEnvironment(context.Background(), envMachine(t, tt.files, nil))
			cloud, instance := "", ""
			if f.Environment != nil {
				cloud, instance = f.Environment.Cloud, f.Environment.InstanceType
			}
			assert.Equal(t, tt.cloud, cloud)
			assert.Empty(t, instance, "no fixture names an instance type")
		})
	}
}
