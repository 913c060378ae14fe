// SPDX-License-Identifier: MIT
/*
 * riscv_hpc: PAPI component for the RISC-V counter banks that perf_event does not reach
 *   - the distributed hardware performance counters (HPCManagers read through hpcc/hpcm/hpcr; libpfm4 PMU
 *     riscv_lowrisc_hpc), read in batches: ONE request per manager per PAPI_start/read/stop/accum,
 *     whatever the number of the EventSet's events on that manager;
 *   - SonicBOOM's extended counter bank (libpfm4 PMU riscv_ucb_boom);
 *   - on a core with the distributed HPC, the core's own cycle and instret counters (libpfm4 PMU
 *     riscv_generic, counted per thread through perf_event), so that one EventSet holds PAPI_TOT_CYC,
 *     PAPI_TOT_INS and the bank's presets. Their names carry this component's prefix
 *     (riscv_hpc:::riscv_generic::CYCLES): without it the name is perf_event's. BOOM's bank has its own
 *     cycles and insts counters.
 * The protocol is in librvbank (lib/rvbank.h of riscv-papi), on top of seam 2 (librvhw).
 *
 * Overflow: none in hardware (the banks raise no interrupt); PAPI_overflow and PAPI_profil work through
 * PAPI's software overflow (its interval timer), dispatched by _riscv_hpc_dispatch_timer.
 *
 * Native events: the libpfm4 events of the present bank PMUs. A distributed-HPC event names one counter
 * kind; ":hart=N" (core managers) or ":slice=N" (L2 slice managers) selects one manager, and without the
 * qualifier the event is the sum over every manager of its kind (all harts, all L2 slices).
 * Counts are per manager, not per thread: a core manager counts everything its hart runs (every thread and
 * process, every privilege level), like an uncore counter. BOOM's counters are per task and honour the
 * EventSet's domain through pfc_maxPriv.
 *
 * Native code = event index * RVHPC_SEL_STRIDE + selection (0 = all managers of the kind, 1 + n = hart or
 * slice n).
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "papi.h"
#include "papi_internal.h"
#include "papi_memory.h"
#include "papi_vector.h"
#include "papi_preset.h"
#include "extras.h"
#include "linux-context.h"

#include "perfmon/pfmlib.h"
#include "perfmon/pfmlib_perf_event.h"
#include "rvbank.h"

#define RVHPC_MAX_EVENTS   64 /* events in one EventSet */
#define RVHPC_MAX_MANAGERS 64 /* managers one EventSet reads */
#define RVHPC_SEL_STRIDE   1024
#define RVHPC_MAX_MODULES  256 /* harts 0..255, L2 slices 0..255 (ManagerID module field) */
#define RVHPC_L2_MODULE    0x100
#define RVHPC_PROBE_POLLS  20000 /* a silent L2 slice manager is absent after this many polls */

#define PMU_HPC        "riscv_lowrisc_hpc"
#define PMU_BOOM       "riscv_ucb_boom"
#define RVHPC_MAX_CORE 2 /* the core events: cycles, instructions */
#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

enum bank { BANK_HPC, BANK_BOOM, BANK_CORE };
enum manager_kind { MGR_NONE, MGR_CORE, MGR_L2 };

typedef struct {
	char *name;  /* "riscv_lowrisc_hpc::L1D_READ" */
	char *descr; /* libpfm4's description */
	enum bank bank;
	enum manager_kind kind; /* HPC only */
	unsigned bit;           /* hpcm bit (HPC) or counter index (BOOM) */
	uint32_t perf_type;     /* core events: the perf_event encoding (libpfm4's) */
	uint64_t perf_config;
} rvhpc_native_t;

typedef struct {
	uint32_t id;
	enum manager_kind kind;
	unsigned module;
	uint64_t bitmap;
	uint64_t start[RVBANK_MAX_COUNTERS]; /* raw value at start / reset, indexed by hpcm bit */
	uint64_t last[RVBANK_MAX_COUNTERS];  /* raw value at the last read */
} rvhpc_manager_t;

typedef struct {
	int nevents;
	unsigned codes[RVHPC_MAX_EVENTS];
	int nmanagers;
	rvhpc_manager_t managers[RVHPC_MAX_MANAGERS];
	int nboom;
	unsigned boom_counter[RVHPC_MAX_EVENTS];
	uint64_t boom_start[RVHPC_MAX_EVENTS], boom_last[RVHPC_MAX_EVENTS];
	int ncore; /* core events: one perf_event fd each, counting from PAPI_add on */
	unsigned core_event[RVHPC_MAX_CORE];
	int core_fd[RVHPC_MAX_CORE];
	uint64_t core_start[RVHPC_MAX_CORE], core_last[RVHPC_MAX_CORE];
	int domain;
	unsigned max_priv; /* BOOM pfc_maxPriv for the domain */
	int has_last;      /* last[] holds the values of this EventSet's latest read... */
	uint64_t last_op;  /* ...and that read was this thread's latest riscv_hpc operation */
	long long values[RVHPC_MAX_EVENTS];
} rvhpc_control_t;

