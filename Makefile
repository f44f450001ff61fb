# The two set-up commands of the README. Each installs what is missing, builds in Release, then:
#   make run   checks the current Python environment
#   make test  checks the tree's format, runs a bounded fuzz run of the parsers, then the whole
#              test suite (ctest)
# and, to carry the tool elsewhere:
#   make wheel                  dist/envdoctor-<version>-py3-none-manylinux_2_<N>_x86_64.whl
#   make install PREFIX=DIR     DIR/bin/envdoctor, DIR/share/envdoctor, the man page, completions
JOBS ?= $(shell nproc)
BUILD := build
ENVDOCTOR := $(BUILD)/envdoctor
PREFIX ?= /usr/local

.PHONY: all deps build run test fuzz bench wheel install clean format check-format

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

run: build
	@bash scripts/run-check.sh $(ENVDOCTOR)

test: check-format build fuzz
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The tag is the one the binary earns (envdoctor wheel-tag, auditwheel's policy); the build refuses a
# wheel whose tag claims more than its files earn.
wheel: build
	@python3 packaging/build_wheel.py --binary $(ENVDOCTOR) --out dist

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

fuzz: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)
	@bash fuzz/run.sh build-fuzz $${FUZZ_SECONDS:-20}

bench: build
	@bash bench/run.sh $(ENVDOCTOR)
	@bash bench/check.sh $(ENVDOCTOR)
	@$(BUILD)/bench/envdoctor_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

check-format: deps
	@bash scripts/check-format.sh

# Rewrites every C++ file of the tree in the format of .clang-format.
format: deps
	@git ls-files '*.cc' '*.h' | grep -v '^tests/data/' | xargs clang-format-14 --style=file -i

clean:
	rm -rf build build-debug build-fuzz dist
