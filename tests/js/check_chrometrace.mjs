// Checks a Chrome Trace Event JSON file for what Perfetto's and Firefox
// Profiler's importers need (their rules, re-stated; see docs in
// src/formats/chrometrace.h):
//  - the file is JSON with a traceEvents array of objects with name and ph;
//  - every "X" event has finite ts >= 0, dur >= 0, integer pid/tid, a name;
//    per pid/tid the X slices nest (sorted by ts, longer first);
//  - "M" process_name / thread_name events name every pid and pid/tid used;
//  - "P" events: a "Profile" (id, args.data.startTime) precedes every
//    "ProfileChunk" with its id, pid and tid; chunk nodes have ids unique
//    in the file (Firefox indexes one frame table by id - 1, so ids must also
//    be dense), a callFrame with a functionName, a parent that already
//    exists in the same profile (the first node of a profile is the
//    "(root)" without parent); every sample names an existing node;
//    timeDeltas has one whole number (Perfetto reads int64) >= 0 per sample.
//
// usage: node check_chrometrace.mjs FILE
// prints one JSON object: {ok, problems, events, m_events, x_events,
// profiles, chunks, nodes, samples, max_chunk_samples, samples_by_thread:
// {"pid/tid": n}, x_by_thread: {"pid/tid": n}, last_sample_us}; exit 0 when ok, 1
// when not, 2 when it cannot run.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.log(JSON.stringify({ ok: false, problems: ['usage: check_chrometrace.mjs FILE'] }));
  process.exit(2);
}

const problems = [];
const out = {
  ok: false,
  problems,
  events: 0,
  m_events: 0,
  x_events: 0,
  profiles: 0,
  chunks: 0,
  nodes: 0,
  samples: 0,
  max_chunk_samples: 0,
  samples_by_thread: {},
  x_by_thread: {},
  last_sample_us: 0,
};
const problem = (msg) => {
  if (problems.length < 100) problems.push(msg);
};

let doc;
try {
  doc = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  problem(`not JSON: ${e.message}`);
  console.log(JSON.stringify(out));
  process.exit(1);
}

const events = Array.isArray(doc) ? doc : doc?.traceEvents;
if (!Array.isArray(events)) {
  problem('no traceEvents array');
  console.log(JSON.stringify(out));
  process.exit(1);
}
out.events = events.length;

const isInt = (v) => Number.isInteger(v);
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const key = (e) => `${e.pid}/${e.tid}`;

const processNames = new Set();
const threadNames = new Set();
const usedPids = new Set();
const usedThreads = new Set();
const slices = new Map(); // pid/tid -> [[start_ns, end_ns, name]]
const profiles = new Map(); // id -> {pid, tid, nodes: Set}
const allNodeIds = new Set();
let maxNodeId = 0;