/* Per thread: BOOM's procTag/pfc_maxPriv are task state shared by the thread's EventSets. */
typedef struct {
	int boom_running; /* running EventSets with BOOM events (PAPI allows one per component and thread) */
	unsigned boom_max_priv;
	struct rvbank_boom_state boom_saved;
} rvhpc_context_t;

papi_vector_t _riscv_hpc_vector;

static rvhpc_native_t *native_table;
static int native_count;
static int hpc_present, boom_present;
static unsigned hpc_harts, hpc_slices;
/* Operations of the calling thread on this component (start, read, reset, stop): lets a reset that
 * directly follows a read (PAPI_accum) re-base at that read's values instead of issuing new requests. */
static __thread uint64_t thread_ops;

static int set_disabled(int rc, const char *reason)
{
	snprintf(_riscv_hpc_vector.cmp_info.disabled_reason, PAPI_MAX_STR_LEN, "%s", reason);
	_riscv_hpc_vector.cmp_info.disabled = rc;
	return rc;
}

static unsigned code_event(unsigned code)
{
	return code / RVHPC_SEL_STRIDE;
}

static unsigned code_sel(unsigned code)
{
	return code % RVHPC_SEL_STRIDE;
}

static unsigned instances(const rvhpc_native_t *e)
{
	if (e->bank != BANK_HPC)
		return 0;
	return e->kind == MGR_CORE ? hpc_harts : hpc_slices;
}

static int code_valid(unsigned code)
{
	unsigned ev = code_event(code), sel = code_sel(code);

	return ev < (unsigned)native_count && sel <= instances(&native_table[ev]);
}

static uint32_t manager_id(enum manager_kind kind, unsigned module)
{
	return RVHW_HPC_MANAGER_ID(kind == MGR_L2 ? RVHPC_L2_MODULE + module : module, 0);
}

/* ---------------------------------------------------------------- the native event table (libpfm4) */

static int add_native(const char *pmu, const pfm_event_info_t *info, enum bank bank)
{
	rvhpc_native_t *e, *grown;
	char name[PAPI_MAX_STR_LEN];

	grown = realloc(native_table, (size_t)(native_count + 1) * sizeof(*native_table));
	if (grown == NULL)
		return PAPI_ENOMEM;
	native_table = grown;
	e = &native_table[native_count];
	memset(e, 0, sizeof(*e));
	snprintf(name, sizeof(name), "%s::%s", pmu, info->name);
	e->name = strdup(name);
	e->descr = strdup(info->desc != NULL ? info->desc : "");
	if (e->name == NULL || e->descr == NULL) {
		free(e->name);
		free(e->descr);
		return PAPI_ENOMEM;
	}
	e->bank = bank;
	if (bank == BANK_CORE) { /* libpfm4's perf_event encoding of the core event */
		struct perf_event_attr attr;
		pfm_perf_encode_arg_t arg;
		memset(&attr, 0, sizeof(attr));
		memset(&arg, 0, sizeof(arg));
		arg.attr = &attr;
		arg.size = sizeof(arg);
		if (pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg) !=
		    PFM_SUCCESS) {
			free(e->name);
			free(e->descr);
			return PAPI_OK; /* not countable through perf_event: left out */
		}
		e->perf_type = attr.type;
		e->perf_config = attr.config;
		native_count++;
		return PAPI_OK;
	}
	native_count++;
	if (bank == BANK_BOOM) {
		e->bit = (unsigned)info->code;
		return PAPI_OK;
	}
	/* PFM_OS_NONE code = ManagerID << 6 | hpcm bit; the modifier (hart or slice) tells the kind */
	e->bit = (unsigned)(info->code & 0x3f);
	e->kind = MGR_CORE;
	for (int a = 0; a < info->nattrs; a++) {
		pfm_event_attr_info_t ainfo;
		memset(&ainfo, 0, sizeof(ainfo));
		ainfo.size = sizeof(ainfo);
		if (pfm_get_event_attr_info(info->idx, a, PFM_OS_NONE, &ainfo) == PFM_SUCCESS &&
		    strcmp(ainfo.name, "slice") == 0)
			e->kind = MGR_L2;
	}
	return PAPI_OK;
}

