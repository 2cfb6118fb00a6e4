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

// The percentile marks and the threshold line of the histogram shown,
// checked against the status the page holds (window.sondeState) and the
// histogram's own axis: each line (p50, p95, p99, the slow threshold) at the
// x the axis gives its value (log scale, from the first and last tick;
// within 1 px: d3's axis draws its ticks half a pixel right, for crisp
// lines), the threshold line there iff the status has a threshold,
// and each label beside its line, inside the SVG, overlapping no other.
// Returns the problems found ([] when none) and what was measured.
export async function histogramMarks(page) {
	return page.evaluate(() => {
		const problems = [];
		const name = document.querySelector("#probes tbody tr.sel")?.dataset.name;
		const p = window.sondeState().status.probes.find((q) => q.name === name);
		if (!p) return { problems: [`no probe selected (${name})`] };
		const svg = document.querySelector("#hist svg");
		const ticks = [...svg.querySelectorAll("g.xaxis g.tick")].map((g) => ({
			v: g.__data__, x: +/translate\(([-\d.]+)/.exec(g.getAttribute("transform"))[1],
		}));
		if (ticks.length < 2) problems.push(`${ticks.length} ticks on the axis`);
		const [a, z] = [ticks[0], ticks[ticks.length - 1]];
		const axisX = (ns) => ticks.length < 2 ? NaN : a.x + ((Math.log(ns) - Math.log(a.v)) / (Math.log(z.v) - Math.log(a.v))) * (z.x - a.x);
		const want = [["p50", p.p50_ns], ["p95", p.p95_ns], ["p99", p.p99_ns]].filter((m) => m[1] > 0);
		const lines = [...svg.querySelectorAll("line.mark")];
		if (lines.length !== want.length) problems.push(`${lines.length} percentile lines, the status has ${want.length}`);
		const at = {};
		for (const [label, ns] of want) {
			const l = lines.find((e) => e.__data__[0] === label);
			at[label] = l && +l.getAttribute("x1");
			if (!l || (ticks.length >= 2 && !(Math.abs(at[label] - axisX(ns)) <= 1))) problems.push(`${label} ${ns} ns: line at ${at[label]}, the axis puts it at ${axisX(ns).toFixed(1)}`);
		}
		const thr = [...svg.querySelectorAll("line.thr")];
		const t = p.slow_threshold_ns;
		if (thr.length !== (t ? 1 : 0)) problems.push(`${thr.length} threshold lines, the status's threshold ${t}`);
		let thrX = null;
		if (t && thr.length) {
			thrX = +thr[0].getAttribute("x1");
			if ((ticks.length >= 2 && !(Math.abs(thrX - axisX(t)) <= 1)) || +thr[0].getAttribute("x2") !== thrX)
				problems.push(`threshold ${t} ns: line at ${thrX}, the axis puts it at ${axisX(t).toFixed(1)}`);
			if (!(thrX >= 0 && thrX <= +svg.getAttribute("width"))) problems.push(`threshold line at ${thrX}, outside the SVG`);
		}
		const sb = svg.getBoundingClientRect();
		const labels = [...svg.querySelectorAll("text.mark")].map((e) => {
			const r = e.getBoundingClientRect();
			return { label: e.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom };
		});
		if (labels.length !== want.length) problems.push(`${labels.length} percentile labels, ${want.length} lines`);
		for (const q of labels) {
			if (q.l < sb.left || q.r > sb.right || q.t < sb.top || q.b > sb.bottom)
				problems.push(`label ${q.label} ${JSON.stringify(q)} outside the SVG ${JSON.stringify([sb.left, sb.right, sb.top, sb.bottom])}`);
			const lx = sb.left + at[q.label];
			if (!(Math.abs(q.l - lx) <= 4 || Math.abs(q.r - lx) <= 4)) problems.push(`label ${q.label} (${q.l.toFixed(1)}..${q.r.toFixed(1)}) is not beside its line at ${lx}`);
		}
		for (let i = 0; i < labels.length; i++)
			for (let j = i + 1; j < labels.length; j++) {
				const [u, v] = [labels[i], labels[j]];
				if (u.l < v.r && v.l < u.r && u.t < v.b && v.t < u.b) problems.push(`labels ${u.label} and ${v.label} overlap: ${JSON.stringify([u, v])}`);
			}
		const fmt = (x) => (x == null ? "-" : x.toFixed(1));
		return {
			problems,
			text: `${want.map(([l, ns]) => `${l} ${ns} ns at x ${fmt(at[l])}`).join(", ")}; threshold ${t} ns at x ${fmt(thrX)} ` +
				`(axis ${t ? axisX(t).toFixed(1) : "-"}); labels ${labels.map((q) => `${q.label} ${q.l.toFixed(0)}..${q.r.toFixed(0)}x${q.t.toFixed(0)}..${q.b.toFixed(0)}`).join(", ")}`,
		};
	});
}
