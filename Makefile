# SPDX-License-Identifier: BSD-3-Clause
#
# xpile build. Sources are found by convention, so adding a file needs no edit here:
#   lib/*.c                 -> build/libxpile.{a,so}, build/xpile.pc
#   bpf/*.bpf.c             -> build/bpf/*.o            (clang -target bpf, BTF)
#   user/*.c user/modes/*.c -> build/xpile              (the engine)
#   tools/loader/*.c        -> build/xpile-loader
#   tools/bench/*.c         -> build/xpile-bench
#   tools/agent/*.c         -> build/xpile-agent        (the node agent)
#   tools/cli/*.c           -> linked into all three (the command-line framework)
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
VERSION   := 0.1.0

CC        ?= gcc
CLANG     ?= clang
SAN       ?=
ifeq ($(SAN),)
BUILD     ?= build
else
BUILD     ?= build/$(SAN)
endif

PKGS      := libbpf libxdp
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lxdp -lbpf)

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
             -Ilib/include -Ibpf -DXPILE_VERSION='"$(VERSION)"' \
             -DXPILE_DATADIR='"$(DATADIR)"' $(PKG_CFLAGS)
XP_LDLIBS  = $(PKG_LIBS) -lelf -lz -lpthread -lm

BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror -Ibpf -I/usr/include/$(shell gcc -print-multiarch 2>/dev/null)