static int load_pmu_events(pfm_pmu_t pmu, enum bank bank)
{
	pfm_pmu_info_t pinfo;
	int idx, rc;

	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.size = sizeof(pinfo);
	if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
		return PAPI_ENOEVNT;
	for (idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
		pfm_event_info_t info;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_event_info(idx, PFM_OS_NONE, &info) != PFM_SUCCESS)
			continue;
		rc = add_native(pinfo.name, &info, bank);
		if (rc != PAPI_OK)
			return rc;
	}
	return PAPI_OK;
}

static int pmu_present(pfm_pmu_t pmu)
{
	pfm_pmu_info_t pinfo;

	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.size = sizeof(pinfo);
	return pfm_get_pmu_info(pmu, &pinfo) == PFM_SUCCESS && pinfo.is_present;
}

static void free_native_table(void)
{
	for (int i = 0; i < native_count; i++) {
		free(native_table[i].name);
		free(native_table[i].descr);
	}
	free(native_table);
	native_table = NULL;
	native_count = 0;
}

/* L2 slice managers are not described anywhere a user process can read: ask them, in order, until one
 * stays silent (the request is then cancelled). */
static unsigned probe_slices(void)
{
	const struct rvbank_hpc_options probe = {RVBANK_DEFAULT_RETRIES, RVHPC_PROBE_POLLS};
	unsigned n = 0;

	while (n < RVHPC_MAX_MODULES && rvbank_hpc_manager_answers(manager_id(MGR_L2, n), &probe) == 1)
		n++;
	return n;
}

/* ------------------------------------------------------------------------------- component entry */

static int _riscv_hpc_init_component(int cidx)
{
	char reason[PAPI_MAX_STR_LEN] = "";
	int rc, n = 0;

	_riscv_hpc_vector.cmp_info.CmpIdx = cidx;
	if (pfm_initialize() != PFM_SUCCESS) {
		return set_disabled(PAPI_ECMP, "libpfm4 failed to initialize");
	}
	/* libpfm4 reads /proc/cpuinfo: xdhpc in the isa string, BOOM's uarch/marchid */
	if (pmu_present(PFM_PMU_RISCV_LOWRISC_HPC)) {
		rc = rvbank_hpc_probe(reason, sizeof(reason));
		if (rc == RVBANK_OK)
			hpc_present = 1;
	} else {
		snprintf(reason, sizeof(reason), "no distributed HPC (no xdhpc in the isa string)");
	}
	boom_present = pmu_present(PFM_PMU_RISCV_UCB_BOOM);
	if (!hpc_present && !boom_present) {
		char line[PAPI_MAX_STR_LEN];
		snprintf(line, sizeof(line), "%s; no BOOM counter bank", reason);
		return set_disabled(PAPI_ENOSUPP, line);
	}
	if (hpc_present) {
		hpc_harts = rvbank_nharts();
		if (hpc_harts > RVHPC_MAX_MODULES)
			hpc_harts = RVHPC_MAX_MODULES;
		hpc_slices = probe_slices();
		rc = load_pmu_events(PFM_PMU_RISCV_LOWRISC_HPC, BANK_HPC);
		if (rc != PAPI_OK)
			goto fail;
		_riscv_hpc_vector.cmp_info.pmu_names[n++] = strdup(PMU_HPC);
		/* the core's cycles and instructions, for PAPI_TOT_CYC/PAPI_TOT_INS beside the bank presets
		 * (not in pmu_names: a riscv_generic:: name without our prefix stays perf_event's) */
		rc = load_pmu_events(PFM_PMU_RISCV_GENERIC, BANK_CORE);
		if (rc != PAPI_OK && rc != PAPI_ENOEVNT)
			goto fail;
	}
	if (boom_present) {
		rc = load_pmu_events(PFM_PMU_RISCV_UCB_BOOM, BANK_BOOM);
		if (rc != PAPI_OK)
			goto fail;
		_riscv_hpc_vector.cmp_info.pmu_names[n++] = strdup(PMU_BOOM);
	}
	/* the distributed HPC cannot filter by privilege; BOOM's pfc_maxPriv can */
	_riscv_hpc_vector.cmp_info.available_domains =
	    hpc_present ? PAPI_DOM_ALL : (PAPI_DOM_USER | PAPI_DOM_KERNEL | PAPI_DOM_SUPERVISOR);
	_riscv_hpc_vector.cmp_info.default_domain = _riscv_hpc_vector.cmp_info.available_domains;
	_riscv_hpc_vector.cmp_info.num_native_events = native_count;
	_riscv_hpc_vector.cmp_info.num_preset_events = 0;
	/* presets over bank events: the CPU,riscv_lowrisc_hpc / CPU,riscv_ucb_boom blocks of papi_events.csv
	 */
	if (hpc_present)
		_papi_load_preset_table(PMU_HPC, 0, cidx);
	if (boom_present)
		_papi_load_preset_table(PMU_BOOM, 0, cidx);
	return PAPI_OK;
fail:
	free_native_table();
	return set_disabled(rc, "out of memory reading the libpfm4 event tables");
}

