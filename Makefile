# SPDX-License-Identifier: BSD-3-Clause
#
# xpile build. Sources are found by convention, so adding a file needs no edit here:
#   lib/*.c                 -> build/libxpile.{a,so}, build/xpile.pc
#   bpf/*.bpf.c             -> build/bpf/*.o            (clang -target bpf, BTF)
#   user/*.c user/modes/*.c -> build/xpile              (the engine)
#   tools/loader/*.c        -> build/xpile-loader
#   tools/bench/*.c         -> build/xpile-bench
#   tools/agent/*.c         -> build/xpile-agent        (the node agent)
#   tools/cni/*.c           -> build/xpile-cni          (its CNI plugin)
#   tools/examples/NAME/*.c -> build/examples/NAME      (programs on the public API alone,
#                              as an embedder builds them: docs/tutorial.md)
#   tools/util/*.c          -> build/libxputil.a        (the programs' shared layer: CLI
#                              tables, pcapng, io_uring helpers, capture ring, reporter;
#                              not part of libxpile's ABI, linked into every program)
#   tests/unit/test_*.c     -> build/tests/unit/test_*  (one binary per feature)
#   tests/bpf/test_*.c      -> build/tests/bpf/test_*
#   tests/unit/*_mt.c are the concurrent suites, also built under TSan.
#
# Variants: `make SAN=asan` (ASan+UBSan) and `make SAN=tsan` build into
# build/asan and build/tsan.  `make test` builds all three and runs tests/run.sh.

PREFIX    ?= /usr/local
DESTDIR   ?=
LIBDIR    ?= $(PREFIX)/lib
INCDIR    ?= $(PREFIX)/include
BINDIR    ?= $(PREFIX)/bin
DATADIR   ?= $(PREFIX)/lib/xpile
MANDIR    ?= $(PREFIX)/share/man
DOCDIR    ?= $(PREFIX)/share/doc/xpile
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# systemd reads /usr/local/lib/systemd/system and /usr/lib/systemd/system as well as /etc.
UNITDIR   ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
VERSION   := 0.1.0

CC        ?= gcc
CLANG     ?= clang
SAN       ?=
ifeq ($(SAN),)
BUILD     ?= build
else
BUILD     ?= build/$(SAN)
endif

# libmnl: the FIB's rtnetlink mirror (lib/fib_nl.c, Debian libmnl-dev).
PKGS      := libbpf libxdp libmnl
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lxdp -lbpf -lmnl)

WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
             -Wno-unused-parameter
OPT       ?= -O2
SAN_FLAGS_asan := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_FLAGS_tsan := -fsanitize=thread -fno-omit-frame-pointer
SAN_FLAGS := $(SAN_FLAGS_$(SAN))
# Default CPU is x86-64-v2 so cmpxchg16b and popcnt exist; override with ARCH_FLAGS=.
# The output must not depend on the build host: `make NATIVE=1` adds -mtune=native
# (benchmarks only; docs/bench-*.md say when a figure was taken with it).
ARCH_FLAGS ?= -march=x86-64-v2 $(if $(filter 1,$(NATIVE)),-mtune=native)
CFLAGS    ?= $(OPT) -g
XP_CFLAGS  = $(CFLAGS) $(ARCH_FLAGS) $(WARN) $(SAN_FLAGS) -std=gnu11 -D_GNU_SOURCE -fPIC \
             -Ilib/include -Ibpf -DXPILE_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
XP_LDLIBS  = $(PKG_LIBS) -lelf -lz -lpthread -lm

# -mcpu=v3: 32-bit ALU and jumps (no zero-extensions around every u32). The parse reads
# 8 address bytes in one load where the kernel allows misaligned packet loads (bpf/parse.h).
BPF_CFLAGS := -O2 -g -mcpu=v3 -target bpf -Wall -Werror -Ibpf -I/usr/include/$(shell gcc -print-multiarch 2>/dev/null) \
              $(if $(filter x86_64 aarch64 ppc64le s390x,$(shell uname -m)),,-DXP_BPF_ALIGNED)

