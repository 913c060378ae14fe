#!/bin/sh
# SPDX-License-Identifier: MIT
# rvemu-run: run a command on an emulated RISC-V machine (librvemu.so under LD_PRELOAD).
usage() {
	cat <<'USAGE'
Usage: rvemu-run [options] [--] command [args...]

Runs command with librvemu.so preloaded: /proc/cpuinfo, the perf sysctls, /sys/devices/system/cpu and
the perf_event system call behave like Linux on the chosen RISC-V machine.

Options:
  --model M           a machine of events/models.csv (gen/gen_events.py --models lists them), default sifive-u74;
                      an unknown name prints the list                        (sets RVEMU_MODEL)
  --harts N           number of harts/CPUs, default 4                          (sets RVEMU_HARTS)
  --clock virtual|cputime
                      cputime (default): counts follow each thread's CPU time at the model frequency;
                      virtual: counts advance only through rvemu_advance()     (sets RVEMU_CLOCK)
  --sscofpmf          give the U74 the Sscofpmf extension: counter-overflow interrupts (sampling)
                      and privilege filtering                                  (sets RVEMU_SSCOFPMF=1)
  --paranoid N        kernel.perf_event_paranoid, enforced: -1..4, default 2 (mainline); Debian ships 3,
                      Ubuntu 4 (nothing without CAP_PERFMON)                 (sets RVEMU_PARANOID)
  --user              run as an ordinary user: no CAP_PERFMON even as root   (sets RVEMU_CAP_PERFMON=0)
  --perf-user-access N
                      kernel.perf_user_access: 0 no counter CSR reads in user space, 1 (default) the
                      counters of the thread's mmapped events, 2 cycle/instret always
                                                                             (sets RVEMU_PERF_USER_ACCESS)
  --exec              run a riscv64 program under qemu-riscv64 with the exec-count plugin librvexec.so:
                      counts are what the program executes, through modelled caches, TLBs, branch
                      predictor and cycles (docs/exec-counts.md); its own clock, so no --clock;
                      models sifive-u74, cva6, lowrisc-hpc, boom (events/exec_models.csv)
                                                                (sets RVEMU_COUNT_SOURCE=exec, RVEXEC_SHM)
  --help              show this text

Counts are synthetic: the model's workload profile (events per cycle) times the thread's cycles. With
the cputime clock those are its CPU time at the model frequency, not what the program did; use
--clock virtual and rvemu_advance() (rvemu.h) for exact, deterministic counts.

Environment: the options set the first seven variables; the others have no option. All are read when the
program starts; a malformed, empty or out-of-range value stops it with one line on stderr and exit status 2.
  RVEMU_MODEL             a model name, default sifive-u74                                    (--model)
  RVEMU_HARTS             1..1024, default 4                                                  (--harts)
  RVEMU_CLOCK             cputime (default) or virtual                                        (--clock)
  RVEMU_SSCOFPMF          0 (default) or 1; 1 only on a core with the Sscofpmf option (U74) (--sscofpmf)
  RVEMU_PARANOID          -1..4, default 2                                                 (--paranoid)
  RVEMU_CAP_PERFMON       0 or 1, default what the process has (root: 1)                 (--user sets 0)
  RVEMU_PERF_USER_ACCESS  0..2, default 1                                          (--perf-user-access)
  RVEMU_READ_ADVANCE      0..2^62-1 cycles, default 0; virtual clock only: every read of a counter
                          first runs this many cycles (programs that cannot call rvemu_advance())
  RVEMU_PES               0 or 1, Precise Event Sampling; default the model's: built into cva6 (0 is
                          refused there), an option of sifive-u74 (RVEMU_PES=1), refused elsewhere
  RVEMU_PES_RECORDS       1..65536, default 64: the PES buffer, in records
  RVEMU_IRQ_SKID          0..2^32 cycles, default 32; virtual clock or --exec: overflow to interrupt
  RVEMU_MUX_CYCLES        cycles between multiplexing rotations: 1 ms of the model's clock or more,
                          default 4 ms (perf_event_mux_interval_ms)
  RVEMU_TICK_CYCLES       cycles between scheduler ticks: 1 or more, default 4 ms of the model's clock
  RVEMU_MAX_SAMPLE_RATE   1..100000000 samples per second, default 100000
                          (kernel.perf_event_max_sample_rate)
  RVEMU_COUNT_SOURCE      profile (default: rates of the model's workload profile) or exec (counts of
                          the QEMU plugin's execution, docs/exec-counts.md)
  lowrisc-hpc's counter bank: RVEMU_PROFILE (a workload profile, default gcc; an unknown name prints
    the list), RVEMU_L2_SLICES 1..16 (default 2), RVEMU_HPC_HOP_CYCLES 0..1000000 (4),
    RVEMU_HPC_COUNTER_CYCLES 1..1000000 (2), RVEMU_HPC_CSR_CYCLES 1..1000000 (1), RVEMU_HPC_USEREN 0|1 (1),
    RVEMU_HPC_FORCE_INTERRUPT and RVEMU_HPC_FORCE_EMPTY_POP 0..1000000000 (0; injected faults for tests)
  boom's counter bank: RVEMU_BOOM_KERNEL_PERMILLE 0..1000 (50), RVEMU_BOOM_MACHINE_PERMILLE 0..1000 (10),
    the share of cycles spent in the kernel and in machine mode
  RVEMU_LIB, RVEMU_EXEC, RVEMU_PRELOAD: below.
  RVEMU_RUN_SHM           set by the emulator: the run's shared table of tasks (in /dev/shm), inherited by
                          every process the command starts, so they are one machine (perf stat -- cmd,
                          PAPI_attach count each other); removed here, so each rvemu-run starts a new run.
                          The table goes with the run's last process (the command, or a daemon it started:
                          the daemon keeps the run's table for its later execs); a run whose creator died
                          without an exit path (SIGKILL, or any other fatal signal it does not handle)
                          leaves it, and the creator of the next run (any new run) removes it once no
                          process of that run lives (told by pid and start time)