static int _riscv_hpc_shutdown_component(void)
{
	for (int i = 0; i < PAPI_PMU_MAX; i++) {
		free(_riscv_hpc_vector.cmp_info.pmu_names[i]);
		_riscv_hpc_vector.cmp_info.pmu_names[i] = NULL;
	}
	free_native_table();
	hpc_present = boom_present = 0;
	hpc_harts = hpc_slices = 0;
	return PAPI_OK;
}

static int _riscv_hpc_init_thread(hwd_context_t *ctx)
{
	memset(ctx, 0, sizeof(rvhpc_context_t));
	return PAPI_OK;
}

static int _riscv_hpc_shutdown_thread(hwd_context_t *ctx)
{
	rvhpc_context_t *c = (rvhpc_context_t *)ctx;

	if (c->boom_running > 0)
		rvbank_boom_restore(&c->boom_saved);
	c->boom_running = 0;
	return PAPI_OK;
}

/* PAPI domain -> pfc_maxPriv: user only, user + supervisor (PAPI_DOM_KERNEL), all (PAPI_DOM_SUPERVISOR is
 * what PAPI calls the levels above the kernel: machine mode here). */
static int domain_max_priv(int domain, unsigned *max_priv)
{
	if (!(domain & PAPI_DOM_USER))
		return PAPI_EINVAL_DOM; /* BOOM always counts user mode */
	if (domain & (PAPI_DOM_SUPERVISOR | PAPI_DOM_OTHER))
		*max_priv = 3;
	else if (domain & PAPI_DOM_KERNEL)
		*max_priv = 1;
	else
		*max_priv = 0;
	return PAPI_OK;
}

static int set_domain_of(rvhpc_control_t *ctl, int domain)
{
	unsigned max_priv;
	int rc;

	if (hpc_present && domain != PAPI_DOM_ALL && domain != _riscv_hpc_vector.cmp_info.available_domains)
		return PAPI_EINVAL_DOM; /* the distributed HPC counts every privilege level */
	rc = domain_max_priv(domain, &max_priv);
	if (rc != PAPI_OK)
		return rc;
	ctl->domain = domain;
	ctl->max_priv = max_priv;
	return PAPI_OK;
}

static int _riscv_hpc_init_control_state(hwd_control_state_t *ctl)
{
	rvhpc_control_t *c = (rvhpc_control_t *)ctl;

	memset(c, 0, sizeof(*c));
	return set_domain_of(c, _riscv_hpc_vector.cmp_info.default_domain);
}

static int _riscv_hpc_set_domain(hwd_control_state_t *ctl, int domain)
{
	return set_domain_of((rvhpc_control_t *)ctl, domain);
}

static int _riscv_hpc_ctl(hwd_context_t *ctx, int code, _papi_int_option_t *option)
{
	(void)ctx;
	switch (code) {
	case PAPI_DOMAIN:
		return set_domain_of((rvhpc_control_t *)option->domain.ESI->ctl_state, option->domain.domain);
	case PAPI_GRANUL:
		return option->granularity.granularity == PAPI_GRN_THR ? PAPI_OK : PAPI_EINVAL;
	default:
		return PAPI_ENOSUPP;
	}
}

static int add_manager(rvhpc_control_t *c, enum manager_kind kind, unsigned module, unsigned bit)
{
	uint32_t id = manager_id(kind, module);
	int m;

	for (m = 0; m < c->nmanagers; m++)
		if (c->managers[m].id == id)
			break;
	if (m == c->nmanagers) {
		if (c->nmanagers == RVHPC_MAX_MANAGERS)
			return PAPI_ECOUNT;
		memset(&c->managers[m], 0, sizeof(c->managers[m]));
		c->managers[m].id = id;
		c->managers[m].kind = kind;
		c->managers[m].module = module;
		c->nmanagers++;
	}
	c->managers[m].bitmap |= UINT64_C(1) << bit;
	return PAPI_OK;
}

/* ------------------------------------------------------------- the core's cycles and instructions */

static void close_core(rvhpc_control_t *c)
{
	for (int k = 0; k < c->ncore; k++)
		close(c->core_fd[k]);
	c->ncore = 0;
}

/* One counting perf_event for this thread (the EventSet's), enabled from now on: like the banks' free
 * running counters, an EventSet reads it at start and takes differences. The distributed HPC counts every
 * privilege level, so do these (the component's domain is PAPI_DOM_ALL). The EventSet's core events are one
 * perf group: scheduled together, read together with one read(). */
