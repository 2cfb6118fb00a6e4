// Reads a Server-Sent Events capture of sonde serve's /api/events (the
// file named on the command line), applies every `flame` event to a tree
// as a page does, and checks each step: a full message replaces the tree,
// a delta names only nodes the client has (removed, changed) or adds nodes
// under parents it has; after each message every node's total is its self
// plus its children's totals, and the root's total is the message's total.
// Prints one JSON line: messages, fulls, deltas, nodes, total, and the
// final tree's frames by total (name -> summed total of its nodes).
import { readFileSync } from "node:fs";

const text = readFileSync(process.argv[2], "utf8");
const events = [];
for (const block of text.split("\n\n")) {
	let name = "message";
	const data = [];
	for (const line of block.split("\n")) {
		if (line.startsWith("event: ")) name = line.slice(7);
		else if (line.startsWith("data: ")) data.push(line.slice(6));
	}
	if (data.length) events.push({ name, data: data.join("\n") });
}

function fail(msg) {
	console.error("FAIL: " + msg);
	process.exit(1);
}

let nodes = new Map();
let messages = 0, fulls = 0, deltas = 0, lastTotal = 0, seq = 0;
for (const ev of events) {
	if (ev.name !== "flame") continue;
	const m = JSON.parse(ev.data);
	messages++;
	if (m.seq <= seq) fail(`seq ${m.seq} after ${seq}`);
	seq = m.seq;
	if (messages === 1 && !m.full) fail("the first flame message is not full");
	if (m.full) {
		nodes = new Map();
		fulls++;
	} else {
		deltas++;
	}
	for (const id of m.removed) {
		if (!nodes.has(id)) fail(`removed ${id}, which the client does not have`);
		nodes.delete(id);
	}
	for (const [id, parent, name, kind, total, self] of m.added) {
		if (nodes.has(id)) fail(`added ${id} twice`);
		if (parent !== -1 && !nodes.has(parent)) fail(`parent ${parent} of ${id} unknown`);
		nodes.set(id, { parent, name, kind, total, self });
	}
	for (const [id, total, self] of m.changed) {
		const n = nodes.get(id);
		if (!n) fail(`changed ${id}, which the client does not have`);
		n.total = total;
		n.self = self;
	}
	// Every node's parent is there; totals add up.
	const childSum = new Map();
	for (const [id, n] of nodes) {
		if (n.parent === -1) continue;
		if (!nodes.has(n.parent)) fail(`node ${id} lost its parent ${n.parent}`);
		childSum.set(n.parent, (childSum.get(n.parent) || 0) + n.total);
	}
	for (const [id, n] of nodes) {
		const sum = n.self + (childSum.get(id) || 0);
		if (sum !== n.total) fail(`node ${id} (${n.name}): total ${n.total}, self+children ${sum}`);
	}
	const root = nodes.get(0);
	if (nodes.size && (!root || root.total !== m.total))
		fail(`root total ${root && root.total} != message total ${m.total}`);
	lastTotal = m.total;
}
const byName = {};
for (const n of nodes.values()) if (n.parent !== -1) byName[n.name] = (byName[n.name] || 0) + n.total;
console.log(JSON.stringify({ messages, fulls, deltas, nodes: nodes.size, total: lastTotal, byName }));
