# Short commands for sonde. The real build is CMake in build/.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all sonde deps test-deps test sanitize fuzz demo bench clean

all: sonde

# Install missing Debian packages (no-op when everything is present): deps
# for building and the demo, test-deps for `make test` (sanitizer runtimes,
# the tools the tests compare against, the npm packages of tests/js).
deps:
	@./scripts/bootstrap.sh build

test-deps:
	@./scripts/bootstrap.sh test

$(BUILD)/CMakeCache.txt: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

sonde: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Unit and integration tests on the normal build, then the unit tests and a
# short run of every fuzz target in a clang ASan/UBSan/libFuzzer build (which
# builds only what those run: unit_fuzz_programs). The integration tests run
# one at a time (they share the kernel's probes and assert sample shares);
# the unit and fuzz tests use no BPF programs and have no time limits a
# second job could break (each fuzz target runs FUZZ_SECONDS on one core, in
# a work folder of its own), so they run JOBS (SAN_JOBS) at a time.
SAN_BUILD ?= build-san
SAN_JOBS ?= $(JOBS)

test: test-deps sonde sanitize
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L unit
	cd $(BUILD) && ctest --output-on-failure -j 1 -L integration
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(SAN_JOBS) -L 'unit|fuzz'

sanitize: test-deps
	@[ -f $(SAN_BUILD)/CMakeCache.txt ] || CC=clang cmake -S . -B $(SAN_BUILD) \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSONDE_SANITIZE=ON -DSONDE_FUZZ=ON
	cmake --build $(SAN_BUILD) -j $(JOBS) --target unit_fuzz_programs

# Every fuzz target the sanitizer build has, FUZZ_SECONDS each (FUZZ_TARGETS
# to pick some: make fuzz FUZZ_TARGETS="nflx pprof"); inputs that reach new
# code are kept in tests/fuzz/corpus/<target>/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

fuzz: sanitize
	./scripts/fuzz.sh $(SAN_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

demo: sonde
	./scripts/demo.sh $(BUILD)

bench: sonde
	./bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