static int open_core(rvhpc_control_t *c, const rvhpc_native_t *e, unsigned ev)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = e->perf_type;
	attr.config = e->perf_config;
	attr.read_format =
	    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = (int)syscall(__NR_perf_event_open, &attr, 0, -1, c->ncore > 0 ? c->core_fd[0] : -1,
	                  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		PAPIERROR("riscv_hpc: perf_event_open of %s failed: %s", e->name, strerror(err));
		return err == EACCES || err == EPERM ? PAPI_EPERM
		       : err == ENOENT               ? PAPI_ENOEVNT
		                                     : PAPI_ECNFLCT;
	}
	c->core_event[c->ncore] = ev;
	c->core_fd[c->ncore++] = fd;
	return PAPI_OK;
}

/* Every core event of the EventSet, into dst[] (scaled as perf does when the group was not always on the
 * counters): one read() of the group leader. */
static int read_core(rvhpc_control_t *c, uint64_t *dst)
{
	uint64_t v[3 + RVHPC_MAX_CORE]; /* nr, time enabled, time running, the values */
	ssize_t want = (ssize_t)((3 + (size_t)c->ncore) * sizeof(uint64_t));

	if (c->ncore == 0)
		return PAPI_OK;
	if (read(c->core_fd[0], v, sizeof(v)) != want || v[0] != (uint64_t)c->ncore)
		return PAPI_ESYS;
	for (int k = 0; k < c->ncore; k++) {
		uint64_t value = v[3 + k];
		if (v[2] != 0 && v[2] < v[1])
			value = (uint64_t)((long double)value * v[1] / v[2]);
		dst[k] = value;
	}
	return PAPI_OK;
}

/* Group the EventSet's events by manager: one bitmap (one request) per manager. */
static int _riscv_hpc_update_control_state(hwd_control_state_t *ctl, NativeInfo_t *native, int count,
                                           hwd_context_t *ctx)
{
	rvhpc_control_t *c = (rvhpc_control_t *)ctl;
	int rc;

	(void)ctx;
	if (count > RVHPC_MAX_EVENTS)
		return PAPI_ECOUNT;
	close_core(c);
	c->nevents = 0;
	c->nmanagers = 0;
	c->nboom = 0;
	c->has_last = 0;
	for (int i = 0; i < count; i++) {
		unsigned code = (unsigned)native[i].ni_event;
		const rvhpc_native_t *e;

		if (!code_valid(code))
			return PAPI_ENOEVNT;
		e = &native_table[code_event(code)];
		native[i].ni_position = i;
		c->codes[c->nevents++] = code;
		if (e->bank == BANK_CORE) {
			int k;
			for (k = 0; k < c->ncore && c->core_event[k] != code_event(code); k++)
				;
			if (k == c->ncore &&
			    (k == RVHPC_MAX_CORE || (rc = open_core(c, e, code_event(code))) != PAPI_OK)) {
				close_core(c);
				return k == RVHPC_MAX_CORE ? PAPI_ECOUNT : rc;
			}
			continue;
		}
		if (e->bank == BANK_BOOM) {
			int k;
			for (k = 0; k < c->nboom && c->boom_counter[k] != e->bit; k++)
				;
			if (k == c->nboom)
				c->boom_counter[c->nboom++] = e->bit;
			continue;
		}
		if (code_sel(code) > 0) {
			rc = add_manager(c, e->kind, code_sel(code) - 1, e->bit);
			if (rc != PAPI_OK)
				return rc;
			continue;
		}
		for (unsigned n = 0; n < instances(e); n++) {
			rc = add_manager(c, e->kind, n, e->bit);
			if (rc != PAPI_OK)
				return rc;
		}
	}
	return PAPI_OK;
}

static int bank_error(int rc)
{
	switch (rc) {
	case RVBANK_OK:
		return PAPI_OK;
	case RVBANK_EPERM:
		return PAPI_EPERM;
	case RVBANK_EINVAL:
		return PAPI_EINVAL;
	default: /* past the retry bound, a silent manager, a refused access: an error, never a number */
		SUBDBG("riscv_hpc: %s\n", rvbank_strerror(rc));
		return PAPI_EMISC;
	}
}

