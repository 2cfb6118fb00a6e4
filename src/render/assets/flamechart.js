(function () {
"use strict";
var layer = document.getElementById("frames");
var boxes = Array.prototype.map.call(layer.getElementsByTagName("g"), function (g) {
	return g._box = {g: g, rect: g.getElementsByTagName("rect")[0],
		text: g.getElementsByTagName("text")[0], name: g.getAttribute("data-name"),
		s: Number(g.getAttribute("data-start")), d: Number(g.getAttribute("data-dur")),
		depth: Number(g.getAttribute("data-depth"))};
});
var details = document.getElementById("details");
var matched = document.getElementById("matched");
var unzoomButton = document.getElementById("unzoom");
var resetSearchButton = document.getElementById("resetsearch");
var axis = document.getElementById("axis");
var NS = "http://www.w3.org/2000/svg";
var zs = 0, ze = CFG.dur, lastSearch = "";
function setClass(el, name, on) {
	if (on) el.classList.add(name); else el.classList.remove(name);
}
function boxOf(el) {
	while (el && el !== layer) {
		if (el.classList && el.classList.contains("f")) return el;
		el = el.parentNode;
	}
	return null;
}
function fitLabel(name, width) {
	var room = Math.floor((width - 2 * CFG.labelPad) / CFG.charWidth);
	if (room < CFG.minLabelChars) return "";
	if (name.length <= room) return name;
	var cut = room - 2, last = name.charCodeAt(cut - 1);
	if (last >= 0xd800 && last <= 0xdbff) cut--;
	return name.substring(0, cut) + "..";
}
function place(b) {
	var s = Math.max(b.s, zs), e = Math.min(b.s + b.d, ze);
	var hidden = e < s || (e === s && b.d > 0);
	setClass(b.g, "hide", hidden);
	if (hidden) return;
	var scale = CFG.span / (ze - zs);
	var x = CFG.x0 + (s - zs) * scale, w = (e - s) * scale;
	b.rect.setAttribute("x", x.toFixed(2));
	b.rect.setAttribute("width", w.toFixed(2));
	b.text.setAttribute("x", (x + CFG.labelPad).toFixed(2));
	b.text.textContent = fitLabel(b.name, w);
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
	setClass(unzoomButton, "hide", zs <= 0 && ze >= CFG.dur);
}
function resetZoom() { zoom(0, CFG.dur); }
function covered(spans) {
	spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
	var sum = 0, reach = -Infinity;
	spans.forEach(function (sp) {
		if (sp[1] <= reach) return;
		sum += sp[1] - Math.max(sp[0], reach);
		reach = sp[1];
	});
	return sum;
}
function search(term) {
	var re;
	try { re = new RegExp(term); } catch (err) {
		details.textContent = "Invalid regular expression: " + term;
		return;
	}
	var spans = [];
	boxes.forEach(function (b) {
		var hit = b.depth > 0 && re.test(b.name);
		setClass(b.g, "match", hit);
		if (hit) spans.push([b.s, b.s + b.d]);
	});
	var pct = CFG.sampled > 0 ? 100 * covered(spans) / CFG.sampled : 0;
	matched.textContent = "Matched: " + pct.toFixed(2) + "%";
	setClass(resetSearchButton, "hide", false);
}
function askSearch() {
	var term = window.prompt("Search (regular expression):", lastSearch);
	if (term === null || term === "") return;
	lastSearch = term;
	search(term);
}
function resetSearch() {
	boxes.forEach(function (b) { setClass(b.g, "match", false); });
	matched.textContent = " ";
	setClass(resetSearchButton, "hide", true);
}
layer.addEventListener("click", function (e) {
	var g = boxOf(e.target);
	if (!g) return;
	var b = g._box;
	if (b.depth === 0) resetZoom(); else zoom(b.s, b.d);
});
layer.addEventListener("mouseover", function (e) {
	var g = boxOf(e.target);
	if (g) details.textContent = g.getElementsByTagName("title")[0].textContent;
});
layer.addEventListener("mouseout", function () { details.textContent = " "; });
unzoomButton.addEventListener("click", resetZoom);
document.getElementById("search").addEventListener("click", askSearch);
resetSearchButton.addEventListener("click", resetSearch);
window.addEventListener("keydown", function (e) {
	if ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.keyCode === 70)) {
		e.preventDefault();
		askSearch();
	} else if (e.key === "Escape" || e.keyCode === 27) {
		resetSearch();
	}
});
})();