LIB_SRCS    := $(wildcard lib/*.c)
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
BPF_SRCS    := $(wildcard bpf/*.bpf.c)
BPF_OBJS    := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.o)
ENGINE_SRCS := $(wildcard user/*.c user/modes/*.c)
# The engine as a library (xpile/engine.h): everything of user/ but the command line and
# its modes goes into libxpile.so too, with the shared layer's pieces it uses.
# The commands that ask a running engine (user/client.c, user/top.c) are the program's.
ENGINE_LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out user/main.c user/client.c user/top.c,$(wildcard user/*.c)))
LOADER_SRCS := $(wildcard tools/loader/*.c)
BENCH_SRCS  := $(wildcard tools/bench/*.c)
UTIL_SRCS   := $(wildcard tools/util/*.c)
UTIL_OBJS   := $(UTIL_SRCS:%.c=$(BUILD)/obj/%.o)
AGENT_SRCS  := $(wildcard tools/agent/*.c)
CNI_SRCS    := $(wildcard tools/cni/*.c)
EXAMPLE_SRCS := $(wildcard tools/examples/*/*.c)
EXAMPLES    := $(sort $(patsubst tools/examples/%/,$(BUILD)/examples/%,$(dir $(EXAMPLE_SRCS))))
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
BPFT_SRCS   := $(wildcard tests/bpf/test_*.c)
TLIB_SRCS   := $(wildcard tests/lib/*.c)
MT_SRCS     := $(wildcard tests/unit/*_mt.c)

UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
BPFT_BINS   := $(BPFT_SRCS:tests/bpf/%.c=$(BUILD)/tests/bpf/%)
TLIB_OBJS   := $(TLIB_SRCS:%.c=$(BUILD)/obj/%.o)
BINS        := $(if $(ENGINE_SRCS),$(BUILD)/xpile) $(if $(LOADER_SRCS),$(BUILD)/xpile-loader) \
               $(if $(BENCH_SRCS),$(BUILD)/xpile-bench) $(if $(AGENT_SRCS),$(BUILD)/xpile-agent) \
               $(if $(CNI_SRCS),$(BUILD)/xpile-cni)
# The programs on the CLI framework (man pages, completion); xpile-cni takes its
# arguments from the environment and stdin, as CNI has it.
PROG_NAMES  := $(filter-out xpile-cni,$(notdir $(BINS)))
MAN_STAMPS  := $(PROG_NAMES:%=$(BUILD)/man/%.pages)
COMPLETIONS := $(PROG_NAMES:%=$(BUILD)/completion/%)

# Sanitizer variants build only what their suites need.
ifeq ($(SAN),tsan)
all: $(BUILD)/libxpile.a $(MT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
else ifeq ($(SAN),asan)
all: $(BUILD)/libxpile.a $(UNIT_BINS) $(BINS) $(BPF_OBJS)
else
all: $(BUILD)/libxpile.a $(BUILD)/libxpile.so $(BUILD)/xpile.pc $(BPF_OBJS) $(BINS) \
     $(UNIT_BINS) $(BPFT_BINS) $(BUILD)/tests/harness/broken $(BUILD)/tests/harness/dpclient \
     $(BUILD)/tests/harness/notify $(BUILD)/tests/harness/xdpforeign \
     $(BUILD)/tests/harness/seccomp_deny $(BUILD)/tests/harness/unitrun $(MAN_STAMPS) \
     $(BUILD)/tests/harness/engapi \
     $(COMPLETIONS) $(BUILD)/xpile-agent.service $(EXAMPLES) $(BUILD)/tests/harness/misuse
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(XP_CFLAGS) -MMD -MP -c $< -o $@

# The library exports only what its headers mark XP_API (xpile/api.h), and the .so
# only the names in its version script. Programs see the public headers alone; the
# tests also see the library's internal ones (lib/), their harness (tests/lib/) and the
# programs' shared layer (tools/util/).
$(LIB_OBJS): XP_CFLAGS += -fvisibility=hidden
$(BUILD)/obj/tests/%.o: XP_CFLAGS += -Ilib -Itests/lib -Itools/util

$(BUILD)/libxpile.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libxpile.so: $(LIB_OBJS) $(ENGINE_LIB_OBJS) $(BUILD)/libxputil.a lib/libxpile.map
	$(CC) $(XP_CFLAGS) -shared -Wl,-soname,libxpile.so.0 -Wl,--version-script=lib/libxpile.map \
		-o $@ $(LIB_OBJS) $(ENGINE_LIB_OBJS) $(BUILD)/libxputil.a $(XP_LDLIBS) -luring -ljansson

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	     -e 's|@VERSION@|$(VERSION)|' lib/xpile.pc.in

# Rebuilt when PREFIX changes between `make` and `make install PREFIX=...`.
$(BUILD)/xpile.pc: lib/xpile.pc.in FORCE
	@mkdir -p $(@D)
	@$(PC_SED) > $@.tmp && (cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@)

FORCE:

# Where the BPF objects are, for the programs (xp_bpf_obj_path()): relative to the
# binary (BINDIR -> DATADIR) or to libxpile.so (LIBDIR -> DATADIR), never an absolute
# path, so the same build works under any PREFIX and from a DESTDIR staging tree. With
# the default directories the relative paths do not depend on PREFIX: `make install
# PREFIX=/opt/x` after `make` rebuilds nothing. The stamp changes (and lib/bpffs.c is
# compiled again) only when DATADIR, BINDIR or LIBDIR move apart.
BPF_FROM_BIN = $(shell realpath -m --relative-to=$(BINDIR) $(DATADIR))/bpf
BPF_FROM_LIB = $(shell realpath -m --relative-to=$(LIBDIR) $(DATADIR))/bpf
$(BUILD)/paths.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(BPF_FROM_BIN) $(BPF_FROM_LIB)' | cmp -s - $@ || echo '$(BPF_FROM_BIN) $(BPF_FROM_LIB)' >$@
$(BUILD)/obj/lib/bpffs.o: $(BUILD)/paths.stamp
$(BUILD)/obj/lib/bpffs.o: XP_CFLAGS += -DXPILE_BPF_FROM_BIN='"$(BPF_FROM_BIN)"' \
	-DXPILE_BPF_FROM_LIB='"$(BPF_FROM_LIB)"'

$(BUILD)/bpf/%.o: bpf/%.bpf.c $(wildcard bpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The shared layer is an archive: a program links the pieces it uses, and only those
# pull in their libraries (liburing). It sits on libxpile and nothing else: it includes
# no header of user/ or of a tool.
$(BUILD)/libxputil.a: $(UTIL_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

define prog
$(BUILD)/$(1): $(2:%.c=$(BUILD)/obj/%.o) $(BUILD)/libxputil.a $(BUILD)/libxpile.a
	$$(CC) $$(XP_CFLAGS) -o $$@ $$^ $$(XP_LDLIBS)
endef
# Every program sees the shared layer's headers (tools/util: cli.h, pcapng.h, ...).
$(BUILD)/obj/user/%.o $(BUILD)/obj/tools/%.o: XP_CFLAGS += -Itools/util
$(eval $(call prog,xpile,$(ENGINE_SRCS)))
# jansson (Debian libjansson-dev): the control socket's JSON lines (user/ctl.c).
$(BUILD)/xpile: XP_LDLIBS += -luring -ljansson
$(BUILD)/xpile-bench: XP_LDLIBS += -luring
$(eval $(call prog,xpile-loader,$(LOADER_SRCS)))
$(eval $(call prog,xpile-bench,$(BENCH_SRCS)))
# The agent alone links the daemon's libraries (Debian libjansson-dev, liburing-dev,
# libsystemd-dev, libmicrohttpd-dev): the engine, which pods run unprivileged, stays without them.
$(eval $(call prog,xpile-agent,$(AGENT_SRCS)))
$(BUILD)/xpile-agent: XP_LDLIBS += -ljansson -luring -lsystemd -lmicrohttpd

# The agent's kubelet side (tools/agent/kubelet.c, grpc.c): the API's messages from
# tools/agent/proto/*.proto through protoc-c (Debian protobuf-c-compiler) into
# $(BUILD)/gen/agent, HTTP/2 by libnghttp2 (docs/agent.md says why not libgrpc).
AGENT_PROTOS := $(wildcard tools/agent/proto/*.proto)
AGENT_PB_H   := $(AGENT_PROTOS:tools/agent/proto/%.proto=$(BUILD)/gen/agent/%.pb-c.h)
AGENT_PB_O   := $(AGENT_PROTOS:tools/agent/proto/%.proto=$(BUILD)/obj/gen/agent/%.pb-c.o)
$(BUILD)/gen/agent/%.pb-c.c $(BUILD)/gen/agent/%.pb-c.h: tools/agent/proto/%.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(@D) -Itools/agent/proto $<
$(BUILD)/obj/gen/agent/%.o: $(BUILD)/gen/agent/%.c
	@mkdir -p $(@D)
	$(CC) $(XP_CFLAGS) -I$(BUILD)/gen/agent -MMD -MP -c $< -o $@
.SECONDARY: $(AGENT_PB_H) $(AGENT_PB_H:.h=.c)
$(AGENT_SRCS:%.c=$(BUILD)/obj/%.o): | $(AGENT_PB_H)
$(BUILD)/obj/tools/agent/%.o: XP_CFLAGS += -I$(BUILD)/gen/agent
$(BUILD)/xpile-agent: $(AGENT_PB_O)
$(BUILD)/xpile-agent: XP_LDLIBS += -lprotobuf-c -lnghttp2
# The CNI plugin: jansson, and libmnl (Debian libmnl-dev) for its netlink; of the shared
# layer only the reporter, no CLI framework (a CNI plugin takes its arguments from the
# environment and stdin).
$(BUILD)/xpile-cni: $(CNI_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/libxputil.a
	$(CC) $(XP_CFLAGS) -o $@ $^ -ljansson -lmnl

# Optional DPDK side of `xpile-bench alloc` and `xpile-bench lpm` (Debian libdpdk-dev),
# never required:
# XPILE_DPDK=auto builds it when pkg-config finds libdpdk (plain builds only),
# XPILE_DPDK=0 never; without it tools/bench/alloc_dpdk.c and lpm_dpdk.c compile to
# stubs (and dpdk_eal.c, their EAL, to nothing).
XPILE_DPDK ?= auto
ifeq ($(XPILE_DPDK)$(SAN),auto)
HAVE_DPDK := $(shell pkg-config --exists libdpdk 2>/dev/null && echo 1)
endif
ifeq ($(HAVE_DPDK),1)
$(BUILD)/obj/tools/bench/alloc_dpdk.o $(BUILD)/obj/tools/bench/lpm_dpdk.o \
	$(BUILD)/obj/tools/bench/dpdk_eal.o: \
	XP_CFLAGS += -DXPILE_HAVE_DPDK $(shell pkg-config --cflags libdpdk)
$(BUILD)/xpile-bench: XP_LDLIBS += $(shell pkg-config --libs libdpdk)
endif

# The examples see the public headers and libxpile only, nothing of the tree's own
# (tests/net/test_examples_install.sh builds them from an installed tree with pkg-config).
.SECONDEXPANSION:
.SECONDARY: $(EXAMPLE_SRCS:%.c=$(BUILD)/obj/%.o)
# They link libxpile.so, where the engine is, and find it in the build tree (rpath).
$(BUILD)/libxpile.so.0: $(BUILD)/libxpile.so
	ln -sf libxpile.so $@
# The BPF objects where a program looks first (bpf/ next to it: lib/bpffs.c).
$(BUILD)/examples/bpf:
	@mkdir -p $(@D)
	ln -sfn ../bpf $@
$(BUILD)/examples/%: $$(addprefix $(BUILD)/obj/,$$(addsuffix .o,$$(basename \
		$$(wildcard tools/examples/$$*/*.c)))) $(BUILD)/libxpile.so $(BUILD)/libxpile.so.0 \
		| $(BUILD)/examples/bpf
	@mkdir -p $(@D)
	$(CC) $(XP_CFLAGS) -o $@ $(filter %.o,$^) -L$(BUILD) -l:libxpile.so -Wl,-rpath,'$$ORIGIN/..'

