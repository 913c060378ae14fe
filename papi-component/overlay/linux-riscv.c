// SPDX-License-Identifier: MIT
/* RISC-V support for PAPI's Linux layer: identification, domains, cycle timer (see linux-riscv.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "papi.h"
#include "papi_internal.h"

#include "linux-riscv.h"
#include "riscv_cpuinfo.h"

static struct riscv_cpuinfo machine;
static int machine_is_riscv;

/* Device-tree cells are big-endian 32-bit values; the properties we read are one cell. */
static int read_dt_u32(const char *path, uint32_t *out)
{
	unsigned char cell[4];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(cell, 1, sizeof(cell), f);
	fclose(f);
	if (n != sizeof(cell))
		return -1;
	*out = (uint32_t)cell[0] << 24 | (uint32_t)cell[1] << 16 | (uint32_t)cell[2] << 8 | cell[3];
	return 0;
}

int _linux_riscv_decode_cpuinfo(FILE *f, PAPI_hw_info_t *hwinfo, int *cpuinfo_mhz)
{
	struct riscv_cpuinfo ci;
	uint32_t clock_hz;

	if (riscv_cpuinfo_parse(f, &ci) != 0)
		return 0;
	machine = ci;
	machine_is_riscv = 1;

	riscv_cpuinfo_vendor_name(&ci, hwinfo->vendor_string, sizeof(hwinfo->vendor_string));
	riscv_cpuinfo_model_name(&ci, hwinfo->model_string, sizeof(hwinfo->model_string));
	hwinfo->vendor = PAPI_VENDOR_RISCV;
	/* marchid's top bit marks commercial ids; the rest fits PAPI's int model number. */
	hwinfo->model = (int)(ci.marchid & 0x7fffffff);
	hwinfo->cpuid_family = (int)(ci.mvendorid & 0x7fffffff);
	hwinfo->cpuid_model = hwinfo->model;
	hwinfo->cpuid_stepping = (int)(ci.mimpid & 0x7fffffff);
	/* mimpid is an implementation-defined code, not a revision number: it is shown as cpuid_stepping */
	hwinfo->revision = 0.0f;

	/* RISC-V cpuinfo has no MHz line; the device tree has the core clock on most boards. */
	if (read_dt_u32("/proc/device-tree/cpus/cpu@0/clock-frequency", &clock_hz) == 0 && clock_hz > 0)
		*cpuinfo_mhz = (int)(clock_hz / 1000000u);
	SUBDBG("RISC-V: vendor %s, model %s, isa %s\n", hwinfo->vendor_string, hwinfo->model_string, ci.isa);
	return 1;
}

int _linux_riscv_detected(void)
{
	return machine_is_riscv;
}

int _linux_riscv_has_extension(const char *ext)
{
	return machine_is_riscv && riscv_isa_has_extension(machine.isa, ext);
}

#if defined(__riscv)

/* Core cycles per mtime tick as a fraction, set once at init. rdcycle is not used: Linux 6.6+
 * disables user access to the cycle CSR by default, while rdtime always works. */
static uint64_t core_hz, timebase_hz;

int _linux_riscv_timer_setup(void)
{
	uint32_t tb = 0;

	if (read_dt_u32("/proc/device-tree/cpus/timebase-frequency", &tb) == 0 && tb > 0)
		timebase_hz = tb;
	if (_papi_hwi_system_info.hw_info.cpu_max_mhz > 0)
		core_hz = (uint64_t)_papi_hwi_system_info.hw_info.cpu_max_mhz * 1000000u;
	if (timebase_hz == 0 || core_hz == 0)
		SUBDBG("RISC-V timer: timebase or core clock unknown, PAPI cycles are mtime ticks\n");
	return PAPI_OK;
}

static inline uint64_t read_mtime(void)
{
#if __riscv_xlen == 64
	uint64_t t;
	__asm__ __volatile__("rdtime %0" : "=r"(t));
	return t;
#else
	uint32_t hi, lo, hi2;
	do {
		__asm__ __volatile__("rdtimeh %0" : "=r"(hi));
		__asm__ __volatile__("rdtime %0" : "=r"(lo));
		__asm__ __volatile__("rdtimeh %0" : "=r"(hi2));
	} while (hi != hi2);
	return (uint64_t)hi << 32 | lo;
#endif
}

long long _linux_riscv_get_cycles(void)
{
	uint64_t ticks = read_mtime();

	if (timebase_hz == 0 || core_hz == 0)
		return (long long)ticks;
	return (long long)((unsigned __int128)ticks * core_hz / timebase_hz);
}

#endif
