// Drives sonde serve's page on a recording (`sonde serve FILE`) in a real
// browser (Debian's chromium, headless, through playwright-core) and checks
// what a person would see. tests/integration/serve_recording.sh records the
// requests target and starts the server; bench/serve.sh uses it for the time
// to first render.
//
// usage: node check_recording.mjs URL ARTIFACTS_DIR FILE [--render-only | SAMPLES]
//   URL            the line sonde serve printed
//   ARTIFACTS_DIR  where the screenshots go
//   FILE           the recording served (the page's status names it)
//   SAMPLES        the samples `sonde report FILE` counts: the heat map's total
//   --render-only  only load the page and print first_render_ms=N: the
//                  time from navigation to the flame graph drawn
// Prints "ok: ..." per check; exits 1 at the first failure, 77 when chromium
// cannot start.
import fs from "node:fs";
import * as pagekit from "./pagekit.mjs";
import { fail, flameInView, launchChromium, ok } from "./pagekit.mjs";
import { brushFrom, histogramMarks, histogramModes } from "./histogram.mjs";

const [url, artifacts, file, mode] = process.argv.slice(2);
const reportSamples = mode;
if (!url || !artifacts || !file || !mode) {
	console.error("usage: node check_recording.mjs URL ARTIFACTS_DIR FILE --render-only | SAMPLES");
	process.exit(2);
}
fs.mkdirSync(artifacts, { recursive: true });


const apiAnswer = pagekit.apiClient(url);
const api = async (pathname) => (await apiAnswer(pathname)).body;
/* Types a command at the page's prompt and waits until the page's status
 * line shows `shown` (a regexp); then the keys go to the page again. */
const typeCommand = async (page, cmd, shown) => {
	await page.fill("#cmd", cmd);
	await page.press("#cmd", "Enter");
	await page.waitForFunction((re) => new RegExp(re).test(document.getElementById("status").textContent), shown.source, { timeout: 20000 });
	await page.$eval("#cmd", (e) => e.blur());
};

const { context, userDataDir } = await launchChromium();
const shot = (page, name) => pagekit.shot(artifacts, page, name);

// The flame graph drawn with the root's box: the first render.
const drawn = () => {
	const root = document.querySelector('#flame g.frame[name="all"] rect');
	return root && +root.getAttribute("width") > 0;
};

