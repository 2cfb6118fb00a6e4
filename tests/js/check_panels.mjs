// The page's panels of where time goes, in a real browser (Debian's
// chromium, headless, through playwright-core), against a running `sonde
// serve` that tests/integration/serve_panels.sh started on a target with
// known behaviour.
//
// usage: node check_panels.mjs PANEL URL ARTIFACTS_DIR [ARGS...]
//   offcpu URL ART BLOCK_MS
//       serve --wall --trace handle_request --cmd 'slow handle_request 2ms'
//       -- blocking N BLOCK_MS: each slow call's time split (on the CPU, off
//       it by state, the function it waited in) under its row, as the
//       status has it; a call waiting for the pipe is off the CPU in read at
//       least BLOCK_MS (the target's helper writes BLOCK_MS after the
//       request); no call off the CPU longer than it lasted; the page's
//       status after the patches it applied is a new client's whole one;
//       the flame graph
//       counts wall-clock time and draws the off-CPU state frames in the
//       SVGs' blues, [running] in their reds.
//   threads URL ART TARGET_OUTPUT
//       serve --trace handle_request -- threadstates HOLD_MS (its output in
//       TARGET_OUTPUT): the Threads pane says no pass yet; its Sample
//       threads button turns the sampler on (`sample threads`) and the table
//       shows each of the target's threads (the tids it printed) in the state
//       and system call it is blocked in (reader: read, sleeper:
//       clock_nanosleep, locker and idler: futex), the traced call in flight
//       (handle_request, none for idler) with its elapsed time at least the
//       time since the target said what it would do (inside the call), at
//       most 20 ms more, its time in the system call never more than that
//       (a lower bound when it began before the sampler was on, else within
//       10 ms + 1%); the spinner running or runnable in spin < run; the same
//       rows as the `threads` command's text (sonde threads', sonde ctl's);
//       the button turns it off again.
//   lines URL ART LINE TARGET_OUTPUT
//       serve --no-children --trace handle_request --trace handle_batch
//       --trace LINE -- lines-gcc-O2 N (its output in TARGET_OUTPUT): once
//       the target printed what it counted, the line's row in the probes
//       table shows its hits, exactly the target's, and in which calls it
//       ran, as sonde report says it: in requests_with_hit of the N calls of
//       handle_request, and in the calls of handle_batch given a batch
//       (every 10th request, i % 7 of them: those with i % 7 > 0); no
//       latency columns; the value of v it captures (count_hit's argument,
//       always 1) read at every hit, as sonde report shows it.
//   explore URL ART LINE EXPLORE_JSON
//       serve --trace handle_request -- branches-gcc-O2 N: x on handle_request
//       (searched, gone to with n) opens the explorer pane, whose lines carry
//       the sites and branches of `sonde explore --json` (EXPLORE_JSON), its
//       graph a box per block, an edge per pair of blocks and a dashed back
//       edge per loop, its lines with samples a heat colour; a click on the
//       branch button of LINE (if (len > 4096)) places the branch probe and the
//       row shows its outcomes, one in eight requests one way, no more than
//       the status counts.
// Prints "ok: ..." per check; exits 1 at the first failure, 77 when
// chromium cannot start.
import fs from "node:fs";
import * as pagekit from "./pagekit.mjs";
import { fail, launchChromium, ok } from "./pagekit.mjs";

const [panel, url, artifacts, ...rest] = process.argv.slice(2);
if (!panel || !url || !artifacts) {
	console.error("usage: node check_panels.mjs PANEL URL ARTIFACTS_DIR [ARGS...]");
	process.exit(2);
}
const base = new URL(url);
const token = base.searchParams.get("token");
fs.mkdirSync(artifacts, { recursive: true });

// The API's own answer, as a client that is not the page.
const api = pagekit.apiClient(url);

