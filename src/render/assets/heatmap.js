/* The heatmap page: the map on a canvas, selection, and a flame graph of
 * the selected samples drawn like flamesvg's (same geometry, colours from
 * the data, click to zoom, hover for details, regex search); labels and the
 * matched share come from Flame (flamecontrols.js, before this script). */
(function () {
"use strict";
var D = JSON.parse(document.getElementById("data").textContent);
var ROWS = D.rows, COLS = D.cols;
var NSPS = 1e9; /* ns per second */

/* ---- samples: absolute offsets (ns from the map's first second) ---- */
var T = new Float64Array(D.t.length);
(function () {
	var acc = 0;
	for (var i = 0; i < D.t.length; i++) { acc += D.t[i]; T[i] = acc; }
})();
var NNODES = D.parent.length + 1; /* node 0 is the empty stack */

function lowerBound(x) { /* first i with T[i] >= x */
	var lo = 0, hi = T.length;
	while (lo < hi) { var mid = (lo + hi) >> 1; if (T[mid] < x) lo = mid + 1; else hi = mid; }
	return lo;
}
function upperBound(x) { /* first i with T[i] > x */
	var lo = 0, hi = T.length;
	while (lo < hi) { var mid = (lo + hi) >> 1; if (T[mid] <= x) lo = mid + 1; else hi = mid; }
	return lo;
}

/* ---- the heat map ---- */
var hm = document.createElement("canvas");
hm.id = "hm";
document.getElementById("hmwrap").appendChild(hm);
var hmDetails = document.getElementById("hmdetails");
var selInfo = document.getElementById("selinfo");
var M = {left: 56, top: 12, right: 12, bottom: 44};
var avail = Math.max(600, document.documentElement.clientWidth - 40);
var CW = Math.max(3, Math.min(20, Math.floor((avail - M.left - M.right) / Math.max(COLS, 1))));
var CH = Math.max(3, Math.min(12, Math.floor(500 / ROWS)));
var GW = COLS * CW, GH = ROWS * CH;
var W = M.left + GW + M.right, H = M.top + GH + M.bottom;
var dpr = window.devicePixelRatio || 1;
hm.width = Math.round(W * dpr); hm.height = Math.round(H * dpr);
hm.style.width = W + "px"; hm.style.height = H + "px";
var ctx = hm.getContext("2d");
var base = document.createElement("canvas");
base.width = hm.width; base.height = hm.height;

function mix(a, b, t) {
	return [0, 1, 2].map(function (i) { return Math.round(a[i] + (b[i] - a[i]) * t); });
}
/* FlameScope's scale: white at 0, #FF5032 at max/2, #E50914 at max. */
function cellColor(n) {
	if (!(n > 0) || !(D.max > 0)) return "rgb(255,255,255)";
	var t = n / D.max, c;
	if (t <= 0.5) c = mix([255, 255, 255], [255, 80, 50], t / 0.5);
	else c = mix([255, 80, 50], [229, 9, 20], (t - 0.5) / 0.5);
	return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
}
function cellX(col) { return M.left + col * CW; }
function cellY(row) { return M.top + row * CH; }
function rowOffsetsMs(row) {
	return [1000 * (ROWS - 1 - row) / ROWS, 1000 * (ROWS - row) / ROWS];
}
function fmtMs(v) { return (Math.round(v * 1000) / 1000).toString(); }

function drawBase() {
	var b = base.getContext("2d");
	b.setTransform(dpr, 0, 0, dpr, 0, 0);
	b.fillStyle = "#fff";
	b.fillRect(0, 0, W, H);
	for (var col = 0; col < COLS; col++) {
		for (var row = 0; row < ROWS; row++) {
			var n = D.cells[col * ROWS + row];
			if (!n) continue;
			b.fillStyle = cellColor(n);
			b.fillRect(cellX(col), cellY(row), CW, CH);
		}
	}
	if (D.capped) { /* columns past the embedded samples */
		var k0 = Math.floor(D.capEnd * ROWS / NSPS) + 1;
		b.fillStyle = "rgba(120,120,120,0.35)";
		for (var k = k0; k < COLS * ROWS; k++) {
			var c = Math.floor(k / ROWS), r = ROWS - 1 - (k % ROWS);
			b.fillRect(cellX(c), cellY(r), CW, CH);
		}
	}
	b.strokeStyle = "#888";
	b.lineWidth = 1;
	b.strokeRect(M.left - 0.5, M.top - 0.5, GW + 1, GH + 1);
	b.fillStyle = "#333";
	b.font = "11px sans-serif";
	/* y: offset within the second, 0 ms at the bottom (row 0 is the end). */
	b.textAlign = "right";
	b.textBaseline = "middle";
	var ystep = GH >= 250 ? 100 : GH >= 120 ? 200 : 500;
	for (var ms = 0; ms <= 1000; ms += ystep) {
		var y = M.top + GH * (1 - ms / 1000);
		b.fillText(String(ms), M.left - 6, y);
		b.fillRect(M.left - 4, Math.round(y) - 0.5, 4, 1);
	}
	b.save();
	b.translate(12, M.top + GH / 2);
	b.rotate(-Math.PI / 2);
	b.textAlign = "center";
	b.fillText("offset (ms)", 0, 0);
	b.restore();
	/* x: seconds from the first one. */
	b.textAlign = "center";
	b.textBaseline = "top";
	var steps = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600];
	var xstep = steps[steps.length - 1];
	for (var i = 0; i < steps.length; i++) if (steps[i] * CW >= 36) { xstep = steps[i]; break; }
	for (var s = 0; s < COLS; s += xstep) {
		var x = cellX(s) + CW / 2;
		b.fillText(String(s), x, M.top + GH + 6);
		b.fillRect(Math.round(x) - 0.5, M.top + GH, 1, 4);
	}
	b.fillText("time (s) from " + D.startLabel, M.left + GW / 2, M.top + GH + 24);
}

/* Cells in time order: k = col * ROWS + (ROWS - 1 - row) covers
 * [k / ROWS, (k + 1) / ROWS) s from the first second. */
function kOf(col, row) { return col * ROWS + (ROWS - 1 - row); }
function cellOfK(k) { return [Math.floor(k / ROWS), ROWS - 1 - (k % ROWS)]; }
function startNsOfK(k) { return Math.ceil(k * NSPS / ROWS); }
function endNsOfK(k) { return Math.floor((k + 1) * NSPS / ROWS); }

var sel = null;     /* {k0, k1, t0, t1}: the range the flame graph shows */
var pending = null; /* first cell of a selection being made */
var hoverK = null, dragging = false;

function redraw() {
	ctx.setTransform(1, 0, 0, 1, 0, 0);
	ctx.drawImage(base, 0, 0);
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	var a = null, b = null;
	if (pending !== null) {
		a = pending; b = hoverK !== null ? hoverK : pending;
	} else if (sel) {
		a = sel.k0; b = sel.k1;
	}
	if (a === null) return;
	if (b < a) { var t = a; a = b; b = t; }
	a = Math.max(a, 0); b = Math.min(b, COLS * ROWS - 1);
	ctx.fillStyle = "rgba(147,110,181,0.45)";
	for (var c = Math.floor(a / ROWS); c <= Math.floor(b / ROWS); c++) {
		/* the column's part of [a, b]: rows from low k (bottom) to high k (top) */
		var lo = Math.max(a, c * ROWS), hi = Math.min(b, c * ROWS + ROWS - 1);
		var rTop = ROWS - 1 - (hi - c * ROWS), rBottom = ROWS - 1 - (lo - c * ROWS);
		ctx.fillRect(cellX(c), cellY(rTop), CW, (rBottom - rTop + 1) * CH);
	}
}

function cellAt(ev) {
	var r = hm.getBoundingClientRect();
	var x = ev.clientX - r.left - M.left, y = ev.clientY - r.top - M.top;
	if (x < 0 || y < 0 || x >= GW || y >= GH) return null;
	return kOf(Math.floor(x / CW), Math.floor(y / CH));
}
function cellText(k) {
	var c = cellOfK(k), off = rowOffsetsMs(c[1]);
	var n = D.cells[c[0] * ROWS + c[1]];
	return "second " + c[0] + ", offset " + fmtMs(off[0]) + "\u2013" + fmtMs(off[1]) +
		" ms: " + n + " sample" + (n === 1 ? "" : "s");
}
function fmtS(ns) { /* seconds with up to 9 decimals, no trailing zeros */
	var s = (ns / NSPS).toFixed(9).replace(/0+$/, "").replace(/\.$/, "");
	return s === "-0" ? "0" : s;
}

/* The selection's time range, as the C side computes it. */
function selectCells(ka, kb) {
	if (kb < ka) { var t = ka; ka = kb; kb = t; }
	selectRange(startNsOfK(ka), endNsOfK(kb), ka, kb);
}
function selectRange(t0, t1, ka, kb) {
	if (ka === undefined) {
		ka = Math.max(0, Math.floor(t0 * ROWS / NSPS));
		kb = Math.max(ka, Math.ceil(t1 * ROWS / NSPS) - 1);
	}
	sel = {k0: ka, k1: kb, t0: t0, t1: t1};
	pending = null;
	redraw();
	var h = "#range=" + fmtS(t0) + "-" + fmtS(t1);
	if (window.location.hash !== h) {
		try { history.replaceState(null, "", h); } catch (e) { window.location.hash = h; }
	}
	showFlame();
}
function clearPending() { pending = null; dragging = false; redraw(); }

hm.addEventListener("mousemove", function (ev) {
	var k = cellAt(ev);
	hoverK = k;
	hmDetails.textContent = k === null ? "\u00a0" : cellText(k);
	if (pending !== null) redraw();
});
hm.addEventListener("mouseleave", function () {
	hoverK = null;
	hmDetails.textContent = "\u00a0";
	if (pending !== null) redraw();
});
hm.addEventListener("mousedown", function (ev) {
	var k = cellAt(ev);
	if (k === null) return;
	ev.preventDefault();
	if (pending === null) {
		pending = k; hoverK = k; dragging = true;
		selInfo.textContent = "Start: " + cellText(k) + " \u2014 now click (or release on) the end cell.";
		redraw();
	} else {
		dragging = false;
		selectCells(pending, k);
	}
});
hm.addEventListener("mouseup", function (ev) {
	if (!dragging) return;
	dragging = false;
	var k = cellAt(ev);
	if (k !== null && pending !== null && k !== pending) selectCells(pending, k);
});
window.addEventListener("keydown", function (e) {
	if (e.key === "Escape" && pending !== null) {
		clearPending();
		selInfo.textContent = "\u00a0";
	}
});
document.getElementById("all").addEventListener("click", function () {
	if (T.length) selectRange(0, COLS * NSPS);
});

/* ---- the flame graph of a range ---- */
var fg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
fg.id = "fg";
fg.setAttribute("width", "0");
fg.setAttribute("height", "0");
document.getElementById("fgwrap").appendChild(fg);
var FH = 16, FONT = 12, CHARW = 0.6 * FONT, PAD = 3, MINW = 0.1, X0 = 10;
var LABELS = {labelPad: PAD, charWidth: CHARW, minLabelChars: 3}; /* as flamesvg's */
var tree = null, zoomed = null, lastSearch = "", searchRe = null;

function esc(s) {
	return s.replace(/&/g, "&amp;").replace(/[<]/g, "&lt;").replace(/>/g, "&gt;")
		.replace(/"/g, "&quot;");
}

function buildTree(i0, i1) {
	var root = {fn: -1, name: "all", total: 0, self: 0, kids: new Map(), parent: null};
	var memo = new Map();
	function child(n, fn) {
		var c = n.kids.get(fn);
		if (!c) {
			c = {fn: fn, name: D.names[fn], total: 0, self: 0, kids: new Map(), parent: n};
			n.kids.set(fn, c);
		}
		return c;
	}
	function nodeOf(comm, node) {
		var key = comm * NNODES + node, n = memo.get(key);
		if (n) return n;
		var chain = [];
		var cur = node;
		while (cur !== 0) {
			n = memo.get(comm * NNODES + cur);
			if (n) break;
			chain.push(cur);
			cur = D.parent[cur - 1];
		}
		if (cur === 0) {
			n = memo.get(comm * NNODES);
			if (!n) { n = child(root, D.comms[comm]); memo.set(comm * NNODES, n); }
		}
		for (var i = chain.length - 1; i >= 0; i--) {
			n = child(n, D.func[chain[i] - 1]);
			memo.set(comm * NNODES + chain[i], n);
		}
		return n;
	}
	for (var i = i0; i < i1; i++) nodeOf(D.c[i], D.s[i]).self++;
	var maxDepth = 0;
	(function total(n, depth) {
		if (depth > maxDepth) maxDepth = depth;
		var sum = n.self;
		var kids = Array.from(n.kids.values());
		kids.sort(function (a, b) { return a.name < b.name ? -1 : a.name > b.name ? 1 : a.fn - b.fn; });
		var start = n.start;
		kids.forEach(function (k) { k.start = start; k.depth = depth + 1; start += total(k, depth + 1); sum += k.total; });
		n.kids = kids;
		n.total = sum;
		return sum;
	})(Object.assign(root, {start: 0, depth: 0}), 0);
	root.levels = maxDepth + 1;
	return root;
}

function showFlame() {
	if (!sel) return;
	var i0 = lowerBound(sel.t0), i1 = upperBound(sel.t1);
	tree = buildTree(i0, i1);
	tree.i0 = i0; tree.i1 = i1;
	zoomed = tree;
	selInfo.textContent = "Range " + fmtS(sel.t0) + " s \u2013 " + fmtS(sel.t1) +
		" s from second 0: " + (i1 - i0) + " sample" + (i1 - i0 === 1 ? "" : "s") +
		" (start \u2264 t \u2264 end). Link: " + window.location.hash;
	renderFlame();
}

function renderFlame() {
	var width = Math.max(600, Math.min(document.getElementById("fgwrap").clientWidth, 2400));
	var span = width - 2 * X0;
	var top = 3 * FONT + 18, levels = tree.levels;
	var height = top + levels * FH + 2 * FONT + 10;
	var z = zoomed, scale = z.total > 0 ? span / z.total : 0;
	var out = [], matchedSpans = [];
	function y(depth) { return top + (levels - 1 - depth) * FH; }
	function box(n, x, w, anc) {
		var label = n.fn < 0 ? "all" : n.name;
		var color = n.fn < 0 ? D.rootColor : D.colors[n.fn];
		var hit = searchRe && n.fn >= 0 && searchRe.test(label);
		if (hit) matchedSpans.push([n.start, n.start + n.total]);
		out.push("<g class=\"f" + (anc ? " anc" : "") + (hit ? " match" : "") + "\" data-id=\"" +
			nodes.length + "\"><rect x=\"" + x.toFixed(2) + "\" y=\"" + y(n.depth) +
			"\" width=\"" + w.toFixed(2) + "\" height=\"" + (FH - 1) + "\" fill=\"" + color +
			"\" rx=\"2\" ry=\"2\"/><text x=\"" + (x + PAD).toFixed(2) + "\" y=\"" +
			(y(n.depth) + FH - 4.5) + "\">" + esc(Flame.fitLabel(label, w, LABELS)) + "<\/text><\/g>");
		nodes.push(n);
	}
	var nodes = [];
	for (var a = z.parent, chain = []; a; a = a.parent) chain.unshift(a);
	chain.forEach(function (n) { box(n, X0, span, true); });
	(function walk(n) {
		var w = n === z ? span : n.total * scale;
		if (n !== tree && n !== z && w < MINW) return;
		if (n.total === 0 && n !== tree) return;
		box(n, X0 + (n.start - z.start) * scale, w, false);
		n.kids.forEach(walk);
	})(z);
	var title = "Flame Graph";
	var sub = "range " + fmtS(sel.t0) + "\u2013" + fmtS(sel.t1) + " s: " + tree.total + " sample" + (tree.total === 1 ? "" : "s");
	var matchedText = "\u00a0";
	if (searchRe) {
		var cov = Flame.covered(matchedSpans);
		matchedText = "Matched: " + (tree.total ? 100 * cov / tree.total : 0).toFixed(2) + "%";
	}
	fg.setAttribute("width", width);
	fg.setAttribute("height", height);
	fg.setAttribute("viewBox", "0 0 " + width + " " + height);
	fg.innerHTML =
		"<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">" +
		"<stop offset=\"5%\" stop-color=\"#f4f4f4\"/><stop offset=\"95%\" stop-color=\"#e8e8d8\"/>" +
		"<\/linearGradient><\/defs><rect x=\"0\" y=\"0\" width=\"" + width + "\" height=\"" + height +
		"\" fill=\"url(#bg)\"/>" +
		"<text id=\"fgtitle\" x=\"" + width / 2 + "\" y=\"" + 2 * FONT + "\">" + title + "<\/text>" +
		"<text id=\"fgsub\" x=\"" + width / 2 + "\" y=\"" + (2 * FONT + 18) + "\">" + esc(sub) + "<\/text>" +
		"<text id=\"unzoom\" class=\"ctl" + (zoomed === tree ? " hide" : "") + "\" x=\"" + X0 +
		"\" y=\"" + 2 * FONT + "\">Reset Zoom<\/text>" +
		"<text id=\"search\" class=\"ctl\" x=\"" + (width - X0) + "\" y=\"" + 2 * FONT + "\">Search<\/text>" +
		"<text id=\"resetsearch\" class=\"ctl" + (searchRe ? "" : " hide") + "\" x=\"" + (width - X0 - 70) +
		"\" y=\"" + 2 * FONT + "\">Reset Search<\/text>" +
		"<g id=\"frames\">" + out.join("") + "<\/g>" +
		"<text id=\"details\" x=\"" + X0 + "\" y=\"" + (height - FONT) + "\">\u00a0<\/text>" +
		"<text id=\"matched\" x=\"" + (width - X0) + "\" y=\"" + (height - FONT) + "\">" + matchedText + "<\/text>";
	fg.nodesDrawn = nodes;
}

function describe(n) {
	var label = n.fn < 0 ? "all" : n.name;
	var pct = tree.total ? 100 * n.total / tree.total : 0;
	return "Function: " + label + " (" + n.total.toLocaleString("en-US") + " samples, " +
		pct.toFixed(2) + "%)";
}
function askSearch() {
	var term = window.prompt("Search (regular expression):", lastSearch);
	if (term === null || term === "") return;
	try { searchRe = new RegExp(term); } catch (err) { return; }
	lastSearch = term;
	if (tree) renderFlame();
}
fg.addEventListener("click", function (ev) {
	var t = ev.target;
	if (t.id === "unzoom") { zoomed = tree; renderFlame(); return; }
	if (t.id === "search") { askSearch(); return; }
	if (t.id === "resetsearch") { searchRe = null; renderFlame(); return; }
	var g = Flame.boxOf(t, fg);
	if (!g) return;
	var n = fg.nodesDrawn[Number(g.getAttribute("data-id"))];
	zoomed = n.total > 0 ? n : tree;
	renderFlame();
});
fg.addEventListener("mouseover", function (ev) {
	var g = Flame.boxOf(ev.target, fg);
	var d = document.getElementById("details");
	if (g && d) d.textContent = describe(fg.nodesDrawn[Number(g.getAttribute("data-id"))]);
});
fg.addEventListener("mouseout", function () {
	var d = document.getElementById("details");
	if (d) d.textContent = "\u00a0";
});
window.addEventListener("keydown", function (e) {
	if (!tree) return;
	if ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.keyCode === 70)) {
		e.preventDefault();
		askSearch();
	} else if (e.key === "Escape" && searchRe) {
		searchRe = null;
		renderFlame();
	}
});

/* ---- start ---- */
function fromHash() {
	var m = /(?:^#|&)range=([0-9.]+)-([0-9.]+)/.exec(window.location.hash);
	if (!m) return false;
	var t0 = Math.round(parseFloat(m[1]) * NSPS), t1 = Math.round(parseFloat(m[2]) * NSPS);
	if (!(t0 <= t1)) return false;
	selectRange(t0, t1);
	return true;
}
drawBase();
redraw();
if (!fromHash()) selInfo.textContent = "\u00a0";
window.addEventListener("hashchange", fromHash);
})();
