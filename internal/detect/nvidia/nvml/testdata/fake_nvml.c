/*
 * A fake libnvidia-ml.so.1 for the NVML tests: the entry points package nvml
 * resolves, answering with the values of a machine. The values are not
 * written here: the tests generate fake_data.h (package nvmltest) from
 * captures of real machines (testdata/machines/h200-vm/captures/nvml.json,
 * what NVML answered through pynvml on an H200; public nvidia-smi captures
 * for multi-GPU machines) and compile this file with it. Declarations follow
 * the public NVML API reference (https://docs.nvidia.com/deploy/nvml-api/).
 *
 * fake_data.h defines FAKE_DRIVER, FAKE_NVML, FAKE_CUDA, FAKE_NGPUS,
 * fake_gpus[FAKE_NGPUS] (struct fake_gpu, with their links and MIG devices)
 * and fake_ancestor[FAKE_NGPUS][FAKE_NGPUS] (nvmlGpuTopologyLevel_t; -1
 * for NotSupported).
 *
 * Variants, by definition:
 *   FAKE_INIT_RETURN=n  nvmlInit returns n (9: driver not loaded, 18:
 *                       driver/library version mismatch)
 *   FAKE_HANG           nvmlDeviceGetMemoryInfo never returns (a hung driver)
 *   FAKE_OLD            only the first entry points (nvmlInit,
 *                       nvmlDeviceGetCount, ..._v2 of PCI info, memory v1,
 *                       no NVLink detail, topology or MIG devices)
 *   FAKE_NO_MIG_DEVICES no MIG device entry points (MIG mode is still read)
 *   FAKE_PROC_PID, FAKE_PROC_BYTES  one compute process holding memory
 *   FAKE_MAX_CLOCK_RETURN=n  nvmlDeviceGetMaxClockInfo returns n (4: no
 *                       permission)
 *   FAKE_BARRIER=n      a GPU's nvmlDeviceGetMemoryInfo_v2 waits, at most
 *                       one second, until n such calls are in flight at
 *                       once (once n were, none waits again);
 *                       fake_max_in_flight is the most that were
 *
 * Each entry point counts its calls in fake_calls_<Call> (exported, so that
 * a test reads the count through dlsym: package nvmltest, Calls) and, where
 * fake_data.h's fake_latency table names its call, takes that many
 * nanoseconds before it answers, imitating what the call cost on a real
 * driver (nvmltest.H200Latency: the medians of testdata/nvmlcalls-h200-2026-11-28.json,
 * and nvmlInit's time as "Init"). <Call> is the name the timing script gave
 * the call (scripts/device/nvml-calls.py), without its link or field
 * argument.
 * fake_uuid_gpu0, when not empty, is the UUID GPU 0 answers instead of its
 * own (a GPU swapped in the same PCI slot).
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct {
	unsigned int fieldId, scopeId;
	long long timestamp, latencyUsec;
	int valueType;
	nvmlReturn_t nvmlReturn;
	union { double dVal; unsigned int uiVal; unsigned long long ullVal; } value;
} nvmlFieldValue_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

#ifndef FAKE_INIT_RETURN
#define FAKE_INIT_RETURN 0
#endif

enum { KIND_GPU = 1, KIND_MIG = 2 };

struct fake_link { unsigned int active, version; int remote_type; const char *remote_bus; };

struct fake_mig {
	int kind; /* KIND_MIG: handles point here */
	const char *name, *uuid;
	unsigned long long mem_total, mem_free, mem_used;
	unsigned int gi, ci;
};

struct fake_gpu {
	int kind; /* KIND_GPU */
	const char *name, *uuid, *bus_legacy, *bus;
	unsigned int domain, bus_no, dev_no, pci_device_id, pci_subsystem_id;
	unsigned long long mem_total, mem_free, mem_used;
	unsigned long long mem2_total, mem2_reserved, mem2_free, mem2_used;
	int cc_major, cc_minor;
	unsigned int mig_current, mig_pending, util_gpu, util_mem, power_mw, power_limit_mw, temp_c;
	unsigned int ecc_current, ecc_pending;
	unsigned long long ecc_uncorrected_volatile;
	unsigned int remap_corr, remap_unc, remap_pending, remap_failure;
	unsigned long long throttle;
	unsigned int max_clock_sm, max_clock_mem, pcie_gen_max, pcie_width_max, pcie_gen, pcie_width;
	int nlinks; /* -1: the driver says NotSupported */
	struct fake_link *links;
	unsigned int max_mig;
	int nmig;
	struct fake_mig *migs; /* at MIG indices 0..nmig-1 */
	unsigned int link_speed_mbps; /* 0: field value NotSupported */
};


