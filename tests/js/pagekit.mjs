// pagekit.mjs — what the page checks (check_page.mjs, check_recording.mjs,
// check_panels.mjs) share: their ok/fail lines, headless Debian chromium and
// the API as a client that is not the page.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

export function fail(msg) {
	console.error("FAIL: " + msg);
	process.exit(1);
}

export function ok(msg) {
	console.log("ok: " + msg);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The API of the server at `url` (the URL sonde serve printed, with its
// token) as a client that is not the page: api(pathname, init) answers
// {status, body} (body: the parsed JSON).
export function apiClient(url) {
	const base = new URL(url);
	const token = base.searchParams.get("token");
	return async function api(pathname, init = {}) {
		const r = await fetch(base.origin + pathname, {
			...init,
			headers: { "X-Sonde-Token": token, ...(init.headers || {}) },
		});
		return { status: r.status, body: await r.json() };
	};
}

// Runs a page check's body with the browser launchChromium gave, then
// closes it and removes its profile, and exits: 0, or 1 with the error's
// stack when the body threw (fail() exits by itself).
export async function runChecks(context, userDataDir, body) {
	let exitCode = 0;
	try {
		await body();
	} catch (e) {
		console.error("FAIL: " + (e.stack || e));
		exitCode = 1;
	} finally {
		await context.close();
		fs.rmSync(userDataDir, { recursive: true, force: true });
	}
	process.exit(exitCode);
}

// Debian's chromium, headless, at 1280x800, with a profile of its own
// (userDataDir: removed by the caller at the end). A chromium that cannot
// start skips the test (exit 77), saying why.
export async function launchChromium() {
	const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sonde-chromium-"));
	try {
		const context = await chromium.launchPersistentContext(userDataDir, {
			executablePath: "/usr/bin/chromium",
			headless: true,
			viewport: { width: 1280, height: 800 },
			args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
				"--disable-component-update", "--disable-sync", "--no-first-run"],
			timeout: 60000,
		});
		return { context, userDataDir };
	} catch (e) {
		console.log("SKIP: chromium cannot start: " + String(e.message).split("\n")[0]);
		fs.rmSync(userDataDir, { recursive: true, force: true });
		process.exit(77);
	}
}

// A screenshot of the page as ARTIFACTS/NAME.png, said in an ok line.
export async function shot(artifacts, page, name) {
	const file = path.join(artifacts, name + ".png");
	await page.screenshot({ path: file });
	ok("screenshot " + file);
}

// Whether the status and hot list the page holds, after the patches it
// applied (status_delta, hot_delta), are what a new client is sent whole
// at the same moment (the same elapsed_s): {same: true, full: the whole
// status's bytes, last: the page's last status event {type, size}, events:
// the page's counts}, or {same: false, why, ...}. Three tries: the page may
// move on to the next status while the new client connects.
export async function patchedIsWhole(page, token) {
	let fresh = null;
	for (let attempt = 0; attempt < 3 && !(fresh && fresh.same); attempt++)
		fresh = await page.evaluate((t) => new Promise((resolve) => {
			const eq = (a, b) => {
				if (a === b) return true;
				if (typeof a !== "object" || typeof b !== "object" || !a || !b || Array.isArray(a) !== Array.isArray(b)) return false;
				const ka = Object.keys(a), kb = Object.keys(b);
				return ka.length === kb.length && ka.every((k) => k in b && eq(a[k], b[k]));
			};
			const es = new EventSource("/api/events?token=" + encodeURIComponent(t));
			const got = {};
			es.addEventListener("status", (e) => { got.status = JSON.parse(e.data); got.size = e.data.length; });
			es.addEventListener("hot", (e) => { got.hot = JSON.parse(e.data); });
			const t0 = performance.now();
			const done = (r) => { es.close(); resolve(r); };
			(function poll() {
				const s = window.sondeState(), ev = window.sondeEvents;
				const at = got.status && s.status && s.status.elapsed_s === got.status.elapsed_s;
				if (at && got.hot && eq(s.status, got.status) && eq(s.hot, got.hot))
					return done({ same: true, full: got.size, last: ev.last.status, events: ev });
				if (got.status && s.status && s.status.elapsed_s > got.status.elapsed_s)
					return done({ same: false, why: "the page moved on to the next status first" });
				if (performance.now() - t0 > 4000)
					return done({ same: false, why: "differs", page: s, fresh: got });
				setTimeout(poll, 5);
			})();
		}), token);
	return fresh;
}

// Waits until a flame graph (not inverted) shows its root and the widest box
// of the function `name` wholly inside the visible part of its box `sel`
// (#flame, #bandflame, #rangeflame); for the main one (#flame), which is
// drawn to its box's height, also that the root stands at the bottom (at
// most 30 px above its bottom edge: the page leaves 20). Fails saying what
// was where after 10 s. `when` says in which state, for the messages.
export async function flameInView(page, sel, name, when) {
	const look = ([s, fn]) => {
		const el = document.querySelector(s);
		const b = el.getBoundingClientRect();
		const box = { top: b.top + el.clientTop, left: b.left + el.clientLeft };
		box.bottom = box.top + el.clientHeight;
		box.right = box.left + el.clientWidth;
		const widest = (q) => {
			const rs = [...el.querySelectorAll(q)].map((r) => r.getBoundingClientRect());
			return rs.length ? rs.reduce((a, r) => (r.width > a.width ? r : a)) : null;
		};
		const root = widest('g.frame[name="all"] rect'), hot = widest(`g.frame[name="${fn}"] rect`);
		const inside = (r) => r && r.height > 0 && r.width > 0 && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5 &&
			r.left >= box.left - 0.5 && r.right <= box.right + 0.5;
		const at = (r) => r && { top: Math.round(r.top), bottom: Math.round(r.bottom), width: Math.round(r.width) };
		return {
			ok: inside(root) && (s !== "#flame" || root.bottom >= box.bottom - 30) && inside(hot),
			box: { top: Math.round(box.top), bottom: Math.round(box.bottom) }, root: at(root), [fn]: at(hot),
		};
	};
	const args = [sel, name];
	try {
		await page.waitForFunction(`(${look})(${JSON.stringify(args)}).ok`, null, { timeout: 10000, polling: 100 });
	} catch {
		fail(`${when}: the flame graph ${sel} is not in its box: ${JSON.stringify(await page.evaluate(look, args))}`);
	}
	const got = await page.evaluate(look, args);
	ok(`${when}: the flame graph ${sel} shows in its box (${got.box.top}..${got.box.bottom} px) its root ${got.root.top}..${got.root.bottom}, ${name} ${got[name].top}..${got[name].bottom}, ${got[name].width} px wide`);
}
