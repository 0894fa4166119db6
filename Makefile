# hcp-controller: `make` builds, `make test` runs every test, `make demo` runs
# the product against a local cluster, `make bench` prints the benchmark figures.
#
# Public targets first install what is missing (scripts/install-deps.sh, which
# is idempotent) and then re-enter make, so pkg-config sees the installed
# libraries.

.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD ?= build
SAN ?=
CC ?= cc
CFLAGS ?= -O2 -g
PKGS := libical libcurl jansson libfyaml libmicrohttpd gnutls zlib
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(SAN) -Ipkg -D_GNU_SOURCE \
	$(shell pkg-config --cflags $(PKGS) cmocka 2>/dev/null)
LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lev -lm
TEST_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null)

# Library sources: pkg/*/*.c except tests, fuzzers, benchmarks and test helpers.
not_lib = $(filter test_% fuzz_% bench_% testutil_%,$(notdir $(1)))
LIB_SRCS := $(sort $(foreach f,$(wildcard pkg/*/*.c),$(if $(call not_lib,$(f)),,$(f))))
TESTUTIL_SRCS := $(sort $(wildcard pkg/*/testutil_*.c))
MAIN_SRCS := $(sort $(foreach f,$(wildcard hcp-controller/*.c),$(if $(filter test_%,$(notdir $(f))),,$(f))))
UNIT_SRCS := $(sort $(wildcard pkg/*/test_*.c))
BENCH_SRCS := $(sort $(wildcard pkg/*/bench_*.c))
FUZZ_SRCS := $(sort $(wildcard pkg/*/fuzz_*.c))
CLI_TESTS := $(sort $(wildcard hcp-controller/test_*.sh)) scripts/test_scripts.sh

OBJ := $(BUILD)/obj
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
TESTUTIL_OBJS := $(TESTUTIL_SRCS:%.c=$(OBJ)/%.o)
MAIN_OBJS := $(MAIN_SRCS:%.c=$(OBJ)/%.o)
UNIT_BINS := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(UNIT_SRCS)))
BENCH_BINS := $(patsubst %.c,$(BUILD)/bench/%,$(notdir $(BENCH_SRCS)))


.PHONY: all deps build test unit unit-run asan valgrind cli-test bench fuzz fuzz-lib fuzz-smoke \
	e2e cluster-up cluster-down demo clean fmt

deps:
	@scripts/install-deps.sh

all: deps
	@$(MAKE) --no-print-directory build

build: $(BUILD)/hcp-controller

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libhcp.a: $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/hcp-controller: $(MAIN_OBJS) $(BUILD)/libhcp.a
	$(CC) $(ALL_CFLAGS) -o $@ $(MAIN_OBJS) $(BUILD)/libhcp.a $(LIBS)

# One link rule per test and benchmark source, wherever it lives under pkg/.
define link_rule
$(BUILD)/$(1)/$(basename $(notdir $(2))): $(OBJ)/$(2:.c=.o) $$(TESTUTIL_OBJS) $(BUILD)/libhcp.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_CFLAGS) -o $$@ $$(filter %.o,$$^) $(BUILD)/libhcp.a $$(LIBS) $(3)
endef
$(foreach s,$(UNIT_SRCS),$(eval $(call link_rule,tests,$(s),$$(TEST_LIBS))))
$(foreach s,$(BENCH_SRCS),$(eval $(call link_rule,bench,$(s),)))

# ---- tests ---------------------------------------------------------------

TALLY := build/test-tally

# The end-to-end suites' programs are built (once per machine) in the
# background from the start (scripts/prebuild-e2e.sh). The controller and
# the unit tests are compiled on every core; then the end-to-end suites run
# in E2E_JOBS lanes, each starting once the builds it needs have ended, with
# the unit, cli, sanitizer, valgrind and fuzz suites beside them, one after
# another, in a lane of their own (scripts/e2e-lanes.sh). At the end, every
# suite's time, slowest first.
NPROC := $(shell nproc 2>/dev/null || echo 2)
test: deps
	@rm -f $(TALLY) $(TALLY).times
	@mkdir -p $(dir $(TALLY)) && date +%s >$(TALLY).start
	@scripts/prebuild-e2e.sh start build
	@$(MAKE) --no-print-directory -j$(NPROC) $(BUILD)/hcp-controller $(UNIT_BINS)
	@rc=0; $(MAKE) --no-print-directory e2e E2E_BESIDE="unit-run cli-test asan valgrind fuzz-smoke" || rc=$$?; \
		scripts/prebuild-e2e.sh wait build >/dev/null; \
		scripts/run-tests.sh --summary $(TALLY) build/prebuild-e2e.log || rc=1; exit $$rc

unit: deps
	@$(MAKE) --no-print-directory unit-run

unit-run: $(UNIT_BINS) $(BUILD)/hcp-controller
	@scripts/run-tests.sh --tally $(TALLY) --label unit $(UNIT_BINS)

cli-test: $(BUILD)/hcp-controller
	@HCP_BIN=$(abspath $(BUILD)/hcp-controller) scripts/run-tests.sh --tally $(TALLY) --label cli $(CLI_TESTS)

# AddressSanitizer + UndefinedBehaviorSanitizer build of every unit test.
asan:
	@$(MAKE) --no-print-directory BUILD=build/asan CC=clang \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		CFLAGS="-O1 -g" build/asan/hcp-controller $(UNIT_BINS:build/%=build/asan/%)
	@HCP_TEST_SCALE=small ASAN_OPTIONS=detect_leaks=1 \
		scripts/run-tests.sh --tally $(TALLY) --label asan $(UNIT_BINS:build/%=build/asan/%)

# Every unit test under valgrind memcheck: any error or definite leak fails.
valgrind: $(UNIT_BINS)
	@HCP_TEST_SCALE=small scripts/run-tests.sh --tally $(TALLY) --label valgrind \
		--wrap "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect" \
		$(UNIT_BINS)

# ---- fuzzing and benchmarks ------------------------------------------------

FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
fuzz-lib:
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang CFLAGS="-O1 -g" \
		SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" build/fuzz/libhcp.a

fuzz: deps
	@$(MAKE) --no-print-directory fuzz-lib
	@HCP_PKGS="$(PKGS)" scripts/fuzz.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_SRCS)

# Every fuzz target for a few seconds from its seeds and the kept corpus, so
# that a regression on a known input (or a quick find) fails `make test`;
# counted in the tally, one test per target.
fuzz-smoke: fuzz-lib
	@HCP_PKGS="$(PKGS)" FUZZ_ARGS="build/fuzz $(FUZZ_SMOKE_SECONDS) $(FUZZ_SRCS)" \
		scripts/run-tests.sh --tally $(TALLY) --label fuzz scripts/fuzz-smoke.sh

bench: deps
	@$(MAKE) --no-print-directory BUILD=build/bench-build CFLAGS="-O2 -g -DNDEBUG" \
		$(BENCH_BINS:build/%=build/bench-build/%)
	@for b in $(BENCH_BINS:build/%=build/bench-build/%); do echo "== $$(basename $$b)"; $$b || exit 1; done
	@$(MAKE) --no-print-directory bench-e2e

clean:
	rm -rf build

fmt:
	clang-format -i $$(git ls-files '*.c' '*.h')

# End-to-end targets (local cluster, e2e tests, demo, e2e benchmarks).
include e2e/e2e.mk


-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