/* The calls counted (and delayed); see the comment at the top. */
#define FAKE_CALLS(X) X(Init) X(GetCount) X(GetHandleByIndex) X(DriverVersion) X(NVMLVersion) \
	X(CudaDriverVersion) X(Name) X(UUID) X(MemoryInfo) X(MemoryInfo_v2) X(PciInfo) \
	X(CudaComputeCapability) X(NumaNodeId) X(MigMode) X(MaxMigDeviceCount) X(UtilizationRates) \
	X(Temperature) X(PowerUsage) X(EnforcedPowerLimit) X(EccMode) X(TotalEccErrors) \
	X(RemappedRows) X(MaxClockInfo) X(ClocksEventReasons) X(CurrPcieLinkGeneration) \
	X(CurrPcieLinkWidth) X(MaxPcieLinkGeneration) X(MaxPcieLinkWidth) X(ComputeRunningProcesses) \
	X(NvLinkState) X(NvLinkVersion) X(NvLinkRemotePciInfo) X(NvLinkRemoteDeviceType) \
	X(TopologyCommonAncestor) X(FieldValues) X(MigDeviceHandleByIndex) X(GpuInstanceId) \
	X(ComputeInstanceId)
#define FAKE_COUNTER(c) unsigned long long fake_calls_##c;
FAKE_CALLS(FAKE_COUNTER)

char fake_uuid_gpu0[96];

struct fake_latency { const char *call; long long ns; };

#include "fake_data.h"

/* latency_of is the nanoseconds fake_latency gives call, 0 for none. */
static long long latency_of(const char *call) {
	for (unsigned i = 0; i < sizeof fake_latency / sizeof fake_latency[0]; i++)
		if (fake_latency[i].call && strcmp(fake_latency[i].call, call) == 0) return fake_latency[i].ns;
	return 0;
}

static long long now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Calls longer than SLEEP_ABOVE_NS sleep until SPIN_TAIL_NS before their
 * end and busy-wait the rest; shorter ones busy-wait throughout. A sleep
 * alone would add the timer's slack (50 us by default on Linux) to calls
 * that cost 2 us on the driver; busy-waiting alone would make calls in
 * flight on several threads at once (GPUs read in parallel) compete for the
 * CPUs of the machine running the test, which a driver waiting on its GPUs
 * need not do. */
#define SLEEP_ABOVE_NS 200000LL
#define SPIN_TAIL_NS 100000LL

/* take spends ns nanoseconds before returning (see above). */
static void take(long long ns) {
	long long end;
	if (ns <= 0) return;
	end = now_ns() + ns;
	if (ns > SLEEP_ABOVE_NS) {
		long long wake = end - SPIN_TAIL_NS;
		struct timespec at = {wake / 1000000000LL, wake % 1000000000LL};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, 0) != 0) {
		}
	}
	while (now_ns() < end) {
	}
}

