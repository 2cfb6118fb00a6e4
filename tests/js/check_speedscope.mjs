// Validates a speedscope JSON file against the schema speedscope publishes
// (node_modules/speedscope/dist/release/file-format-schema.json, draft-07)
// and checks what speedscope's importer relies on but the schema cannot say:
// frame indices in range, samples/weights of equal length, weights >= 0,
// evented "at" non-decreasing and O/C events balanced with each C closing the
// frame on top (speedscope throws otherwise).
//
// usage: node check_speedscope.mjs FILE
// prints one JSON object: {valid, errors, profiles, sampled, evented, frames,
// samples, weights_sum, events, sampled_names, evented_names}; exit 0 when
// valid, 1 when not, 2 when it cannot run.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'package.json'));

let Ajv;
try {
  Ajv = require('ajv');
  Ajv = Ajv.default || Ajv;
} catch (e) {
  console.log(JSON.stringify({ valid: false, errors: [`cannot load ajv: ${e.message}`] }));
  process.exit(2);
}
let schema;
try {
  schema = JSON.parse(
    readFileSync(join(here, 'node_modules/speedscope/dist/release/file-format-schema.json'), 'utf8'),
  );
} catch (e) {
  console.log(JSON.stringify({ valid: false, errors: [`cannot load the speedscope schema: ${e.message}`] }));
  process.exit(2);
}

const file = process.argv[2];
if (!file) {
  console.log(JSON.stringify({ valid: false, errors: ['usage: check_speedscope.mjs FILE'] }));
  process.exit(2);
}

const errors = [];
const out = {
  valid: false,
  errors,
  profiles: 0,
  sampled: 0,
  evented: 0,
  frames: 0,
  samples: 0,
  weights_sum: 0,
  events: 0,
  sampled_names: [],
  evented_names: [],
};

let doc;
try {
  doc = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  errors.push(`not JSON: ${e.message}`);
  console.log(JSON.stringify(out));
  process.exit(1);
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(doc)) {
  for (const e of validate.errors.slice(0, 50)) errors.push(`schema: ${e.instancePath || '/'} ${e.message}`);
}

const frames = doc?.shared?.frames ?? [];
out.frames = frames.length;
const profiles = Array.isArray(doc?.profiles) ? doc.profiles : [];
out.profiles = profiles.length;
if (profiles.length === 0) errors.push('no profiles: speedscope has nothing to open');
if (typeof doc?.activeProfileIndex === 'number' && doc.activeProfileIndex >= Math.max(profiles.length, 1))
  errors.push(`activeProfileIndex ${doc.activeProfileIndex} out of range`);
for (const [i, f] of frames.entries()) {
  if (typeof f?.name !== 'string') errors.push(`frame ${i}: no name`);
}

const frameOk = (f) => Number.isInteger(f) && f >= 0 && f < frames.length;

profiles.forEach((p, pi) => {
  const where = `profile ${pi} (${p?.name})`;
  if (!(p?.endValue >= p?.startValue)) errors.push(`${where}: endValue < startValue`);
  if (p?.type === 'sampled') {
    out.sampled++;
    out.sampled_names.push(p.name);
    const samples = p.samples ?? [];
    const weights = p.weights ?? [];
    if (samples.length !== weights.length)
      errors.push(`${where}: ${samples.length} samples but ${weights.length} weights`);
    out.samples += samples.length;
    let sum = 0;
    for (const w of weights) {
      if (!(Number.isFinite(w) && w >= 0)) errors.push(`${where}: bad weight ${w}`);
      else sum += w;
    }
    out.weights_sum += sum;
    samples.forEach((s, si) => {
      if (!Array.isArray(s) || !s.every(frameOk)) errors.push(`${where}: sample ${si} has a bad frame index`);
    });
  } else if (p?.type === 'evented') {
    out.evented++;
    out.evented_names.push(p.name);
    const stack = [];
    let last = -Infinity;
    for (const [ei, e] of (p.events ?? []).entries()) {
      out.events++;
      if (!frameOk(e.frame)) errors.push(`${where}: event ${ei} has a bad frame index`);
      if (!(e.at >= last)) errors.push(`${where}: event ${ei} at ${e.at} before ${last}`);
      last = e.at;
      if (e.at < p.startValue || e.at > p.endValue)
        errors.push(`${where}: event ${ei} at ${e.at} outside [startValue, endValue]`);
      if (e.type === 'O') stack.push(e.frame);
      else if (e.type === 'C') {
        if (stack.length === 0) errors.push(`${where}: event ${ei} closes with nothing open`);
        else if (stack[stack.length - 1] !== e.frame)
          errors.push(`${where}: event ${ei} closes frame ${e.frame} but ${stack[stack.length - 1]} is on top`);
        stack.pop();
      }
    }
    if (stack.length) errors.push(`${where}: ${stack.length} frames never closed`);
  }
});

out.valid = errors.length === 0;
console.log(JSON.stringify(out));
process.exit(out.valid ? 0 : 1);
