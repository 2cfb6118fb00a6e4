// pagekit.mjs — what the page checks (check_page.mjs, check_recording.mjs)
// share: their ok/fail lines and headless Debian chromium.
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
