# The two set-up commands of the README. Each installs what is missing, builds in Release, then:
#   make run   checks the current Python environment
#   make test  runs a bounded fuzz run of the parsers, then the whole test suite (ctest)
JOBS ?= $(shell nproc)
BUILD := build
ENVDOCTOR := $(BUILD)/envdoctor

.PHONY: all deps build run test fuzz bench clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

run: build
	@bash scripts/run-check.sh $(ENVDOCTOR)

test: build fuzz
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

fuzz: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)
	@bash fuzz/run.sh build-fuzz $${FUZZ_SECONDS:-20}

bench: build
	@bash bench/run.sh $(ENVDOCTOR)
	@bash bench/check.sh $(ENVDOCTOR)
	@$(BUILD)/bench/envdoctor_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

clean:
	rm -rf build build-debug build-fuzz