/* Every manager of the EventSet once, into last[] (or start[]). */
static int read_managers(rvhpc_control_t *c, int into_start)
{
	struct rvbank_hpc_request req[RVHPC_MAX_MANAGERS];
	uint64_t values[RVHPC_MAX_MANAGERS][RVBANK_MAX_COUNTERS];
	int rc;

	if (c->nmanagers == 0)
		return PAPI_OK;
	for (int m = 0; m < c->nmanagers; m++) {
		req[m].manager_id = c->managers[m].id;
		req[m].bitmap = c->managers[m].bitmap;
		req[m].values = values[m];
	}
	rc = rvbank_hpc_read(req, (size_t)c->nmanagers, NULL, NULL);
	if (rc != RVBANK_OK)
		return bank_error(rc);
	for (int m = 0; m < c->nmanagers; m++) {
		rvhpc_manager_t *mg = &c->managers[m];
		uint64_t *dst = into_start ? mg->start : mg->last;
		unsigned k = 0;
		for (unsigned bit = 0; bit < RVBANK_MAX_COUNTERS; bit++)
			if (mg->bitmap & (UINT64_C(1) << bit))
				dst[bit] = values[m][k++];
	}
	return PAPI_OK;
}

static int read_boom(rvhpc_control_t *c, uint64_t *dst)
{
	return c->nboom == 0 ? PAPI_OK : bank_error(rvbank_boom_read(c->boom_counter, (size_t)c->nboom, dst));
}

static int _riscv_hpc_start(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	rvhpc_context_t *t = (rvhpc_context_t *)ctx;
	rvhpc_control_t *c = (rvhpc_control_t *)ctl;
	int rc;

	thread_ops++;
	c->has_last = 0;
	if (c->nboom > 0) {
		if (t->boom_running > 0 && t->boom_max_priv != c->max_priv)
			return PAPI_ECNFLCT; /* pfc_maxPriv is one per task */
		if (t->boom_running == 0) {
			rc = bank_error(rvbank_boom_save(&t->boom_saved));
			if (rc == PAPI_OK)
				rc = bank_error(rvbank_boom_count(c->max_priv));
			if (rc != PAPI_OK)
				return rc;
			t->boom_max_priv = c->max_priv;
		}
		t->boom_running++;
		rc = read_boom(c, c->boom_start);
		if (rc != PAPI_OK)
			goto undo;
	}
	rc = read_managers(c, 1);
	if (rc == PAPI_OK)
		rc = read_core(c, c->core_start);
	if (rc == PAPI_OK)
		return PAPI_OK;
undo: /* not started: PAPI will not call stop */
	if (c->nboom > 0 && --t->boom_running == 0)
		rvbank_boom_restore(&t->boom_saved);
	return rc;
}

static int _riscv_hpc_read(hwd_context_t *ctx, hwd_control_state_t *ctl, long long **events, int flags)
{
	rvhpc_control_t *c = (rvhpc_control_t *)ctl;
	int rc;

	(void)ctx;
	(void)flags;
	thread_ops++;
	c->has_last = 0;
	rc = read_managers(c, 0);
	if (rc == PAPI_OK)
		rc = read_boom(c, c->boom_last);
	if (rc == PAPI_OK)
		rc = read_core(c, c->core_last);
	if (rc != PAPI_OK)
		return rc;
	for (int i = 0; i < c->nevents; i++) {
		const rvhpc_native_t *e = &native_table[code_event(c->codes[i])];
		unsigned sel = code_sel(c->codes[i]);
		uint64_t sum = 0;

		if (e->bank == BANK_CORE) {
			for (int k = 0; k < c->ncore; k++)
				if (c->core_event[k] == code_event(c->codes[i]))
					sum = c->core_last[k] - c->core_start[k];
		} else if (e->bank == BANK_BOOM) {
			for (int k = 0; k < c->nboom; k++)
				if (c->boom_counter[k] == e->bit)
					sum = rvbank_delta(c->boom_last[k], c->boom_start[k], 64);
		} else {
			for (int m = 0; m < c->nmanagers; m++) {
				const rvhpc_manager_t *mg = &c->managers[m];
				if (mg->kind != e->kind || (sel > 0 && mg->module != sel - 1))
					continue;
				sum += rvbank_delta(mg->last[e->bit], mg->start[e->bit],
				                    RVBANK_HPC_COUNTER_BITS);
			}
		}
		c->values[i] = (long long)sum;
	}
	c->has_last = 1;
	c->last_op = thread_ops;
	*events = c->values;
	return PAPI_OK;
}

/* PAPI_reset, and the second half of PAPI_accum (read, add, reset): right after this EventSet's read
 * (no other riscv_hpc operation of the thread in between) the new baseline is that read's values, so
 * PAPI_accum costs one request per manager and loses no event; otherwise the managers are read again. */
