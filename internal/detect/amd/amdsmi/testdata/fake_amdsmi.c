/*
 * A fake libamd_smi.so for the AMD SMI tests: the entry points package
 * amdsmi resolves, answering with the values of a machine. The values are
 * not written here: the tests generate fake_data.h (package amdsmitest) from
 * the AMD fixture machines (their rocm-smi output and sysfs/KFD trees, each
 * fixture's README names its captures) and compile this file with it.
 * Declarations follow include/amd_smi/amdsmi.h of https://github.com/ROCm/amdsmi
 * at 0ceca28f4139dced5e9b5739a3f393780d7add48 (24.7); with FAKE_V25 the
 * amdsmi_asic_info_t of 25.x (ROCm 6.4: 256-byte vendor_name and asic_serial,
 * reserved[22], as py-interface/amdsmi/amdsmi_wrapper.py of
 * https://github.com/ml-energy/amdsmi at c3c378e7f6d694a3bd3c5e928bc69d709f89697f
 * declares it, ROCm/amdsmi's Python interface of ROCm 6.4.0); and with FAKE_V26
 * projects/amdsmi/include/amd_smi/amdsmi.h of https://github.com/ROCm/rocm-systems
 * (26.x: amdsmi_version_t without year, the amdsmi_asic_info_t of 26.5.0,
 * amdsmi_link_type_t).
 *
 * fake_data.h defines FAKE_NPROC, FAKE_NSOCKETS, fake_procs[FAKE_NPROC]
 * (struct fake_proc, each naming its socket) and fake_link[FAKE_NPROC][FAKE_NPROC]
 * (struct fake_link; type -1 for "not supported").
 *
 * Variants, by definition:
 *   FAKE_YEAR, FAKE_MAJOR  what amdsmi_get_lib_version answers (24, 7)
 *   FAKE_V25               play a 25.x library (ROCm 6.4): the 25.x
 *                          amdsmi_asic_info_t, the 24.x version struct and
 *                          link types; amdsmi_get_lib_version answers year 25
 *                          (left unwritten with FAKE_V25_NO_YEAR), major 25,
 *                          FAKE_V25_MINOR, FAKE_V25_RELEASE (3, 0)
 *   FAKE_V26               play a 26.x library: the 26.x structs and link
 *                          types; amdsmi_get_lib_version answers FAKE_V26_MAJOR,
 *                          FAKE_V26_MINOR, FAKE_V26_RELEASE (26, 5, 0)
 *   FAKE_INIT_RETURN=n     amdsmi_init returns n (34: driver not loaded)
 *   FAKE_HANG              amdsmi_get_gpu_memory_total never returns
 *   FAKE_HANG_INIT         amdsmi_init never returns
 *   FAKE_SHUTDOWN_MARK     a path (a C string) amdsmi_shut_down creates
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int amdsmi_status_t;
typedef void *amdsmi_handle;
#ifdef FAKE_V26
typedef struct { uint32_t major, minor, release; const char *build; } amdsmi_version_t;
typedef struct {
	char market_name[256];
	uint32_t vendor_id;
	char vendor_name[256];
	uint32_t subvendor_id;
	uint64_t device_id;
	uint32_t rev_id;
	char asic_serial[256];
	uint32_t oam_id;
	uint32_t num_of_compute_units;
	uint64_t target_graphics_version;
	uint32_t subsystem_id;
	uint64_t flags;
	uint32_t reserved[18];
} amdsmi_asic_info_t;
/* amdsmi_link_type_t (26.x) */
#define AMDSMI_LINK_TYPE_PCIE 1
#define AMDSMI_LINK_TYPE_XGMI 2
#define AMDSMI_LINK_TYPE_UNKNOWN 4
#ifndef FAKE_V26_MAJOR
#define FAKE_V26_MAJOR 26
#endif
#ifndef FAKE_V26_MINOR
#define FAKE_V26_MINOR 5
#endif
#ifndef FAKE_V26_RELEASE
#define FAKE_V26_RELEASE 0
#endif
#elif defined(FAKE_V25)
typedef struct { uint32_t year, major, minor, release; const char *build; } amdsmi_version_t;
typedef struct {
	char market_name[256];
	uint32_t vendor_id;
	char vendor_name[256];
	uint32_t subvendor_id;
	uint64_t device_id;
	uint32_t rev_id;
	char asic_serial[256];
	uint32_t oam_id;
	uint32_t num_of_compute_units;
	uint64_t target_graphics_version;
	uint32_t reserved[22];
} amdsmi_asic_info_t;
/* The offsets ctypes gives the ROCm 6.4.0 to 6.4.4 declarations (see above). */
_Static_assert(offsetof(amdsmi_asic_info_t, device_id) == 520, "25.x device_id");
_Static_assert(offsetof(amdsmi_asic_info_t, target_graphics_version) == 800, "25.x target_graphics_version");
_Static_assert(sizeof(amdsmi_asic_info_t) == 896, "25.x amdsmi_asic_info_t");
#ifndef FAKE_V25_MINOR
#define FAKE_V25_MINOR 3
#endif
#ifndef FAKE_V25_RELEASE
#define FAKE_V25_RELEASE 0
#endif
#else
typedef struct { uint32_t year, major, minor, release; const char *build; } amdsmi_version_t;
typedef struct {
	char market_name[256];
	uint32_t vendor_id;
	char vendor_name[64];
	uint32_t subvendor_id;
	uint64_t device_id;
	uint32_t rev_id;
	char asic_serial[32];
	uint32_t oam_id;
	uint32_t num_of_compute_units;
	uint64_t target_graphics_version;
	uint32_t reserved[15];
} amdsmi_asic_info_t;
#endif