/* ENTER counts a call of c and imitates its latency (looked up once). */
#define ENTER(c) do { \
	static long long ns_ = -1; \
	long long d_ = __atomic_load_n(&ns_, __ATOMIC_RELAXED); \
	__atomic_add_fetch(&fake_calls_##c, 1, __ATOMIC_RELAXED); \
	if (d_ < 0) { d_ = latency_of(#c); __atomic_store_n(&ns_, d_, __ATOMIC_RELAXED); } \
	take(d_); \
} while (0)

#ifdef FAKE_BARRIER
unsigned long long fake_max_in_flight;
static unsigned long long in_flight;
static int barrier_met;

/* barrier holds a call until FAKE_BARRIER calls are in flight at once, or
 * a second has passed, and records the most that were. */
static void barrier(void) {
	unsigned long long n = __atomic_add_fetch(&in_flight, 1, __ATOMIC_SEQ_CST);
	unsigned long long max = __atomic_load_n(&fake_max_in_flight, __ATOMIC_SEQ_CST);
	while (n > max && !__atomic_compare_exchange_n(&fake_max_in_flight, &max, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
	}
	if (n >= FAKE_BARRIER) __atomic_store_n(&barrier_met, 1, __ATOMIC_SEQ_CST);
	long long end = now_ns() + 1000000000LL;
	while (!__atomic_load_n(&barrier_met, __ATOMIC_SEQ_CST) && now_ns() < end) {
		struct timespec nap = {0, 100000};
		nanosleep(&nap, 0);
	}
	__atomic_sub_fetch(&in_flight, 1, __ATOMIC_SEQ_CST);
}
#define BARRIER() barrier()
#else
#define BARRIER() do { } while (0)
#endif

static int inited;

static nvmlReturn_t copy(char *buf, unsigned int n, const char *s) {
	if (strlen(s) + 1 > n) return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, s);
	return NVML_SUCCESS;
}

static struct fake_gpu *gpu(nvmlDevice_t d) {
	struct fake_gpu *g = d;
	return g && g->kind == KIND_GPU ? g : 0;
}

static struct fake_mig *mig(nvmlDevice_t d) {
	struct fake_mig *m = d;
	return m && m->kind == KIND_MIG ? m : 0;
}

nvmlReturn_t nvmlInit(void) { ENTER(Init); inited = FAKE_INIT_RETURN == 0; return FAKE_INIT_RETURN; }
nvmlReturn_t nvmlShutdown(void) { inited = 0; return NVML_SUCCESS; }
const char *nvmlErrorString(nvmlReturn_t r) { (void)r; return "fake"; }
nvmlReturn_t nvmlSystemGetDriverVersion(char *b, unsigned int n) { ENTER(DriverVersion); return copy(b, n, FAKE_DRIVER); }
nvmlReturn_t nvmlSystemGetNVMLVersion(char *b, unsigned int n) { ENTER(NVMLVersion); return copy(b, n, FAKE_NVML); }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { ENTER(GetCount); *n = FAKE_NGPUS; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) {
	ENTER(GetHandleByIndex);
	if (i >= FAKE_NGPUS) return NVML_ERROR_INVALID_ARGUMENT;
	*d = &fake_gpus[i];
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *b, unsigned int n) {
	ENTER(Name);
	if (mig(d)) return copy(b, n, mig(d)->name);
	return gpu(d) ? copy(b, n, gpu(d)->name) : NVML_ERROR_INVALID_ARGUMENT;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *b, unsigned int n) {
	ENTER(UUID);
	if (mig(d)) return copy(b, n, mig(d)->uuid);
	if (gpu(d) == &fake_gpus[0] && fake_uuid_gpu0[0]) return copy(b, n, fake_uuid_gpu0);
	return gpu(d) ? copy(b, n, gpu(d)->uuid) : NVML_ERROR_INVALID_ARGUMENT;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) {
	ENTER(PciInfo);
	struct fake_gpu *g = gpu(d);
	if (!g) return NVML_ERROR_NOT_SUPPORTED;
	memset(p, 0, sizeof *p);
	strcpy(p->busIdLegacy, g->bus_legacy);
	strcpy(p->busId, g->bus);
	p->domain = g->domain; p->bus = g->bus_no; p->device = g->dev_no;
	p->pciDeviceId = g->pci_device_id; p->pciSubSystemId = g->pci_subsystem_id;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
	ENTER(MemoryInfo);
#ifdef FAKE_HANG
	for (;;) pause();
#endif
	if (mig(d)) {
		m->total = mig(d)->mem_total; m->free = mig(d)->mem_free; m->used = mig(d)->mem_used;
		return NVML_SUCCESS;
	}
	if (!gpu(d)) return NVML_ERROR_INVALID_ARGUMENT;
	m->total = gpu(d)->mem_total; m->free = gpu(d)->mem_free; m->used = gpu(d)->mem_used;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p) {
	ENTER(ComputeRunningProcesses);
	if (!gpu(d)) return NVML_ERROR_NOT_SUPPORTED;
#ifdef FAKE_PROC_PID
	if (*n < 1) { *n = 1; return NVML_ERROR_INSUFFICIENT_SIZE; }
	p[0].pid = FAKE_PROC_PID; p[0].usedGpuMemory = FAKE_PROC_BYTES; *n = 1;
#else
	(void)p; *n = 0;
#endif
	return NVML_SUCCESS;
}

#ifndef FAKE_OLD
nvmlReturn_t nvmlInit_v2(void) { return nvmlInit(); }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { ENTER(CudaDriverVersion); *v = FAKE_CUDA; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { return nvmlDeviceGetCount(n); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex(i, d); }
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v2(d, p); }
/* A MIG device's memory is read through the first entry point here. */
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
	ENTER(MemoryInfo_v2);
	struct fake_gpu *g = gpu(d);
#ifdef FAKE_HANG
	for (;;) pause();
#endif
	if (!g) return NVML_ERROR_NOT_SUPPORTED;
	BARRIER();
	if (m->version != (unsigned int)(sizeof(nvmlMemory_v2_t) | (2 << 24))) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	m->total = g->mem2_total; m->reserved = g->mem2_reserved; m->free = g->mem2_free; m->used = g->mem2_used;
	return NVML_SUCCESS;
}
#define GPU_OR_NS(d) struct fake_gpu *g = gpu(d); if (!g) return NVML_ERROR_NOT_SUPPORTED
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *a, int *b) { ENTER(CudaComputeCapability); GPU_OR_NS(d); *a = g->cc_major; *b = g->cc_minor; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *c, unsigned int *p) { ENTER(MigMode); GPU_OR_NS(d); *c = g->mig_current; *p = g->mig_pending; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) { ENTER(UtilizationRates); GPU_OR_NS(d); u->gpu = g->util_gpu; u->memory = g->util_mem; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *v) { ENTER(PowerUsage); GPU_OR_NS(d); *v = g->power_mw; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *v) { ENTER(EnforcedPowerLimit); GPU_OR_NS(d); *v = g->power_limit_mw; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *v) {
	ENTER(Temperature);
	GPU_OR_NS(d);
	if (sensor != 0) return NVML_ERROR_NOT_SUPPORTED;
	*v = g->temp_c;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p) {
	ENTER(ComputeRunningProcesses);
	if (!gpu(d)) return NVML_ERROR_NOT_SUPPORTED;
#ifdef FAKE_PROC_PID
	if (*n < 1) { *n = 1; return NVML_ERROR_INSUFFICIENT_SIZE; }
	memset(p, 0, sizeof *p);
	p[0].pid = FAKE_PROC_PID; p[0].usedGpuMemory = FAKE_PROC_BYTES; *n = 1;
#else
	(void)p; *n = 0;
#endif
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, unsigned int *c, unsigned int *p) { ENTER(EccMode); GPU_OR_NS(d); *c = g->ecc_current; *p = g->ecc_pending; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int et, int ct, unsigned long long *v) {
	ENTER(TotalEccErrors);
	GPU_OR_NS(d);
	if (et != 1 || ct != 0) return NVML_ERROR_NOT_SUPPORTED;
	*v = g->ecc_uncorrected_volatile;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p, unsigned int *f) {
	ENTER(RemappedRows);
	GPU_OR_NS(d);
	*c = g->remap_corr; *u = g->remap_unc; *p = g->remap_pending; *f = g->remap_failure;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *v) { ENTER(ClocksEventReasons); GPU_OR_NS(d); *v = g->throttle; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *v) {
	ENTER(MaxClockInfo);
	GPU_OR_NS(d);
#ifdef FAKE_MAX_CLOCK_RETURN
	(void)type; (void)v;
	return FAKE_MAX_CLOCK_RETURN;
#endif
	switch (type) {
	case 1: *v = g->max_clock_sm; return NVML_SUCCESS;
	case 2: *v = g->max_clock_mem; return NVML_SUCCESS;
	}
	return NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { ENTER(MaxPcieLinkGeneration); GPU_OR_NS(d); *v = g->pcie_gen_max; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { ENTER(MaxPcieLinkWidth); GPU_OR_NS(d); *v = g->pcie_width_max; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { ENTER(CurrPcieLinkGeneration); GPU_OR_NS(d); *v = g->pcie_gen; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { ENTER(CurrPcieLinkWidth); GPU_OR_NS(d); *v = g->pcie_width; return NVML_SUCCESS; }
/* The H200 VM's driver refused this one (nvml.json: NotSupported). */
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *v) { ENTER(NumaNodeId); (void)d; (void)v; return NVML_ERROR_NOT_SUPPORTED; }

/* NVLink: link < nlinks answers; a GPU without NVLink (nlinks -1) says
 * NotSupported; links past the last are invalid arguments. */
static nvmlReturn_t link_of(nvmlDevice_t d, unsigned int link, struct fake_link **l) {
	GPU_OR_NS(d);
	if (g->nlinks < 0) return NVML_ERROR_NOT_SUPPORTED;
	if (link >= (unsigned int)g->nlinks) return NVML_ERROR_INVALID_ARGUMENT;
	*l = &g->links[link];
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *v) {
	ENTER(NvLinkState);
	struct fake_link *l; nvmlReturn_t r = link_of(d, link, &l);
	if (r == NVML_SUCCESS) *v = l->active;
	return r;
}
nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int *v) {
	ENTER(NvLinkVersion);
	struct fake_link *l; nvmlReturn_t r = link_of(d, link, &l);
	if (r == NVML_SUCCESS) *v = l->version;
	return r;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p) {
	ENTER(NvLinkRemotePciInfo);
	struct fake_link *l; nvmlReturn_t r = link_of(d, link, &l);
	if (r != NVML_SUCCESS) return r;
	if (!l->active) return NVML_ERROR_NOT_SUPPORTED;
	memset(p, 0, sizeof *p);
	strcpy(p->busId, l->remote_bus);
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link, int *t) {
	ENTER(NvLinkRemoteDeviceType);
	struct fake_link *l; nvmlReturn_t r = link_of(d, link, &l);
	if (r == NVML_SUCCESS) *t = l->remote_type;
	return r;
}
/* Field values: only NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON (90), as an
 * unsigned int (NVML_VALUE_TYPE_UNSIGNED_INT). */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *v) {
	ENTER(FieldValues);
	GPU_OR_NS(d);
	for (int i = 0; i < n; i++) {
		v[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		if (v[i].fieldId == 90 && g->link_speed_mbps) {
			v[i].valueType = 1;
			v[i].value.uiVal = g->link_speed_mbps;
			v[i].nvmlReturn = NVML_SUCCESS;
		}
	}
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int *level) {
	ENTER(TopologyCommonAncestor);
	struct fake_gpu *x = gpu(a), *y = gpu(b);
	if (!x || !y) return NVML_ERROR_INVALID_ARGUMENT;
	int v = fake_ancestor[x - fake_gpus][y - fake_gpus];
	if (v < 0) return NVML_ERROR_NOT_SUPPORTED;
	*level = v;
	return NVML_SUCCESS;
}

/* MIG */
#ifndef FAKE_NO_MIG_DEVICES
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *n) { ENTER(MaxMigDeviceCount); GPU_OR_NS(d); *n = g->max_mig; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i, nvmlDevice_t *out) {
	ENTER(MigDeviceHandleByIndex);
	GPU_OR_NS(d);
	if (!g->mig_current) return NVML_ERROR_NOT_SUPPORTED;
	if (i >= g->max_mig) return NVML_ERROR_INVALID_ARGUMENT;
	if (i >= (unsigned int)g->nmig) return NVML_ERROR_NOT_FOUND;
	*out = &g->migs[i];
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id) {
	ENTER(GpuInstanceId);
	if (!mig(d)) return NVML_ERROR_NOT_SUPPORTED;
	*id = mig(d)->gi;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int *id) {
	ENTER(ComputeInstanceId);
	if (!mig(d)) return NVML_ERROR_NOT_SUPPORTED;
	*id = mig(d)->ci;
	return NVML_SUCCESS;
}
#endif
#endif
