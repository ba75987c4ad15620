# preflight - the README's commands: `make demo`, `make test` and `make install`.
# Both install missing Debian packages (scripts/install-deps.sh), configure
# with CMake into build/, and build.  `make test` also builds and tests a
# sanitizer build (ASan + UBSan) in build-asan/ when CI=true or SANITIZE=1, and
# when CI=true a short run of every fuzz target (`make fuzz FUZZ_TIME=4`).
# `make fuzz` builds the libFuzzer targets (clang) in build-fuzz/ and runs each
# for FUZZ_TIME seconds (default 600; docs/fuzzing.md).
BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPF_WERROR=ON

.PHONY: all deps build install test test-sanitize fuzz demo bench clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# make install [PREFIX=/usr/local] [DESTDIR=/staging]: bin/preflight (and the calibration back-ends),
# share/preflight/{machines,scenarios}, share/doc/preflight, the man page and the bash completion.  The data
# folder is configured from PREFIX; an installed binary finds it beside itself, so a DESTDIR copy runs too.
install: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)
ifneq ($(filter true 1,$(CI) $(SANITIZE)),)
	$(MAKE) test-sanitize
endif
ifeq ($(CI),true)
	$(MAKE) fuzz FUZZ_TIME=4
endif

test-sanitize: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPF_WERROR=ON -DPF_SANITIZE=ON -DPF_GPU_BACKENDS=OFF >/dev/null
	@cmake --build build-asan -j$(JOBS)
	ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  ctest --test-dir build-asan --output-on-failure -j$(JOBS) -LE slow

FUZZ_TIME ?= 600
fuzz:
	@PF_FUZZ=1 ./scripts/install-deps.sh
	FUZZ_TIME=$(FUZZ_TIME) FUZZ_BUILD=$(CURDIR)/build-fuzz FUZZ_JOBS=$(JOBS) ./scripts/fuzz.sh

demo: build
	./scripts/demo.sh $(BUILD)/preflight

bench: build
	@PF_BENCH=1 ./scripts/install-deps.sh
	./bench/run.sh $(BUILD)/preflight

clean:
	rm -rf $(BUILD) build-asan build-fuzz
