#!/usr/bin/env bash
# make bench: every benchmark, one after the other.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
echo "### start-up: the verifier's work"; ./bench/verifier.sh "$build"
echo; echo "### sampling overhead"; ./bench/sampling_overhead.sh "$build"
echo; echo "### sampling a Python program: its frames, and py-spy"; ./bench/python_sampling.sh "$build"
echo; echo "### a traced Python call: the USDT span pair"; ./bench/python_calls.sh "$build"
echo; echo "### a traced Python call: py: on 3.12 with -X perf"; ./bench/python_spans.sh "$build"
echo; echo "### symbolization throughput"; ./bench/symbolize.sh "$build"
echo; echo "### unwind tables"; ./bench/cfi.sh "$build"
echo; echo "### JIT perf maps"; "$build/bench/perfmap"
echo; echo "### format conversion and rendering"; ./bench/formats_throughput.sh "$build"
echo; echo "### hash tables and string pools: instructions against main"; ./bench/tables.sh "$build"
echo; echo "### tracing cost per call"; ./bench/trace_cost.sh "$build"
echo; echo "### a real server: redis under redis-benchmark"; ./bench/redis_trace.sh "$build"
echo; echo "### the headline on redis: slow/fast views, quiet and loaded"; ./bench/redis_headline.sh "$build"
echo; echo "### library probes: the trap for processes that are not targets"; ./bench/library_trap.sh "$build"
echo; echo "### span ring-buffer throughput"; ./bench/ringbuf_throughput.sh "$build"
echo; echo "### live session: responsiveness with 33 probes"; ./bench/live_responsive.sh "$build"
echo; echo "### sonde serve: the server and its event clients"; ./bench/serve.sh "$build" 20
echo; echo "### live session: CPU and RSS over 10 minutes"; ./bench/live_session.sh "$build" 600
