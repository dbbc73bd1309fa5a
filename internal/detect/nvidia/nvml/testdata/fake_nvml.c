/*
 * A fake libnvidia-ml.so.1 for the tests of package nvml: the entry points
 * package nvml resolves, answering with one GPU's values. The values are not
 * written here: the test compiles this file with -D definitions taken from a
 * capture of a real GPU (testdata/machines/h200-vm/captures/nvml.json, what
 * NVML answered through pynvml on an H200). Declarations follow the public
 * NVML API reference (https://docs.nvidia.com/deploy/nvml-api/).
 *
 * Variants, by definition:
 *   FAKE_INIT_RETURN=n  nvmlInit returns n (9: driver not loaded, 18:
 *                       driver/library version mismatch)
 *   FAKE_HANG           nvmlDeviceGetMemoryInfo never returns (a hung driver)
 *   FAKE_OLD            only the first entry points (nvmlInit,
 *                       nvmlDeviceGetCount, ..._v2 of PCI info, memory v1)
 *   FAKE_PROC_PID, FAKE_PROC_BYTES  one compute process holding memory
 */
#include <string.h>
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

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

#ifndef FAKE_INIT_RETURN
#define FAKE_INIT_RETURN 0
#endif

static int handle_token;
static int inited;

static nvmlReturn_t copy(char *buf, unsigned int n, const char *s) {
	if (strlen(s) + 1 > n) return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, s);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit(void) { inited = FAKE_INIT_RETURN == 0; return FAKE_INIT_RETURN; }
nvmlReturn_t nvmlShutdown(void) { inited = 0; return NVML_SUCCESS; }
const char *nvmlErrorString(nvmlReturn_t r) { (void)r; return "fake"; }
nvmlReturn_t nvmlSystemGetDriverVersion(char *b, unsigned int n) { return copy(b, n, FAKE_DRIVER); }
nvmlReturn_t nvmlSystemGetNVMLVersion(char *b, unsigned int n) { return copy(b, n, FAKE_NVML); }
nvmlReturn_t nvmlDeviceGetCount(unsigned int *n) { *n = 1; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) {
	if (i != 0) return NVML_ERROR_INVALID_ARGUMENT;
	*d = &handle_token;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *b, unsigned int n) { (void)d; return copy(b, n, FAKE_NAME); }
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *b, unsigned int n) { (void)d; return copy(b, n, FAKE_UUID); }
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) {
	(void)d;
	memset(p, 0, sizeof *p);
	strcpy(p->busIdLegacy, FAKE_BUS_LEGACY);
	strcpy(p->busId, FAKE_BUS);
	p->domain = FAKE_DOMAIN; p->bus = FAKE_BUSNO; p->device = FAKE_DEVNO;
	p->pciDeviceId = FAKE_PCI_DEVICE_ID; p->pciSubSystemId = FAKE_PCI_SUBSYSTEM_ID;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
	(void)d;
#ifdef FAKE_HANG
	for (;;) pause();
#endif
	m->total = FAKE_MEM_TOTAL; m->free = FAKE_MEM_FREE; m->used = FAKE_MEM_USED;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_v1_t *p) {
	(void)d;
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
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = FAKE_CUDA; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n) { return nvmlDeviceGetCount(n); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex(i, d); }
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v2(d, p); }
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
	(void)d;
#ifdef FAKE_HANG
	for (;;) pause();
#endif
	if (m->version != (unsigned int)(sizeof(nvmlMemory_v2_t) | (2 << 24))) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	m->total = FAKE_MEM2_TOTAL; m->reserved = FAKE_MEM2_RESERVED; m->free = FAKE_MEM2_FREE; m->used = FAKE_MEM2_USED;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *a, int *b) { (void)d; *a = FAKE_CC_MAJOR; *b = FAKE_CC_MINOR; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *c, unsigned int *p) { (void)d; *c = FAKE_MIG_CURRENT; *p = FAKE_MIG_PENDING; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) { (void)d; u->gpu = FAKE_UTIL_GPU; u->memory = FAKE_UTIL_MEM; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *v) { (void)d; *v = FAKE_POWER_MW; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *v) { (void)d; *v = FAKE_POWER_LIMIT_MW; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *v) {
	(void)d;
	if (sensor != 0) return NVML_ERROR_NOT_SUPPORTED;
	*v = FAKE_TEMP_C;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n, nvmlProcessInfo_t *p) {
	(void)d;
#ifdef FAKE_PROC_PID
	if (*n < 1) { *n = 1; return NVML_ERROR_INSUFFICIENT_SIZE; }
	memset(p, 0, sizeof *p);
	p[0].pid = FAKE_PROC_PID; p[0].usedGpuMemory = FAKE_PROC_BYTES; *n = 1;
#else
	(void)p; *n = 0;
#endif
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, unsigned int *c, unsigned int *p) { (void)d; *c = FAKE_ECC_CURRENT; *p = FAKE_ECC_PENDING; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int et, int ct, unsigned long long *v) {
	(void)d;
	if (et != 1 || ct != 0) return NVML_ERROR_NOT_SUPPORTED;
	*v = FAKE_ECC_UNCORRECTED_VOLATILE;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *c, unsigned int *u, unsigned int *p, unsigned int *f) {
	(void)d; *c = FAKE_REMAP_CORR; *u = FAKE_REMAP_UNC; *p = FAKE_REMAP_PENDING; *f = FAKE_REMAP_FAILURE;
	return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *v) { (void)d; *v = FAKE_THROTTLE; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *v) {
	(void)d;
	switch (type) {
	case 1: *v = FAKE_MAX_CLOCK_SM; return NVML_SUCCESS;
	case 2: *v = FAKE_MAX_CLOCK_MEM; return NVML_SUCCESS;
	}
	return NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { (void)d; *v = FAKE_PCIE_GEN_MAX; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { (void)d; *v = FAKE_PCIE_WIDTH_MAX; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { (void)d; *v = FAKE_PCIE_GEN; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { (void)d; *v = FAKE_PCIE_WIDTH; return NVML_SUCCESS; }
/* The H200 VM's driver refused these two (nvml.json: NotSupported). */
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *v) { (void)d; (void)v; return NVML_ERROR_NOT_SUPPORTED; }
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int *v) { (void)d; (void)link; (void)v; return NVML_ERROR_NOT_SUPPORTED; }
#endif