#define AMDSMI_STATUS_SUCCESS 0
#define AMDSMI_STATUS_INVAL 1
#define AMDSMI_STATUS_NOT_SUPPORTED 2
#define AMDSMI_STATUS_NOT_INIT 32
#define AMDSMI_STATUS_INSUFFICIENT_SIZE 41
#define AMDSMI_INIT_AMD_GPUS (1 << 1)

#ifndef FAKE_YEAR
#define FAKE_YEAR 24
#endif
#ifndef FAKE_MAJOR
#define FAKE_MAJOR 7
#endif
#ifndef FAKE_INIT_RETURN
#define FAKE_INIT_RETURN 0
#endif

struct fake_proc {
	uint64_t bdf;
	const char *market_name;
	uint32_t vendor_id, device_id;
	uint64_t gfx; /* 0: not supported (UINT64_MAX answered) */
	int has_total, has_used;
	uint64_t total, used;
	int numa; /* -1: not supported */
	const char *compute, *memory; /* "": not supported */
	int socket;
};

struct fake_link { int type, hops, weight; };

#include "fake_data.h"

static int initialised;

static int proc_index(amdsmi_handle h) {
	struct fake_proc *p = (struct fake_proc *)h;
	if (p < fake_procs || p >= fake_procs + FAKE_NPROC) return -1;
	return (int)(p - fake_procs);
}

/* Like the library's (AMDSMI_CHECK_INIT in src/amd_smi/amd_smi.cc), only
 * after amdsmi_init. */
