# mthpd: one plain Makefile.  Outputs go to $(O) (default build/), so that
# sanitizer builds live beside the normal one in build-asan/.
#
#   make                 build $(O)/mthpd and $(O)/libmthpd.a
#   make check           unit, fixture and integration tests (root parts skip with 77)
#   make asan            the same tests under ASan+UBSan, in build-asan/
#   make check-vm        unit and integration tests inside Debian's (or VM_KERNEL=) kernel, QEMU
#   make check-container the container image and DaemonSet under podman (root; apt-get)
#   make check-examples  the shipped policy examples on real Debian services (root; apt-get)
#   make fuzz            libFuzzer on each tests/fuzz harness (clang; FUZZ_SECONDS, FUZZ_RUNS)
#   make bench           scan cost against the pagemap floor, the daemon, Redis latency and
#                        refill, a JVM's gain (root; REFILL_SECONDS=600 for the 10-minute
#                        refill run)
#   make demo            a demo workload, its plan, its collapse (root)
#   make install         DESTDIR PREFIX SBINDIR SYSCONFDIR UNITDIR MANDIR DOCDIR (mk/install.mk)
#   make deb             the Debian package, built from a copy of the tree, into $(DEB_OUT)
#   make check-deb       the package installed, upgraded, removed, purged in the systemd VM (root)
#   make uninstall       the same files removed; neither runs systemctl
#   make VERSION=x.y     build with another version string (see below)

O ?= build
CC ?= cc
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
WERROR ?= 1
TEST_WRAPPER ?=

# The version, defined here and nowhere else: `mthpd --version`, the start
# log line, `mthpd status` and the metrics' mthpd_build_info show it.  In a
# git checkout it is `git describe` of the newest tag v*, without the v
# (0.1-3-gabc1234-dirty: 3 commits after v0.1, uncommitted changes);
# without such a tag BASE_VERSION plus the commit (0.1+gabc1234); from a
# tarball or without git, BASE_VERSION.  `make VERSION=...` overrides it.
BASE_VERSION := 0.1
VERSION ?= $(or $(patsubst v%,%,$(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null)),$(addprefix $(BASE_VERSION)+g,$(shell git rev-parse --short HEAD 2>/dev/null)),$(BASE_VERSION))

WARN := -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-qual -Wstrict-prototypes \
	-Wmissing-prototypes -Wmissing-declarations -Wformat=2 -Wformat-security \
	-Wsign-compare -Wundef -Wvla -Wimplicit-fallthrough -Wconversion
ifeq ($(WERROR),1)
WARN += -Werror
endif
HARDEN := -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIE
CFLAGS ?= -O2 -g
SANFLAGS ?=
ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) $(HARDEN) $(CFLAGS) $(SANFLAGS) -MMD -MP -iquote lib -iquote tests/lib \
	-iquote $(O)/gen
LDFLAGS_ALL := -pie -Wl,-z,relro,-z,now $(SANFLAGS) $(LDFLAGS)