The library is found through RVEMU_LIB, else ../lib/librvemu.so or .libs/librvemu.so next to this
script. An existing LD_PRELOAD is kept: the emulator is appended to it. With RVEMU_EXEC set (a command, such
as tests/riscv64/qemu-run for a riscv64 build under qemu-user), the command runs the program and gets the
preload list in RVEMU_PRELOAD instead of LD_PRELOAD.
USAGE
}

# value OPTION ARG...: the option's value (the next argument); missing or empty is an error, so an empty
# --model never falls back to another model in silence
value() {
	[ $# -ge 2 ] && [ -n "$2" ] || { echo "rvemu-run: $1 needs a value" >&2; exit 2; }
	printf '%s' "$2"
}
while [ $# -gt 0 ]; do
	case "$1" in
	--help|-h) usage; exit 0 ;;
	--model) RVEMU_MODEL=$(value "$@") || exit 2; export RVEMU_MODEL; shift 2 ;;
	--model=*) RVEMU_MODEL=$(value "--model" "${1#--model=}") || exit 2; export RVEMU_MODEL; shift ;;
	--harts) RVEMU_HARTS=$(value "$@") || exit 2; export RVEMU_HARTS; shift 2 ;;
	--harts=*) RVEMU_HARTS=$(value "--harts" "${1#--harts=}") || exit 2; export RVEMU_HARTS; shift ;;
	--clock) RVEMU_CLOCK=$(value "$@") || exit 2; export RVEMU_CLOCK; shift 2 ;;
	--clock=*) RVEMU_CLOCK=$(value "--clock" "${1#--clock=}") || exit 2; export RVEMU_CLOCK; shift ;;
	--sscofpmf) RVEMU_SSCOFPMF=1; export RVEMU_SSCOFPMF; shift ;;
	--paranoid) RVEMU_PARANOID=$(value "$@") || exit 2; export RVEMU_PARANOID; shift 2 ;;
	--paranoid=*) RVEMU_PARANOID=$(value "--paranoid" "${1#--paranoid=}") || exit 2; export RVEMU_PARANOID; shift ;;
	--user) RVEMU_CAP_PERFMON=0; export RVEMU_CAP_PERFMON; shift ;;
	--perf-user-access) RVEMU_PERF_USER_ACCESS=$(value "$@") || exit 2; export RVEMU_PERF_USER_ACCESS; shift 2 ;;
	--perf-user-access=*) RVEMU_PERF_USER_ACCESS=$(value "--perf-user-access" "${1#--perf-user-access=}") || exit 2; export RVEMU_PERF_USER_ACCESS; shift ;;
	--exec) exec_counts=1; shift ;;
	--) shift; break ;;
	-*) echo "rvemu-run: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { usage >&2; exit 2; }

case "${RVEMU_CLOCK:-cputime}" in
virtual|cputime) ;;
*) echo "rvemu-run: --clock must be virtual or cputime" >&2; exit 2 ;;
esac

