# The two set-up commands of the README. Each installs what is missing, builds in Release, then:
#   make run   checks the current Python environment
#   make test  checks the tree's format, runs a bounded fuzz run of the parsers, then the whole
#              test suite (ctest) but the heaviest tests of the real packages' corpus
#   make test-real  those: tests/real and the real auditwheel on every wheel of the corpus
# and, to carry the tool elsewhere:
#   make wheel                  dist/envdoctor-<version>-py3-none-manylinux_2_<N>_x86_64.whl, N <= 28
#   make install PREFIX=DIR     DIR/bin/envdoctor, DIR/share/envdoctor, the man page, completions
JOBS ?= $(shell nproc)
BUILD := build
ENVDOCTOR := $(BUILD)/envdoctor
PREFIX ?= /usr/local
# Debian 11's glibc, which the wheel's binary is linked against (scripts/debian-root.sh glibc).
GLIBC_ROOT = $(shell bash scripts/debian-root.sh --path glibc)

.PHONY: all deps test-deps configure build build-all run test test-real fuzz bench wheel install clean format check-format

all: build

deps:
	@bash scripts/install-deps.sh

# The build's packages and the tests' referees and tools (scripts/install-deps.sh --test).
test-deps:
	@bash scripts/install-deps.sh --test

# A tree that an older checkout configured with another generator (Unix Makefiles) is configured
# again from its sources: CMake refuses to change a tree's generator.
reconfigure-if-generator-changed = @if [ -f $(1)/CMakeCache.txt ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$$' $(1)/CMakeCache.txt; \
	  then echo "$(1)/ was configured with another generator: configuring it again (Ninja)"; rm -rf $(1)/CMakeCache.txt $(1)/CMakeFiles; fi

configure: deps
	$(call reconfigure-if-generator-changed,$(BUILD))
	@cmake --preset release -DENVDOCTOR_GLIBC_ROOT=$(GLIBC_ROOT) >/dev/null

# The binary, the man page and the completions: what make run and make install need.
build: configure
	@cmake --build --preset release -j $(JOBS) --target envdoctor envdoctor_docs

# Everything of the release tree: the binary, the test binaries, the benchmarks.
build-all: configure
	@cmake --build --preset release -j $(JOBS)

run: build
	@bash scripts/run-check.sh $(ENVDOCTOR)

# The suite ends with how many tests ran, failed and were skipped, one line per reason for a
# skip (scripts/test-summary.py reads ctest's JUnit report), so that a green run that skipped its
# referees can be told from one that ran them.
# The heaviest tests of the real packages' corpus (tests/requirements/corpus.txt) run as make
# test-real: tests/real (five venvs of the corpus against ld.so and the real imports, the two seeds)
# and the real auditwheel on each of the corpus's 55 wheels. .ci/run runs both.
REAL_TESTS := ^(Corpus/|RealSeed\.)
test: test-deps check-format build-all fuzz
	@cd $(BUILD) && { ctest --output-on-failure -j $(JOBS) -E '$(REAL_TESTS)' --output-junit ctest-junit.xml; status=$$?; \
	  python3 ../scripts/test-summary.py ctest-junit.xml; exit $$status; }

test-real: test-deps build-all
	@cd $(BUILD) && { ctest --output-on-failure -j $(JOBS) -R '$(REAL_TESTS)' --output-junit ctest-real-junit.xml; \
	  status=$$?; python3 ../scripts/test-summary.py ctest-real-junit.xml; exit $$status; }

# The wheel ships build/manylinux/envdoctor: the release tree's objects linked against Debian 11's
# glibc (src/CMakeLists.txt's envdoctor_manylinux; the root is made once, outside the clone), so
# that pip installs it on RHEL 8 and 9, Ubuntu 20.04 and 22.04. The tag is the one the binary earns
# (envdoctor wheel-tag, auditwheel's policy); the build refuses a binary that earns more than
# manylinux_2_28, and a wheel whose tag claims more than its files earn.
wheel: deps
	@bash scripts/debian-root.sh glibc >/dev/null
	$(call reconfigure-if-generator-changed,$(BUILD))
	@cmake --preset release -DENVDOCTOR_GLIBC_ROOT=$(GLIBC_ROOT) >/dev/null
	@cmake --build --preset release -j $(JOBS) --target envdoctor_manylinux envdoctor_docs
	@python3 packaging/build_wheel.py --binary $(BUILD)/manylinux/envdoctor --docs $(BUILD)/packaging --out dist \
	  --require-tag manylinux_2_28

install: build
	@cmake --install $(BUILD) --prefix $(PREFIX)

fuzz: test-deps
	$(call reconfigure-if-generator-changed,build-fuzz)
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)
	@bash fuzz/run.sh build-fuzz $${FUZZ_SECONDS:-20}

bench: test-deps build-all
	@python3 bench/table.py --envdoctor $(ENVDOCTOR)

check-format: test-deps
	@bash scripts/check-format.sh

# Rewrites every C++ file of the tree in the format of .clang-format.
format: test-deps
	@git ls-files '*.cc' '*.h' | grep -v '^tests/fixtures/data/' | xargs clang-format-14 --style=file -i

clean:
	rm -rf build build-debug build-fuzz dist