await pagekit.runChecks(context, userDataDir, async () => {
	const page = context.pages()[0] || (await context.newPage());
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));

	const t0 = Date.now();
	const resp = await page.goto(url);
	if (resp.status() !== 200) fail(`the page answered ${resp.status()}`);
	await page.waitForFunction(drawn, null, { timeout: 60000 });
	const firstRender = Date.now() - t0;
	console.log(`first_render_ms=${firstRender}`);
	if (mode === "--render-only") process.exit(0);

	// ---- a recording: said so, nothing to steer, the data drawn ----
	await page.waitForSelector('body[data-conn="recording"]', { timeout: 15000 });
	const label = await page.textContent("#conn");
	if (label !== "recording") fail("the connection label: " + label);
	if (await page.isVisible("#addprobe")) fail("a recording offers to trace a function");
	const status = await page.textContent("#status");
	if (!status.includes("recording " + file)) fail("the status does not name the recording: " + status);
	ok(`first render in ${firstRender} ms; the page says "recording", no probe to add; ${status}`);
	// (the widest of its boxes: a few stacks reach it by another path)
	await page.waitForFunction(() => {
		const ws = [...document.querySelectorAll('#flame g.frame[name="handle_request"] rect')].map((r) => +r.getAttribute("width"));
		return ws.length && Math.max(...ws) > 0.5 * +document.querySelector("#flame svg").getAttribute("width");
	}, null, { timeout: 15000 });
	ok("handle_request spans over half the flame graph");
	// the boxes have the colours the server sends, the SVGs' (serve_recording.sh
	// checks those against sonde flame's SVG)
	{
		const { data } = await api("/api/flame");
		for (const fn of ["burn", "slow_path", "handle_request"]) {
			const want = data.added.find((a) => a[2] === fn)[6];
			const rgb = want.match(/[0-9a-f]{2}/g).map((h) => parseInt(h, 16));
			const css = `rgb(${rgb.join(", ")})`;
			const fills = await page.$$eval(`#flame g.frame[name="${fn}"] rect`, (rs) => rs.map((r) => getComputedStyle(r).fill));
			if (!fills.length || !fills.every((f) => f === css)) fail(`${fn}'s boxes are ${fills}, not ${css} (${want})`);
		}
		const swatch = await page.$$eval("#hot tbody tr td.name", (tds) => {
			const td = tds.find((t) => t.textContent === "burn");
			return td ? getComputedStyle(td.querySelector(".swatch")).backgroundColor : null;
		});
		const burn = data.added.find((a) => a[2] === "burn")[6].match(/[0-9a-f]{2}/g).map((h) => parseInt(h, 16));
		if (swatch !== `rgb(${burn.join(", ")})`) fail(`burn's swatch in the hot table is ${swatch}`);
		ok(`frames and the hot table's swatches have the server's colours (burn ${swatch})`);
	}
	await shot(page, "01-recording");

	// ---- search: the matched share is the API's ----
	await page.keyboard.press("/");
	await page.keyboard.type("slow_path");
	await page.waitForFunction(() => document.getElementById("flame").dataset.matched !== "");
	const pageShare = await page.evaluate(() => +document.getElementById("flame").dataset.matched);
	const { data } = await api("/api/flame");
	const slowTotal = data.added.filter((a) => a[2] === "slow_path").reduce((s, a) => s + a[4], 0);
	const apiShare = (100 * slowTotal) / data.total; // slow_path never calls itself
	if (!(Math.abs(pageShare - apiShare) <= 0.01))
		fail(`matched share on the page ${pageShare}%, the API's data ${apiShare}%`);
	ok(`search slow_path: ${pageShare.toFixed(2)}% (the API's ${apiShare.toFixed(2)}%)`);
	await page.keyboard.press("Escape");
	await page.fill("#search", "");
	await page.dispatchEvent("#search", "input");

	// ---- the sandwich of burn: click its row in the hottest functions ----
	// burn is called by slow_path and parse_request (each under
	// handle_request) and calls thread_cpu_now: the callers' graph has the
	// API's shares, the callees' graph has burn's callee
	{
		const sw = (await api("/api/sandwich?function=burn")).data;
		const callerShare = (fn) => sw.callers.added.filter((a) => a[2] === fn).reduce((t, a) => t + a[4], 0) / sw.total;
		await page.click('#hot tbody tr[data-name="burn"] td.name');
		await page.waitForFunction(() => !document.getElementById("sandpane").hidden &&
			document.querySelector('#sandcallers g.frame[name="slow_path"]') &&
			document.querySelector('#sandcallees g.frame[name="thread_cpu_now"]'), null, { timeout: 20000 });
		// the boxes reach their widths in a transition: wait for burn's to span both graphs
		await page.waitForFunction(() => ["#sandcallers", "#sandcallees"].every((sel) => {
			const svg = document.querySelector(sel + " svg"), r = svg.querySelector('g.frame[name="burn"] rect');
			return r && +r.getAttribute("width") >= 0.98 * +svg.getAttribute("width");
		}), null, { timeout: 20000 }).catch(() => {});
		// and the callers' widths to settle at the API's shares
		await page.waitForFunction((want) => {
			const svg = document.querySelector("#sandcallers svg");
			const w = [...svg.querySelectorAll('g.frame[name="slow_path"] rect')].reduce((t, r) => t + +r.getAttribute("width"), 0) / +svg.getAttribute("width");
			return Math.abs(w - want) <= 0.01;
		}, callerShare("slow_path"), { timeout: 20000 }).catch(() => {});
		const widths = await page.evaluate(() => {
			const share = (sel, fn) => {
				const svg = document.querySelector(sel + " svg");
				return [...svg.querySelectorAll(`g.frame[name="${fn}"] rect`)].reduce((t, r) => t + +r.getAttribute("width"), 0) / +svg.getAttribute("width");
			};
			return { slow: share("#sandcallers", "slow_path"), parse: share("#sandcallers", "parse_request"),
				root: share("#sandcallers", "burn"), calleeRoot: share("#sandcallees", "burn") };
		});
		if (Math.abs(widths.root - 1) > 0.02 || Math.abs(widths.calleeRoot - 1) > 0.02)
			fail(`burn is not the whole width of its sandwich: ${JSON.stringify(widths)}`);
		for (const [fn, w] of [["slow_path", widths.slow], ["parse_request", widths.parse]])
			if (!(Math.abs(w - callerShare(fn)) <= 0.02)) fail(`${fn}'s width among burn's callers ${w}, the API's share ${callerShare(fn)}`);
		const total = +(await page.$eval("#sandpane", (p) => p.dataset.total));
		if (total !== sw.total) fail(`the sandwich's total ${total}, the API's ${sw.total}`);
		ok(`sandwich of burn (${sw.total} samples): callers slow_path ${(100 * widths.slow).toFixed(1)}%, parse_request ${(100 * widths.parse).toFixed(1)}% (the API's shares), callees drawn; ${await page.textContent("#sandtitle")}`);
		await shot(page, "01b-sandwich");
		await page.click("#sandclose");
		await page.fill("#search", "");
		await page.dispatchEvent("#search", "input");
	}

	// ---- steering answers an error; a view works ----
	await page.fill("#cmd", "trace parse_request");
	await page.press("#cmd", "Enter");
	await page.waitForSelector("#answer.error", { timeout: 20000 });
	const err = await page.textContent("#answer");
	if (!err.includes(file + " is a recording")) fail("trace on a recording: " + err);
	ok("trace on a recording: " + err);
	await typeCommand(page, "window 2s", /window last 2s/);
	await typeCommand(page, "window 60s", /window last 60s/);
	ok("window 2s, then 60s: the status follows");

	// ---- the histogram from the recording's calls; brush the slow band ----
	await page.click('#probes tbody tr[data-name="handle_request"] td.name');
	await page.waitForSelector("#hist rect.bar[data-lo]", { timeout: 20000 });
	const { modes, fast: fastMode, slow: slowMode } = await histogramModes(page);
	if (!fastMode || !slowMode) fail(`the histogram's modes ${modes} ns lack ~100us or ~2ms`);
	ok(`histogram modes: ${modes.map((m) => (m / 1e3).toFixed(0) + "us").join(", ")}`);
	// p50, p95, p99 and the threshold where the axis puts the status's values,
	// the labels apart and inside the SVG (p95 and p99 are both in the slow mode)
	const marks = await histogramMarks(page);
	if (marks.problems.length) fail("the histogram's marks: " + marks.problems.join("; ") + " (" + marks.text + ")");
	ok("histogram marks: " + marks.text);
	// worker: called once (one thread), so its p50, p95 and p99 are the same
	// value: three labels at one x, still apart and inside the SVG
	await page.click('#probes tbody tr[data-name="worker"] td.name');
	await page.waitForFunction(() => /^worker: 1 calls/.test(document.getElementById("histprobe").textContent) &&
		document.querySelectorAll("#hist rect.bar[data-lo]").length === 1, null, { timeout: 20000 });
	const one = await histogramMarks(page);
	if (one.problems.length) fail("the histogram's marks of worker's one call: " + one.problems.join("; ") + " (" + one.text + ")");
	ok("worker's one call: " + one.text);
	await page.locator("#hist").screenshot({ path: artifacts + "/02a-hist-one-call.png" });
	// inner: calls of a few ns (the probe's own cost is taken out), some
	// under 1 ns, in the bucket [0, 1) ns, which a log axis cannot place at
	// 0: every bucket drawn, where the axis puts it
	{
		const want = (await api("/api/status")).data.probes.find((p) => p.name === "inner");
		await page.click('#probes tbody tr[data-name="inner"] td.name');
		await page.waitForFunction((n) => /^inner: /.test(document.getElementById("histprobe").textContent) &&
			document.querySelectorAll("#hist rect.bar[data-lo]").length === n, want.buckets.length, { timeout: 20000 });
		const bad = await page.$$eval("#hist rect.bar", (rs) => rs.filter((r) => !(+r.getAttribute("x") >= 0 && +r.getAttribute("width") >= 1 &&
			+r.getAttribute("x") + +r.getAttribute("width") <= 378)).map((r) => r.outerHTML));
		if (bad.length) fail(`inner's histogram: ${bad.length} of ${want.buckets.length} bars not drawn inside it, first ${bad[0]}`);
		const m = await histogramMarks(page);
		if (m.problems.length) fail("the histogram's marks of inner: " + m.problems.join("; ") + " (" + m.text + ")");
		ok(`inner's ${want.calls_in_window} calls: all ${want.buckets.length} buckets drawn, from [${want.buckets[0].slice(0, 2)}) ns (${want.buckets[0][2]} calls); ${m.text}`);
		await page.locator("#hist").screenshot({ path: artifacts + "/02b-hist-inner.png" });
	}
	await page.click('#probes tbody tr[data-name="handle_request"] td.name');
	await page.waitForFunction(() => /^handle_request: /.test(document.getElementById("histprobe").textContent));
	const span = { n: await brushFrom(page, 1e6) };
	if (!span.n) fail("no calls of 1 ms or more in handle_request's histogram");
	await page.waitForFunction(() => !document.getElementById("bandpane").hidden && document.querySelector('#bandflame g.frame[name="slow_path"] rect'),
		null, { timeout: 15000 });
	// the boxes get their widths in a transition: wait for the state, not a time
	// (all slow_path boxes: a few samples reach it by another path; it never
	// calls itself, so they do not overlap)
	const widest = () => {
		const ws = [...document.querySelectorAll('#bandflame g.frame[name="slow_path"] rect')].map((r) => +r.getAttribute("width"));
		return ws.reduce((a, w) => a + w, 0) / +document.querySelector("#bandflame svg").getAttribute("width");
	};
	await page.waitForFunction(widest, null, { timeout: 20000, polling: 100 }).catch(() => {});
	await page.waitForFunction((w) => (0, eval)(w)() >= 0.85, widest.toString(), { timeout: 20000 }).catch(() => {});
	const bandShare = await page.evaluate((w) => (0, eval)(w)(), widest.toString());
	if (!(bandShare >= 0.85)) fail(`slow_path is ${(100 * bandShare).toFixed(1)}% of the band's flame graph, not >= 85%`);
	ok(`brushed ${span.n} buckets: slow_path is ${(100 * bandShare).toFixed(1)}% of the band's flame graph; ${await page.textContent("#bandtitle")}`);
	// the band's pane takes room from the flame graph: drawn again to its new
	// box at once (a recording sends no update that would do it later)
	await flameInView(page, "#flame", "handle_request", "band open");
	await flameInView(page, "#bandflame", "slow_path", "band open");
	await shot(page, "02-band");

	// ---- the latest slow calls: a click opens that call's flame chart ----
	// (over 1 ms, the slow requests' mark: p95 is the top of its bucket,
	// which on a quiet machine can hold every slow request)
	{
		await page.click("#bandclose");
		await typeCommand(page, "slow handle_request 1ms", /view slow handle_request/);
		const st = (await api("/api/status")).data.probes.find((p) => p.name === "handle_request");
		if (!st.slow.length) fail("no latest slow calls over 1 ms in the status");
		const ids = st.slow.map((c) => c.span_id).join();
		const listed = await page.waitForFunction((want) => [...document.querySelectorAll("#slow tbody tr[data-span]")].map((t) => t.dataset.span).join() === want,
			ids, { timeout: 20000 }).then(() => true, () => false);
		const spans = await page.$$eval("#slow tbody tr[data-span]", (trs) => trs.map((t) => +t.dataset.span));
		if (!listed) fail(`slow calls on the page ${spans}, in the status ${ids}`);
		const first = (st.slow.find((c) => c.samples > 0) || st.slow[0]).span_id; /* one with samples, if any */
		const chart = (await api("/api/flamechart?span=" + first)).data;
		await page.click(`#slow tbody tr[data-span="${first}"]`);
		await page.waitForFunction((n) => !document.getElementById("chartpane").hidden &&
			document.querySelectorAll("#chart g.box").length === n, chart.boxes.length, { timeout: 20000 });
		const drawn = await page.$$eval("#chart g.box", (gs) => gs.map((g) => [g.dataset.name, +g.dataset.start, +g.dataset.dur, +g.dataset.depth]));
		const want = chart.boxes.map((b) => [b[3], b[0], b[1] - b[0], b[2]]);
		if (JSON.stringify(drawn) !== JSON.stringify(want)) fail("the flame chart's boxes differ from the API's");
		const last = chart.boxes.length - 1;
		const fill = await page.evaluate((k) => document.querySelectorAll("#chart g.box")[k].querySelector("rect").getAttribute("fill"), last);
		if (fill !== chart.boxes[last][5]) fail(`a chart box has fill ${fill}, not ${chart.boxes[last][5]}`);
		ok(`${spans.length} latest slow calls listed; span ${first}'s flame chart: ${drawn.length} boxes as the API lays them out; ${await page.textContent("#charttitle")}`);
		await flameInView(page, "#flame", "handle_request", "flame chart open");
		await shot(page, "03-flamechart");
		await page.click("#chartclose");
		await typeCommand(page, "all", /view all/);
	}

	// ---- the subsecond heat map: every sample of the recording in its cells;
	// a range dragged on it gives the flame graph of exactly that range's
	// samples (the API's cells, summed) ----
	{
		const hm = (await api("/api/heatmap")).data;
		const cellSum = hm.cells.flat().reduce((t, n) => t + n, 0);
		if (cellSum !== hm.total || hm.total + hm.idle_dropped !== +reportSamples)
			fail(`the heat map holds ${cellSum} samples in its cells, total ${hm.total} (+${hm.idle_dropped} idle); sonde report says ${reportSamples}`);
		// opened paused: the frozen flame graph is not drawn again, but its
		// root stays in view in the smaller box
		await page.keyboard.press("p");
		await page.waitForSelector('body[data-conn="paused"]');
		await page.click("#heatbtn");
		await flameInView(page, "#flame", "handle_request", "heat map open, paused");
		await page.keyboard.press("p");
		await page.waitForSelector('body[data-conn="recording"]');
		await page.waitForFunction((n) => document.querySelectorAll("#heatmap rect.cell").length === n, hm.cols * hm.rows, { timeout: 20000 });
		const drawnCells = await page.$$eval("#heatmap rect.cell", (rs) => rs.reduce((t, r) => t + +r.dataset.n, 0));
		const pageTotal = +(await page.$eval("#heatmap", (e) => e.dataset.total));
		if (drawnCells !== hm.total || pageTotal !== hm.total) fail(`the page's heat map cells hold ${drawnCells} samples, says ${pageTotal}; the API ${hm.total}`);
		// cells in time order: k = col * rows + (rows - 1 - row); select the
		// middle half of the cells that have samples
		const ks = [];
		hm.cells.forEach((c, col) => c.forEach((n, row) => { if (n) ks.push(col * hm.rows + hm.rows - 1 - row); }));
		ks.sort((a, b) => a - b);
		const kA = ks[Math.floor(ks.length / 4)], kB = ks[Math.floor((3 * ks.length) / 4)];
		const cellOf = (k) => [Math.floor(k / hm.rows), hm.rows - 1 - (k % hm.rows)];
		let want = 0;
		hm.cells.forEach((c, col) => c.forEach((n, row) => { const k = col * hm.rows + hm.rows - 1 - row; if (k >= kA && k <= kB) want += n; }));
		const centre = async (k) => {
			const [col, row] = cellOf(k);
			const b = await page.$eval(`#heatmap rect.cell[data-col="${col}"][data-row="${row}"]`, (r) => { const q = r.getBoundingClientRect(); return { x: q.left + q.width / 2, y: q.top + q.height / 2 }; });
			return b;
		};
		const a = await centre(kA), z = await centre(kB);
		await page.mouse.move(a.x, a.y);
		await page.mouse.down();
		await page.mouse.move((a.x + z.x) / 2, (a.y + z.y) / 2, { steps: 3 });
		await page.mouse.move(z.x, z.y, { steps: 3 });
		await page.mouse.up();
		await page.waitForFunction(() => document.querySelector('#rangeflame g.frame[name="all"] rect'), null, { timeout: 20000 });
		const sel = await page.$$eval("#heatmap rect.cell.sel", (rs) => rs.length);
		const got = await page.$eval("#rangeflame", (e) => ({ total: +e.dataset.total, from: e.dataset.from, to: e.dataset.to }));
		const rg = (await api(`/api/range?from_ns=${got.from}&to_ns=${got.to}`)).data;
		if (got.total !== want || rg.flame.total !== want)
			fail(`cells ${kA}..${kB} hold ${want} samples per /api/heatmap; the page's range flame graph ${got.total}, /api/range ${rg.flame.total}`);
		if (sel !== kB - kA + 1) fail(`${sel} cells marked as selected, not ${kB - kA + 1}`);
		// the flame graph drawn: its root spans the pane, and burn is in it
		await page.waitForFunction(() => {
			const svg = document.querySelector("#rangeflame svg"), r = svg && svg.querySelector('g.frame[name="all"] rect');
			return r && +r.getAttribute("width") >= 0.98 * +svg.getAttribute("width") && svg.querySelector('g.frame[name="burn"]');
		}, null, { timeout: 20000 });
		ok(`heat map: ${hm.cols} s x ${hm.rows} rows, ${hm.total} samples (sonde report: ${reportSamples}); dragged cells ${kA}..${kB} (${sel} cells, ${want} samples per the API's cells): range flame graph of ${got.total} samples; ${await page.textContent("#rangetitle")}`);
		console.log(`range_ns=${got.from}-${got.to} range_samples=${got.total} heat_start_ns=${hm.start_ns}`);
		await flameInView(page, "#flame", "handle_request", "heat map open");
		await flameInView(page, "#rangeflame", "handle_request", "range selected");
		await shot(page, "04-heatmap");
		await page.click("#heatclose");
		await flameInView(page, "#flame", "handle_request", "heat map closed");
	}

	if (errors.length) fail("errors in the page: " + errors.join("; "));
	ok("no script errors in the page");
});
