// SPDX-License-Identifier: MIT
/* Machine configuration from the environment (one parser, one error style), statistics, load-time set-up. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mach.h"

#ifndef IRQ_SKID_DEFAULT
#define IRQ_SKID_DEFAULT 32
#endif
#include "mach_priv.h"

struct rvemu_stats emu_stats;

static struct emu_config cfg;

void emu_config_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("librvemu: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

uint64_t emu_env_u64(const char *name, uint64_t def, uint64_t min, uint64_t max)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	char *end;
	errno = 0;
	unsigned long long v = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
	if (errno || *end || end == (hex ? s + 2 : s) || s[0] == '-' || s[0] == '+' || s[0] == ' ' ||
	    v < min || v > max)
		emu_config_error("%s must be a number in %llu..%llu, not '%s'", name, (unsigned long long)min,
		                 (unsigned long long)max, s);
	return v;
}

int emu_env_choice(const char *name, int def, const char *const choices[])
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	for (int i = 0; choices[i]; i++)
		if (strcmp(s, choices[i]) == 0)
			return i;
	char list[512] = "";
	for (int i = 0; choices[i]; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, choices[i], sizeof(list) - strlen(list) - 1);
	}
	emu_config_error("%s must be one of %s, not '%s'", name, list, s);
}

/* CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in the effective set: what perfmon_capable() checks. */
static int process_has_perfmon(void)
{
	/* capget(2) with _LINUX_CAPABILITY_VERSION_3: a header of two u32, then two sets of three u32 */
	uint32_t hdr[2] = {0x20080522, 0}, data[6] = {0, 0, 0, 0, 0, 0};
	if (EMU_REAL(syscall)(SYS_capget, hdr, data) != 0)
		return geteuid() == 0;
	return ((data[3] >> (38 - 32)) & 1) || ((data[0] >> 21) & 1); /* effective: words 0 and 3 */
}

static const struct rvemu_model *find_model(const char *name)
{
	for (size_t i = 0; i < rvemu_nmodels; i++)
		if (strcmp(rvemu_models[i].model, name) == 0)
			return &rvemu_models[i];
	return NULL;
}

