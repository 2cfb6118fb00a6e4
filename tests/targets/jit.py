"""jit.py — a CPU-bound Python loop, profiled with `python3.12 -X perf`
(Python 3.12+ then runs each Python function through a small trampoline of
machine code named "py::FUNCTION:FILE" in /tmp/perf-PID.map).
usage: python3.12 -X perf jit.py SECONDS
Prints at exit: pid=<pid> cpu_s=<CPU seconds of run_hot>"""
import os
import sys
import time


def hot_loop(n):
    s = 0
    for i in range(n):
        s = (s + i * 7) % 1000003
    return s


def run_hot(seconds):
    end = time.monotonic() + seconds
    t = 0
    while time.monotonic() < end:
        t += hot_loop(20000)
    return t


seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
c0 = time.process_time()
sink = run_hot(seconds)
print(f"pid={os.getpid()} cpu_s={time.process_time() - c0:.3f} sink={sink}", flush=True)
