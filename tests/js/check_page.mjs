// Drives sonde serve's page in a real browser (Debian's chromium, headless,
// through playwright-core) against a running `sonde serve`, and checks what
// a person would see. tests/integration/serve_page.sh starts the server.
//
// usage: node check_page.mjs URL ARTIFACTS_DIR SONDE_PID
//   URL            the line sonde serve printed (http://127.0.0.1:P/?token=T)
//   ARTIFACTS_DIR  where the screenshots of each state go
//   SONDE_PID      the server, stopped (SIGINT) at the end to see the page
//                  notice
// The served target must be tests/targets/requests, served with --window
// 60s (so the view's total only grows while the test runs). Prints "ok: ..." per
// check; exits 1 at the first failure, 77 when chromium cannot start.
import fs from "node:fs";
import * as pagekit from "./pagekit.mjs";
import { fail, flameInView, launchChromium, ok, sleep } from "./pagekit.mjs";
import { brushFrom, histogramMarks, histogramModes } from "./histogram.mjs";

const [url, artifacts, sondePid] = process.argv.slice(2);
if (!url || !artifacts || !sondePid) {
	console.error("usage: node check_page.mjs URL ARTIFACTS_DIR SONDE_PID");
	process.exit(2);
}
const base = new URL(url);
const token = base.searchParams.get("token");
const origin = base.origin;
fs.mkdirSync(artifacts, { recursive: true });


// The API's own answer, as a client that is not the page.
const api = pagekit.apiClient(url);

// The share (percent) of the view's samples whose stack has a frame whose
// name matches re, from /api/flame's full tree: frames inside a matched
// frame add nothing, as on the page and in the SVGs.
async function apiShare(re) {
	const { body } = await api("/api/flame");
	const m = body.data;
	const kids = new Map();
	const info = new Map();
	for (const [id, parent, name, , total] of m.added) {
		info.set(id, { name, total });
		if (!kids.has(parent)) kids.set(parent, []);
		kids.get(parent).push(id);
	}
	let covered = 0;
	const walk = (id, inside) => {
		const n = info.get(id);
		const hit = id !== 0 && re.test(n.name);
		if (hit && !inside) covered += n.total;
		for (const c of kids.get(id) || []) walk(c, inside || hit);
	};
	walk(0, false);
	return m.total > 0 ? (100 * covered) / m.total : 0;
}

// ---- the document itself, before any browser: one page, all inline ----
{
	const r = await fetch(url);
	const html = await r.text();
	if (r.status !== 200 || !/^text\/html/.test(r.headers.get("content-type")))
		fail(`GET / answered ${r.status} ${r.headers.get("content-type")}`);
	const left = /@(STYLE|SCRIPT)@/.exec(html);
	if (left) fail("the page still holds the placeholder " + left[0]);
	const scripts = html.match(/<script>/g) || [];
	if (scripts.length !== 4 || !/d3js\.org/.test(html) || !/flamegraph/.test(html) || !/graphlib/.test(html) || /<script[^>]* src=/.test(html))
		fail(`the page should inline d3, d3-flame-graph, dagre and its own script (${scripts.length} scripts)`);
	ok(`GET / with the token: ${html.length} bytes of HTML, d3, d3-flame-graph, dagre and the page's script inline`);
}

const { context, userDataDir } = await launchChromium();
const shot = (page, name) => pagekit.shot(artifacts, page, name);

