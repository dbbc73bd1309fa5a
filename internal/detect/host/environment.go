package host

import (
	"context"
	"strings"

	"github.com/ai-hwaccel/ai-hwaccel/internal/detect/machine"
	"github.com/ai-hwaccel/ai-hwaccel/internal/registry"
)

// The runtime environment: container, cgroup limits, virtualization, cloud
// and the device-visibility variables. Everything comes from the sysroot and
// the visibility variables; nothing is fetched from a metadata server.
// Cloud is named only from explicit markers, never inferred from the
// hypervisor (a Xen guest is not necessarily on AWS, a Hyper-V guest not
// necessarily on Azure, as the Rust crate ai-hwaccel 1.2.0 assumed,
// https://docs.rs/ai-hwaccel/1.2.0).

// BackendEnvironment names the environment backend (above).
const BackendEnvironment = "environment"

// Environment is this file's detection source (the orchestrator lists it).
var Environment = machine.Backend{Name: BackendEnvironment, Detect: DetectEnvironment}

// visibilityVars are the variables that hide or reorder devices, reported as
// seen so an operator can tell why a device is missing.
var visibilityVars = []string{
	"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
	"ZE_AFFINITY_MASK", "NEURON_RT_VISIBLE_CORES", "HABANA_VISIBLE_DEVICES",
}

// azureAssetTag is the chassis asset tag of every Azure VM, all seven
// groups: cloud-init's Azure datasource compares the whole string
// (cloudinit/sources/azure/identity.py, ChassisAssetTag.AZURE_CLOUD, in
// https://github.com/canonical/cloud-init). The first four groups alone,
// compared before, never equal what an Azure VM reports.
const azureAssetTag = "7783-7084-3265-9085-8269-3286-77"

// DetectEnvironment reports the environment: container, hypervisor, cloud
// markers and the visibility variables set.
func DetectEnvironment(_ context.Context, m *machine.Machine) machine.Findings {
	env := &registry.Environment{}
	envContainer(m, env)
	envCgroup(m, env)
	envVirtualization(m, env)
	envCloud(m, env)
	for _, name := range visibilityVars {
		if v, ok := m.Env(name); ok {
			if env.Visibility == nil {
				env.Visibility = map[string]string{}
			}
			env.Visibility[name] = machine.CleanText(v)
		}
	}
	if envEmpty(env) {
		return machine.Findings{}
	}
	return machine.Findings{Environment: env}
}

// envEmpty reports whether nothing at all was found.
func envEmpty(e *registry.Environment) bool {
	return e.Container == "" && !e.Kubernetes && !e.Virtualized && e.Hypervisor == "" && e.Cloud == "" &&
		e.InstanceType == "" && e.CgroupMemoryLimit == 0 && e.CgroupCPULimit == 0 && len(e.Visibility) == 0
}

// envContainer names the container runtime from its marker files, then
// systemd's record, then /proc/1/cgroup; Kubernetes from the service-account
// mount or KUBERNETES_SERVICE_HOST (set in every pod).
func envContainer(m *machine.Machine, env *registry.Environment) {
	switch {
	case m.Exists(".dockerenv"):
		env.Container = "docker"
	case m.Exists("run/.containerenv"):
		env.Container = "podman"
	}
	if env.Container == "" {
		if s, err := m.ReadString("run/systemd/container"); err == nil {
			env.Container = containerFromSystemd(s)
		}
	}
	cg := ""
	if s, err := m.ReadString("proc/1/cgroup"); err == nil {
		cg = containerFromCgroup(s)
	}
	_, k8sEnv := m.Env("KUBERNETES_SERVICE_HOST")
	if cg == "kubernetes" || k8sEnv || serviceAccountMounted(m) {
		env.Kubernetes = true
		cg = ""
	}
	if env.Container == "" {
		env.Container = cg
	}
	if env.Container == "" && env.Kubernetes {
		env.Container = "kubernetes"
	}
}

// ServiceAccountDirs are where a pod's Kubernetes service account is
// mounted, /var/run/secrets/kubernetes.io/serviceaccount
// (https://kubernetes.io/docs/tasks/configure-pod-container/configure-service-account/),
// and the same directory through /run: where /var/run is an absolute link
// to /run (Debian 12's base system: "/var/run -> /run"), reads confined to
// the sysroot refuse to follow it (openat2 RESOLVE_BENEATH, os.Root), so
// the directory is looked for where the link points too.
var ServiceAccountDirs = []string{"var/run/secrets/kubernetes.io/serviceaccount", "run/secrets/kubernetes.io/serviceaccount"}

// serviceAccountMounted reports whether a Kubernetes service account is
// mounted in the sysroot.
func serviceAccountMounted(m *machine.Machine) bool {
	for _, d := range ServiceAccountDirs {
		if m.Exists(d) {
			return true
		}
	}
	return false
}

