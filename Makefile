SHELL := /bin/bash
# ember: top-level commands. Each target installs what is missing and builds first, so each
# works alone on a fresh machine.
#   make demo            build and run the main job: train the Fashion-MNIST CNN for 3 epochs
#   make demo-lm         build and run the second job: a character-level Transformer LM
#   make tour            a short tour of the C++ API (examples/demo.cpp)
#   make test            build and run every test (ctest)
#   make bench           build and run the benchmarks side by side with PyTorch
#   make conformance     the OpInfo conformance report (PyTorch's op database run through ember)
#   make test-sanitize   the tests under ASan + UBSan
#   make debug           a Debug build with assertions

JOBS ?= 2
export CCACHE_BASEDIR := $(CURDIR)
export OMP_NUM_THREADS ?= 2
PY := /usr/bin/python3

.PHONY: all deps deps-bench build demo demo-lm tour test bench fuzz conformance test-sanitize debug clean

all: build

deps:
	@scripts/install-deps test

deps-bench:
	@scripts/install-deps bench

build/release/build.ninja: | deps
	cmake --preset release -DPython3_EXECUTABLE=$(PY)

build: deps build/release/build.ninja
	cmake --build build/release -j $(JOBS)

demo: build
	./build/release/fashion_mnist --epochs 3 --out build/fashion_mnist

demo-lm: build
	./build/release/char_lm --out build/char_lm

tour: build
	./build/release/demo

test: build
	cd build/release && ctest -j $(JOBS) --output-on-failure --timeout 600 2>&1 | tee ctest.log; \
	  rc=$${PIPESTATUS[0]}; grep -E "tests passed|tests failed" ctest.log; exit $$rc

bench: deps-bench build
	$(PY) bench/side_by_side.py --build build/release
	PYTHONPATH=build/release/python $(PY) bench/ops_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/autograd_memory.py
	PYTHONPATH=build/release/python $(PY) bench/conv_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/rnn_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/adam_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/profiler_overhead.py
	PYTHONPATH=build/release/python $(PY) bench/fft_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/special_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/cdist_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/sdpa_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/transformer_side_by_side.py
	PYTHONPATH=build/release/python $(PY) bench/bf16_side_by_side.py
	$(PY) bench/cnn_epoch.py --build build/release

# The libFuzzer targets (safetensors loader, IDX reader, PyTorch-checkpoint unpickler, PNG and
# JPEG decoders), FUZZ_SECONDS each.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/install-deps fuzz
	scripts/fuzz $(FUZZ_SECONDS)

conformance: build
	PYTHONPATH=build/release/python $(PY) tests/conformance/run.py --report

test-sanitize: deps
	cmake --preset asan -DPython3_EXECUTABLE=$(PY)
	cmake --build build/asan -j $(JOBS)
	cd build/asan && ASAN_OPTIONS=detect_leaks=0 ctest -j $(JOBS) --output-on-failure --timeout 1200

debug: deps
	cmake --preset debug -DPython3_EXECUTABLE=$(PY)
	cmake --build build/debug -j $(JOBS)

clean:
	rm -rf build
