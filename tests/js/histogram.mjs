// histogram.mjs — the serve page's latency histogram as the page checks
// (check_page.mjs, check_recording.mjs) read and brush it.

// The modes the page found in the histogram's KDE curve (ns), and the two
// the requests target has: ~100us (parse_request alone) and ~2ms more
// (slow_path). A busy machine lengthens both (up to 10 ms was seen for the
// slow one), so they are looked for within wide bounds, at least 5x apart.
export async function histogramModes(page) {
	const modes = (await page.$eval("#hist", (h) => h.dataset.modes)).split(",").map(Number);
	const fast = modes.find((m) => m >= 60e3 && m <= 1e6);
	const slow = modes.find((m) => m >= 1.2e6 && m <= 30e6 && fast && m >= 5 * fast);
	return { modes, fast, slow };
}

// Drags the brush over every bucket from minNs up. Returns the number of
// buckets brushed, or 0 when no bucket starts at minNs or above.
export async function brushFrom(page, minNs) {
	const span = await page.evaluate((lo) => {
		const bars = [...document.querySelectorAll("#hist rect.bar")];
		const from = bars.filter((b) => +b.dataset.lo >= lo);
		if (!from.length) return null;
		const a = from[0].getBoundingClientRect(), z = bars[bars.length - 1].getBoundingClientRect();
		return { x0: a.left - 0.5, x1: z.right + 2, y: a.bottom - 3, n: from.length };
	}, minNs);
	if (!span) return 0;
	// The press must reach the brush: a bar, mark or curve drawn above it
	// (as when buckets appeared after the first draw) takes it instead and
	// no band is brushed.
	const onTop = await page.evaluate(({ x, y }) => {
		const above = [...document.querySelectorAll("#hist svg > g.brush ~ *")];
		if (above.length) return `${above.length} elements drawn after it, first ${above[0].outerHTML.slice(0, 120)}`;
		const e = document.elementFromPoint(x, y);
		return e && e.closest("#hist g.brush") ? null : e ? e.outerHTML.slice(0, 120) : "nothing";
	}, { x: span.x0, y: span.y });
	if (onTop) throw new Error(`the histogram's brush is under ${onTop} where the drag starts`);
	await page.mouse.move(span.x0, span.y);
	await page.mouse.down();
	await page.mouse.move(span.x1, span.y, { steps: 5 });
	await page.mouse.up();
	return span.n;
}