# --exec: the riscv64 program runs under qemu-riscv64 with the plugin (a host library, like qemu itself) and
# the riscv64 emulator preloaded in the guest; both read and write the count file. It is a new file in a
# fresh folder unless RVEXEC_SHM names one (kept then, for rvexec-dump); the folder is removed at the end.
elf_machine() { od -An -tx1 -j18 -N2 "$1" 2>/dev/null | tr -d ' \n'; }
run_exec_counts() {
	qemu=${QEMU_RISCV64:-qemu-riscv64}
	qemu_path=$(command -v "$qemu") ||
		{ echo "rvemu-run: --exec needs $qemu (Debian package qemu-user; or set QEMU_RISCV64)" >&2; exit 2; }
	[ "$(elf_machine "$lib")" = f300 ] ||
		{ echo "rvemu-run: --exec runs riscv64 programs: $lib is not the riscv64 emulator (set RVEMU_LIB to the riscv64 prefix's lib/librvemu.so)" >&2; exit 2; }
	plugin=${RVEXEC_PLUGIN:-}
	if [ -z "$plugin" ]; then # a plugin for the machine qemu runs on, not a riscv64 build of it
		for cand in "$here/../lib/librvexec.so" "$here/../plugin/.libs/librvexec.so"; do
			if [ -f "$cand" ] && [ "$(elf_machine "$cand")" = "$(elf_machine "$qemu_path")" ]; then plugin=$cand; break; fi
		done
	fi
	[ -n "$plugin" ] && [ -f "$plugin" ] ||
		{ echo "rvemu-run: --exec: the exec-count plugin librvexec.so was not found (set RVEXEC_PLUGIN; the build makes it, docs/exec-counts.md)" >&2; exit 2; }
	[ -z "${RVEMU_CLOCK:-}" ] ||
		{ echo "rvemu-run: --exec brings its own clock (the modelled cycles): leave out --clock and RVEMU_CLOCK" >&2; exit 2; }
	dir=
	if [ -z "${RVEXEC_SHM:-}" ]; then
		dir=$(mktemp -d "${TMPDIR:-/tmp}/rvemu-run.XXXXXX") || exit 2
		RVEXEC_SHM=$dir/counts
		trap 'rm -rf "$dir"; exit 130' INT TERM HUP
	fi
	export RVEXEC_SHM RVEMU_COUNT_SOURCE=exec
	QEMU_PLUGIN=$plugin,model=${RVEMU_MODEL:-sifive-u74},shm=$RVEXEC_SHM
	export QEMU_PLUGIN
	status=0
	if [ -n "${RVEMU_EXEC:-}" ]; then # a runner of qemu-riscv64 (tests/riscv64/qemu-run): it takes QEMU_PLUGIN
		RVEMU_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$lib
		export RVEMU_PRELOAD
		unset LD_PRELOAD
		# shellcheck disable=SC2086 # a command with its arguments, split on blanks
		$RVEMU_EXEC "$@" || status=$?
	else
		preload=${LD_PRELOAD:+$LD_PRELOAD:}$lib
		unset LD_PRELOAD
		"$qemu_path" -L "${RISCV64_SYSROOT:-/usr/riscv64-linux-gnu}" -E "LD_PRELOAD=$preload" "$@" || status=$?
	fi
	[ -z "$dir" ] || rm -rf "$dir"
	exit $status
}

unset RVEMU_RUN_SHM # a new run: its first process creates the machine every process of the command shares
here=$(cd "$(dirname "$0")" && pwd)
lib=${RVEMU_LIB:-}
if [ -z "$lib" ]; then
	for cand in "$here/../lib/librvemu.so" "$here/.libs/librvemu.so"; do
		if [ -f "$cand" ]; then lib=$cand; break; fi
	done
fi
[ -n "$lib" ] && [ -f "$lib" ] || { echo "rvemu-run: librvemu.so not found (set RVEMU_LIB)" >&2; exit 2; }
[ -z "${exec_counts:-}" ] || run_exec_counts "$@"

LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$lib
if [ -n "${RVEMU_EXEC:-}" ]; then
	# the program runs under another program (qemu-user for a riscv64 build, docs/riscv64.md), which gets the
	# preload list in RVEMU_PRELOAD to hand to the program: it is not for the runner itself
	RVEMU_PRELOAD=$LD_PRELOAD
	export RVEMU_PRELOAD
	unset LD_PRELOAD
	# shellcheck disable=SC2086 # a command with its arguments, split on blanks
	exec $RVEMU_EXEC "$@"
fi
export LD_PRELOAD
exec "$@"