await pagekit.runChecks(context, userDataDir, async () => {
	const page = context.pages()[0] || (await context.newPage());
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));

	// ---- without the token: 401, and no page ----
	let resp = await page.goto(origin + "/");
	if (resp.status() !== 401) fail(`the page without a token answered ${resp.status()}, not 401`);
	const text401 = await page.textContent("body");
	if (!/no token/.test(text401)) fail("the 401 answer does not say the token is missing: " + text401);
	ok("without the token: 401 " + text401.trim());
	await shot(page, "01-no-token");
	resp = await page.goto(origin + "/?token=" + "0".repeat(32));
	if (resp.status() !== 403) fail(`the page with a wrong token answered ${resp.status()}, not 403`);
	ok("with a wrong token: 403");

	// ---- with the token: live, the hot function drawn ----
	resp = await page.goto(url);
	if (resp.status() !== 200) fail(`the page with the token answered ${resp.status()}`);
	await page.waitForSelector('body[data-conn="live"]', { timeout: 15000 });
	ok("the page connected: live");
	// handle_request is on the stack of (nearly) every sample of the target
	await page.waitForFunction(
		() => {
			const g = document.querySelector('#flame g.frame[name="handle_request"] rect');
			const all = document.querySelector("#flame svg");
			return g && all && +g.getAttribute("width") > 0.5 * +all.getAttribute("width");
		},
		null,
		{ timeout: 20000 },
	);
	const hotWidth = await page.evaluate(() => {
		const g = document.querySelector('#flame g.frame[name="handle_request"] rect');
		return +g.getAttribute("width") / +document.querySelector("#flame svg").getAttribute("width");
	});
	ok(`handle_request spans ${(100 * hotWidth).toFixed(1)}% of the flame graph's width`);
	const hotRows = await page.$$eval("#hot tbody td.name", (tds) => tds.map((t) => t.textContent));
	if (!hotRows.slice(0, 5).some((n) => n === "burn" || n === "slow_path" || n === "parse_request"))
		fail("the hottest functions table does not start with the target's hot code: " + hotRows.slice(0, 5));
	ok("hottest functions: " + hotRows.slice(0, 5).join(", "));
	const status = await page.textContent("#status");
	if (!/requests/.test(status) || !/samples\/s/.test(status)) fail("status line: " + status);
	ok("status line: " + status);
	await shot(page, "02-live");

	// ---- it updates: two looks a few seconds apart ----
	const look = () =>
		page.evaluate(() => ({
			nodes: +document.getElementById("flame").dataset.nodes,
			total: +document.getElementById("flame").dataset.total,
			drawn: document.querySelectorAll("#flame g.frame").length,
		}));
	const first = await look();
	await sleep(3000);
	const second = await look();
	if (!(second.total > first.total)) fail(`the flame graph did not grow: ${JSON.stringify(first)} then ${JSON.stringify(second)}`);
	ok(`updates in place: ${first.total} samples/${first.nodes} frames, then ${second.total}/${second.nodes}`);

	// ---- search: highlight, and the matched share the API's data gives ----
	await page.keyboard.press("/");
	await page.keyboard.type("slow_path");
	await page.waitForFunction(() => document.getElementById("flame").dataset.matched !== "");
	await sleep(200);
	const before = await page.evaluate(() => +document.getElementById("flame").dataset.matched);
	const fromApi = await apiShare(/slow_path/);
	const after = await page.evaluate(() => +document.getElementById("flame").dataset.matched);
	const pageShare = Math.abs(before - fromApi) < Math.abs(after - fromApi) ? before : after;
	if (!(Math.abs(pageShare - fromApi) <= 1))
		fail(`matched share on the page ${before}%/${after}%, the API's data gives ${fromApi.toFixed(2)}%`);
	ok(`search slow_path: page ${pageShare.toFixed(2)}%, API ${fromApi.toFixed(2)}% (within 1 point)`);
	const matchedText = await page.textContent("#matched");
	if (!/^Matched: \d+\.\d\d%/.test(matchedText)) fail("matched text: " + matchedText);
	const hl = await page.$$eval('#flame g.frame[name="slow_path"] rect', (rs) => rs.map((r) => getComputedStyle(r).fill));
	if (!hl.length || !hl.every((f) => f === "rgb(230, 0, 230)")) fail("slow_path frames are not highlighted: " + hl);
	const others = await page.$$eval('#flame g.frame[name="handle_request"] rect', (rs) => rs.map((r) => getComputedStyle(r).fill));
	if (others.some((f) => f === "rgb(230, 0, 230)")) fail("handle_request is highlighted by a search for slow_path");
	ok(`${hl.length} slow_path frame(s) highlighted, "${matchedText}"`);
	await shot(page, "03-search");

	// ---- zoom, as in sonde top: a stack; click a frame or z on the
	// selected one (the last pointed at) zooms in and stays through updates,
	// Z or Backspace goes back to the previous zoom ----
	await page.keyboard.press("Escape"); // leaves the search box, keeps the search
	// the widest box of a function, as a share of the graph's width (a few
	// stacks reach a function by another path, in narrow boxes)
	const widthOf = (name) =>
		page.evaluate((n) => {
			const ws = [...document.querySelectorAll(`#flame g.frame[name="${n}"] rect`)].map((r) => +r.getAttribute("width"));
			return ws.length ? Math.max(...ws) / +document.querySelector("#flame svg").getAttribute("width") : 0;
		}, name);
	// The graph lays itself out again at every update (a 200 ms
	// transition): a click at a position can land on the box that moved
	// under it (seen: parse_request zoomed). The click goes to slow_path's
	// own box, as the user's on it does.
	await page.$eval('#flame g.frame[name="slow_path"] rect', (r) =>
		r.dispatchEvent(new MouseEvent("click", { bubbles: true })));
	const seqBefore = await look();
	await page.waitForFunction((t) => +document.getElementById("flame").dataset.total !== t, seqBefore.total, { timeout: 10000 });
	await sleep(1500);
	const zoomedW = await widthOf("slow_path"), siblingW = await widthOf("parse_request");
	if (!(zoomedW > 0.97 && siblingW === 0))
		fail(`zoom on slow_path lost after updates: slow_path ${zoomedW}, parse_request ${siblingW} of the width`);
	ok(`zoomed on slow_path: ${(100 * zoomedW).toFixed(1)}% of the width after updates, its sibling hidden`);
	await shot(page, "03b-zoom");
	// the boxes move in a 200 ms transition: wait for the widths, not a time
	const widthsAre = (want, what) =>
		page.waitForFunction((w) => Object.entries(w).every(([n, [lo, hi]]) => {
			const ws = [...document.querySelectorAll(`#flame g.frame[name="${n}"] rect`)].map((r) => +r.getAttribute("width"));
			const f = ws.length ? Math.max(...ws) / +document.querySelector("#flame svg").getAttribute("width") : 0;
			return f >= lo && f <= hi;
		}), want, { timeout: 10000 }).catch(async () => {
			const got = {};
			for (const n of Object.keys(want)) got[n] = await widthOf(n);
			fail(`${what}: widths ${JSON.stringify(got)}, wanted ${JSON.stringify(want)}`);
		});
	const whole = { slow_path: [0.01, 0.9], parse_request: [0.01, 0.97] }; // neither zoomed into, both shown
	await page.keyboard.press("Z");
	await widthsAre(whole, "Z after a click on slow_path");
	ok(`Z: zoomed out, slow_path back to ${(100 * (await widthOf("slow_path"))).toFixed(1)}%, parse_request ${(100 * (await widthOf("parse_request"))).toFixed(1)}%`);
	await page.keyboard.press("Z");
	await page.waitForFunction(() => /^not zoomed/.test(document.getElementById("answer").textContent));
	ok("Z when not zoomed: " + (await page.textContent("#answer")));
	// z zooms into the frame pointed at, which stays selected when the
	// pointer leaves the graph; Backspace zooms out as Z
	const at = await page.evaluate(() => {
		const rs = [...document.querySelectorAll('#flame g.frame[name="parse_request"] rect')].map((r) => r.getBoundingClientRect());
		const r = rs.reduce((a, q) => (q.width > a.width ? q : a));
		return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
	});
	await page.mouse.move(at.x, at.y);
	await page.hover("#flametitle");
	const sel = await page.$$eval("#flame g.frame.sel", (gs) => gs.map((g) => g.getAttribute("name")));
	if (sel.join() !== "parse_request") fail("the frame pointed at last is not the one selected: " + sel);
	await page.keyboard.press("z");
	await widthsAre({ parse_request: [0.97, 1], slow_path: [0, 0] }, "z on parse_request");
	ok(`z: zoomed into the frame pointed at last (parse_request: ${(100 * (await widthOf("parse_request"))).toFixed(1)}% of the width, slow_path hidden); ${await page.textContent("#answer")}`);
	await page.keyboard.press("Backspace");
	await widthsAre(whole, "Backspace after z");
	ok("Backspace: zoomed out");

	// ---- keys: i (icicle), p (pause) ----
	await page.keyboard.press("i");
	await page.waitForFunction(() => document.getElementById("flametitle").textContent.startsWith("Icicle"));
	const rootY = await page.evaluate(() => {
		const g = document.querySelector('#flame g.frame[name="all"]');
		return g ? g.getAttribute("transform") : "";
	});
	if (!/translate\([\d.]+,0\)/.test(rootY)) fail("icicle: the root is not at the top: " + rootY);
	ok("i: icicle, root at the top");
	await page.keyboard.press("p");
	await page.waitForSelector('body[data-conn="paused"]');
	const title = () => page.evaluate(() => document.getElementById("flametitle").textContent);
	const frozenTitle = await title();
	const frozen = await look();
	await sleep(2500);
	const stillTitle = await title();
	const meanwhile = await look();
	if (stillTitle !== frozenTitle) fail(`paused, yet the graph changed: "${frozenTitle}" then "${stillTitle}"`);
	if (!(meanwhile.total > frozen.total)) fail("paused, and the data stopped coming too");
	await shot(page, "04-paused-icicle");
	await page.keyboard.press("p");
	await page.waitForSelector('body[data-conn="live"]');
	await page.waitForFunction((t) => document.getElementById("flametitle").textContent !== t, frozenTitle);
	ok(`p: paused (graph frozen at "${frozenTitle}" while data went from ${frozen.total} to ${meanwhile.total} samples), p again: live and drawn`);
	const kept = await page.$eval("#search", (i) => i.value);
	if (kept !== "slow_path") fail("the search was lost: " + kept);
	ok("the search stays through updates, icicle and pause");
	await page.keyboard.press("i");

	// ---- a probe added from the page shows in the probes table with calls ----
	await page.fill("#probefunc", "parse_request");
	await page.click("#trace");
	await page.waitForFunction(
		() => {
			const tr = document.querySelector('#probes tbody tr[data-name="parse_request"]');
			return tr && parseFloat(tr.children[1].textContent) > 0;
		},
		null,
		{ timeout: 20000 },
	);
	const probeRow = await page.$eval('#probes tbody tr[data-name="parse_request"]', (tr) =>
		[...tr.children].map((td) => td.textContent).slice(0, 6).join(" | "),
	);
	ok("probe added from the page: " + probeRow);
	const answer = await page.textContent("#answer");
	if (!/^trace parse_request: /.test(answer)) fail("the answer line after trace: " + answer);
	// a failing command shows its error
	await page.fill("#probefunc", "no_such_function_xyz");
	await page.click("#trace");
	await page.waitForSelector("#answer.error", { timeout: 15000 });
	const err = await page.textContent("#answer");
	if (!/^trace no_such_function_xyz: /.test(err)) fail("the error of a failed trace: " + err);
	ok("a failing command shows its error: " + err);
	await shot(page, "05-probe");

	// ---- window, EWMA, view and the ':' line steer the session ----
	const statusHas = (re) =>
		page.waitForFunction((src) => new RegExp(src).test(document.getElementById("status").textContent), re.source, { timeout: 10000 });
	await page.keyboard.press(":");
	await page.keyboard.type("window 5s");
	await page.keyboard.press("Enter");
	await statusHas(/window last 5s/);
	ok("':' then 'window 5s': the status says window last 5s");
	await page.fill("#ewma", "20s");
	await page.click("#setewma");
	await statusHas(/window .*20s/);
	ok("EWMA 20s: " + (await page.textContent("#status")).match(/window .*? view/)[0]);
	await page.selectOption("#viewkind", "slow");
	await page.fill("#viewfunc", "handle_request");
	await page.fill("#viewthr", "p90");
	await page.click("#setview");
	await statusHas(/view slow handle_request/);
	ok("View slow handle_request p90: " + (await page.textContent("#status")).match(/view .*? samples/)[0]);
	await page.selectOption("#viewkind", "all");
	await page.click("#setview");
	await statusHas(/view all/);
	await page.fill("#window", "60s");
	await page.click("#setwindow");
	await statusHas(/window last 60s/);
	ok("back to view all, window last 60s");
	// n selects the first match (the widest), z zooms into it, Z back; Esc
	// clears the search
	await page.hover("#flametitle");
	await page.keyboard.press("n");
	const nth = await page.textContent("#details");
	if (!/^match 1\/\d+: slow_path/.test(nth)) fail("n did not go to the first match: " + nth);
	const nsel = await page.$$eval("#flame g.frame.sel", (gs) => gs.map((g) => g.getAttribute("name")));
	if (nsel.join() !== "slow_path") fail("n did not select slow_path: " + nsel);
	await page.keyboard.press("z");
	await widthsAre({ slow_path: [0.97, 1], parse_request: [0, 0] }, "z after n");
	ok(`n: ${nth}; z: zoomed into it`);
	await page.keyboard.press("Z");
	await widthsAre(whole, "Z after n, z");
	await page.keyboard.press("Escape");
	await page.waitForFunction(() => document.getElementById("search").value === "" && document.getElementById("matched").textContent === "");
	const magenta = await page.$$eval("#flame g.frame rect", (rs) => rs.filter((r) => getComputedStyle(r).fill === "rgb(230, 0, 230)").length);
	if (magenta) fail(`Esc: ${magenta} frames still highlighted`);
	await page.keyboard.press("n");
	const noSearch = await page.textContent("#answer");
	if (!/^no search/.test(noSearch)) fail("n without a search: " + noSearch);
	ok("Esc: the search cleared, no frame highlighted; n then says: " + noSearch);
	// ? shows the keys: exactly those the page has, from one table; the
	// help takes the keys (i does nothing) until Esc closes it
	await page.keyboard.press("?");
	await page.waitForSelector("#help", { state: "visible" });
	const listed = await page.$$eval("#helpkeys tr", (trs) => trs.map((t) => t.dataset.keys).join(" ").split(" "));
	const want = ["/", "n", "N", "Esc", "z", "Z", "Backspace", "i", "p", ":", "h", "x", "?"];
	if (listed.slice().sort().join() !== want.slice().sort().join()) fail(`? lists the keys ${listed}, not ${want}`);
	await shot(page, "05c-help");
	const titleBefore = await page.textContent("#flametitle");
	await page.keyboard.press("i");
	if ((await page.textContent("#flametitle")).startsWith("Icicle") || !(await page.isVisible("#help")))
		fail(`i with the help open: the help ${await page.isVisible("#help") ? "stays" : "closed"}, title "${titleBefore}" -> "${await page.textContent("#flametitle")}"`);
	await page.keyboard.press("Escape");
	await page.waitForSelector("#help", { state: "hidden" });
	ok(`?: the help lists ${listed.join(" ")}; keys go to it while open, Esc closes it`);

	// ---- the latency histogram: brush the slow band -> its flame graph ----
	// handle_request's calls are ~100us, or ~2ms more when they take
	// slow_path: the band from 1 ms up holds the slow calls, whose samples
	// are in slow_path (>= 85%, as the CLI's test asks).
	await page.click('#probes tbody tr[data-name="handle_request"] td.name');
	await page.waitForSelector('#hist rect.bar[data-lo]', { timeout: 10000 });
	// its KDE curve has the target's two modes: ~100us (parse_request alone)
	// and ~2ms more (slow_path); preempted calls only spread the tail
	const { modes, fast: fastMode, slow: slowMode } = await histogramModes(page);
	if (!fastMode || !slowMode) fail(`the histogram's modes ${modes} ns lack ~100us or ~2ms`);
	ok(`histogram modes: ${modes.map((m) => (m / 1e3).toFixed(0) + "us").join(", ")}`);
	// p50, p95, p99 and the threshold where the axis puts the status's values,
	// the labels apart and inside the SVG (p95 and p99 are both in the slow mode)
	const marks = await histogramMarks(page);
	if (marks.problems.length) fail("the histogram's marks: " + marks.problems.join("; ") + " (" + marks.text + ")");
	ok("histogram marks: " + marks.text);
	const span = { n: await brushFrom(page, 1e6) };
	if (!span.n) fail("no calls of 1 ms or more in handle_request's histogram");
	await page.waitForFunction(() => !document.getElementById("bandpane").hidden && document.querySelector("#bandflame svg"),
		null, { timeout: 15000 }).catch(async () => {
		const why = await page.evaluate(() => ({
			pane_hidden: document.getElementById("bandpane").hidden,
			band: window.band, answer: document.getElementById("answer").textContent,
			title: document.getElementById("bandtitle").textContent,
			flame: document.getElementById("bandflame").innerHTML.slice(0, 200),
		}));
		fail("no flame graph of the brushed band within 15 s: " + JSON.stringify(why));
	});
	await sleep(800); /* the boxes get their widths in a transition */
	const bandShare = await page.evaluate(() => {
		const r = document.querySelector('#bandflame g.frame[name="slow_path"] rect');
		return r ? +r.getAttribute("width") / +document.querySelector("#bandflame svg").getAttribute("width") : 0;
	});
	const lohi = await page.evaluate(() => [document.getElementById("bandflame").dataset.lo, document.getElementById("bandflame").dataset.hi]);
	if (!(bandShare >= 0.85)) fail(`the band ${lohi} of handle_request: slow_path is ${(100 * bandShare).toFixed(1)}% of its flame graph, not >= 85%`);
	ok(`brushed ${span.n} buckets, band ${lohi[0]}..${lohi[1]} ns: slow_path is ${(100 * bandShare).toFixed(1)}% of the band's flame graph; ${await page.textContent("#bandtitle")}`);
	// the band's pane takes room from the live flame graph, drawn again to
	// its new box; the band's graph shows its root and slow_path
	await flameInView(page, "#flame", "handle_request", "band open");
	await flameInView(page, "#bandflame", "slow_path", "band open");
	await shot(page, "05b-band");
	await page.click("#bandclose");

	// ---- the status and hot list come as patches (status_delta, hot_delta):
	// applied by the page, they are exactly what a new client is sent whole
	// at the same moment, in fewer bytes ----
	await page.waitForFunction(() => window.sondeEvents.status_delta >= 2 && window.sondeEvents.hot_delta >= 1,
		null, { timeout: 15000 });
	const fresh = await pagekit.patchedIsWhole(page, token);
	if (!fresh.same) fail("the page's status and hot list after patches are not a new client's: " + JSON.stringify(fresh).slice(0, 3000));
	if (fresh.last.type !== "status_delta" || !(fresh.last.size < fresh.full))
		fail(`the status at that moment came as ${fresh.last.type} of ${fresh.last.size} bytes, a new client's whole status is ${fresh.full}`);
	ok(`status patches: after ${fresh.events.status_delta} status_delta and ${fresh.events.hot_delta} hot_delta events the page's ` +
		`state equals a new client's whole one; that moment's patch: ${fresh.last.size} bytes, the whole status ${fresh.full}`);

	// ---- a cross-origin POST with the token is refused ----
	// From a browser: a page on another origin (another port) posts a
	// "simple" request the browser sends without a preflight.
	const evilOrigin = `http://localhost:${base.port}`; // same server, other origin name
	const p2 = await context.newPage();
	const refused = p2.waitForResponse((r) => r.url().includes("/api/command"), { timeout: 10000 });
	await p2.goto(evilOrigin + "/?token=" + token);
	await p2.evaluate(
		([o, t]) =>
			fetch(o + "/api/command?token=" + t, {
				method: "POST", mode: "no-cors", body: "untrace parse_request",
				headers: { "Content-Type": "text/plain" },
			}).catch(() => {}),
		[origin, token],
	);
	const crossStatus = (await refused).status();
	await p2.close();
	if (crossStatus !== 403) fail(`a cross-origin POST from a browser answered ${crossStatus}, not 403`);
	const direct = await api("/api/command", { method: "POST", body: "untrace parse_request", headers: { Origin: "http://evil.example" } });
	if (direct.status !== 403) fail(`a POST with Origin http://evil.example answered ${direct.status}`);
	const st = await api("/api/status");
	if (!st.body.data.probes.some((p) => p.name === "parse_request"))
		fail("a refused cross-origin POST still untraced parse_request");
	ok(`cross-origin POST with the token: ${crossStatus} from a page on ${evilOrigin}, ${direct.status} with Origin http://evil.example; the probe stays`);

	// ---- the probe added from the page has its latency histogram: a click
	// on its row draws it ----
	await page.click('#probes tbody tr[data-name="parse_request"] td.name');
	await page.waitForFunction(
		() => /^parse_request: [1-9]/.test(document.getElementById("histprobe").textContent) &&
			document.querySelectorAll("#hist rect.bar[data-lo]").length > 0,
		null,
		{ timeout: 10000 },
	);
	ok(`parse_request's histogram: ${await page.textContent("#histprobe")}, ${await page.$$eval("#hist rect.bar[data-lo]", (r) => r.length)} bars`);

	// ---- an auto threshold says what it is: with no second mode, "no
	// second mode; using p95" beside the threshold in the probe's row and
	// in the threshold line's title, as every other output says it ----
	await page.selectOption("#viewkind", "slow");
	await page.fill("#viewfunc", "parse_request");
	await page.fill("#viewthr", "auto");
	await page.click("#setview");
	await statusHas(/view slow parse_request/);
	const noteShown = await page.waitForFunction(() => {
		const tr = document.querySelector('#probes tbody tr[data-name="parse_request"]');
		const title = document.querySelector("#hist line.thr title");
		if (!tr || !title) return null;
		return { cell: tr.children[5].textContent, title: title.textContent };
	}, null, { timeout: 10000 }).then((h) => h.jsonValue());
	const autoSt = (await api("/api/status")).body.data.probes.find((p) => p.name === "parse_request");
	const note = autoSt.slow_threshold_note;
	if (note) {
		if (!noteShown.cell.includes(note) || !noteShown.title.includes(note))
			fail(`the status says "${note}", the page shows "${noteShown.cell}" and "${noteShown.title}"`);
	} else if (/no second mode/.test(noteShown.cell + noteShown.title)) {
		fail(`the page says no second mode where the status found one: ${noteShown.cell}`);
	}
	ok(`slow parse_request auto: the row's threshold "${noteShown.cell}", the line's title "${noteShown.title}" (status note: ${note})`);
	await page.selectOption("#viewkind", "all");
	await page.click("#setview");
	await statusHas(/view all/);

	// ---- the probe's x button removes it ----
	await page.click('#probes tbody tr[data-name="parse_request"] button.untrace');
	// (an untraced probe stays listed, with what it gathered)
	await page.waitForSelector('#probes tbody tr.detached[data-name="parse_request"]', { timeout: 10000 });
	const untraced = await api("/api/status");
	if (untraced.body.data.probes.some((p) => p.name === "parse_request" && p.attached))
		fail("x left parse_request attached");
	if (await page.$('#probes tbody tr[data-name="parse_request"] button.untrace')) fail("an untraced probe still has its x");
	ok("x on parse_request: untraced, listed as such (" + (await page.textContent("#answer")).trim() + ")");

	// ---- the target exits: the page says so and keeps the data ----
	const pid = /PID (\d+)/.exec(st.body.data.target);
	if (!pid) fail("no target PID in the status: " + st.body.data.target);
	process.kill(+pid[1], "SIGTERM");
	await page.waitForSelector('body[data-conn="ended"]', { timeout: 15000 });
	const left = await look();
	if (!(left.drawn > 0)) fail("the page lost its flame graph when the target exited");
	ok(`target exited: the page says so and keeps ${left.drawn} frames`);
	await shot(page, "06-target-exited");

	// ---- the server stops: disconnected ----
	process.kill(+sondePid, "SIGINT");
	await page.waitForSelector('body[data-conn="disconnected"]', { timeout: 15000 });
	ok("server stopped: disconnected");
	await shot(page, "07-disconnected");

	if (errors.length) fail("errors in the page: " + errors.join("; "));
	ok("no script errors in the page");
});
