// jit.js — a CPU-bound JavaScript loop for Node's JIT, profiled with
// `node --perf-basic-prof` (which names the JIT's code in /tmp/perf-PID.map).
// usage: node --perf-basic-prof jit.js SECONDS (of CPU time, not of the
// clock: a busy machine does not shorten the work)
// hotLoop is hot, so V8 optimizes it ("JS:*hotLoop .../jit.js:LINE:COL" in
// the map: '*' is optimized code). Prints at exit
//     pid=<pid> cpu_s=<CPU seconds of runHot>
'use strict';

function hotLoop(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s = (s + i * 7) % 1000003;
	return s;
}

function cpuSeconds(since) {
	const c = process.cpuUsage(since);
	return (c.user + c.system) / 1e6;
}

function runHot(seconds, since) {
	let t = 0;
	while (cpuSeconds(since) < seconds)
		t += hotLoop(100000);
	return t;
}

const seconds = Number(process.argv[2] || 2);
const c0 = process.cpuUsage();
const sink = runHot(seconds, c0);
const c = process.cpuUsage(c0);
console.log(`pid=${process.pid} cpu_s=${((c.user + c.system) / 1e6).toFixed(3)} sink=${sink}`);
