# rtask - run C functions as tasks in a pool of forked worker processes.
#
#   make                 build build/librtask.a, build/librtask.so and the examples
#                        (installs nothing: sh mk/make installs what is missing)
#   make run-examples    build and run every example in examples/
#   make check           build and run the test suite (installs Check if needed),
#                        check the man pages, the header and lib/'s layers
#   make check-asan      the suite under AddressSanitizer and UBSan
#   make check-valgrind  the suite under valgrind
#   make check-chaos     work while workers are killed and stopped at random
#   make check-mpi       the cluster over MPI, under mpirun (installs Open MPI)
#   make fuzz            libFuzzer targets, FUZZ_SECONDS each (default 60)
#                        or FUZZ_RUNS inputs each if that comes first
#   make bench           benchmarks next to Python's peers and the raw limits
#   make bench-taskbench Task Bench's graphs: METG(50 %) of rtask and its peers

# The standard variables are honoured: CC, CFLAGS, CPPFLAGS, LDFLAGS, and
# PREFIX, LIBDIR, INCLUDEDIR, BINDIR, MANDIR and DESTDIR for install.
# Warnings are errors in the check targets (and CI) alone: WERROR=.
CC       ?= cc
CSTD      = -std=c11 -D_GNU_SOURCE
WERROR   ?=
WARN      = -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT      ?= -O2 -g
CFLAGS   ?= $(OPT)
ALL_CFLAGS = $(CSTD) $(WARN) $(CPPFLAGS) $(CFLAGS) -Iinclude -Ilib -pthread
LIBS      = -pthread -lm -ldl
CHECKING  = WERROR=-Werror

# hwloc finds devices where it is installed; without it, PCI sysfs does.
# pkg-config is asked when a compiler first needs the answer, not when
# make starts (mk/make installs hwloc first on a fresh machine).
HWLOC_CFLAGS = $(eval HWLOC_CFLAGS := $$(shell pkg-config --cflags hwloc 2>/dev/null \
                   && echo -DRT_HAVE_HWLOC))$(HWLOC_CFLAGS)
HWLOC_LIBS   = $(eval HWLOC_LIBS := $$(shell pkg-config --libs hwloc 2>/dev/null))$(HWLOC_LIBS)
ALL_CFLAGS += $(HWLOC_CFLAGS)
LIBS      += $(HWLOC_LIBS)

VERSION   = 0.1.0
SONAME    = librtask.so.0

