// For bench/serve_latency.sh: CLIENTS pages of sonde serve's page in one
// headless chromium, each noting when it first shows each function named
// mark_<k> (bench/busy.c's marks): the moment the hot functions table or
// the flame graph gets it in the DOM, then the next animation frame (the
// one that paints it), as CLOCK_REALTIME ms (performance.timeOrigin +
// performance.now(), the clock busy.c prints).
//
// usage: node page_latency.mjs URL CLIENTS READY_FILE COLLECT_FILE
// Opens the pages, waits until all are live, writes READY_FILE (each
// page's visibility, and how far its clock is from Date.now(), in ms), then
// waits for COLLECT_FILE to exist and prints one line per page and mark:
// "page=<i> name=<mark_k> shown_ms=<ms>". Exits 77 when chromium cannot
// start.
import fs from "node:fs";
import { fail, launchChromium, sleep } from "./pagekit.mjs";

const [url, nclients, readyFile, collectFile] = process.argv.slice(2);
if (!url || !(+nclients > 0) || !readyFile || !collectFile) {
	console.error("usage: node page_latency.mjs URL CLIENTS READY_FILE COLLECT_FILE");
	process.exit(2);
}

// Runs in each page before its own script: the first time a mark is in
// the hot table or the flame graph, and the animation frame after it.
function watchMarks() {
	window.__marks = {};
	const seen = (name) => {
		if (name in window.__marks) return;
		window.__marks[name] = null;
		requestAnimationFrame(() => {
			window.__marks[name] = performance.timeOrigin + performance.now();
		});
	};
	new MutationObserver(() => {
		for (const td of document.querySelectorAll("#hot td.name"))
			if (/^mark_\d+$/.test(td.textContent)) seen(td.textContent);
		for (const g of document.querySelectorAll('#flame g.frame[name^="mark_"]')) seen(g.getAttribute("name"));
	}).observe(document, { subtree: true, childList: true, characterData: true });
}

const { context, userDataDir } = await launchChromium();
let code = 0;
try {
	const pages = [];
	for (let i = 0; i < +nclients; i++) {
		const page = i === 0 && context.pages()[0] ? context.pages()[0] : await context.newPage();
		await page.addInitScript(watchMarks);
		await page.goto(url);
		pages.push(page);
	}
	for (const page of pages) await page.waitForSelector('body[data-conn="live"]', { timeout: 30000 });
	const looks = [];
	for (const page of pages)
		looks.push(await page.evaluate(() => ({
			visibility: document.visibilityState,
			clock_minus_date_ms: performance.timeOrigin + performance.now() - Date.now(),
		})));
	fs.writeFileSync(readyFile, JSON.stringify(looks) + "\n");
	while (!fs.existsSync(collectFile)) await sleep(100);
	for (let i = 0; i < pages.length; i++) {
		const marks = await pages[i].evaluate(() => window.__marks);
		for (const [name, ms] of Object.entries(marks))
			if (ms !== null) console.log(`page=${i} name=${name} shown_ms=${ms.toFixed(3)}`);
	}
} catch (e) {
	console.error("FAIL: " + (e.stack || e));
	code = 1;
} finally {
	await context.close();
	fs.rmSync(userDataDir, { recursive: true, force: true });
}
if (code) fail("the pages could not be watched");
process.exit(0);
