/* A flame chart's zoom in time and its axis (flamechart); Flame
 * (flamecontrols.js) does the rest. Boxes carry their time in ns from the
 * chart's left edge (data-start, data-dur). */
(function () {
"use strict";
var layer = document.getElementById("frames");
var boxes = Array.prototype.map.call(layer.getElementsByTagName("g"), function (g) {
	return g._box = {g: g, rect: g.getElementsByTagName("rect")[0],
		text: g.getElementsByTagName("text")[0], name: g.getAttribute("data-name"),
		s: Number(g.getAttribute("data-start")), d: Number(g.getAttribute("data-dur")),
		depth: Number(g.getAttribute("data-depth"))};
});
var unzoomButton = document.getElementById("unzoom");
var axis = document.getElementById("axis");
var NS = "http://www.w3.org/2000/svg";
var zs = 0, ze = CFG.dur;
function place(b) {
	var s = Math.max(b.s, zs), e = Math.min(b.s + b.d, ze);
	var hidden = e < s || (e === s && b.d > 0);
	Flame.setClass(b.g, "hide", hidden);
	if (hidden) return;
	var scale = CFG.span / (ze - zs);
	var x = CFG.x0 + (s - zs) * scale, w = (e - s) * scale;
	b.rect.setAttribute("x", x.toFixed(2));
	b.rect.setAttribute("width", w.toFixed(2));
	b.text.setAttribute("x", (x + CFG.labelPad).toFixed(2));
	b.text.textContent = Flame.fitLabel(b.name, w, CFG);
}
function tickStep(dur) {
	var want = dur * CFG.minTickPx / CFG.span;
	var mag = Math.pow(10, Math.floor(Math.log10(want > 1 ? want : 1)));
	var steps = [1, 2, 5, 10];
	for (var i = 0; i < steps.length; i++) if (steps[i] * mag >= want) return steps[i] * mag;
	return 10 * mag;
}
function drawAxis() {
	while (axis.firstChild) axis.removeChild(axis.firstChild);
	var dur = ze - zs, step = tickStep(dur), stepMs = step / 1e6;
	var decimals = stepMs >= 1 ? 0 : Math.ceil(-Math.log10(stepMs) - 1e-9);
	var y = CFG.axisY, scale = CFG.span / dur;
	function line(x1, y1, x2, y2) {
		var l = document.createElementNS(NS, "line");
		l.setAttribute("x1", x1); l.setAttribute("y1", y1);
		l.setAttribute("x2", x2); l.setAttribute("y2", y2);
		l.setAttribute("class", "axl");
		axis.appendChild(l);
	}
	line(CFG.x0, y, CFG.x0 + CFG.span, y);
	for (var t = Math.ceil(zs / step) * step; t <= ze + step * 1e-9; t += step) {
		var x = CFG.x0 + (t - zs) * scale;
		line(x, y - 4, x, y);
		var txt = document.createElementNS(NS, "text");
		txt.setAttribute("x", x.toFixed(2));
		txt.setAttribute("y", y - 6);
		var edge = x - CFG.x0 < 30 ? " axs" : CFG.x0 + CFG.span - x < 30 ? " axe" : "";
		txt.setAttribute("class", "axt" + edge);
		txt.textContent = (t / 1e6).toFixed(decimals) + " ms";
		axis.appendChild(txt);
	}
}
function zoom(s, d) {
	if (!(d > 0)) return;
	zs = s; ze = s + d;
	boxes.forEach(place);
	drawAxis();
	Flame.setClass(unzoomButton, "hide", zs <= 0 && ze >= CFG.dur);
}
function resetZoom() { zoom(0, CFG.dur); }

Flame.controls({
	boxes: boxes.map(function (b) {
		return {g: b.g, name: b.name, start: b.s, end: b.s + b.d, searchable: b.depth > 0};
	}),
	total: CFG.sampled,
	zoom: function (g) {
		var b = g._box;
		if (b.depth === 0) resetZoom(); else zoom(b.s, b.d);
	},
	unzoom: resetZoom,
	detail: function (g) { return g.getElementsByTagName("title")[0].textContent; }
});
})();