static int _riscv_hpc_reset(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	rvhpc_control_t *c = (rvhpc_control_t *)ctl;
	int rc = PAPI_OK;

	(void)ctx;
	if (c->has_last && c->last_op == thread_ops) {
		for (int m = 0; m < c->nmanagers; m++)
			memcpy(c->managers[m].start, c->managers[m].last, sizeof(c->managers[m].start));
		memcpy(c->boom_start, c->boom_last, sizeof(c->boom_start));
		memcpy(c->core_start, c->core_last, sizeof(c->core_start));
	} else {
		rc = read_managers(c, 1);
		if (rc == PAPI_OK)
			rc = read_boom(c, c->boom_start);
		if (rc == PAPI_OK)
			rc = read_core(c, c->core_start);
	}
	thread_ops++;
	c->has_last = 0;
	return rc;
}

static int _riscv_hpc_stop(hwd_context_t *ctx, hwd_control_state_t *ctl)
{
	rvhpc_context_t *t = (rvhpc_context_t *)ctx;
	rvhpc_control_t *c = (rvhpc_control_t *)ctl;

	/* PAPI_stop has just read the counters: nothing to read here */
	thread_ops++;
	c->has_last = 0;
	if (c->nboom > 0 && t->boom_running > 0 && --t->boom_running == 0)
		return bank_error(rvbank_boom_restore(&t->boom_saved));
	return PAPI_OK;
}

/* ------------------------------------------------------------------------------------ native events */

static int _riscv_hpc_ntv_enum_events(unsigned int *code, int modifier)
{
	unsigned ev = code_event(*code), sel = code_sel(*code);

	switch (modifier) {
	case PAPI_ENUM_FIRST:
		if (native_count == 0)
			return PAPI_ENOEVNT;
		*code = 0;
		return PAPI_OK;
	case PAPI_ENUM_EVENTS:
		if (ev + 1 >= (unsigned)native_count)
			return PAPI_ENOEVNT;
		*code = (ev + 1) * RVHPC_SEL_STRIDE;
		return PAPI_OK;
	case PAPI_NTV_ENUM_UMASKS: /* the qualifiers: :hart=N or :slice=N */
		if (ev >= (unsigned)native_count || sel + 1 > instances(&native_table[ev]))
			return PAPI_ENOEVNT;
		*code = ev * RVHPC_SEL_STRIDE + sel + 1;
		return PAPI_OK;
	default:
		return PAPI_EINVAL;
	}
}

static const char *qualifier(const rvhpc_native_t *e)
{
	return e->kind == MGR_CORE ? "hart" : "slice";
}

static int _riscv_hpc_ntv_code_to_name(unsigned int code, char *name, int len)
{
	const rvhpc_native_t *e;
	int n;

	if (!code_valid(code) || len <= 0)
		return PAPI_ENOEVNT;
	e = &native_table[code_event(code)];
	if (code_sel(code) == 0)
		n = snprintf(name, (size_t)len, "%s", e->name);
	else
		n = snprintf(name, (size_t)len, "%s:%s=%u", e->name, qualifier(e), code_sel(code) - 1);
	return n < len ? PAPI_OK : PAPI_EBUF;
}

static int describe(unsigned code, char *out, size_t len)
{
	const rvhpc_native_t *e;
	unsigned sel;

	if (!code_valid(code))
		return PAPI_ENOEVNT;
	e = &native_table[code_event(code)];
	sel = code_sel(code);
	if (e->bank == BANK_CORE)
		snprintf(out, len,
		         "%s (the core's counter, per thread, every privilege level; counted beside the "
		         "bank's events)",
		         e->descr);
	else if (e->bank == BANK_BOOM)
		snprintf(out, len, "%s (per task; privilege levels from the EventSet's domain)", e->descr);
	else if (sel == 0)
		snprintf(out, len, "%s, summed over the %u %s managers (one request each)", e->descr,
		         instances(e), e->kind == MGR_CORE ? "core" : "L2 slice");
	else /* papi_native_avail shows what follows "masks:" as the qualifier's description */
		snprintf(out, len, "%s masks:%s %u only: HPCManager 0x%x (everything that %s counts)",
		         e->descr, e->kind == MGR_CORE ? "hart" : "L2 slice", sel - 1,
		         (unsigned)manager_id(e->kind, sel - 1), e->kind == MGR_CORE ? "hart" : "slice");
	return PAPI_OK;
}

static int _riscv_hpc_ntv_code_to_descr(unsigned int code, char *descr, int len)
{
	return len > 0 ? describe(code, descr, (size_t)len) : PAPI_EINVAL;
}

static int _riscv_hpc_ntv_code_to_info(unsigned int code, PAPI_event_info_t *info)
{
	int rc = _riscv_hpc_ntv_code_to_name(code, info->symbol, sizeof(info->symbol));

	if (rc != PAPI_OK)
		return rc;
	describe(code, info->long_descr, sizeof(info->long_descr));
	snprintf(info->short_descr, sizeof(info->short_descr), "%s", native_table[code_event(code)].descr);
	info->data_type = PAPI_DATATYPE_UINT64;
	return PAPI_OK;
}