events.forEach((e, i) => {
  if (typeof e !== 'object' || e === null || typeof e.name !== 'string' || typeof e.ph !== 'string') {
    problem(`event ${i}: not an object with string name and ph`);
    return;
  }
  const where = `event ${i} (${e.ph} ${e.name})`;
  if (e.ph !== 'M' && !isNum(e.ts)) problem(`${where}: no numeric ts`);
  if (!isInt(e.pid) || !isInt(e.tid)) {
    problem(`${where}: pid/tid are not integers`);
    return;
  }
  switch (e.ph) {
    case 'M': {
      out.m_events++;
      if (typeof e.args?.name !== 'string') problem(`${where}: no args.name`);
      if (e.name === 'process_name') processNames.add(e.pid);
      else if (e.name === 'thread_name') threadNames.add(key(e));
      break;
    }
    case 'X': {
      out.x_events++;
      if (!(isNum(e.ts) && e.ts >= 0)) problem(`${where}: bad ts ${e.ts}`);
      if (!(isNum(e.dur) && e.dur >= 0)) problem(`${where}: bad dur ${e.dur}`);
      if (e.name === '') problem(`${where}: empty name`);
      if (e.args !== undefined && (typeof e.args !== 'object' || e.args === null))
        problem(`${where}: args is not an object`);
      usedPids.add(e.pid);
      usedThreads.add(key(e));
      out.x_by_thread[key(e)] = (out.x_by_thread[key(e)] ?? 0) + 1;
      if (!slices.has(key(e))) slices.set(key(e), []);
      const a = Math.round(e.ts * 1000);
      slices.get(key(e)).push([a, a + Math.round(e.dur * 1000), e.name]);
      break;
    }
    case 'P': {
      usedPids.add(e.pid);
      usedThreads.add(key(e));
      if (typeof e.id !== 'string' || !/^0x[0-9a-fA-F]+$/.test(e.id)) {
        problem(`${where}: id ${e.id} is not a "0x<hex>" string`);
        return;
      }
      const data = e.args?.data;
      if (e.name === 'Profile') {
        out.profiles++;
        if (profiles.has(e.id)) problem(`${where}: second Profile with id ${e.id}`);
        if (!isNum(data?.startTime)) problem(`${where}: no args.data.startTime`);
        profiles.set(e.id, { pid: e.pid, tid: e.tid, nodes: new Set(), chunks: 0 });
      } else if (e.name === 'ProfileChunk') {
        out.chunks++;
        const prof = profiles.get(e.id);
        if (!prof) {
          problem(`${where}: no Profile with id ${e.id} before it`);
          return;
        }
        if (prof.pid !== e.pid || prof.tid !== e.tid) problem(`${where}: pid/tid differ from its Profile's`);
        const cpu = data?.cpuProfile;
        if (!cpu || !Array.isArray(cpu.samples)) {
          problem(`${where}: no args.data.cpuProfile.samples`);
          return;
        }
        for (const n of cpu.nodes ?? []) {
          out.nodes++;
          if (!isInt(n?.id) || n.id <= 0) {
            problem(`${where}: node id ${n?.id} is not a positive integer`);
            continue;
          }
          if (allNodeIds.has(n.id)) problem(`${where}: node id ${n.id} used twice in the file`);
          allNodeIds.add(n.id);
          maxNodeId = Math.max(maxNodeId, n.id);
          if (typeof n.callFrame?.functionName !== 'string') problem(`${where}: node ${n.id} has no callFrame.functionName`);
          if (n.parent === undefined) {
            if (prof.nodes.size !== 0) problem(`${where}: node ${n.id} has no parent but is not its profile's first`);
            else if (n.callFrame?.functionName !== '(root)') problem(`${where}: first node ${n.id} is not "(root)"`);
          } else if (!prof.nodes.has(n.parent)) {
            problem(`${where}: node ${n.id}'s parent ${n.parent} is not an earlier node of its profile`);
          }
          prof.nodes.add(n.id);
        }
        if (prof.chunks++ === 0 && prof.nodes.size === 0) problem(`${where}: first chunk without nodes`);
        const deltas = data.timeDeltas;
        if (!Array.isArray(deltas) || deltas.length !== cpu.samples.length)
          problem(`${where}: ${deltas?.length} timeDeltas for ${cpu.samples.length} samples`);
        else
          for (const d of deltas)
            if (!isInt(d) || d < 0) {
              problem(`${where}: timeDelta ${d} is not a whole number >= 0`);
              break;
            }
        for (const s of cpu.samples)
          if (!prof.nodes.has(s)) {
            problem(`${where}: sample names node ${s}, which its profile does not have`);
            break;
          }
        out.samples += cpu.samples.length;
        out.max_chunk_samples = Math.max(out.max_chunk_samples, cpu.samples.length);
        out.samples_by_thread[key(e)] = (out.samples_by_thread[key(e)] ?? 0) + cpu.samples.length;
      }
      break;
    }
    default:
      break;
  }
});

// Sample times: startTime + running sum of deltas, per profile, in file order.
{
  const start = new Map();
  for (const e of events) {
    if (e?.ph !== 'P') continue;
    if (e.name === 'Profile') start.set(e.id, e.args?.data?.startTime ?? 0);
    else if (e.name === 'ProfileChunk' && start.has(e.id)) {
      let t = start.get(e.id);
      for (const d of e.args?.data?.timeDeltas ?? []) t += d;
      start.set(e.id, t);
      out.last_sample_us = Math.max(out.last_sample_us, t);
    }
  }
}

if (allNodeIds.size && maxNodeId !== allNodeIds.size)
  problem(`node ids are not dense: ${allNodeIds.size} nodes, largest id ${maxNodeId}`);

for (const pid of usedPids) if (!processNames.has(pid)) problem(`pid ${pid} has no process_name`);
for (const t of usedThreads) if (!threadNames.has(t)) problem(`thread ${t} has no thread_name`);

for (const [t, list] of slices) {
  list.sort((x, y) => x[0] - y[0] || y[1] - y[0] - (x[1] - x[0]));
  const stack = [];
  for (const [a, b, name] of list) {
    while (stack.length && stack[stack.length - 1][1] <= a) stack.pop();
    if (stack.length && b > stack[stack.length - 1][1]) {
      problem(`thread ${t}: slice ${name} [${a}, ${b}] ns overlaps ${stack[stack.length - 1][2]} ending ${stack[stack.length - 1][1]}`);
      continue;
    }
    stack.push([a, b, name]);
  }
}

out.ok = problems.length === 0;
console.log(JSON.stringify(out));
process.exit(out.ok ? 0 : 1);