// envCgroup reads the memory and CPU limits of the cgroup this process sees
// as its root: cgroup v2 memory.max / cpu.max, else the v1 controllers.
func envCgroup(m *machine.Machine, env *registry.Environment) {
	const root = "sys/fs/cgroup"
	env.CgroupMemoryLimit, _ = cgroupMemoryLimit(m)
	if s, err := m.ReadString(root + "/cpu.max"); err == nil {
		env.CgroupCPULimit = parseCgroupCPUMax(s)
	} else {
		q, err1 := m.ReadString(root + "/cpu/cpu.cfs_quota_us")
		p, err2 := m.ReadString(root + "/cpu/cpu.cfs_period_us")
		if err1 == nil && err2 == nil {
			env.CgroupCPULimit = parseCgroupV1CPU(q, p)
		}
	}
}

// Sources of a cgroup memory limit.
const (
	srcCgroupV2Memory = "cgroup v2 memory limit (memory.max)"
	srcCgroupV1Memory = "cgroup v1 memory limit (memory.limit_in_bytes)"
)

// cgroupMemoryLimit is the memory limit of the cgroup this process sees as
// its root (v2 memory.max, else v1 memory.limit_in_bytes) and where it was
// read; 0 when unlimited or absent.
func cgroupMemoryLimit(m *machine.Machine) (int64, string) {
	const root = "sys/fs/cgroup"
	if s, err := m.ReadString(root + "/memory.max"); err == nil {
		return parseCgroupMemoryMax(s), srcCgroupV2Memory
	}
	if s, err := m.ReadString(root + "/memory/memory.limit_in_bytes"); err == nil {
		return parseCgroupMemoryMax(s), srcCgroupV1Memory
	}
	return 0, ""
}

// envVirtualization: the CPU's hypervisor flag says "virtual machine"; DMI
// (or /sys/hypervisor/type for Xen) names the hypervisor when it says so.
func envVirtualization(m *machine.Machine, env *registry.Environment) {
	env.Hypervisor = hypervisorFromDMI(envDMI(m, dmiFile+"sys_vendor"), envDMI(m, dmiFile+"product_name"))
	if env.Hypervisor == "" {
		if t, err := m.ReadString("sys/hypervisor/type"); err == nil && t == "xen" {
			env.Hypervisor = "xen"
		}
	}
	env.Virtualized = env.Hypervisor != "" || envHypervisorFlag(m)
}

// envCloud names the cloud from explicit markers only: DMI sys_vendor or
// bios_vendor "Amazon EC2" (Nitro), a Xen UUID or DMI product_uuid starting
// "ec2" (AWS's "identify EC2 instances" guidance; cloud-init's ds-identify
// reads both), product_name "Google Compute Engine" or a product_serial
// starting "GoogleCloud-" (ds-identify's GCE check), the Azure chassis asset
// tag. On AWS the product name is the instance type ("inf2.48xlarge"); GCE
// and Azure name no instance type in DMI ("Google Compute Engine",
// "Virtual Machine"), so none is reported there.
func envCloud(m *machine.Machine, env *registry.Environment) {
	vendor, bios, product := envDMI(m, dmiFile+"sys_vendor"), envDMI(m, dmiFile+"bios_vendor"), envDMI(m, dmiFile+"product_name")
	switch {
	case vendor == "Amazon EC2" || bios == "Amazon EC2" || envXenUUIDIsEC2(m) || envDMIUUIDIsEC2(m):
		env.Cloud = "aws"
		if strings.Contains(product, ".") && !strings.ContainsAny(product, " /") && len(product) <= 64 {
			env.InstanceType = product
		}
	case product == "Google Compute Engine" || strings.HasPrefix(envDMI(m, dmiFile+"product_serial"), "GoogleCloud-"):
		env.Cloud = "gcp"
	case envDMI(m, dmiFile+"chassis_asset_tag") == azureAssetTag:
		env.Cloud = "azure"
	}
}

// envDMIUUIDIsEC2 reports a DMI product_uuid starting "ec2" (any case), as
// an EC2 HVM instance reports it. product_uuid is root-only on most
// kernels; unreadable, it says nothing.
func envDMIUUIDIsEC2(m *machine.Machine) bool {
	return strings.HasPrefix(strings.ToLower(envDMI(m, dmiFile+"product_uuid")), "ec2")
}

func envXenUUIDIsEC2(m *machine.Machine) bool {
	u, err := m.ReadString("sys/hypervisor/uuid")
	return err == nil && strings.HasPrefix(strings.ToLower(u), "ec2")
}

// dmiFile prefixes the name of a DMI identification file: the callers'
// paths are constants, not joined on every detection (docs/performance.md,
// "Fourth pass").
const dmiFile = machine.PathDMI + "/"

// envDMI reads one DMI identification file, named by its path ("" when
// absent or unreadable: serials and UUIDs are root-only).
func envDMI(m *machine.Machine, name string) string {
	s, err := m.ReadString(name)
	if err != nil {
		return ""
	}
	return s
}

// envHypervisorFlag reports the cpuinfo hypervisor flag from the reading the
// CPU backend shares (hostCPUInfo); its warnings are the CPU backend's.
func envHypervisorFlag(m *machine.Machine) bool {
	info, ok := hostCPUInfo(m, nil)
	return ok && info.HypervisorFlag
}
