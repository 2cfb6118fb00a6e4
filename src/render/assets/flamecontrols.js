/* What flame graphs (flame.js), flame charts (flamechart.js) and the
 * heatmap page's flame graph (heatmap.js) share, as one object, Flame: box
 * labels fitted to their width, the share of samples matches cover, and,
 * for the SVGs, hover details, regex search, and the buttons and keys. */
var Flame = (function () {
"use strict";

function setClass(el, name, on) {
	if (on) el.classList.add(name); else el.classList.remove(name);
}

/* Same rule as the writers: whole name, or its start and "..", or nothing;
 * geometry is {labelPad, charWidth, minLabelChars} (an SVG's CFG). */
function fitLabel(name, width, geometry) {
	var room = Math.floor((width - 2 * geometry.labelPad) / geometry.charWidth);
	if (room < geometry.minLabelChars) return "";
	if (name.length <= room) return name;
	var cut = room - 2;
	var last = name.charCodeAt(cut - 1);
	if (last >= 0xd800 && last <= 0xdbff) cut--; /* keep surrogate pairs whole */
	return name.substring(0, cut) + "..";
}

/* Samples covered by a set of [start, end) spans: nested and repeated
 * matches count once, as a match inside a matched caller adds nothing. */
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

/* The box (an element of class f) el is in, below layer; null if none. */
function boxOf(el, layer) {
	while (el && el !== layer) {
		if (el.classList && el.classList.contains("f")) return el;
		el = el.parentNode;
	}
	return null;
}

/* Wires an SVG's controls to the graph in #frames, whose boxes are the g of class f:
 *   boxes      every box: {g, name, start, end, searchable}; a search
 *              matches searchable boxes by name and counts [start, end)
 *   total      what "Matched: N%" is a share of
 *   zoom(g)    box g was clicked;  unzoom()  "Reset Zoom" was
 *   detail(g)  the text shown while the pointer is on box g */
function controls(graph) {
	var layer = document.getElementById("frames");
	var details = document.getElementById("details");
	var matched = document.getElementById("matched");
	var resetSearchButton = document.getElementById("resetsearch");
	var lastSearch = "";

	function search(term) {
		var re;
		try { re = new RegExp(term); } catch (err) {
			details.textContent = "Invalid regular expression: " + term;
			return;
		}
		var spans = [];
		graph.boxes.forEach(function (b) {
			var hit = b.searchable && re.test(b.name);
			setClass(b.g, "match", hit);
			if (hit) spans.push([b.start, b.end]);
		});
		var percent = graph.total > 0 ? 100 * covered(spans) / graph.total : 0;
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
		graph.boxes.forEach(function (b) { setClass(b.g, "match", false); });
		matched.textContent = " ";
		setClass(resetSearchButton, "hide", true);
	}

	layer.addEventListener("click", function (e) {
		var g = boxOf(e.target, layer);
		if (g) graph.zoom(g);
	});
	layer.addEventListener("mouseover", function (e) {
		var g = boxOf(e.target, layer);
		if (g) details.textContent = graph.detail(g);
	});
	layer.addEventListener("mouseout", function () { details.textContent = " "; });
	document.getElementById("unzoom").addEventListener("click", graph.unzoom);
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
}

return {setClass: setClass, fitLabel: fitLabel, covered: covered, boxOf: boxOf, controls: controls};
})();
