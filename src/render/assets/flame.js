(function () {
"use strict";
var frames = Array.prototype.slice.call(
	document.getElementById("frames").getElementsByTagName("g"));
var details = document.getElementById("details");
var matched = document.getElementById("matched");
var unzoomButton = document.getElementById("unzoom");
var resetSearchButton = document.getElementById("resetsearch");
var lastSearch = "";

function num(g, key) { return Number(g.getAttribute("data-" + key)); }
function setClass(el, name, on) {
	if (on) el.classList.add(name); else el.classList.remove(name);
}
function frameOf(el) {
	while (el && el.getAttribute) {
		if (el.classList && el.classList.contains("f")) return el;
		el = el.parentNode;
	}
	return null;
}
function titleOf(g) { return g.getElementsByTagName("title")[0].textContent; }

/* Same rule as the writer: whole name, or its start and "..", or nothing. */
function fitLabel(name, width) {
	var room = Math.floor((width - 2 * CFG.labelPad) / CFG.charWidth);
	if (room < CFG.minLabelChars) return "";
	if (name.length <= room) return name;
	var cut = room - 2;
	var last = name.charCodeAt(cut - 1);
	if (last >= 0xd800 && last <= 0xdbff) cut--; /* keep surrogate pairs whole */
	return name.substring(0, cut) + "..";
}
function place(g, x, width) {
	var rect = g.getElementsByTagName("rect")[0];
	var text = g.getElementsByTagName("text")[0];
	rect.setAttribute("x", x.toFixed(2));
	rect.setAttribute("width", width.toFixed(2));
	text.setAttribute("x", (x + CFG.labelPad).toFixed(2));
	text.textContent = fitLabel(g.getAttribute("data-name"), width);
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
		setClass(g, "hide", !ancestor && !inside);
		setClass(g, "anc", ancestor);
		if (ancestor) place(g, CFG.x0, CFG.span);
		else if (inside) place(g, CFG.x0 + (s - start) * scale, t * scale);
	});
	setClass(unzoomButton, "hide", depth === 0);
}
function resetZoom() { zoom(0, CFG.total, 0); }

/* Samples covered by a set of [start, end) spans: nested and repeated
 * matches count once, as a match inside a matched caller adds nothing. */
function coveredSamples(spans) {
	spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
	var covered = 0, reach = -Infinity;
	spans.forEach(function (sp) {
		if (sp[1] <= reach) return;
		covered += sp[1] - Math.max(sp[0], reach);
		reach = sp[1];
	});
	return covered;
}
function search(term) {
	var re;
	try { re = new RegExp(term); } catch (err) {
		details.textContent = "Invalid regular expression: " + term;
		return;
	}
	var spans = [];
	frames.forEach(function (g) {
		var hit = re.test(g.getAttribute("data-name"));
		setClass(g, "match", hit);
		if (hit) spans.push([num(g, "start"), num(g, "start") + num(g, "total")]);
	});
	var percent = CFG.total > 0 ? 100 * coveredSamples(spans) / CFG.total : 0;
	matched.textContent = "Matched: " + percent.toFixed(2) + "%";
	setClass(resetSearchButton, "hide", false);
}
function askSearch() {
	var term = window.prompt("Search (regular expression):", lastSearch);
	if (term === null || term === "") return;
	lastSearch = term;
	search(term);
}
function resetSearch() {
	frames.forEach(function (g) { setClass(g, "match", false); });
	matched.textContent = " ";
	setClass(resetSearchButton, "hide", true);
}

var frameLayer = document.getElementById("frames");
frameLayer.addEventListener("click", function (e) {
	var g = frameOf(e.target);
	if (g) zoom(num(g, "start"), num(g, "total"), num(g, "depth"));
});
frameLayer.addEventListener("mouseover", function (e) {
	var g = frameOf(e.target);
	if (g) details.textContent = "Function: " + titleOf(g);
});
frameLayer.addEventListener("mouseout", function () { details.textContent = " "; });
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