LIB_SRC := $(sort $(wildcard lib/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o)
DAEMON_SRC := $(sort $(wildcard daemon/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(O)/%.o)
TESTLIB_SRC := $(sort $(wildcard tests/lib/*.c))
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(O)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test-*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)
INTEG_SRC := $(sort $(wildcard tests/integration/*.c))
INTEG_BIN := $(INTEG_SRC:tests/integration/%.c=$(O)/tests/integration/%)
CONTRIB_SRC := $(sort $(wildcard contrib/*.c))
CONTRIB_BIN := $(CONTRIB_SRC:contrib/%.c=$(O)/contrib/%)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(O)/bench/%)
# bench-scan's parts (bench/scan/bench-scan.h says which is which)
BENCH_SCAN_OBJ := $(patsubst %.c,$(O)/%.o,$(sort $(wildcard bench/scan/*.c)))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz-*.c))
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/%.c=%)
FUZZ_BIN := $(FUZZ_NAMES:%=$(O)/tests/fuzz/%)

.PHONY: all check check-config check-container check-examples check-service check-systemd-vm check-deb deb check-vm check-unit check-fixtures check-integration check-fuzz fuzz asan bench demo install clean deps
all: $(O)/mthpd $(O)/libmthpd.a $(CONTRIB_BIN) $(INTEG_BIN) $(BENCH_BIN)

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The version as a header, rewritten only when it changed: what includes it
# is rebuilt after a commit or a tag, and only then.
$(O)/gen/version.h: FORCE-VERSION
	@mkdir -p $(@D)
	@echo '#define MTHPD_VERSION "$(VERSION)"' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(DAEMON_OBJ): $(O)/gen/version.h
.PHONY: FORCE-VERSION

# The version alone, for builds outside this tree (the container image).
print-version:
	@echo '$(VERSION)'
.PHONY: print-version

$(O)/libmthpd.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

DAEMON_LIBS := $(shell $(PKG_CONFIG) --libs libsystemd libseccomp inih)
LIB_LIBS := $(shell $(PKG_CONFIG) --libs inih)

$(O)/mthpd: $(DAEMON_OBJ) $(O)/libmthpd.a
	$(CC) -o $@ $(DAEMON_OBJ) $(O)/libmthpd.a $(LDFLAGS_ALL) $(DAEMON_LIBS)

$(O)/tests/%: $(O)/tests/unit/%.o $(TESTLIB_OBJ) $(O)/libmthpd.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS)

$(O)/tests/integration/%: $(O)/tests/integration/%.o $(O)/libmthpd.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS)

# The fragmenter pins pages as io_uring fixed buffers (liburing).
$(O)/tests/integration/fragment: $(O)/tests/integration/fragment.o $(O)/libmthpd.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS) $(shell $(PKG_CONFIG) --libs liburing)

$(O)/contrib/%: $(O)/contrib/%.o $(O)/libmthpd.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS)

# A fuzz harness with the ordinary compiler: standalone.c runs given inputs.
$(O)/tests/fuzz/%: $(O)/tests/fuzz/%.o $(O)/tests/fuzz/standalone.o $(O)/libmthpd.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS)

$(O)/bench/bench-scan: $(O)/bench/bench-scan.o $(BENCH_SCAN_OBJ) $(O)/libmthpd.a
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS)

$(O)/bench/%: $(O)/bench/%.o $(O)/libmthpd.a
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS_ALL) $(LIB_LIBS)

# Each test is a program or script that exits 0 (pass), 77 (skip) or
# anything else (fail); tests/run-tests prints one line per test.
check: check-unit check-fixtures check-fuzz check-config check-service check-integration

# Every seed and regression input of tests/fuzz/corpus/ through its harness,
# built without libFuzzer: the inputs that once found a bug stay fixed.
check-fuzz: $(FUZZ_BIN)
	@O=$(O) TEST_WRAPPER="$(TEST_WRAPPER)" tests/run-tests fuzz $(FUZZ_BIN)

# The shipped configuration and policy examples must load.
check-config: $(O)/mthpd
	$(O)/mthpd check-config --config-dir conf >/dev/null

check-unit: $(UNIT_BIN)
	@O=$(O) TEST_WRAPPER="$(TEST_WRAPPER)" tests/run-tests unit $(UNIT_BIN)

check-fixtures: all
	@O=$(O) TEST_WRAPPER="$(TEST_WRAPPER)" tests/run-tests fixtures tests/fixtures/run

check-integration: all
	@O=$(O) TEST_WRAPPER="$(TEST_WRAPPER)" tests/run-tests integration \
		$(sort $(wildcard tests/integration/test-*.sh))

# The shipped examples of conf/policy.d/ on real services (Redis, MariaDB,
# Tomcat; installed with apt-get, started by hand in their units' cgroups):
# one PASS/FAIL line per check.  Not part of `check`: it installs packages.
check-examples: $(O)/mthpd $(O)/tests/integration/collapse-block
	O=$(O) tests/services/check-examples

# mthpd under a real systemd: Debian 12 booted under QEMU (tests/systemd-vm/README.md).
check-systemd-vm: all
	tests/systemd-vm/run

# The Debian package (debian/): dpkg-buildpackage -us -uc -b in a copy of the
# tree under $(DEB_OUT), where the .deb, .changes and .buildinfo land
# (mk/build-deb); the tree itself and its parent get nothing.
# DEB_VERSION_SUFFIX (e.g. +git20261206): appended to the
# changelog's version in the copy, for snapshots that upgrade each other.
DEB_OUT ?= build-deb
DEB_VERSION_SUFFIX ?=
deb:
	mk/build-deb $(if $(DEB_VERSION_SUFFIX),--version-suffix $(DEB_VERSION_SUFFIX)) $(DEB_OUT)

# The package under a real systemd: built twice (the second one a newer
# version), installed, upgraded, removed and purged in the VM of
# check-systemd-vm (tests/systemd-vm/README.md).
check-deb:
	tests/systemd-vm/run --deb

# The container image and the DaemonSet of deploy/kubernetes/, under podman
# with the manifest's capabilities and mounts (tests/container/run; root,
# apt-get; the live part holds MTHPD_LIVE_LOCK).
check-container: $(O)/mthpd $(O)/tests/integration/workload $(O)/contrib/thp-inspect
	O=$(O) tests/container/run

# The unit and integration tests inside another kernel, booted under QEMU from
# an initramfs (tests/vm/README.md).  VM_KERNEL: a bzImage or an ELF vmlinux;
# default Debian's packaged kernel.  MTHPD_VM_TESTS picks tests.
VM_KERNEL ?=
check-vm: all $(UNIT_BIN)
	tests/vm/run $(VM_KERNEL)

# libFuzzer (clang) on each harness for FUZZ_SECONDS, or FUZZ_RUNS executions
# each; new inputs go to build-fuzz/corpus/NAME, crashes to build-fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?=
fuzz:
	tests/fuzz/run "$(FUZZ_SECONDS)" "$(FUZZ_RUNS)"

asan:
	$(MAKE) O=build-asan SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" check

bench: all
	bench/run $(O)

demo: $(O)/mthpd $(O)/tests/integration/workload
	contrib/demo $(O)

clean:
	rm -rf build build-asan build-fuzz build-deb

include mk/install.mk

-include $(shell find $(O) -name '*.d' 2>/dev/null)