LIB_SRC  = $(sort $(wildcard lib/*/*.c))
LIB_HDR  = include/rtask.h $(wildcard lib/*/*.h)

# Every build flavour lives in its own directory so that switching between
# them never mixes objects: build/ (normal), build-asan/, build-fuzz/.
# Nothing is written in the source tree.
B ?= build
LIB_OBJ  = $(LIB_SRC:lib/%.c=$(B)/lib/%.o)
STATIC   = $(B)/librtask.a
SHARED   = $(B)/librtask.so.$(VERSION)

EXAMPLE_SRC = $(sort $(wildcard examples/*.c))
EXAMPLES    = $(EXAMPLE_SRC:examples/%.c=$(B)/examples/%)
TEST_SRC    = $(filter-out test/chaos.c,$(sort $(wildcard test/*.c)))
TEST_BIN    = $(B)/test/rtask-tests
CHAOS_SRC   = test/chaos.c test/helpers.c test/tasks.c
CHAOS_BIN   = $(B)/test/rtask-chaos
BENCH_BIN   = $(B)/bench/rtask-bench
INFO_BIN    = $(B)/tools/rtask-info
TIMELINE_BIN = $(B)/tools/rtask-timeline
STATUS_BIN  = $(B)/tools/rtask-status

# Tasks are named after their function through dladdr(), which needs the
# program's symbols in its dynamic table: link programs with -rdynamic.
PROG_LDFLAGS = -rdynamic

.PHONY: FORCE all lib examples run-examples check check-gpu check-man check-layers check-asan check-tsan check-valgrind \
        check-chaos check-mpi check-slurm check-install check-header install uninstall bench peer-starpu \
        bench-taskbench tb-starpu fuzz deps \
        deps-test clean

all: lib examples $(INFO_BIN) $(TIMELINE_BIN) $(STATUS_BIN)

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=

# The MPI module (lib/cluster/mpi_ops.h), where mpicc is: rt_init() loads it for
# cluster "mpi"; programs never link MPI.
# It is optional: built only where mpicc compiles a file that includes
# mpi.h (Open MPI's programs come without its headers in openmpi-bin).
MPICC_FOUND := $(shell command -v mpicc 2>/dev/null)
MPICC      := $(if $(MPICC_FOUND),$(shell printf '\043include <mpi.h>\n' | \
                  mpicc -x c -E - > /dev/null 2>&1 && echo $(MPICC_FOUND)))
MPI_MODULE  = $(if $(MPICC),$(if $(filter build,$(B)),$(B)/rtask-mpi.so))
MPI_MISSING = $(if $(MPICC_FOUND),mpicc cannot compile with mpi.h (libopenmpi-dev is \
                  missing),there is no mpicc)

lib: $(STATIC) $(if $(filter build,$(B)),$(SHARED)) $(MPI_MODULE)
	@$(if $(MPICC),:,echo "rtask: the MPI module is not built: $(MPI_MISSING);" \
	    "make check-mpi installs Open MPI")

$(B)/rtask-mpi.so: lib/cluster/mpi/module.c lib/cluster/mpi_ops.h
	@mkdir -p $(@D)
	mpicc $(CSTD) $(WARN) $(CPPFLAGS) $(OPT) $(LDFLAGS) -fPIC -shared $< -o $@

# A generated file ($@.new written) replaces $@ only when it differs, so
# that what depends on it is rebuilt only then.
UPDATE = cmp -s $@.new $@ && rm $@.new || mv $@.new $@

# Where `make install` puts the module, for programs linked statically;
# cluster.o is built again when that changes.
$(B)/lib/runtime/cluster.o: ALL_CFLAGS += -DRT_MPI_MODULE_DIR='"$(LIBDIR)/rtask"'
$(B)/lib/runtime/cluster.o: $(B)/moduledir
$(B)/moduledir: FORCE
	@mkdir -p $(@D)
	@echo '$(LIBDIR)/rtask' > $@.new && $(UPDATE)

# The flags the library was built with: when they change (hwloc installed
# since, another OPT), everything is built again.  -Werror is left out: it
# changes no object, only whether a warning stops the build, so that make,
# make install and the check targets share build/ without rebuilding (the
# sanitizer and fuzz builds, in folders of their own, build with it anew).
$(B)/flags: FORCE
	@mkdir -p $(@D)
	@echo '$(filter-out -Werror,$(ALL_CFLAGS)) $(LDFLAGS) $(LIBS)' > $@.new && $(UPDATE)

FORCE:

# Each object depends on the headers it includes (-MMD writes them down).
$(B)/lib/%.o: lib/%.c $(B)/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -fPIC -fvisibility=hidden -c $< -o $@

-include $(LIB_OBJ:.o=.d)

$(STATIC): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(SHARED): $(LIB_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -o $@ $^ $(LIBS)
	ln -sf librtask.so.$(VERSION) $(B)/$(SONAME)
	ln -sf $(SONAME) $(B)/librtask.so

examples: $(EXAMPLES)

# rtask-info includes internal headers to resolve the node as rt_init() does.
$(INFO_BIN): tools/rtask-info.c $(LIB_HDR) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< -o $@ $(STATIC) $(LIBS)

# rtask-status asks a running program through the socket statusd.h names.
$(STATUS_BIN): tools/rtask-status.c $(LIB_HDR) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< -o $@ $(STATIC) $(LIBS)

# rtask-timeline reads the files rt_timeline() writes; it needs no library.
$(TIMELINE_BIN): tools/rtask-timeline.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ -lm

$(B)/examples/%: examples/%.c examples/example.h $(STATIC) include/rtask.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(PROG_LDFLAGS) $< -o $@ $(STATIC) $(LIBS)

# Each command line is shown before what it printed.  The tools are built
# too: the README's tour runs rtask-info next.
run-examples: examples $(INFO_BIN) $(TIMELINE_BIN)
	@mk/examples run $(B)/examples

# ---- dependencies -----------------------------------------------------------

# hwloc and the PCI id database improve detection; a machine that cannot
# install them (no registry) builds without them, with a warning.  mk/make
# runs this before any build; plain make never installs anything.
deps:
	@mk/need-packages build-essential pkg-config
	@mk/need-packages --optional libhwloc-dev pci.ids

deps-test:
	@mk/need-packages build-essential pkg-config check libsubunit-dev python3

# ---- tests ------------------------------------------------------------------

CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)

# Link a Check program of the tests: its C sources and the library.
LINK_CHECK = $(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) $(PROG_LDFLAGS) \
	$(filter %.c,$^) -o $@ $(STATIC) $(CHECK_LIBS) $(LIBS)

# A fake NVML beside the suite, which finds it there (test_detect.c).
FAKE_NVML = $(B)/test/libnvidia-ml.so.1
$(FAKE_NVML): test/fake/nvml.c lib/devices/nvml_abi.h
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) -fPIC -shared $< -o $@

# A task function in a library of its own, for dlopen() (test_tasks.c).
LATE_LIB = $(B)/test/libtask-late.so
$(LATE_LIB): test/late/late_task.c include/rtask.h
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) -Iinclude -fPIC -shared $< -o $@

# test_placement.c includes internal headers to drive the scheduler.
$(TEST_BIN): $(TEST_SRC) test/tests.h $(LIB_HDR) $(STATIC) $(FAKE_NVML) $(LATE_LIB) | deps-test
	@mkdir -p $(@D)
	$(LINK_CHECK)

check: deps-test check-man check-header check-layers
	$(MAKE) B=build $(CHECKING) $(TEST_BIN) examples $(INFO_BIN) $(TIMELINE_BIN) $(STATUS_BIN)
	build/test/rtask-tests
	build/tools/rtask-info --root test/fake/v100x4 --pci-ids test/fake/pci.ids \
	    --json | python3 -m json.tool > /dev/null
	build/tools/rtask-info --root test/fake/h100x8 --pci-ids test/fake/pci.ids \
	    | sed 's/CPU=[0-9.]*/CPU=N/; s/hostname=[^,]*/hostname=H/' \
	    | diff -u test/fake/h100x8.info - \
	    && echo "rtask-info: output as expected"
	$(MAKE) --no-print-directory check-install
	@mk/examples check build/examples
	@mk/man-examples build/librtask.a build/man-examples
	@test/build/check-build
	@mk/readme-tour
	$(if $(MPICC),$(MAKE) --no-print-directory check-mpi,@echo "check-mpi: skipped ($(MPI_MISSING))")

# Work goes on while workers are killed and stopped at random (2 minutes
# at most): no task lost, hung, wrong or run more often than allowed.
$(CHAOS_BIN): $(CHAOS_SRC) test/tests.h $(LIB_HDR) $(STATIC) | deps-test
	@mkdir -p $(@D)
	$(LINK_CHECK)

check-chaos: deps-test
	$(MAKE) B=build $(CHECKING) $(CHAOS_BIN)
	CK_DEFAULT_TIMEOUT=120 build/test/rtask-chaos

# rtask on this machine's real NVIDIA GPUs (test/gpu/): tasks ask CUDA
# what they see, NVML watches, MPS holds shares where it is installed.
# Where there is no GPU (as in CI) it says so and runs nothing.
GPU_SRC = test/gpu/test_gpu.c test/helpers.c test/tasks.c
GPU_BIN = $(B)/test/rtask-gpu-tests
$(GPU_BIN): $(GPU_SRC) test/tests.h $(LIB_HDR) $(STATIC) | deps-test
	@mkdir -p $(@D)
	$(LINK_CHECK)

check-gpu: deps-test
	$(MAKE) B=build $(CHECKING) $(GPU_BIN)
	$(GPU_BIN)

# The cluster over MPI (mk/check-mpi runs the jobs).  Like any program
# of rtask's users, the suite does not link MPI.
MPI_TEST_BIN = $(B)/test/rtask-mpi-tests
$(MPI_TEST_BIN): test/mpi/test_cluster.c include/rtask.h $(STATIC) | deps-test
	@mkdir -p $(@D)
	$(LINK_CHECK)

# A program that uses MPI itself links it, as its own choice.
MPI_APP_BIN = $(B)/test/rtask-mpi-app
$(MPI_APP_BIN): test/mpi/app_mpi.c include/rtask.h $(STATIC)
	@mkdir -p $(@D)
	mpicc $(ALL_CFLAGS) $(LDFLAGS) $(PROG_LDFLAGS) $< -o $@ $(STATIC) $(LIBS)

check-mpi: deps-test
	@mk/need-packages libopenmpi-dev openmpi-bin
	$(MAKE) B=build $(CHECKING) lib $(MPI_TEST_BIN) $(MPI_APP_BIN) $(FAKE_NVML) examples $(INFO_BIN)
	mk/check-mpi $(MPI_TEST_BIN) $(MPI_APP_BIN)
	mk/readme-tour mpi

# Slurm for real (mk/check-slurm): a one-node cluster of its own, srun
# and sbatch; skipped, saying why, where Slurm cannot be had.
check-slurm: deps-test
	@mk/need-packages libopenmpi-dev openmpi-bin
	$(MAKE) B=build $(CHECKING) lib examples $(INFO_BIN)
	mk/check-slurm

# A (void) cast silences RT_NODISCARD with gcc and clang, in each C
# standard and in C++; without it, the dropped result is warned about.
HEADER_TRIES = gcc:-std=c99 gcc:-std=c11 gcc:-std=c17 gcc:-std=c2x clang:-std=c11 \
               clang:-std=c2x g++:-std=c++17:-xc++ clang++:-std=c++17:-xc++
check-header:
	@for t in $(HEADER_TRIES); do \
	    cc=$${t%%:*} flags=$$(echo $${t#*:} | tr : ' '); \
	    command -v $$cc > /dev/null || continue; \
	    $$cc $$flags -pedantic -Wall -Wextra -Werror -Iinclude -c -o /dev/null \
	        test/header/void_cast.c || { echo "check-header: $$cc $$flags"; exit 1; }; \
	    ! $$cc $$flags -Wall -Werror -Iinclude -c -o /dev/null -DIGNORED \
	        test/header/void_cast.c 2> /dev/null || \
	        { echo "check-header: $$cc $$flags: a dropped result is not warned about"; exit 1; }; \
	done; echo "check-header: (void) silences RT_NODISCARD; a dropped result warns"

# Every page must render without a single warning, and open as the
# README says, with man -l from the top of the tree (aliases are links).
MAN_PAGES = $(sort $(wildcard man/man1/*.1 man/man3/*.3 man/man7/*.7))
check-man:
	@mk/need-packages groff-base man-db
	@for p in $(MAN_PAGES); do \
	    out=$$(groff -t -ww -man -z -Tutf8 $$p 2>&1; \
	           MANPAGER=cat man -l $$p 2>&1 > /dev/null); \
	    [ -z "$$out" ] || { echo "$$p: $$out"; exit 1; }; \
	    grep -q '^\.SH NAME' $$p || { echo "$$p: no NAME section (empty?)"; exit 1; }; \
	done; echo "man pages: $(words $(MAN_PAGES)) render cleanly and open with man -l"

SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-asan: deps-test
	$(MAKE) B=build-asan $(CHECKING) OPT="-O1 -g $(SAN)" LIBS="$(LIBS) $(SAN)" \
	    build-asan/test/rtask-tests
	$(MAKE) B=build $(CHECKING) $(TIMELINE_BIN) $(STATUS_BIN)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	    UBSAN_OPTIONS=print_stacktrace=1 \
	    build-asan/test/rtask-tests

# Races between the round's holder and the public calls (a submission
# reads the scheduler's books under the lock while the round writes
# them): the GPU health suite under ThreadSanitizer, which stops at the
# first race.  Workers start threads after the fork, which TSan does not
# follow, so the suites that run many tasks are left to ASan and valgrind.
TSAN = -fsanitize=thread
check-tsan: deps-test
	$(MAKE) B=build-tsan $(CHECKING) OPT="-O1 -g $(TSAN)" LIBS="$(LIBS) $(TSAN)" \
	    build-tsan/test/rtask-tests
	TSAN_OPTIONS=halt_on_error=1 CK_RUN_SUITE=health build-tsan/test/rtask-tests

# Check runs each test in a forked child, and the runtime forks the fork
# server and workers: valgrind follows all of them (an error fails the test).
# hwloc's x86 backend cannot run under valgrind and says so on stderr.
check-valgrind: deps-test
	@mk/need-packages valgrind
	$(MAKE) B=build $(CHECKING) $(TEST_BIN) $(TIMELINE_BIN) $(STATUS_BIN)
	HWLOC_COMPONENTS=-x86 CK_DEFAULT_TIMEOUT=600 RT_TEST_SMALL=1 valgrind --quiet --error-exitcode=9 \
	    --leak-check=full --errors-for-leak-kinds=definite \
	    --suppressions=test/valgrind.supp build/test/rtask-tests

# lib/'s folders are layers: each includes, and takes symbols from, only
# the folders below it.
check-layers:
	$(MAKE) B=build $(CHECKING) build/librtask.a
	@mk/check-layers build

# ---- fuzzing ----------------------------------------------------------------

# libFuzzer targets (clang), each run for FUZZ_SECONDS, or FUZZ_RUNS inputs
# if that comes first, over its corpus in test/fuzz/corpus/ and a scratch
# copy it may grow.  hwloc loads no plugin: they leak from modules they
# unload, and loading them per input is most of a run; hwloc itself leaks on
# some bad XML (test/fuzz/lsan.supp): not ours to fix.  A crash saves the
# input next to the corpus (crash-*), which keeps it as a regression test
# once the bug is fixed, and fails the run.
FUZZ_TARGETS = proto proto_worker callmsg journal resources visible cpulist relay rankmsg sparse labels pci_ids hwloc_xml
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_BIN = $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)

build-fuzz/fuzz_%: test/fuzz/fuzz_%.c test/fuzz/fuzz.h build-fuzz/librtask.a
	clang $(CSTD) -O1 -g -fsanitize=fuzzer $(FUZZ_SAN) -Iinclude -Ilib $< \
	    build-fuzz/librtask.a $(LIBS) -o $@

fuzz: deps-test
	@mk/need-packages clang libclang-rt-14-dev
	$(MAKE) B=build-fuzz $(CHECKING) CC=clang OPT="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" lib
	$(MAKE) $(FUZZ_BIN)
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p build-fuzz/corpus/$$t && \
	    echo "fuzz: $$t for $(FUZZ_SECONDS) s" && \
	    HWLOC_PLUGINS_PATH=/nonexistent LSAN_OPTIONS=suppressions=test/fuzz/lsan.supp \
	    build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) -print_final_stats=1 \
	        -artifact_prefix=test/fuzz/corpus/$$t/ \
	        build-fuzz/corpus/$$t test/fuzz/corpus/$$t 2> build-fuzz/$$t.log || \
	        { tail -40 build-fuzz/$$t.log; exit 1; }; \
	    grep -E "stat::number_of_executed_units" build-fuzz/$$t.log | \
	        sed "s/^/fuzz: $$t: /"; \
	done

# ---- benchmarks -------------------------------------------------------------

# decide.c includes internal headers to drive the scheduler.
BENCH_SRC = bench/bench.c bench/measure.c bench/decide.c bench/scale.c bench/deaths.c \
            bench/graph.c bench/nested.c bench/health.c bench/spill.c \
            bench/keep.c
$(BENCH_BIN): $(BENCH_SRC) bench/bench.h $(LIB_HDR) $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(PROG_LDFLAGS) $(BENCH_SRC) -o $@ \
	    $(STATIC) $(LIBS)

# The cluster section uses MPI itself, for MPI's own figures: mpicc.
CLUSTER_BENCH_BIN = $(B)/bench/rtask-bench-cluster
$(CLUSTER_BENCH_BIN): bench/cluster.c bench/measure.c bench/bench.h include/rtask.h $(STATIC)
	@mkdir -p $(@D)
	mpicc $(ALL_CFLAGS) $(LDFLAGS) $(PROG_LDFLAGS) bench/cluster.c bench/measure.c -o $@ \
	    $(STATIC) $(LIBS)

MPIRUN = mpirun --oversubscribe --bind-to none $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

# The C peers: OpenMP tasks (gcc's -fopenmp) and StarPU (Debian's
# libstarpu-dev, installed when it can be), threads in one process.
PEER_OPENMP = $(B)/bench/rtask-peer-openmp
PEER_STARPU = $(B)/bench/rtask-peer-starpu
$(PEER_OPENMP): bench/peer_openmp.c bench/peer.h
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(CPPFLAGS) $(OPT) -fopenmp $(LDFLAGS) $< -o $@

peer-starpu:
	@mk/need-packages --optional libstarpu-dev
	@if pkg-config --exists starpu-1.3; then \
	    mkdir -p $(B)/bench && \
	    $(CC) $(CSTD) $(WARN) $(CPPFLAGS) $(OPT) \
	        $$(pkg-config --cflags starpu-1.3 | sed "s/-I/-isystem /g") \
	        $(LDFLAGS) bench/peer_starpu.c -o $(PEER_STARPU) $$(pkg-config --libs starpu-1.3); \
	else echo "bench: StarPU is not installed: its figures are left out"; fi

bench: $(BENCH_BIN) $(FAKE_NVML) $(PEER_OPENMP) peer-starpu \
       $(if $(MPICC),$(CLUSTER_BENCH_BIN) $(MPI_MODULE))
	@mk/need-packages python3
	$(BENCH_BIN)
	$(if $(MPICC),RTASK_MPI_MODULE=$(CURDIR)/$(MPI_MODULE) $(MPIRUN) -np 3 $(CLUSTER_BENCH_BIN))
	$(if $(MPICC),RTASK_MPI_MODULE=$(CURDIR)/$(MPI_MODULE) $(MPIRUN) -np 32 $(CLUSTER_BENCH_BIN) scale)

# Task Bench (bench/taskbench/): its graphs on rtask, OpenMP, StarPU (where
# installed) and Python's process pool, and METG(50 %) of each.
TB = bench/taskbench
TB_RTASK = $(B)/bench/tb-rtask
TB_OPENMP = $(B)/bench/tb-openmp
TB_STARPU = $(B)/bench/tb-starpu
$(TB_RTASK): $(TB)/tb_rtask.c $(TB)/tb.c $(TB)/tb.h include/rtask.h $(STATIC)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(PROG_LDFLAGS) $(TB)/tb_rtask.c $(TB)/tb.c -o $@ \
	    $(STATIC) $(LIBS)
$(TB_OPENMP): $(TB)/tb_openmp.c $(TB)/tb.c $(TB)/tb.h
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) $(CPPFLAGS) $(OPT) -fopenmp $(LDFLAGS) $(TB)/tb_openmp.c $(TB)/tb.c \
	    -o $@ -lm

tb-starpu:
	@mk/need-packages --optional libstarpu-dev
	@if pkg-config --exists starpu-1.3; then \
	    mkdir -p $(B)/bench && \
	    $(CC) $(CSTD) $(WARN) $(CPPFLAGS) $(OPT) \
	        $$(pkg-config --cflags starpu-1.3 | sed "s/-I/-isystem /g") $(LDFLAGS) \
	        $(TB)/tb_starpu.c $(TB)/tb.c -o $(TB_STARPU) $$(pkg-config --libs starpu-1.3) -lm; \
	else echo "bench-taskbench: StarPU is not installed: its figures are left out"; fi

bench-taskbench: $(TB_RTASK) $(TB_OPENMP) tb-starpu
	@mk/need-packages python3
	mk/taskbench $(B)/bench

# ---- installation -------------------------------------------------------------

INSTALLED_MAN = $(MAN_PAGES:man/%=%)
L = $(DESTDIR)$(LIBDIR)

# Built with hwloc, a static link needs it too: Requires.private says so.
# Written for each install, whose directories it names.
$(B)/rtask.pc: rtask.pc.in FORCE
	@mkdir -p $(@D)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@REQUIRES@|$(if $(HWLOC_LIBS),Requires.private: hwloc)|' $< > $@.new && \
	    $(UPDATE)

# find_package(rtask) for CMake projects: the imported target rtask::rtask.
$(B)/cmake/%.cmake: %.cmake.in FORCE
	@mkdir -p $(@D)
	@sed -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@MAJOR@|$(firstword $(subst ., ,$(VERSION)))|' \
	    $< > $@.new && $(UPDATE)

CMAKE_FILES = $(B)/cmake/rtaskConfig.cmake $(B)/cmake/rtaskConfigVersion.cmake

install: all $(B)/rtask.pc $(CMAKE_FILES)
	install -d $(DESTDIR)$(INCLUDEDIR) $(L)/pkgconfig $(DESTDIR)$(BINDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 644 include/rtask.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(STATIC) $(L)/
	install -m 755 $(SHARED) $(L)/
	ln -sf librtask.so.$(VERSION) $(L)/$(SONAME)
	ln -sf $(SONAME) $(L)/librtask.so
	install -m 644 $(B)/rtask.pc $(L)/pkgconfig/
	install -d $(L)/cmake/rtask && install -m 644 $(CMAKE_FILES) $(L)/cmake/rtask/
	install -m 755 $(INFO_BIN) $(TIMELINE_BIN) $(STATUS_BIN) $(DESTDIR)$(BINDIR)/
	$(if $(MPI_MODULE),install -d $(L)/rtask && install -m 755 $(MPI_MODULE) $(L)/rtask/)
	for p in $(INSTALLED_MAN); do install -m 644 man/$$p $(DESTDIR)$(MANDIR)/$$p; done

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/rtask.h $(L)/librtask.a $(L)/librtask.so* \
	    $(L)/pkgconfig/rtask.pc $(DESTDIR)$(BINDIR)/rtask-info \
	    $(DESTDIR)$(BINDIR)/rtask-timeline $(DESTDIR)$(BINDIR)/rtask-status \
	    $(L)/rtask/rtask-mpi.so \
	    $(L)/cmake/rtask/rtaskConfig.cmake $(L)/cmake/rtask/rtaskConfigVersion.cmake
	rmdir $(L)/rtask $(L)/cmake/rtask 2>/dev/null || true
	for p in $(INSTALLED_MAN); do rm -f $(DESTDIR)$(MANDIR)/$$p; done

# Install into a temporary prefix, build an example with pkg-config alone
# and another with CMake's find_package(rtask) alone,
# run both, uninstall, and check that nothing is left.
check-install:
	@rm -rf build/prefix && mkdir -p build/prefix
	$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/build/prefix > /dev/null
	PKG_CONFIG_PATH=$(CURDIR)/build/prefix/lib/pkgconfig mk/readme-tour installed
	@mk/need-packages cmake
	mk/cmake-try $(CURDIR)/build/prefix
	@for p in $(INSTALLED_MAN); do \
	    name=$$(basename $$p); name=$${name%.*}; section=$${p%%/*}; \
	    out=$$(MANPAGER=cat man -M build/prefix/share/man $${section#man} $$name 2>&1 \
	           > /dev/null); \
	    [ -z "$$out" ] || { echo "installed $$p: $$out"; exit 1; }; \
	done
	$(MAKE) --no-print-directory uninstall PREFIX=$(CURDIR)/build/prefix > /dev/null
	@test -z "$$(find build/prefix -type f -o -type l)" || \
	    { echo "uninstall left:"; find build/prefix -type f -o -type l; exit 1; }
	@echo "install: pkg-config build ran, every page opens with man; uninstall left nothing"

clean:
	rm -rf build build-asan build-fuzz