static void load_config(void)
{
	static const char *const clocks[] = {"cputime", "virtual", NULL};
	const char *m = getenv("RVEMU_MODEL");
	/* unset means the default core; set but empty is a mistake (an empty --model, a variable that
	 * expanded to nothing), never a silent fallback to the U74 */
	cfg.model = m && *m ? find_model(m) : m ? NULL : find_model("sifive-u74");
	if (!cfg.model) {
		char list[256] = "";
		for (size_t i = 0; i < rvemu_nmodels; i++) {
			strncat(list, " ", sizeof(list) - strlen(list) - 1);
			strncat(list, rvemu_models[i].model, sizeof(list) - strlen(list) - 1);
		}
		if (!*m)
			emu_config_error(
			    "RVEMU_MODEL is set but empty; unset it for the default (sifive-u74) "
			    "or name a model:%s",
			    list);
		emu_config_error("unknown RVEMU_MODEL '%s'; known models:%s", m, list);
	}
	cfg.harts = (unsigned)emu_env_u64("RVEMU_HARTS", 4, 1, 1024);
	cfg.clock_virtual = emu_env_choice("RVEMU_CLOCK", 0, clocks);
	cfg.isa_sscofpmf = (int)emu_env_u64("RVEMU_SSCOFPMF", 0, 0, 1);
	if (cfg.isa_sscofpmf && cfg.model->overflow_irq != RVEMU_OVF_SSCOFPMF)
		emu_config_error("RVEMU_SSCOFPMF=1: this core has no Sscofpmf option: '%s'",
		                 cfg.model->model);
	/* Andes' and T-Head's own overflow interrupts are always there, and Linux samples and filters with
	 * them as with Sscofpmf's: the perf layer sees one overflow interrupt either way. */
	cfg.sscofpmf = cfg.isa_sscofpmf || strstr(cfg.model->isa, "_sscofpmf") != NULL ||
	               cfg.model->overflow_irq == RVEMU_OVF_ANDES ||
	               cfg.model->overflow_irq == RVEMU_OVF_THEAD;
	/* The kernel rotates multiplexed groups every perf_event_mux_interval_ms (4 ms with HZ=250), and
	 * the scheduler tick (HZ=250: 4 ms) folds every running counter into its perf count. */
	uint64_t four_ms = 4000ull * cfg.model->freq_mhz;
	/* As perf_event_mux_interval_ms, at least 1 ms: each rotation is accounted on its own, so a rotation
	 * every few cycles would keep the emulator busy for minutes per second of the program. */
	cfg.mux_cycles =
	    emu_env_u64("RVEMU_MUX_CYCLES", four_ms, 1000ull * cfg.model->freq_mhz, UINT64_MAX / 4);
	cfg.tick_cycles = emu_env_u64("RVEMU_TICK_CYCLES", four_ms, 1, UINT64_MAX / 4);
	/* Programs we cannot change (papi_command_line) advance a virtual clock only through their reads. */
	cfg.read_advance = emu_env_u64("RVEMU_READ_ADVANCE", 0, 0, UINT64_MAX / 4);
	if (cfg.read_advance && !cfg.clock_virtual)
		emu_config_error("RVEMU_READ_ADVANCE needs RVEMU_CLOCK=virtual; the clock is '%s'",
		                 "cputime");
	/* An overflow interrupt is taken some cycles after the overflow (the pipeline drains first), so a
	 * sample's PC can be a later instruction's: skid. Under the CPU-time clock it comes from the sampling
	 * alarm's own delay; under the virtual clock from this latency (synthetic: no core publishes it). */
	/* The exec count source's clock is the modelled cycles, which move only with the program, as the
	 * virtual clock does: it models the skid the same way (its alarm names the instruction). */
	static const char *const sources[] = {"profile", "exec", NULL};
	int program_time = cfg.clock_virtual || emu_env_choice("RVEMU_COUNT_SOURCE", 0, sources) == 1;
	const char *skid = getenv("RVEMU_IRQ_SKID");
	if (skid && *skid && !program_time)
		emu_config_error(
		    "RVEMU_IRQ_SKID needs RVEMU_CLOCK=virtual or RVEMU_COUNT_SOURCE=exec (the CPU-time "
		    "clock has the sampling alarm's own skid); the clock is '%s'",
		    "cputime");
	cfg.irq_skid = program_time ? emu_env_u64("RVEMU_IRQ_SKID", IRQ_SKID_DEFAULT, 0, 1ull << 32) : 0;
	/* kernel.perf_event_paranoid: mainline's default 2; Debian ships 3, Ubuntu 4 (both: no access at all
	 * without CAP_PERFMON). */
	const char *paranoid = getenv("RVEMU_PARANOID"); /* -1..4; -1 is the one negative value */
	cfg.paranoid =
	    paranoid && strcmp(paranoid, "-1") == 0 ? -1 : (int)emu_env_u64("RVEMU_PARANOID", 2, 0, 4);
	/* CAP_PERFMON: what the process really has (root: yes), unless RVEMU_CAP_PERFMON says otherwise
	 * (0 = run "as an ordinary user" even as root). */
	cfg.cap_perfmon = (int)emu_env_u64("RVEMU_CAP_PERFMON", (uint64_t)process_has_perfmon(), 0, 1);
	cfg.perf_user_access = (int)emu_env_u64("RVEMU_PERF_USER_ACCESS", 1, 0, 2);
	cfg.max_sample_rate = (unsigned)emu_env_u64("RVEMU_MAX_SAMPLE_RATE", 100000, 1, 100000000);
	/* Precise Event Sampling: built into the model (2), or an option (1) with RVEMU_PES=1 */
	int pes_opt = (int)emu_env_u64("RVEMU_PES", cfg.model->pes == 2, 0, 1);
	if (pes_opt && cfg.model->pes == 0)
		emu_config_error("RVEMU_PES=1: this core has no Precise Event Sampling option: '%s'",
		                 cfg.model->model);
	if (!pes_opt && cfg.model->pes == 2)
		emu_config_error("RVEMU_PES=0: Precise Event Sampling is part of this core: '%s'",
		                 cfg.model->model);
	cfg.pes = pes_opt;
	cfg.pes_records = (unsigned)emu_env_u64("RVEMU_PES_RECORDS", 64, 1, 65536);
}

static pthread_once_t config_once = PTHREAD_ONCE_INIT;

const struct emu_config *emu_cfg(void)
{
	pthread_once(&config_once, load_config);
	return &cfg;
}

const struct rvemu_model *emu_model(void)
{
	return emu_cfg()->model;
}

unsigned emu_nharts(void)
{
	return emu_cfg()->harts;
}

int emu_clock_is_virtual(void)
{
	return emu_cfg()->clock_virtual;
}