/* "[pmu::]EVENT[:hart=N|:slice=N]", case-insensitive event and pmu names. */
static int _riscv_hpc_ntv_name_to_code(const char *name, unsigned int *code)
{
	char buf[PAPI_HUGE_STR_LEN], *qual;

	snprintf(buf, sizeof(buf), "%s", name);
	qual = strchr(strstr(buf, "::") ? strstr(buf, "::") + 2 : buf, ':');
	if (qual != NULL)
		*qual++ = '\0';
	for (int ev = 0; ev < native_count; ev++) {
		const rvhpc_native_t *e = &native_table[ev];
		unsigned long n;
		char *end;

		const char *plain = strstr(e->name, "::") + 2;
		if (strcasecmp(buf, e->name) != 0 && strcasecmp(buf, plain) != 0)
			continue;
		if (qual == NULL) {
			*code = (unsigned)ev * RVHPC_SEL_STRIDE;
			return PAPI_OK;
		}
		if (e->bank != BANK_HPC || strncasecmp(qual, qualifier(e), strlen(qualifier(e))) != 0 ||
		    qual[strlen(qualifier(e))] != '=')
			return PAPI_ENOEVNT;
		qual += strlen(qualifier(e)) + 1;
		if (!isdigit((unsigned char)*qual))
			return PAPI_ENOEVNT;
		n = strtoul(qual, &end, 0);
		if (*end != '\0' || n >= instances(e))
			return PAPI_ENOEVNT;
		*code = (unsigned)ev * RVHPC_SEL_STRIDE + (unsigned)n + 1;
		return PAPI_OK;
	}
	return PAPI_ENOEVNT;
}

/* PAPI's software overflow: its interval timer's signal. PAPI reads the EventSet and calls the handler for
 * every event past its threshold. Without this the timer's signal reached a no-op and the handler of
 * PAPI_overflow never ran. */
static void _riscv_hpc_dispatch_timer(int signal, hwd_siginfo_t *info, void *uc)
{
	_papi_hwi_context_t hw_context;
	ThreadInfo_t *thread = NULL;
	vptr_t address;

	(void)signal;
	hw_context.si = info;
	hw_context.ucontext = (hwd_ucontext_t *)uc;
	address = GET_OVERFLOW_ADDRESS(hw_context);
	_papi_hwi_dispatch_overflow_signal((void *)&hw_context, address, NULL, 0, 0, &thread,
	                                   _riscv_hpc_vector.cmp_info.CmpIdx);
}

papi_vector_t _riscv_hpc_vector = {
    .cmp_info =
        {
            .name = "riscv_hpc",
            .short_name = "riscv_hpc",
            .description = "RISC-V counter banks: distributed HPC (batched hpcc/hpcm/hpcr) and BOOM",
            .version = "1.0",
            .num_cntrs = RVHPC_MAX_EVENTS,
            .num_mpx_cntrs = RVHPC_MAX_EVENTS,
            .default_domain = PAPI_DOM_ALL,
            .available_domains = PAPI_DOM_ALL,
            .default_granularity = PAPI_GRN_THR,
            .available_granularities = PAPI_GRN_THR,
            .hardware_intr_sig = PAPI_INT_SIGNAL,
        },
    .size =
        {
            .context = sizeof(rvhpc_context_t),
            .control_state = sizeof(rvhpc_control_t),
            .reg_value = sizeof(int),
            .reg_alloc = sizeof(int),
        },
    .init_component = _riscv_hpc_init_component,
    .shutdown_component = _riscv_hpc_shutdown_component,
    .init_thread = _riscv_hpc_init_thread,
    .shutdown_thread = _riscv_hpc_shutdown_thread,
    .init_control_state = _riscv_hpc_init_control_state,
    .update_control_state = _riscv_hpc_update_control_state,
    .start = _riscv_hpc_start,
    .stop = _riscv_hpc_stop,
    .read = _riscv_hpc_read,
    .reset = _riscv_hpc_reset,
    .ctl = _riscv_hpc_ctl,
    .set_domain = _riscv_hpc_set_domain,
    .ntv_enum_events = _riscv_hpc_ntv_enum_events,
    .ntv_name_to_code = _riscv_hpc_ntv_name_to_code,
    .ntv_code_to_name = _riscv_hpc_ntv_code_to_name,
    .ntv_code_to_descr = _riscv_hpc_ntv_code_to_descr,
    .ntv_code_to_info = _riscv_hpc_ntv_code_to_info,
    .dispatch_timer = _riscv_hpc_dispatch_timer,
};