# The packet API's misuse harness is an embedder too: the engine is in libxpile.so.
$(BUILD)/tests/harness/misuse: $(BUILD)/obj/tests/harness/misuse.o $(BUILD)/libxpile.so $(BUILD)/libxpile.so.0
	@mkdir -p $(@D)
	$(CC) $(XP_CFLAGS) -o $@ $< -L$(BUILD) -l:libxpile.so -Wl,-rpath,'$$ORIGIN/../..'

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TLIB_OBJS) $(BUILD)/libxputil.a $(BUILD)/libxpile.a
	@mkdir -p $(@D)
	$(CC) $(XP_CFLAGS) -o $@ $^ $(XP_LDLIBS)
# The engine API's user (tests/net/test_engine_api_*.sh): public headers only, linked
# against libxpile.so as an installed program would be (libxpile.so.0 next to it).
$(BUILD)/tests/harness/engapi: $(BUILD)/obj/tests/harness/engapi.o $(BUILD)/libxpile.so
	@mkdir -p $(@D)
	ln -sf libxpile.so $(BUILD)/libxpile.so.0
	$(CC) $(XP_CFLAGS) -o $@ $< -L$(BUILD) -l:libxpile.so -Wl,-rpath,'$$ORIGIN/../..'

# The unit's system-call filter for the agent's suites where systemd is not PID 1.
$(BUILD)/tests/harness/unitrun: XP_LDLIBS += -lseccomp