// "#rrggbb" or "rgb(r, g, b)" -> [r, g, b]
function rgb(c) {
	let m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(c);
	if (m) return m.slice(1).map((h) => parseInt(h, 16));
	m = /rgb\((\d+),\s*(\d+),\s*(\d+)\)/.exec(c);
	if (m) return m.slice(1).map(Number);
	fail("not a colour: " + c);
}
// Its hue in degrees (HSL).
function hue(c) {
	const [r, g, b] = rgb(c).map((x) => x / 255);
	const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
	if (d === 0) return 0;
	let h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
	h *= 60;
	return h < 0 ? h + 360 : h;
}

async function checkOffcpu(page, blockMs) {
	const blockNs = blockMs * 1e6;
	await page.goto(url);
	await page.waitForSelector('body[data-conn="live"]', { timeout: 15000 });
	// a slow call that waited for the pipe, its split shown under its row
	await page.waitForFunction(
		() => [...document.querySelectorAll("#slow tr.split .splittext")].some((t) =>
			/\[sleeping: read\] [0-9.]+ms in wait_pipe/.test(t.textContent)),
		null,
		{ timeout: 30000 },
	);
	// What the page shows, and the status it holds (the status event,
	// patched), read at once: the rows are drawn from that status.
	const seen = await page.evaluate(() => {
		const st = window.sondeState().status;
		const rows = [...document.querySelectorAll("#slow tr.split")].map((tr) => ({
			span: tr.dataset.span, text: tr.querySelector(".splittext").textContent,
			parts: [...tr.querySelectorAll(".splitbar span")].map((s) => ({ cls: s.className, width: s.style.width, title: s.title })),
		}));
		return { st, rows };
	});
	const probe = seen.st.probes.find((p) => p.name === "handle_request");
	if (!probe) fail("handle_request is not in the page's status");
	if (seen.st.time !== "wall") fail(`the status's time is ${seen.st.time}, not wall (serve --wall)`);
	const byId = new Map(probe.slow.map((c) => [String(c.span_id), c]));
	let pipeWaits = 0;
	for (const row of seen.rows) {
		const c = byId.get(row.span);
		if (!c) fail(`a split row for span ${row.span}, not in the status's slow calls`);
		// the TUI's text (liveview.h live_slow_call_split), as the status has it
		if (row.text !== c.split) fail(`span ${row.span}: the page shows '${row.text}', the status '${c.split}'`);
		// ("<=": the on-CPU part is a bound, callsplit.h)
		if (!/^on-CPU (~|<=)[0-9.]+(ns|us|ms|s) off-CPU [0-9.]+(ns|us|ms|s): \[/.test(c.split))
			fail(`span ${row.span}: not the TUI's split text: '${c.split}'`);
		// the states, largest first, add up to the call's off-CPU time
		// (8 kept a call: a call with more has the rest in off_cpu_ns only)
		const sum = c.off_cpu.reduce((a, o) => a + o.ns, 0);
		if (c.off_cpu.length < 8 ? sum !== c.off_cpu_ns : sum > c.off_cpu_ns)
			fail(`span ${row.span}: states add up to ${sum} ns, off_cpu_ns ${c.off_cpu_ns}`);
		for (let i = 1; i < c.off_cpu.length; i++)
			if (c.off_cpu[i].ns > c.off_cpu[i - 1].ns) fail(`span ${row.span}: states not largest first`);
		// never off the CPU longer than it lasted
		if (c.off_cpu_ns > c.duration_ns) fail(`span ${row.span}: off-CPU ${c.off_cpu_ns} ns > its duration ${c.duration_ns} ns`);
		// the bar: on the CPU, then one part a state, each its share of the call
		if (row.parts.length !== 1 + c.off_cpu.length || row.parts[0].cls !== "on")
			fail(`span ${row.span}: the bar has ${row.parts.length} parts for ${c.off_cpu.length} states`);
		c.off_cpu.forEach((o, i) => {
			const want = Math.min(100, (100 * o.ns) / c.duration_ns);
			if (Math.abs(parseFloat(row.parts[i + 1].width) - want) > 0.01)
				fail(`span ${row.span}: ${o.state}'s part is ${row.parts[i + 1].width} of the bar, not ${want.toFixed(2)}%`);
		});
		const pipe = c.off_cpu.find((o) => o.state === "[sleeping: read]" && o.in === "wait_pipe");
		if (pipe) {
			pipeWaits++;
			// the helper writes BLOCK_MS after the request: the call is off
			// the CPU at least that long (less the few us between the write
			// and the read), in read, or runnable where a busy machine
			// preempted it before the read (CI: 2.86 ms in read; a state's
			// "in" is that of its largest interval, so runnable is counted
			// wherever it was)
			const runnable = c.off_cpu.filter((o) => o.state === "[runnable]").reduce((a, o) => a + o.ns, 0);
			if (pipe.ns + runnable < 0.98 * blockNs)
				fail(`span ${row.span}: in read under wait_pipe ${pipe.ns} ns and runnable ${runnable} ns, less than the target's ${blockMs} ms`);
		}
	}
	if (!pipeWaits) fail("no slow call's split has [sleeping: read] in wait_pipe");
	// the slow calls' splits come as patches of the status too: applied,
	// they are what a new client is sent whole
	await page.waitForFunction(() => window.sondeEvents.status_delta >= 2, null, { timeout: 15000 });
	const fresh = await pagekit.patchedIsWhole(page, token);
	if (!fresh.same) fail("the page's status after patches is not a new client's: " + JSON.stringify(fresh).slice(0, 3000));
	ok(`${seen.rows.length} slow calls with their split as the status has it; ${pipeWaits} waited >= ${blockMs} ms in read under wait_pipe (with any runnable time), e.g. ${seen.rows.find((r) => /wait_pipe/.test(r.text)).text}`);

	// ---- the flame graph: wall-clock time, states coloured as the SVGs ----
	await page.waitForFunction(
		() => document.querySelector('#flame g.frame[name="[sleeping: read]"] rect') &&
			document.querySelector('#flame g.frame[name="[running]"] rect'),
		null,
		{ timeout: 20000 },
	);
	const drawn = await page.evaluate(() => {
		const fill = (n) => [...document.querySelectorAll(`#flame g.frame[name="${n}"] rect`)].map((r) => r.getAttribute("fill") || r.style.fill);
		return { sleeping: fill("[sleeping: read]"), running: fill("[running]"), title: document.querySelector("#flametitle").textContent };
	});
	if (!/of wall-clock time/.test(drawn.title) || !/[0-9.]+(ns|us|ms|s) of wall-clock time/.test(drawn.title))
		fail("the flame graph's title does not count wall-clock time: " + drawn.title);
	// the API's colours are the SVGs' (render/flamesvg.c): the page draws them
	const flame = (await api("/api/flame")).body.data;
	const colours = new Map();
	for (const [, , name, kind, , , colour] of flame.added) {
		if (!colours.has(name)) colours.set(name, new Set());
		colours.get(name).add(colour + " " + kind);
	}
	for (const [name, fills] of [["[sleeping: read]", drawn.sleeping], ["[running]", drawn.running]]) {
		const api_ = [...(colours.get(name) || [])];
		if (!api_.length) fail(`/api/flame has no ${name}`);
		if (!api_.every((c) => / state$/.test(c))) fail(`${name}'s kind is not state: ${api_}`);
		for (const f of fills) {
			const h = hue(f);
			const blue = name !== "[running]";
			if (blue ? !(h >= 200 && h <= 245) : !(h <= 25 || h >= 355))
				fail(`${name} drawn in ${f} (hue ${h.toFixed(0)}), not the SVGs' ${blue ? "blues" : "reds"}`);
			if (!api_.some((c) => c.split(" ")[0].toLowerCase() === "#" + rgb(f).map((x) => x.toString(16).padStart(2, "0")).join("")))
				fail(`${name} drawn in ${f}, not in the API's colour ${api_}`);
		}
	}
	ok(`flame graph: ${drawn.title}; [sleeping: read] in ${drawn.sleeping[0]}, [running] in ${drawn.running[0]} (the SVGs' palette)`);
	await pagekit.shot(artifacts, page, "offcpu-split");
}

// The target's lines "KEY=VALUE ..." that start with `word`, by name.
function targetLines(file, word) {
	const out = new Map();
	for (const line of fs.readFileSync(file, "utf8").split("\n")) {
		if (!line.startsWith(word + " ")) continue;
		const kv = Object.fromEntries(line.split(" ").slice(1).map((x) => x.split("=")));
		out.set(kv.name, kv);
	}
	return out;
}

async function waitFor(what, fn, ms) {
	for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
		const v = fn();
		if (v) return v;
	}
	fail("timed out waiting for " + what);
}