amdsmi_status_t amdsmi_get_lib_version(amdsmi_version_t *v) {
	if (!initialised) return AMDSMI_STATUS_NOT_INIT;
	if (!v) return AMDSMI_STATUS_INVAL;
#ifdef FAKE_V26
	v->major = FAKE_V26_MAJOR; v->minor = FAKE_V26_MINOR; v->release = FAKE_V26_RELEASE;
#elif defined(FAKE_V25)
#ifndef FAKE_V25_NO_YEAR
	v->year = 25;
#endif
	v->major = 25; v->minor = FAKE_V25_MINOR; v->release = FAKE_V25_RELEASE;
#else
	v->year = FAKE_YEAR; v->major = FAKE_MAJOR; v->minor = 0; v->release = 0;
#endif
	v->build = "fake";
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_init(uint64_t flags) {
#ifdef FAKE_HANG_INIT
	for (;;) pause();
#endif
	if (!(flags & AMDSMI_INIT_AMD_GPUS)) return AMDSMI_STATUS_INVAL;
	if (FAKE_INIT_RETURN == 0) initialised = 1;
	return FAKE_INIT_RETURN;
}

amdsmi_status_t amdsmi_shut_down(void) {
#ifdef FAKE_SHUTDOWN_MARK
	FILE *f = fopen(FAKE_SHUTDOWN_MARK, "w");
	if (f) fclose(f);
#endif
	initialised = 0;
	return AMDSMI_STATUS_SUCCESS;
}

/* Socket handles point at the first processor of each socket's number. */
static int socket_ids[FAKE_NSOCKETS > 0 ? FAKE_NSOCKETS : 1];

amdsmi_status_t amdsmi_get_socket_handles(uint32_t *count, amdsmi_handle *out) {
	if (!initialised) return AMDSMI_STATUS_NOT_INIT;
	if (!count) return AMDSMI_STATUS_INVAL;
	if (!out) { *count = FAKE_NSOCKETS; return AMDSMI_STATUS_SUCCESS; }
	uint32_t n = *count < FAKE_NSOCKETS ? *count : FAKE_NSOCKETS;
	for (uint32_t i = 0; i < n; i++) { socket_ids[i] = (int)i; out[i] = &socket_ids[i]; }
	*count = n;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_processor_handles(amdsmi_handle s, uint32_t *count, amdsmi_handle *out) {
	if (!initialised) return AMDSMI_STATUS_NOT_INIT;
	if (!count || !s) return AMDSMI_STATUS_INVAL;
	int sock = *(int *)s;
	uint32_t n = 0;
	for (int i = 0; i < FAKE_NPROC; i++) {
		if (fake_procs[i].socket != sock) continue;
		if (out) {
			if (n >= *count) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
			out[n] = &fake_procs[i];
		}
		n++;
	}
	*count = n;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_device_bdf(amdsmi_handle h, uint64_t *bdf) {
	int i = proc_index(h);
	if (i < 0 || !bdf) return AMDSMI_STATUS_INVAL;
	*bdf = fake_procs[i].bdf;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_asic_info(amdsmi_handle h, amdsmi_asic_info_t *info) {
	int i = proc_index(h);
	if (i < 0 || !info) return AMDSMI_STATUS_INVAL;
	memset(info, 0, sizeof *info);
	strncpy(info->market_name, fake_procs[i].market_name, sizeof info->market_name - 1);
	info->vendor_id = fake_procs[i].vendor_id;
	/* VENDOR_NAME as amd-smi static --asic prints it (CHANGELOG.md of ROCm/amdsmi, "amd_smi_lib for ROCm 6.3.0") */
	strcpy(info->vendor_name, "Advanced Micro Devices Inc. [AMD/ATI]");
	info->device_id = fake_procs[i].device_id;
#ifdef FAKE_V26
	info->oam_id = 0xFFFFFFFF;
	info->subsystem_id = 0xFFFFFFFF;
	info->flags = UINT64_MAX;
#else
	info->oam_id = 0xFFFF;
#endif
	info->num_of_compute_units = 0xFFFFFFFF;
	info->target_graphics_version = fake_procs[i].gfx ? fake_procs[i].gfx : UINT64_MAX;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_memory_total(amdsmi_handle h, int type, uint64_t *v) {
#ifdef FAKE_HANG
	for (;;) pause();
#endif
	int i = proc_index(h);
	if (i < 0 || !v || type != 0) return AMDSMI_STATUS_INVAL;
	if (!fake_procs[i].has_total) return AMDSMI_STATUS_NOT_SUPPORTED;
	*v = fake_procs[i].total;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_memory_usage(amdsmi_handle h, int type, uint64_t *v) {
	int i = proc_index(h);
	if (i < 0 || !v || type != 0) return AMDSMI_STATUS_INVAL;
	if (!fake_procs[i].has_used) return AMDSMI_STATUS_NOT_SUPPORTED;
	*v = fake_procs[i].used;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_topo_get_numa_node_number(amdsmi_handle h, uint32_t *n) {
	int i = proc_index(h);
	if (i < 0 || !n) return AMDSMI_STATUS_INVAL;
	if (fake_procs[i].numa < 0) return AMDSMI_STATUS_NOT_SUPPORTED;
	*n = (uint32_t)fake_procs[i].numa;
	return AMDSMI_STATUS_SUCCESS;
}

static amdsmi_status_t partition(const char *mode, char *buf, uint32_t len) {
	if (!buf || len == 0) return AMDSMI_STATUS_INVAL;
	if (!mode[0]) return AMDSMI_STATUS_NOT_SUPPORTED;
	if (strlen(mode) >= len) return AMDSMI_STATUS_INSUFFICIENT_SIZE;
	strcpy(buf, mode);
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_get_gpu_compute_partition(amdsmi_handle h, char *buf, uint32_t len) {
	int i = proc_index(h);
	if (i < 0) return AMDSMI_STATUS_INVAL;
	return partition(fake_procs[i].compute, buf, len);
}

amdsmi_status_t amdsmi_get_gpu_memory_partition(amdsmi_handle h, char *buf, uint32_t len) {
	int i = proc_index(h);
	if (i < 0) return AMDSMI_STATUS_INVAL;
	return partition(fake_procs[i].memory, buf, len);
}

amdsmi_status_t amdsmi_topo_get_link_type(amdsmi_handle a, amdsmi_handle b, uint64_t *hops, int *type) {
	int i = proc_index(a), j = proc_index(b);
	if (i < 0 || j < 0 || !hops || !type) return AMDSMI_STATUS_INVAL;
	if (fake_link[i][j].type < 0) return AMDSMI_STATUS_NOT_SUPPORTED;
#ifdef FAKE_V26
	/* fake_link holds amdsmi_io_link_type_t (0 undefined, 1 PCIe, 2 XGMI) */
	*type = fake_link[i][j].type == 1 ? AMDSMI_LINK_TYPE_PCIE
		: fake_link[i][j].type == 2 ? AMDSMI_LINK_TYPE_XGMI : AMDSMI_LINK_TYPE_UNKNOWN;
#else
	*type = fake_link[i][j].type;
#endif
	*hops = (uint64_t)fake_link[i][j].hops;
	return AMDSMI_STATUS_SUCCESS;
}

amdsmi_status_t amdsmi_topo_get_link_weight(amdsmi_handle a, amdsmi_handle b, uint64_t *w) {
	int i = proc_index(a), j = proc_index(b);
	if (i < 0 || j < 0 || !w) return AMDSMI_STATUS_INVAL;
	if (fake_link[i][j].weight < 0) return AMDSMI_STATUS_NOT_SUPPORTED;
	*w = (uint64_t)fake_link[i][j].weight;
	return AMDSMI_STATUS_SUCCESS;
}