# Man pages and bash completion, written by each program from its own option tables
# (tools/util: cli_man.c, cli_complete.c): PROG.8, and PROG-CMD.8 per command of a
# program that has several. The stamp lists the pages, for `make install`.
$(BUILD)/man/%.pages: $(BUILD)/%
	@mkdir -p $(@D)
	@$< --man >$(@D)/$*.8 && echo $*.8 >$@.tmp
	@for c in $$($< --commands); do \
		$< --man $$c >$(@D)/$*-$$c.8 && echo $*-$$c.8 >>$@.tmp || exit 1; done
	@mv $@.tmp $@
$(BUILD)/completion/%: $(BUILD)/%
	@mkdir -p $(@D)
	@$< --bash-completion >$@.tmp && mv $@.tmp $@

# The agent's unit with the install paths filled in (rewritten when they change).
UNIT_SED = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
	       -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' tools/deploy/xpile-agent.service.in
$(BUILD)/xpile-agent.service: tools/deploy/xpile-agent.service.in FORCE
	@mkdir -p $(@D)
	@$(UNIT_SED) >$@.tmp && (cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@)

# The programs' event loop on both back ends (tools/util/loop*.c, in libxputil.a).
$(BUILD)/tests/unit/test_loop: XP_LDLIBS += -luring

