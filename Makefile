# Short commands for sonde. The real build is CMake in build/.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all sonde deps test demo bench clean

all: sonde

# Install missing Debian packages (no-op when everything is present).
deps:
	@./scripts/bootstrap.sh

$(BUILD)/CMakeCache.txt: CMakeLists.txt | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

sonde: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: sonde
	cd $(BUILD) && ctest --output-on-failure -j 1

demo: sonde
	./scripts/demo.sh $(BUILD)

bench: sonde
	./bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
