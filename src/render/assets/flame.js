/* A flame graph's zoom (flamesvg); Flame (flamecontrols.js) does the rest.
 * Frames carry exact sample positions (data-start, data-total, data-depth),
 * so zoom and search are interval arithmetic on counts rather than guesses
 * from rounded pixel geometry. */
(function () {
"use strict";
var frames = Array.prototype.slice.call(
	document.getElementById("frames").getElementsByTagName("g"));
var unzoomButton = document.getElementById("unzoom");

function num(g, key) { return Number(g.getAttribute("data-" + key)); }
function place(g, x, width) {
	var rect = g.getElementsByTagName("rect")[0];
	var text = g.getElementsByTagName("text")[0];
	rect.setAttribute("x", x.toFixed(2));
	rect.setAttribute("width", width.toFixed(2));
	text.setAttribute("x", (x + CFG.labelPad).toFixed(2));
	text.textContent = Flame.fitLabel(g.getAttribute("data-name"), width, CFG);
}

/* Zoom to the frame covering samples [start, start+total) at depth: its
 * ancestors span the width, dimmed; its subtree is rescaled; the rest hides. */
function zoom(start, total, depth) {
	if (!(total > 0)) return;
	var scale = CFG.span / total, end = start + total;
	frames.forEach(function (g) {
		var s = num(g, "start"), t = num(g, "total"), d = num(g, "depth");
		var ancestor = d < depth && s <= start && s + t >= end;
		var inside = d >= depth && s >= start && s + t <= end;
		Flame.setClass(g, "hide", !ancestor && !inside);
		Flame.setClass(g, "anc", ancestor);
		if (ancestor) place(g, CFG.x0, CFG.span);
		else if (inside) place(g, CFG.x0 + (s - start) * scale, t * scale);
	});
	Flame.setClass(unzoomButton, "hide", depth === 0);
}
function resetZoom() { zoom(0, CFG.total, 0); }

Flame.controls({
	boxes: frames.map(function (g) {
		return {g: g, name: g.getAttribute("data-name"), start: num(g, "start"),
			end: num(g, "start") + num(g, "total"), searchable: true};
	}),
	total: CFG.total,
	zoom: function (g) { zoom(num(g, "start"), num(g, "total"), num(g, "depth")); },
	unzoom: resetZoom,
	detail: function (g) {
		return "Function: " + g.getElementsByTagName("title")[0].textContent;
	}
});
})();