# The seccomp launcher of the io_uring-refused suites (Debian libseccomp-dev).
$(BUILD)/tests/harness/seccomp_deny: XP_LDLIBS += -lseccomp

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Fuzzing (tests/fuzz/, clang's libFuzzer; never part of `all`): `make fuzz SECONDS=N`
# builds build/fuzz/fuzz_* (libFuzzer + ASan + UBSan, the library instrumented too) and
# runs each for N seconds (default 20) from its seed corpus tests/fuzz/corpus/NAME/,
# failing on any crash or broken property; FUZZ=NAME runs one. The corpora are also
# replayed by the regular suites (tests/unit/test_fuzz_*.c, tests/bpf/test_fuzz_*.c).
# fuzz_cli needs tools/util/cli.c (the command-line framework); without it there is nothing to fuzz.
FUZZ_SRCS := $(filter-out $(if $(wildcard tools/util/cli.c),,tests/fuzz/fuzz_cli.c),\
             $(wildcard tests/fuzz/fuzz_*.c))
SECONDS   ?= 20
FUZZ      ?=
ifeq ($(SAN),fuzz)
CC        := $(CLANG)
# clang builds the library here: lib/ethtool.c's GNU flexible-array-in-struct is gcc's norm.
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer -Wno-gnu-variable-sized-type-not-at-end
fuzz-bins: $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/%) $(BPF_OBJS)
$(BUILD)/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/libxputil.a $(BUILD)/libxpile.a
	$(CC) $(XP_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(XP_LDLIBS)
endif

fuzz: deps
	$(MAKE) SAN=fuzz fuzz-bins
	tests/fuzz/run.sh $(SECONDS) $(FUZZ)

deps:
	tools/setup/install-deps.sh

# The README's test command: installs what is missing, builds the three variants,
# runs every suite and ends with "N passed, N failed, N skipped".
test: deps
	$(MAKE) all
	$(MAKE) SAN=asan all
	$(MAKE) SAN=tsan all
	tests/run.sh

# The README's main command.
demo: deps
	$(MAKE) all
	tools/setup/demo.sh

# Headers: lib/include/xpile/ and bpf/steer_abi.h, the one BPF header the C API uses
# (xpile/steer.h); bpf/parse.h and bpf/xsks_map.h are BPF-only and stay in the tree.
# Then the man pages, the bash completion, the agent's unit (its paths are BINDIR's)
# and the docs, the examples' sources with them (share/doc/xpile/examples/NAME/, built
# from there by tests/net/test_examples_install.sh). tests/net/test_install.sh installs
# into a DESTDIR and checks it all.
INSTALL_DOCS := README.md $(wildcard docs/*.md)
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/xpile $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(DATADIR)/bpf $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)
	install -m 644 $(BUILD)/libxpile.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libxpile.so $(DESTDIR)$(LIBDIR)/libxpile.so.$(VERSION)
	ln -sf libxpile.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libxpile.so.0
	ln -sf libxpile.so.0 $(DESTDIR)$(LIBDIR)/libxpile.so
	install -m 644 $(BUILD)/xpile.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 644 lib/include/xpile/*.h $(DESTDIR)$(INCDIR)/xpile/
	install -m 644 bpf/steer_abi.h $(DESTDIR)$(INCDIR)/xpile/
	$(if $(BPF_OBJS),install -m 644 $(BPF_OBJS) $(DESTDIR)$(DATADIR)/bpf/)
	$(if $(BINS),install -m 755 $(BINS) $(DESTDIR)$(BINDIR)/)
	install -m 644 $(addprefix $(BUILD)/man/,$(shell cat $(MAN_STAMPS))) $(DESTDIR)$(MANDIR)/man8/
	install -m 644 $(COMPLETIONS) $(DESTDIR)$(BASHCOMPDIR)/
	install -m 644 $(BUILD)/xpile-agent.service $(DESTDIR)$(UNITDIR)/
	install -m 644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	$(foreach d,$(wildcard tools/examples/*),install -d $(DESTDIR)$(DOCDIR)/examples/$(notdir $(d)) && \
		install -m 644 $(wildcard $(d)/*) $(DESTDIR)$(DOCDIR)/examples/$(notdir $(d))/;)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Static checks, run by .ci/run before the tests: clang-format (check only), shellcheck
# on every shell script, clang-tidy (.clang-tidy) over lib/ user/ tools/, at zero
# findings. The compile database comes from the flags above, so nothing is built.
LINT_SRCS := $(LIB_SRCS) $(ENGINE_SRCS) $(LOADER_SRCS) $(BENCH_SRCS) $(UTIL_SRCS) $(AGENT_SRCS) \
             $(CNI_SRCS) $(EXAMPLE_SRCS)
$(BUILD)/compile_commands.json: Makefile tools/lint/compdb.sh FORCE
	@mkdir -p $(@D)
	@tools/lint/compdb.sh $(CC) $(XP_CFLAGS) -Itools/util -I$(BUILD)/gen/agent -- $(LINT_SRCS) >$@.tmp && mv $@.tmp $@

lint: $(BUILD)/compile_commands.json $(AGENT_PB_H)
	tools/lint/lint.sh $(BUILD) $(LINT_SRCS)

clean:
	rm -rf build

.PHONY: all deps test demo install format lint clean FORCE fuzz fuzz-bins