async function checkThreads(page, targetOut) {
	const want = { reader: ["read", "handle_request"], sleeper: ["clock_nanosleep", "handle_request"],
		locker: ["futex", "handle_request"], idler: ["futex", null] };
	const started = await waitFor("the target's threads to start", () => {
		const m = targetLines(targetOut, "start");
		return m.size === 5 ? m : null;
	}, 20000);
	await page.goto(url);
	await page.waitForSelector('body[data-conn="live"]', { timeout: 15000 });
	await page.click("#threadsbtn");
	await page.waitForFunction(() => /No pass yet/.test(document.querySelector("#threadtitle").textContent), null, { timeout: 10000 });
	ok("Threads: " + (await page.textContent("#threadtitle")));
	await page.click("#threadsample");
	// every thread the target started, in its row
	const tids = [...started.values()].map((t) => t.tid);
	await page.waitForFunction(
		(tids) => tids.every((t) => document.querySelector(`#threads tbody tr[data-tid="${t}"]`)) &&
			/spin < run/.test(document.querySelector(`#threads tbody tr[data-tid="${tids[4]}"] td.stack`).textContent),
		[...started.values()].filter((t) => t.name !== "spinner").map((t) => t.tid).concat(started.get("spinner").tid),
		{ timeout: 20000 },
	);
	const answer = (await page.textContent("#answer")).trim();
	if (!/sample threads: sampling every thread's state/.test(answer)) fail("the button's answer: " + answer);
	ok("Sample threads: " + answer);
	const seen = await page.evaluate(() => ({
		d: window.sondeThreads,
		rows: [...document.querySelectorAll("#threads tbody tr")].map((tr) => ({
			tid: tr.dataset.tid, cells: [...tr.children].map((td) => td.textContent), title: tr.lastElementChild.title })),
	}));
	// the rows drawn are the answer's, in its order
	if (seen.rows.length !== seen.d.threads.length) fail(`${seen.rows.length} rows drawn for ${seen.d.threads.length} threads`);
	seen.d.threads.forEach((t, i) => {
		const c = seen.rows[i].cells;
		if (seen.rows[i].tid !== String(t.tid) || c[1] !== t.comm || c[2] !== t.state || c[4] !== (t.syscall ?? "-") ||
			c[6] !== (t.call ?? "-") || c[8] !== t.stack)
			fail(`row ${i} shows ${c.join(" | ")}, the answer ${JSON.stringify(t)}`);
	});
	await pagekit.shot(artifacts, page, "threads");
	const byTid = new Map(seen.d.threads.map((t) => [String(t.tid), t]));
	for (const [name, [sc, call]] of Object.entries(want)) {
		const t = byTid.get(started.get(name).tid);
		if (t.comm !== name || t.state !== "sleeping" || t.syscall !== sc || t.call !== call)
			fail(`${name}'s row: ${t.comm} ${t.state} ${t.syscall} ${t.call}, expected sleeping in ${sc}, call ${call}`);
	}
	const spin = byTid.get(started.get("spinner").tid);
	if (!["running", "runnable"].includes(spin.state) || !/spin < run/.test(spin.stack))
		fail(`the spinner: ${spin.state}, stack ${spin.stack}`);
	ok(`pass at ${seen.d.time_ns}: ${Object.keys(want).map((n) => n + " sleeping in " + want[n][0]).join(", ")}; spinner ${spin.state} in ${spin.stack}`);
	// the same rows as the `threads` command's text (sonde threads' table)
	const text = (await api("/api/command", { method: "POST", body: "threads" })).body;
	if (!text.ok || !/^threads at /.test(text.text)) fail("the threads command: " + JSON.stringify(text));
	for (const t of text.data.threads) {
		const row = text.text.split("\n").find((l) => l.split(/ +/)[0] === String(t.tid));
		const f = row ? row.split(/ +/) : [];
		if (f[1] !== t.comm || f[2] !== t.state || f[4] !== (t.syscall ?? "-") || f[6] !== (t.call ?? "-"))
			fail(`the threads command's text row '${row}' is not its data's ${JSON.stringify(t)}`);
	}
	ok(`the threads command's text has the same ${text.data.threads.length} rows as its data`);
	// The times against the target's clock as it said what it would do
	// (at_ns: after its request began, before its system call did), to the
	// pass.
	for (const [name, [sc, call]] of Object.entries(want)) {
		const t = byTid.get(started.get(name).tid);
		const measured = Number(BigInt(seen.d.time_ns) - BigInt(started.get(name).at_ns));
		// the system call began after it (exactly; plus how long the
		// target took to say so when sonde saw its start: within 10 ms + 1%)
		if (t.syscall_ns > measured) fail(`${name}: ${t.syscall_ns} ns in ${sc}, more than the target's ${measured} ns`);
		if (!t.syscall_lower_bound && measured - t.syscall_ns > 10e6 + measured / 100)
			fail(`${name}: ${t.syscall_ns} ns in ${sc}, the target says ${measured} ns`);
		// the call began before it, at most 20 ms before (a thread
		// preempted in between on a busy machine)
		if (call && !(t.call_ns >= measured && t.call_ns <= measured + 20e6))
			fail(`${name}: in ${call} for ${t.call_ns} ns, the target says ${measured} ns since just after the call began`);
	}
	const r = byTid.get(started.get("reader").tid);
	ok(`times against the target's: reader in handle_request ${r.call_ns} ns (target: ${Number(BigInt(seen.d.time_ns) - BigInt(started.get("reader").at_ns))} ns), in read ${r.syscall_lower_bound ? ">" : ""}${r.syscall_ns} ns`);
	await page.click("#threadsample");
	await page.waitForFunction(() => /thread states off/.test(document.querySelector("#answer").textContent), null, { timeout: 10000 });
	ok("the button again: " + (await page.textContent("#answer")).trim());
}

async function checkLines(page, line, targetOut) {
	const counted = await waitFor("the target to print what it counted", () => {
		const l = fs.readFileSync(targetOut, "utf8").split("\n").find((x) => x.startsWith("hits="));
		return l ? Object.fromEntries(l.split(" ").map((x) => x.split("=").map((v, i) => (i ? +v : v)))) : null;
	}, 60000);
	await page.goto(url);
	await page.waitForSelector('body[data-conn="live"], body[data-conn="ended"]', { timeout: 15000 });
	const row = `#probes tbody tr.line[data-name="${line}"]`;
	// the status after the target's end holds its final counts
	await page.waitForFunction(
		([row, hits]) => { const h = document.querySelector(row + " .hits"); return h && h.textContent === hits + " hits"; },
		[row, counted.hits],
		{ timeout: 20000 },
	);
	const seen = await page.evaluate((row) => ({
		cells: document.querySelectorAll(row + " td").length,
		incalls: Object.fromEntries([...document.querySelectorAll(row + " .incalls")].map((d) => [d.dataset.probe, d.textContent])),
		values: Object.fromEntries([...document.querySelectorAll(row + " .values")].map((d) => [d.dataset.var, d.textContent])),
		probe: window.sondeState().status.probes.find((p) => p.kind === "line"),
	}), row);
	if (seen.probe.name !== line || seen.probe.total_calls !== counted.hits)
		fail(`the status's line probe: ${seen.probe.name} ${seen.probe.total_calls} hits, the target counted ${counted.hits}`);
	if (seen.cells !== 3) fail(`the line's row has ${seen.cells} cells: a line has no latency columns`);
	// in which calls it ran: the target's counts
	const batchesWithHit = [...Array(counted.batches).keys()].filter((k) => (10 * k) % 7 > 0).length;
	const want = { handle_request: [counted.requests_with_hit, counted.requests], handle_batch: [batchesWithHit, counted.batches] };
	for (const [fn, [hit, calls]] of Object.entries(want)) {
		const text = seen.incalls[fn];
		const re = new RegExp(`^ran in ${((100 * hit) / calls).toFixed(1).replace(".", "\\.")}% of the calls of ${fn} \\(${hit} of ${calls}\\)`);
		if (!text || !re.test(text)) fail(`${line} in the calls of ${fn}: '${text}', expected ${hit} of ${calls}`);
		const c = seen.probe.in_calls.find((x) => x.probe === fn);
		if (c.slow_hit > c.slow_recorded) fail(`${fn}: ${c.slow_hit} slow calls hit of ${c.slow_recorded}`);
	}
	ok(`${line}: ${counted.hits} hits as the target counted; ${Object.values(seen.incalls).join("; ")}`);
	// v, captured at every hit: always 1
	const v = seen.probe.values.v;
	if (!v || v.count !== counted.hits || v.min !== 1 || v.max !== 1 || v.top.length !== 1 || v.top[0][0] !== 1 ||
		v.top[0][1] !== counted.hits)
		fail(`the status's captured v: ${JSON.stringify(v)}, expected ${counted.hits} reads of 1`);
	const vt = seen.values.v || "";
	if (!new RegExp(`^v \\([^)]+\\): ${counted.hits} read; min 1, max 1; top: 1 x${counted.hits}$`).test(vt))
		fail(`the row shows v as '${vt}'`);
	ok("captured: " + vt);
	await pagekit.shot(artifacts, page, "lines");
}

async function checkExplore(page, line, explorePath) {
	const want = JSON.parse(fs.readFileSync(explorePath, "utf8"));
	await page.goto(url);
	await page.waitForSelector('body[data-conn="live"]', { timeout: 15000 });
	await page.waitForFunction(() => +document.querySelector("#flame").dataset.nodes > 3, null, { timeout: 20000 });
	// select handle_request as a user does: search it, go to the match, x
	await page.fill("#search", "^handle_request$");
	await page.keyboard.press("Escape");
	await page.keyboard.press("n");
	await page.keyboard.press("x");
	await page.waitForSelector("#explorepane:not([hidden]) #explore tbody tr[data-line]", { timeout: 15000 });
	const rows = await page.evaluate(() => [...document.querySelectorAll("#explore tbody tr")].map((tr) =>
		[+tr.dataset.line, +tr.dataset.sites, +tr.dataset.branches]));
	const wanted = want.lines.map((l) => [l.line, l.sites, l.branches]);
	if (JSON.stringify(rows) !== JSON.stringify(wanted))
		fail(`the pane's lines (line, sites, branches) are not sonde explore's: ${JSON.stringify(rows)} vs ${JSON.stringify(wanted)}`);
	ok(`the pane shows handle_request's ${rows.length} lines with sonde explore's sites and branches`);
	// the block graph: a box per block, an edge per successor, dashed back edges
	const graph = await page.evaluate(() => ({
		blocks: document.querySelectorAll("#exploregraph g.block").length,
		edges: document.querySelectorAll("#exploregraph path").length,
		back: document.querySelectorAll("#exploregraph path.back").length,
	}));
	const edges = want.blocks.reduce((n, b) => n + b.succ.length, 0);
	// dagre keeps one edge per pair of blocks: a block whose two ways go to one block draws one
	const pairs = new Set(want.blocks.flatMap((b) => b.succ.map((s) => b.id + ">" + s))).size;
	if (graph.blocks !== want.blocks.length || graph.edges !== pairs || graph.back !== want.loops.length)
		fail(`the graph has ${graph.blocks} blocks, ${graph.edges} edges, ${graph.back} back edges; explore: ` +
			`${want.blocks.length}, ${pairs} (of ${edges} successors), ${want.loops.length}`);
	ok(`the block graph: ${graph.blocks} blocks, ${graph.edges} edges, ${graph.back} back edge`);
	// heat: some line holds samples, its cell coloured
	await page.waitForFunction(() => [...document.querySelectorAll("#explore tbody tr")].some((tr) => +tr.dataset.total > 0),
		null, { timeout: 20000 });
	const heat = await page.evaluate(() => [...document.querySelectorAll("#explore tbody tr")]
		.filter((tr) => +tr.dataset.total > 0).every((tr) => /rgba/.test(tr.children[5].getAttribute("style") || "")));
	if (!heat) fail("a line with samples has no heat colour");
	// a branch probe by click: its outcomes show in the row
	const row = `#explore tbody tr[data-line="${line}"]`;
	await page.click(row + " button.branch");
	// (the two outcomes' counts are read as the session refreshes each: the
	// first figures may have one of them behind)
	await page.waitForFunction((row) => {
		const m = /#1 taken ([0-9.]+)% not taken ([0-9.]+)% of (\d+)/.exec(document.querySelector(row + " .probes").textContent);
		return m && +m[3] >= 400 && Math.min(+m[1], +m[2]) > 0;
	}, row, { timeout: 30000 });
	const text = await page.evaluate((row) => document.querySelector(row + " .probes").textContent, row);
	const m = /#1 taken ([0-9.]+)% not taken ([0-9.]+)% of (\d+)/.exec(text);
	const small = Math.min(+m[1], +m[2]);
	// one request in eight takes the slow path (a few in flight at the attach aside)
	if (small < 11 || small > 14) fail(`the branch's outcomes in the pane: ${text}; one request in eight goes one way`);
	const st = (await api("/api/status")).body.data;
	const taken = st.probes.find((p) => p.name === `branch branches.c:${line} taken`);
	const nott = st.probes.find((p) => p.name === `branch branches.c:${line} not-taken`);
	if (!taken || !nott || !taken.attached || !nott.attached) fail("the status has no attached outcome probes for the branch");
	if (taken.total_calls + nott.total_calls < +m[3])
		fail(`the status counts ${taken.total_calls + nott.total_calls} outcomes, fewer than the pane showed (${m[3]})`);
	ok(`a click placed the branch probe: the pane shows '${text}', the status ${taken.total_calls} taken, ${nott.total_calls} not`);
	await pagekit.shot(artifacts, page, "explore");
}

const { context, userDataDir } = await launchChromium();
await pagekit.runChecks(context, userDataDir, async () => {
	const page = context.pages()[0] || (await context.newPage());
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	if (panel === "offcpu") await checkOffcpu(page, +rest[0]);
	else if (panel === "threads") await checkThreads(page, rest[0]);
	else if (panel === "lines") await checkLines(page, rest[0], rest[1]);
	else if (panel === "explore") await checkExplore(page, rest[0], rest[1]);
	else fail("unknown panel " + panel);
	if (errors.length) fail("errors in the page: " + errors.join("; "));
	ok("no script errors in the page");
});
