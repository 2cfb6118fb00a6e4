// Decodes a pprof file (gzipped or not) with pprof-format, an independent
// implementation of profile.proto, checks that every reference resolves, and
// prints one line of JSON:
//   {"samples":N,"total":SUM_OF_VALUE0,"sample_types":[{"type","unit"}...],
//    "labels":[distinct label keys],"locations":N,"functions":N,
//    "mappings":N,"max_lines":N,"period":N,"time_nanos":N,"comments":[...],
//    "function_names":[{"name","system_name"}...] (distinct pairs, sorted)}
// Exits 1 (message on stderr) when the file does not decode or is
// inconsistent. Usage: node check_pprof.mjs FILE
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

function die(msg) {
  process.stderr.write(`check_pprof: ${msg}\n`);
  process.exit(1);
}

const file = process.argv[2];
if (!file) die('usage: node check_pprof.mjs FILE');
let buf = readFileSync(file);
if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf);

let p;
try {
  p = Profile.decode(new Uint8Array(buf.buffer, buf.byteOffset, buf.length));
} catch (e) {
  die(`decode failed: ${e.message}`);
}

const strings = p.stringTable.strings;
const str = (i, what) => {
  const n = Number(i);
  if (!Number.isInteger(n) || n < 0 || n >= strings.length) die(`${what}: string index ${i} out of range`);
  return strings[n];
};
if (strings.length === 0 || strings[0] !== '') die('string_table[0] is not ""');

const ids = (list, what) => {
  const m = new Map();
  for (const x of list) {
    const id = BigInt(x.id);
    if (id === 0n) die(`${what} with id 0`);
    if (m.has(id)) die(`duplicate ${what} id ${id}`);
    m.set(id, x);
  }
  return m;
};
const mappings = ids(p.mapping, 'mapping');
const functions = ids(p.function, 'function');
const locations = ids(p.location, 'location');

for (const m of p.mapping) str(m.filename, 'mapping filename');
for (const f of p.function) {
  str(f.name, 'function name');
  str(f.systemName, 'function system_name');
  str(f.filename, 'function filename');
}
let maxLines = 0;
for (const l of p.location) {
  if (BigInt(l.mappingId) !== 0n && !mappings.has(BigInt(l.mappingId)))
    die(`location ${l.id}: unknown mapping ${l.mappingId}`);
  for (const ln of l.line)
    if (!functions.has(BigInt(ln.functionId))) die(`location ${l.id}: unknown function ${ln.functionId}`);
  maxLines = Math.max(maxLines, l.line.length);
}

const sampleTypes = p.sampleType.map((t) => ({ type: str(t.type, 'sample_type'), unit: str(t.unit, 'sample_type') }));
let total = 0n;
const labels = new Set();
for (const [i, s] of p.sample.entries()) {
  if (s.value.length !== sampleTypes.length)
    die(`sample ${i}: ${s.value.length} values for ${sampleTypes.length} sample types`);
  for (const id of s.locationId)
    if (!locations.has(BigInt(id))) die(`sample ${i}: unknown location ${id}`);
  total += BigInt(s.value[0] ?? 0);
  for (const l of s.label) {
    labels.add(str(l.key, 'label key'));
    str(l.str, 'label str');
    str(l.numUnit, 'label num_unit');
  }
}

const out = {
  samples: p.sample.length,
  total: total.toString(),
  sample_types: sampleTypes,
  labels: [...labels].sort(),
  locations: p.location.length,
  functions: p.function.length,
  mappings: p.mapping.length,
  max_lines: maxLines,
  period: BigInt(p.period ?? 0).toString(),
  time_nanos: BigInt(p.timeNanos ?? 0).toString(),
  comments: p.comment.map((c) => str(c, 'comment')),
  function_names: [...new Set(p.function.map((f) => JSON.stringify({ name: str(f.name, 'name'), system_name: str(f.systemName, 'system_name') })))]
    .sort()
    .map((j) => JSON.parse(j)),
};
// total/period/time_nanos as bare numbers (they may exceed 2^53: print digits).
process.stdout.write(
  JSON.stringify(out).replace(/"(total|period|time_nanos)":"(\d+)"/g, '"$1":$2') + '\n',
);