LIB_SRCS    := $(wildcard lib/*.c)
LIB_OBJS    := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
BPF_SRCS    := $(wildcard bpf/*.bpf.c)
BPF_OBJS    := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/bpf/%.o)
ENGINE_SRCS := $(wildcard user/*.c user/modes/*.c)
LOADER_SRCS := $(wildcard tools/loader/*.c)
BENCH_SRCS  := $(wildcard tools/bench/*.c)
CLI_SRCS    := $(wildcard tools/cli/*.c)
AGENT_SRCS  := $(wildcard tools/agent/*.c)
UNIT_SRCS   := $(wildcard tests/unit/test_*.c)
BPFT_SRCS   := $(wildcard tests/bpf/test_*.c)
TLIB_SRCS   := $(wildcard tests/lib/*.c)
MT_SRCS     := $(wildcard tests/unit/*_mt.c)

UNIT_BINS   := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
BPFT_BINS   := $(BPFT_SRCS:tests/bpf/%.c=$(BUILD)/tests/bpf/%)
TLIB_OBJS   := $(TLIB_SRCS:%.c=$(BUILD)/obj/%.o)
BINS        := $(if $(ENGINE_SRCS),$(BUILD)/xpile) $(if $(LOADER_SRCS),$(BUILD)/xpile-loader) \
               $(if $(BENCH_SRCS),$(BUILD)/xpile-bench) $(if $(AGENT_SRCS),$(BUILD)/xpile-agent)

# Sanitizer variants build only what their suites need.
ifeq ($(SAN),tsan)
all: $(BUILD)/libxpile.a $(MT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
else ifeq ($(SAN),asan)
all: $(BUILD)/libxpile.a $(UNIT_BINS) $(BINS) $(BPF_OBJS)
else
all: $(BUILD)/libxpile.a $(BUILD)/libxpile.so $(BUILD)/xpile.pc $(BPF_OBJS) $(BINS) \
     $(UNIT_BINS) $(BPFT_BINS) $(BUILD)/tests/harness/broken $(BUILD)/tests/harness/dpclient \
     $(BUILD)/tests/harness/notify $(BUILD)/tests/harness/xdpforeign
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(XP_CFLAGS) -MMD -MP -c $< -o $@

# The library exports only what its headers mark XP_API (xpile/api.h), and the .so
# only the names in its version script. Programs see the public headers alone; the
# tests also see the library's internal ones (lib/) and their harness (tests/lib/).
$(LIB_OBJS): XP_CFLAGS += -fvisibility=hidden
$(BUILD)/obj/tests/%.o: XP_CFLAGS += -Ilib -Itests/lib

$(BUILD)/libxpile.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libxpile.so: $(LIB_OBJS) lib/libxpile.map
	$(CC) $(XP_CFLAGS) -shared -Wl,-soname,libxpile.so.0 -Wl,--version-script=lib/libxpile.map \
		-o $@ $(LIB_OBJS) $(XP_LDLIBS)

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	     -e 's|@VERSION@|$(VERSION)|' lib/xpile.pc.in

# Rebuilt when PREFIX changes between `make` and `make install PREFIX=...`.
$(BUILD)/xpile.pc: lib/xpile.pc.in FORCE
	@mkdir -p $(@D)
	@$(PC_SED) > $@.tmp && (cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@)

FORCE:

$(BUILD)/bpf/%.o: bpf/%.bpf.c $(wildcard bpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

define prog
$(BUILD)/$(1): $(2:%.c=$(BUILD)/obj/%.o) $(BUILD)/libxpile.a
	$$(CC) $$(XP_CFLAGS) -o $$@ $$^ $$(XP_LDLIBS)
endef
# Every binary parses its command line with tools/cli (one framework, see cli.h).
$(BUILD)/obj/user/%.o $(BUILD)/obj/tools/%.o: XP_CFLAGS += -Itools/cli
$(eval $(call prog,xpile,$(ENGINE_SRCS) $(CLI_SRCS)))
$(BUILD)/xpile: XP_LDLIBS += -luring
# `xpile-bench capture` times the engine's own capture path (user/capture.c).
$(BUILD)/xpile-bench: $(BUILD)/obj/user/capture.o $(BUILD)/obj/user/pcapng.o $(BUILD)/obj/user/say.o $(BUILD)/obj/user/uring_buf.o
# (listed after libxpile.a, so the library comes again after them)
$(BUILD)/xpile-bench: XP_LDLIBS += $(BUILD)/libxpile.a -luring
$(eval $(call prog,xpile-loader,$(LOADER_SRCS) $(CLI_SRCS)))
$(eval $(call prog,xpile-bench,$(BENCH_SRCS) $(CLI_SRCS)))
# The agent alone links the daemon's libraries (Debian libjansson-dev, liburing-dev,
# libsystemd-dev, libmicrohttpd-dev): the engine, which pods run unprivileged, stays without them.
$(eval $(call prog,xpile-agent,$(AGENT_SRCS) $(CLI_SRCS)))
$(BUILD)/xpile-agent: XP_LDLIBS += -ljansson -luring -lsystemd -lmicrohttpd

# Optional DPDK side of `xpile-bench alloc` (Debian dpdk-dev), never required:
# XPILE_DPDK=auto builds it when pkg-config finds libdpdk (plain builds only),
# XPILE_DPDK=0 never; without it tools/bench/alloc_dpdk.c compiles to stubs.
XPILE_DPDK ?= auto
ifeq ($(XPILE_DPDK)$(SAN),auto)
HAVE_DPDK := $(shell pkg-config --exists libdpdk 2>/dev/null && echo 1)
endif
ifeq ($(HAVE_DPDK),1)
$(BUILD)/obj/tools/bench/alloc_dpdk.o: XP_CFLAGS += -DXPILE_HAVE_DPDK $(shell pkg-config --cflags libdpdk)
$(BUILD)/xpile-bench: XP_LDLIBS += $(shell pkg-config --libs libdpdk)
endif

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TLIB_OBJS) $(BUILD)/libxpile.a
	@mkdir -p $(@D)
	$(CC) $(XP_CFLAGS) -o $@ $^ $(XP_LDLIBS)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Fuzzing (tests/fuzz/, clang's libFuzzer; never part of `all`): `make fuzz SECONDS=N`
# builds build/fuzz/fuzz_* (libFuzzer + ASan + UBSan, the library instrumented too) and
# runs each for N seconds (default 20) from its seed corpus tests/fuzz/corpus/NAME/,
# failing on any crash or broken property; FUZZ=NAME runs one. The corpora are also
# replayed by the regular suites (tests/unit/test_fuzz_*.c, tests/bpf/test_fuzz_*.c).
# fuzz_cli needs tools/cli (the command-line framework); without it there is nothing to fuzz.
FUZZ_SRCS := $(filter-out $(if $(wildcard tools/cli/cli.c),,tests/fuzz/fuzz_cli.c),\
             $(wildcard tests/fuzz/fuzz_*.c))
SECONDS   ?= 20
FUZZ      ?=
ifeq ($(SAN),fuzz)
CC        := $(CLANG)
# clang builds the library here: lib/ethtool.c's GNU flexible-array-in-struct is gcc's norm.
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer -Wno-gnu-variable-sized-type-not-at-end
fuzz-bins: $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/%) $(BPF_OBJS)
$(BUILD)/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/libxpile.a
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
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR)/xpile $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(DATADIR)/bpf
	install -m 644 $(BUILD)/libxpile.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libxpile.so $(DESTDIR)$(LIBDIR)/libxpile.so.$(VERSION)
	ln -sf libxpile.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libxpile.so.0
	ln -sf libxpile.so.0 $(DESTDIR)$(LIBDIR)/libxpile.so
	install -m 644 $(BUILD)/xpile.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 644 lib/include/xpile/*.h $(DESTDIR)$(INCDIR)/xpile/
	install -m 644 bpf/steer_abi.h $(DESTDIR)$(INCDIR)/xpile/
	$(if $(BPF_OBJS),install -m 644 $(BPF_OBJS) $(DESTDIR)$(DATADIR)/bpf/)
	$(if $(BINS),install -m 755 $(BINS) $(DESTDIR)$(BINDIR)/)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Static checks, run by .ci/run before the tests: clang-format (check only), shellcheck
# on every shell script, clang-tidy (.clang-tidy) over lib/ user/ tools/, at zero
# findings. The compile database comes from the flags above, so nothing is built.
LINT_SRCS := $(LIB_SRCS) $(ENGINE_SRCS) $(LOADER_SRCS) $(BENCH_SRCS) $(CLI_SRCS) $(AGENT_SRCS)
$(BUILD)/compile_commands.json: Makefile tools/lint/compdb.sh FORCE
	@mkdir -p $(@D)
	@tools/lint/compdb.sh $(CC) $(XP_CFLAGS) -Itools/cli -- $(LINT_SRCS) >$@.tmp && mv $@.tmp $@

lint: $(BUILD)/compile_commands.json
	tools/lint/lint.sh $(BUILD) $(LINT_SRCS)

clean:
	rm -rf build

.PHONY: all deps test demo install format lint clean FORCE fuzz fuzz-bins
