/* sonde serve's page. It holds the flame tree the server streams as deltas
 * (src/web/flamedelta.h) in `nodes`, by id, and draws it with d3-flame-graph
 * from the same node objects every time, so zoom (flags on the nodes) and
 * search (a flag this page sets) survive updates. Everything else comes
 * from the `status` and `hot` events (src/web/webapi.h), and every control
 * is a command line POSTed to /api/command, as typed in sonde top. */
(function () {
"use strict";

var token = new URLSearchParams(window.location.search).get("token") || "";
var $ = function (id) { return document.getElementById(id); };

/* ---- colours: every node and function comes with the colour the SVG
 * flame graphs give it ("#rrggbb", render/flamesvg.c's palette: by kind,
 * a shade by name), so a function looks the same here and in the SVGs --- */
var MATCH_COLOR = "rgb(230,0,230)"; /* the SVGs' search match */

/* ---- the flame tree, by the server's node ids --------------------------- */
var nodes = new Map(); /* id -> {id, name, kind, value (total), self, parent, children} */
var root = null;
var fractional = false;

/* Adds the node of an "added" row [ID, PARENT, name, kind, TOTAL, SELF]
 * to byId, under its parent (added before it); returns it. */
function addNode(byId, a) {
	var n = {id: a[0], name: a[2], kind: a[3], value: a[4], self: a[5], parent: null, children: [],
		color: a[6]};
	var p = byId.get(a[1]);
	if (p) { n.parent = p; p.children.push(n); }
	byId.set(n.id, n);
	return n;
}

/* A node's place as the names from the root down: what finds it again
 * after a full message, whose ids are new. */
function pathOf(n) {
	var p = [];
	for (; n && n.parent; n = n.parent) p.unshift(n.name);
	return p;
}
function findPath(p) {
	var n = root;
	for (var i = 0; n && i < p.length; i++)
		n = n.children.find(function (c) { return c.name === p[i]; });
	return n || null;
}

function applyFlame(m) {
	/* full messages come at the start, after a missed event and whenever
	 * the server renumbers its ids: the zooms and the selection stay on the
	 * same frames */
	var zoomPaths = m.full ? zooms.map(pathOf) : null, selPath = m.full && selected ? pathOf(selected) : null;
	if (m.full) { nodes.clear(); root = null; zooms = []; selected = null; }
	fractional = m.fractional;
	m.removed.forEach(function (id) {
		var n = nodes.get(id);
		if (!n) return;
		if (n.parent) {
			var sib = n.parent.children;
			var i = sib.indexOf(n);
			if (i >= 0) sib.splice(i, 1);
		}
		(function forget(x) { nodes.delete(x.id); x.children.forEach(forget); })(n);
	});
	m.added.forEach(function (a) {
		var n = addNode(nodes, a);
		if (!n.parent) root = n;
	});
	m.changed.forEach(function (c) {
		var n = nodes.get(c[0]);
		if (n) { n.value = c[1]; n.self = c[2]; }
	});
	if (root) root.value = m.total;
	if (zoomPaths) zooms = zoomPaths.map(findPath).filter(function (n) { return n; });
	if (selPath) selected = findPath(selPath);
}

function samples(v) { return fractional ? v / 1000 : v; }
function fmtCount(v) {
	v = samples(v);
	return v >= 100 || !fractional ? Math.round(v).toString() : v.toFixed(1);
}
/* The live view's weights: samples, or ns in an off-CPU or wall-clock view
 * (the status's time: serve --off-cpu, --wall) */
var timeView = false;
function fmtWeight(v) { return timeView ? fmtNs(samples(v)) : fmtCount(v) + " samples"; }
function pct(part, whole) { return whole > 0 ? (100 * part / whole) : 0; }

/* ---- search: regex on names, share covered by matched frames ---------- */
var searchRe = null, searchTerm = "";
var matches = []; /* matched nodes, outermost first, heaviest first */
var matchCursor = -1;

function runSearch() {
	matches = [];
	var covered = 0;
	nodes.forEach(function (n) { n.match = false; });
	if (searchRe && root) {
		/* a match inside a matched caller adds nothing to the share */
		var walk = function (n, inside) {
			var hit = n !== root && searchRe.test(n.name);
			n.match = hit;
			if (hit) matches.push(n);
			if (hit && !inside) covered += n.value;
			n.children.forEach(function (c) { walk(c, inside || hit); });
		};
		walk(root, false);
		matches.sort(function (a, b) { return b.value - a.value; });
	}
	var el = $("matched");
	if (!searchRe) { el.textContent = ""; $("flame").dataset.matched = ""; return; }
	var share = root ? pct(covered, root.value) : 0;
	el.textContent = "Matched: " + share.toFixed(2) + "% (" + matches.length + " frames)";
	$("flame").dataset.matched = share.toFixed(4);
}

function setSearch(term) {
	searchTerm = term;
	$("search").value = term;
	$("search").classList.remove("bad");
	searchRe = null;
	if (term) {
		try { searchRe = new RegExp(term); } catch (e) {
			$("matched").textContent = "bad regex: " + e.message;
			$("search").classList.add("bad");
		}
	}
	matchCursor = -1;
	runSearch();
	document.querySelectorAll("#hot tbody tr").forEach(function (tr) {
		tr.classList.toggle("sel", !!searchRe && tr.dataset.re === term);
	});
	draw();
}

/* ---- the chart ----------------------------------------------------------- */
var chart = null;
/* Zoom is a stack, as in sonde top: z (or a click) zooms into a frame, Z
 * goes back to the previous zoom. z takes the selected frame: the last one
 * pointed at, clicked, or gone to with n/N. */
var zooms = [];
var selected = null;
function zoomTop() { return zooms.length ? zooms[zooms.length - 1] : null; }
var inverted = false;
var paused = false;

function makeChart() {
	var el = $("flame");
	el.innerHTML = "";
	chart = flamegraph.default() /* the UMD build exports the factory as default */
		.width(Math.max(300, el.clientWidth - 18))
		.cellHeight(18)
		.transitionDuration(200)
		.minFrameSize(1)
		.sort(true)
		.inverted(inverted)
		.minHeight(inverted ? 0 : el.clientHeight - 20) /* a flame graph's root at the bottom */
		.selfValue(false)
		.getName(function (d) { return d.data.name; })
		.getChildren(function (d) { return d.children; })
		.setColorMapper(function (d) { return d.data.match ? MATCH_COLOR : d.data.color; })
		.setSearchHandler(function () {})
		.setDetailsHandler(function (text) { $("details").textContent = text || ""; })
		.setLabelHandler(function (d) {
			var n = d.data;
			return n.name + " (" + n.kind + ") " + fmtWeight(n.value) + ", " +
				pct(n.value, root.value).toFixed(2) + "%, self " + (timeView ? fmtNs(samples(n.self)) : fmtCount(n.self));
		})
		/* d3-flame-graph has zoomed already, as zoomFlags would */
		.onHover(function (d) { selected = d.data; markSelected(); })
		.onClick(function (d) {
			selected = d.data;
			if (d.data === root) zooms = [];
			else if (zoomTop() !== d.data) zooms.push(d.data);
			markSelected();
		});
	chart.setDetailsElement($("details"));
}

/* The zoom flags d3-flame-graph reads: ancestors of the zoomed node faded,
 * their other children hidden. Set again after each update, as nodes come
 * and go. */
function zoomFlags() {
	nodes.forEach(function (n) { n.fade = false; n.hide = false; });
	var z = zoomTop();
	if (!z) return;
	for (var c = z, p = c.parent; p; c = p, p = p.parent) {
		p.fade = true;
		p.children.forEach(function (s) { if (s !== c) s.hide = true; });
	}
}

function draw() {
	var el = $("flame");
	el.dataset.nodes = nodes.size;
	el.dataset.total = root ? samples(root.value) : 0;
	if (paused) return;
	if (!root || root.value <= 0) {
		chart = null;
		el.innerHTML = "<div class=\"empty\">No samples in view yet.</div>";
		return;
	}
	var here = function (n) { return nodes.get(n.id) === n; };
	zooms = zooms.filter(here);
	if (selected && !here(selected)) selected = null;
	zoomFlags();
	if (!chart) {
		makeChart();
		d3.select(el).datum(root).call(chart.height(null));
	} else {
		/* the pane's height changes as the status line wraps */
		chart.minHeight(inverted ? 0 : el.clientHeight - 20).height(null).update(root);
	}
	keepRoot();
	markSelected();
	$("flametitle").textContent = (inverted ? "Icicle" : "Flame graph") + ": " + fmtWeight(root.value) +
		(timeView ? {"off-cpu": " off the CPU", wall: " of wall-clock time", wakers: " of waits woken"}[timeKind] || "" : "") +
		(fractional ? " (EWMA)" : "") + ", " + nodes.size + " frames";
}

/* A flame graph stands on its root: when it is higher than its box, the box
 * stays scrolled as far from the bottom as the person left it (at first: at
 * the bottom, the root in view), whatever the box's or the graph's height. */
var flameFromBottom = 0;
$("flame").addEventListener("scroll", function () {
	var el = $("flame");
	flameFromBottom = Math.max(0, el.scrollHeight - el.scrollTop - el.clientHeight);
});
function keepRoot() {
	var el = $("flame");
	if (!inverted) el.scrollTop = el.scrollHeight - el.clientHeight - flameFromBottom;
}

/* The selected frame outlined (d3-flame-graph sets each frame's class at
 * every update) */
function markSelected() {
	d3.select("#flame").selectAll("g.frame").classed("sel", function (d) { return d.data === selected; });
}

function resetZoom() { zooms = []; draw(); }

function zoomIn() {
	var n = selected;
	if (!n) { say("z: no frame selected: point at one, or go to a match with n", true); return; }
	if (n === root) { resetZoom(); return; }
	if (zoomTop() === n) { say("z: already zoomed into " + n.name + " (Z: zoom out)", true); return; }
	zooms.push(n);
	draw();
	say("zoomed into " + n.name + " (Z or Backspace: zoom out)", false);
}

function zoomOut() {
	if (!zooms.length) { say("not zoomed", true); return; }
	selected = zooms.pop(); /* the frame that was zoomed into, as sonde top */
	draw();
	say(zooms.length ? "zoomed out to " + zoomTop().name : "zoomed out: the whole graph", false);
}

/* Selects the next or previous match, as sonde top does; when the zoom
 * hides it (it is neither inside the zoomed frame nor one of its callers),
 * zoomed out until it shows. */
function nextMatch(step) {
	if (!searchRe) { say("no search: / to search", true); return; }
	if (!matches.length) { say("no match for " + searchTerm, true); return; }
	matchCursor = (matchCursor + step + matches.length) % matches.length;
	var m = selected = matches[matchCursor];
	var shows = function (z) {
		for (var a = m; a; a = a.parent) if (a === z) return true; /* inside z */
		for (a = z; a; a = a.parent) if (a === m) return true; /* a caller of z */
		return false;
	};
	while (zooms.length && !shows(zoomTop())) zooms.pop();
	draw();
	$("details").textContent = "match " + (matchCursor + 1) + "/" + matches.length + ": " + m.name + " (z: zoom into it)";
}

/* ---- status, hot functions, probes ------------------------------------ */
function fmtNs(ns) {
	if (ns === null || ns === undefined) return "-";
	if (ns < 1e3) return ns.toFixed(0) + "ns";
	if (ns < 1e6) return (ns / 1e3).toFixed(ns < 1e4 ? 1 : 0) + "us";
	if (ns < 1e9) return (ns / 1e6).toFixed(ns < 1e7 ? 1 : 0) + "ms";
	return (ns / 1e9).toFixed(2) + "s";
}
function fmtRate(r) { return r >= 100 ? r.toFixed(0) : r.toFixed(1); }
function esc(s) {
	return String(s).replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
}
function reQuote(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

var timeKind = "on-cpu";
function showStatus(st) {
	timeKind = st.time || "on-cpu";
	timeView = timeKind !== "on-cpu";
	var parts = [
		"<b>target</b> " + esc(st.target), "<b>sampling</b> " + esc(st.sampling),
		"<b>window</b> " + esc(st.window), "<b>view</b> " + esc(st.view),
	];
	if (st.filter && st.filter !== "none") parts.push("<b>filter</b> " + esc(st.filter));
	if (timeView) parts.push("<b>time</b> " + esc(st.time));
	parts.push("<b>samples/s</b> " + fmtRate(st.samples_per_s));
	parts.push("<span class=\"" + (st.drops ? "drops" : "") + "\" title=\"" + esc(st.drops_detail || "") +
		"\"><b>drops</b> " + st.drops + "</span>");
	$("status").innerHTML = parts.map(function (x) { return "<span>" + x + "</span>"; }).join(" ");
	var rows = st.probes.map(function (p) {
		if (p.kind === "line") return lineRow(p);
		/* an untraced probe stays listed with what it gathered */
		return "<tr data-name=\"" + esc(p.name) + "\"" + (p.attached ? "" : " class=\"detached\"") +
			"><td class=\"name\" title=\"" + esc(p.name) +
			/* with a predicate, the row is the calls where it held */
			(p.predicate ? " if " + esc(p.predicate) + ": " + p.total_calls + " of " + p.entered + " calls entered" : "") +
			(p.attached ? "" : ": untraced, what it gathered stays") + "\">" + esc(p.name) +
			"</td><td>" + fmtRate(p.calls_per_s) + "</td><td>" +
			fmtNs(p.p50_ns) + "</td><td>" + fmtNs(p.p95_ns) + "</td><td>" + fmtNs(p.p99_ns) + "</td><td>" +
			fmtNs(p.slow_threshold_ns) + (p.slow_threshold_note ? " <span class=\"thrnote\">(" +
			esc(p.slow_threshold_note) + ")</span>" : "") + "</td><td>" + (p.attached ?
			"<button type=\"button\" class=\"untrace\" title=\"untrace " + esc(p.name) + "\">&#215;</button>" : "") +
			"</td></tr>";
	});
	var body = document.querySelector("#probes tbody");
	var html = rows.join("") || "<tr><td class=\"name\" colspan=\"7\">none: trace a function below</td></tr>";
	if (body.innerHTML.replace(/ class="sel"| sel/g, "") !== html) body.innerHTML = html;
	showHist(st.probes);
}

/* A line probe (trace FILE:LINE) has hits, no durations: its hits and in
 * which calls of the traced functions it ran, as sonde report says it
 * (the status's in_calls, model/linecalls.h) */
function lineInCalls(p, c) {
	var t = (p.predicate ? "matched" : "ran") + " in " + (100 * c.share).toFixed(1) + "% of the calls of " + c.probe +
		" (" + c.hit + " of " + c.calls + ")";
	if (c.slow_recorded) t += " and in " + (100 * c.slow_share).toFixed(1) + "% of its slow calls (over " + fmtNs(c.slow_ns) +
		": " + c.slow_hit + " of " + c.slow_recorded + " with a record)";
	return t;
}
/* One captured variable as sonde report shows it: "v (unsigned long):
 * 18999 read; min 1, max 1; top: 1 x18999" (strings quoted) */
function valueText(name, v) {
	var t = name + " (" + v.type + "): " + v.count + " read";
	if (v.optimized_out) t += ", " + v.optimized_out + " optimized out";
	if (v.unavailable)
		t += ", " + v.unavailable + (/^python /.test(v.type) ?
			" where the function has no argument or local of that name" :
			" not available at this address");
	if (v.read_errors) t += ", " + v.read_errors + " read errors";
	if ("min" in v) t += "; min " + v.min + ", max " + v.max;
	/* strings (char arrays and char *) quoted; numbers, enumerators, pointers as they are */
	var str = /char\s*(\*|\[)/.test(v.type);
	if (v.top.length) t += "; top: " + v.top.map(function (x) {
		return (str ? JSON.stringify(x[0]) : String(x[0])) + " x" + x[1];
	}).join(", ");
	return t;
}
function lineRow(p) {
	var info = "<div class=\"hits\">" + p.total_calls + " hit" + (p.total_calls === 1 ? "" : "s") +
		(p.predicate ? " where " + esc(p.predicate) : "") + "</div>" +
		p.in_calls.map(function (c) { return "<div class=\"incalls\" data-probe=\"" + esc(c.probe) + "\">" + esc(lineInCalls(p, c)) + "</div>"; }).join("") +
		Object.keys(p.values || {}).map(function (k) {
			return "<div class=\"values\" data-var=\"" + esc(k) + "\">" + esc(valueText(k, p.values[k])) + "</div>";
		}).join("");
	return "<tr data-name=\"" + esc(p.name) + "\" data-kind=\"line\" class=\"line" + (p.attached ? "" : " detached") +
		"\"><td class=\"name\" title=\"" + esc(p.name) + ": a line" + (p.attached ? "" : ", untraced: what it gathered stays") + "\">" +
		esc(p.name) + "</td><td colspan=\"5\" class=\"lineinfo\">" + info + "</td><td>" + (p.attached ?
		"<button type=\"button\" class=\"untrace\" title=\"untrace " + esc(p.name) + "\">&#215;</button>" : "") + "</td></tr>";
}

function showHot(h) {
	var total = h.total;
	var body = document.querySelector("#hot tbody");
	body.innerHTML = h.functions.map(function (f) {
		var re = "^" + reQuote(f.name) + "$";
		return "<tr data-name=\"" + esc(f.name) + "\" data-re=\"" + esc(re) + "\"" + (searchRe && re === searchTerm ? " class=\"sel\"" : "") +
			"><td class=\"name\" title=\"" + esc(f.name) + " (" + esc(f.kind) + ")\"><span class=\"swatch\" style=\"background:" +
			esc(f.color) + "\"></span>" + esc(f.name) + "</td><td>" + pct(f.self, total).toFixed(1) +
			"%</td><td>" + pct(f.total, total).toFixed(1) + "%</td></tr>";
	}).join("");
}

/* ---- one probe's latency histogram; a band brushed on it -> the flame
 * graph of the samples inside exactly those calls, against the others ---- */
var histProbe = null; /* the probe shown, by name */
var band = null;      /* {lo, hi} ns: the band brushed, or null */
var lastProbes = [];
var HW = 378, HH = 130, HM = {l: 36, r: 8, t: 8, b: 18};
var brush = null, histX = null;
var brushing = false; /* a person is dragging: redraws leave the selection alone */

function showHist(probes) {
	lastProbes = probes;
	var p = probes.find(function (q) { return q.name === histProbe; });
	if (!p) {
		p = probes.find(function (q) { return q.attached && q.kind !== "line"; }) || null;
		histProbe = p ? p.name : null;
		band = null;
	}
	document.querySelectorAll("#probes tbody tr").forEach(function (tr) {
		tr.classList.toggle("sel", tr.dataset.name === histProbe);
	});
	$("histprobe").textContent = p ? p.name + ": " + Math.round(p.calls_in_window) + " calls in the window" : "(trace a function)";
	showSlow(p);
	var el = $("hist");
	var b = p && p.buckets ? p.buckets : [];
	if (!b.length) { el.innerHTML = ""; brush = null; return; }
	var x = histX = d3.scaleLog().domain([bucketLo(b[0]), b[b.length - 1][1]]).range([HM.l, HW - HM.r]);
	/* counts on a log-like scale: a few slow calls next to many fast ones stay visible */
	var y = d3.scaleSymlog().domain([0, d3.max(b, function (d) { return d[2]; })]).range([HH - HM.b, HM.t]);
	var svg = d3.select(el).selectAll("svg").data([0]).join("svg").attr("width", HW).attr("height", HH);
	/* One group per layer, made in this order on the first draw: elements
	 * that appear later (more buckets, a new mode, the threshold) join
	 * their layer, below the brush, never on top of it where they would
	 * take the mouse presses that start a brush. */
	var layer = function (name) { return svg.selectAll("g." + name).data([0]).join("g").attr("class", name); };
	var bars = layer("bars"), xaxis = layer("xaxis"), yaxis = layer("yaxis"), lines = layer("lines"),
		curve = layer("curve"), g = layer("brush");
	var inBand = function (d) { return band && (d[0] + d[1]) / 2 >= band.lo && (d[0] + d[1]) / 2 <= band.hi; };
	bars.selectAll("rect.bar").data(b).join("rect")
		.attr("class", function (d) { return inBand(d) ? "bar inband" : "bar"; })
		.attr("x", function (d) { return x(bucketLo(d)); })
		.attr("width", function (d) { return Math.max(1, x(d[1]) - x(bucketLo(d)) - 0.5); })
		.attr("y", function (d) { return y(d[2]); })
		.attr("height", function (d) { return y(0) - y(d[2]); })
		.attr("data-lo", function (d) { return d[0]; })
		.attr("data-hi", function (d) { return d[1]; });
	/* powers of ten; a few round values when the calls span less (a
	 * function called once has one bucket) */
	var ticks = x.ticks().filter(function (t) { return Math.log10(t) % 1 === 0; });
	if (ticks.length < 2) ticks = x.ticks(3);
	xaxis.attr("transform", "translate(0," + (HH - HM.b) + ")")
		.call(d3.axisBottom(x).tickValues(ticks).tickFormat(fmtNs));
	yaxis.attr("transform", "translate(" + HM.l + ",0)")
		.call(d3.axisLeft(y).tickValues(y.domain()[1] >= 10 ? [1, 10, 100, 1000, 10000, 100000, 1000000]
			.filter(function (t) { return t <= y.domain()[1]; }) : [1]).tickFormat(d3.format("~s")));
	var marks = [["p50", p.p50_ns], ["p95", p.p95_ns], ["p99", p.p99_ns]].filter(function (m) { return m[1] > 0; });
	lines.selectAll("line.mark").data(marks).join("line").attr("class", "mark")
		.attr("x1", function (m) { return x(m[1]); }).attr("x2", function (m) { return x(m[1]); })
		.attr("y1", HM.t).attr("y2", HH - HM.b);
	/* each label beside its line, right of it or left where it would leave
	 * the plot; a row lower where it would overlap one already placed (close
	 * percentiles, as p95 and p99 in one slow mode, are pixels apart) */
	var placed = [];
	lines.selectAll("text.mark").data(marks).join("text").attr("class", "mark")
		.text(function (m) { return m[0]; })
		.each(function (m) {
			var w = this.getComputedTextLength() || 6.1 * m[0].length, at = x(m[1]);
			var l = at + 2 + w <= HW - HM.r ? at + 2 : Math.max(0, at - 2 - w);
			var row = 0;
			while (placed.some(function (q) { return q.row === row && l < q.r + 3 && q.l < l + w + 3; })) row++;
			placed.push({l: l, r: l + w, row: row});
			d3.select(this).attr("x", l).attr("y", HM.t + 8 + 11 * row);
		});
	var kde = smooth(b);
	var line = d3.line().x(function (q) { return x(q[0]); }).y(function (q) { return y(q[1]); });
	curve.selectAll("path.kde").data([kde.curve]).join("path").attr("class", "kde").attr("d", line);
	curve.selectAll("path.mode").data(kde.modes).join("path").attr("class", "mode")
		.attr("d", function (m) { return "M" + x(m[0]) + "," + (y(m[1]) - 2) + "l-4,-7h8z"; })
		.attr("data-ns", function (m) { return Math.round(m[0]); })
		.selectAll("title").data(function (m) { return [m]; }).join("title")
		.text(function (m) { return "mode " + fmtNs(m[0]); });
	$("hist").dataset.modes = kde.modes.map(function (m) { return Math.round(m[0]); }).join(",");
	var thr = p.slow_threshold_ns ? [p.slow_threshold_ns] : [];
	lines.selectAll("line.thr").data(thr).join("line").attr("class", "thr")
		.attr("x1", x).attr("x2", x).attr("y1", HM.t).attr("y2", HH - HM.b)
		.selectAll("title").data(function (t) { return [t]; }).join("title")
		.text(function (t) {
			return "slow threshold " + fmtNs(t) + (p.slow_threshold_note ? " (" + p.slow_threshold_note + ")" : "");
		});
	if (!brush) {
		brush = d3.brushX().on("start", function (ev) {
			if (ev.sourceEvent) brushing = true;
		}).on("end", function (ev) {
			if (!ev.sourceEvent) return; /* moved by this code, not by a person */
			brushing = false;
			if (!ev.selection) { band = null; showHist(lastProbes); return; }
			band = {lo: Math.floor(histX.invert(ev.selection[0])), hi: Math.ceil(histX.invert(ev.selection[1]))};
			showHist(lastProbes);
			fetchBand();
		});
	}
	brush.extent([[HM.l, HM.t], [HW - HM.r, HH - HM.b]]);
	g.call(brush);
	/* the scale changes with the window's calls: the band stays in ns;
	 * a status update during a drag must not cancel the drag */
	if (!brushing) brush.move(g, band ? [Math.max(HM.l, x(band.lo)), Math.min(HW - HM.r, x(band.hi))] : null);
}

/* ---- the latest slow calls of the probe shown; a click opens the flame
 * chart of that one call: its samples in time order, as the SVG flame
 * charts draw them (the server lays it out: render/flamechart.c) ---- */
function showSlow(p) {
	var rows = (p && p.slow ? p.slow : []).map(function (c) {
		return "<tr data-span=\"" + c.span_id + "\"><td>" + fmtNs(c.duration_ns) + "</td><td>" + fmtNs(c.ago_ns) +
			" ago</td><td>" + c.tid + "</td><td>" + c.samples + "</td><td class=\"name\">" + esc(c.top || "-") + "</td></tr>" +
			splitRow(c);
	});
	var html = rows.join("") || "<tr><td class=\"name\" colspan=\"5\">none yet</td></tr>";
	var body = document.querySelector("#slow tbody");
	if (body.innerHTML !== html) body.innerHTML = html;
}

/* Where a slow call's time went, with off-CPU recording on (the status's
 * split, model/callsplit.h): a bar across its duration, on the CPU (the
 * SVGs' red) then each off-CPU state (their blues), and the TUI's text. */
var SPLIT_BLUES = ["#3b6fb6", "#5d8fd1", "#8fb3e3", "#b9cff0"];
function splitRow(c) {
	if (!c.split) return "";
	var d = Math.max(1, c.duration_ns);
	var part = function (ns, colour, title, cls) {
		return "<span class=\"" + cls + "\" style=\"width:" + Math.min(100, 100 * ns / d).toFixed(2) + "%;background:" + colour +
			"\" title=\"" + esc(title) + "\"></span>";
	};
	var bar = part(c.on_cpu_ns, "#e0584c", "on-CPU ~" + fmtNs(c.on_cpu_ns), "on");
	(c.off_cpu || []).forEach(function (o, i) {
		bar += part(o.ns, SPLIT_BLUES[Math.min(i, SPLIT_BLUES.length - 1)],
			o.state + " " + fmtNs(o.ns) + " in " + (o.in || "(self)"), "off");
	});
	return "<tr class=\"split\" data-span=\"" + c.span_id + "\" data-on=\"" + c.on_cpu_ns + "\" data-off=\"" + c.off_cpu_ns +
		"\"><td colspan=\"5\"><div class=\"splitbar\">" + bar + "</div><div class=\"splittext\">" + esc(c.split) +
		"</div></td></tr>";
}

function openChart(span) {
	fetch("/api/flamechart?span=" + encodeURIComponent(span), {headers: {"X-Sonde-Token": token}})
		.then(function (r) { return r.json(); })
		.then(function (ans) {
			if (!ans.ok) { say(ans.error, true); return; }
			drawChart(ans.data);
		}, function (e) { say("flame chart: " + e.message, true); });
}

function drawChart(d) {
	var pane = $("chartpane"), el = $("chart");
	pane.hidden = false;
	el.dataset.span = d.span_id;
	el.dataset.samples = d.samples;
	$("charttitle").textContent = d.subtitle;
	var W = Math.max(300, el.clientWidth - 18), H = 16, top = 16;
	var x = d3.scaleLinear().domain([0, d.dur_ns]).range([0, W]);
	el.innerHTML = "";
	var svg = d3.select(el).append("svg").attr("width", W).attr("height", top + (d.depth + 1) * H);
	svg.append("g").attr("class", "axis").call(d3.axisTop(x).ticks(6).tickFormat(function (t) { return fmtNs(t); }))
		.attr("transform", "translate(0," + (top - 1) + ")");
	var g = svg.selectAll("g.box").data(d.boxes).join("g").attr("class", "box")
		.attr("data-name", function (b) { return b[3]; })
		.attr("data-start", function (b) { return b[0]; })
		.attr("data-dur", function (b) { return b[1] - b[0]; })
		.attr("data-depth", function (b) { return b[2]; })
		.attr("transform", function (b) { return "translate(" + x(b[0]) + "," + (top + b[2] * H) + ")"; });
	g.append("rect").attr("width", function (b) { return Math.max(0.5, x(b[1]) - x(b[0]) - 0.5); })
		.attr("height", H - 1).attr("fill", function (b) { return b[5]; });
	g.append("text").attr("x", 3).attr("y", H - 4).text(function (b) {
		var room = Math.floor((x(b[1]) - x(b[0]) - 6) / 6.6);
		return room < 3 ? "" : b[3].length <= room ? b[3] : b[3].slice(0, room - 2) + "..";
	});
	g.append("title").text(function (b) {
		return b[3] + " (" + b[4] + "): " + fmtNs(b[1] - b[0]) + " from " + fmtNs(b[0]) + ", " + b[6] + " sample" + (b[6] === 1 ? "" : "s");
	});
}

/* Where a bucket [LO_NS, HI_NS) starts on the log axis: the first one, of
 * the calls under 1 ns (0 on a log axis is nowhere), at half a nanosecond. */
function bucketLo(d) { return d[0] > 0 ? d[0] : d[1] / 2; }

/* A Gaussian kernel density of the calls over log duration (bandwidth by
 * Silverman's rule), scaled to calls per histogram bucket (buckets are
 * equally wide in log duration but under 32 ns, where they are 1 ns wide),
 * on 160 points; and its modes: peaks of at
 * least 3% of the highest, each parted from the one before by a dip below
 * 70% of the lower of the two. b: [[LO_NS, HI_NS, CALLS], ...] ascending. */
function smooth(b) {
	var n = 0, mean = 0;
	b.forEach(function (d) { n += d[2]; mean += d[2] * Math.log((d[0] + d[1]) / 2); });
	mean /= n;
	var v = 0;
	b.forEach(function (d) { var t = Math.log((d[0] + d[1]) / 2) - mean; v += d[2] * t * t; });
	var last = b[b.length - 1], width = Math.log(last[1] / bucketLo(last)); /* one bucket, in log duration */
	var h = Math.max(width, 1.06 * Math.sqrt(v / n) * Math.pow(n, -0.2));
	var lo = Math.log(bucketLo(b[0])), hi = Math.log(last[1]);
	var curve = [];
	for (var i = 0; i < 160; i++) {
		var at = lo + (hi - lo) * i / 159, dens = 0;
		b.forEach(function (d) {
			var z = (at - Math.log((d[0] + d[1]) / 2)) / h;
			if (z > -5 && z < 5) dens += d[2] * Math.exp(-z * z / 2);
		});
		curve.push([Math.exp(at), dens * width / (h * Math.sqrt(2 * Math.PI))]);
	}
	var top = d3.max(curve, function (q) { return q[1]; }) || 0;
	var modes = [], dip = Infinity;
	for (var k = 0; k < curve.length; k++) {
		var c = curve[k][1];
		dip = Math.min(dip, c);
		var peak = (k === 0 || c > curve[k - 1][1]) && (k === curve.length - 1 || c >= curve[k + 1][1]);
		if (!peak || c < 0.03 * top) continue;
		var last = modes[modes.length - 1];
		if (!last || dip < 0.7 * Math.min(last[1], c)) { modes.push(curve[k]); dip = c; }
		else if (c > last[1]) { modes[modes.length - 1] = curve[k]; dip = c; }
	}
	return {curve: curve, modes: modes};
}

function selectProbe(name) {
	if (name === histProbe) return;
	histProbe = name;
	band = null;
	showHist(lastProbes);
}

function fetchBand() {
	var b = band, probe = histProbe;
	fetch("/api/band?probe=" + encodeURIComponent(probe) + "&min_ns=" + b.lo + "&max_ns=" + b.hi,
		{headers: {"X-Sonde-Token": token}})
		.then(function (r) { return r.json(); })
		.then(function (ans) {
			if (!ans.ok) { say(ans.error, true); return; }
			drawBand(ans.data);
		}, function (e) { say("band: " + e.message, true); });
}

function treeOf(m) {
	var byId = new Map(), r = null;
	m.added.forEach(function (a) { var n = addNode(byId, a); if (!n.parent) r = n; });
	return r;
}
function pathKey(n) { return pathOf(n).join("\n"); }

var bandChart = null;
function drawBand(d) {
	var inRoot = treeOf(d.in), outRoot = treeOf(d.out);
	var pane = $("bandpane"), el = $("bandflame");
	pane.hidden = false;
	el.dataset.total = d.in.total;
	el.dataset.lo = d.min_ns;
	el.dataset.hi = d.max_ns;
	$("bandtitle").textContent = d.probe + " calls from " + fmtNs(d.min_ns) + " to " + fmtNs(d.max_ns) + ": " +
		Math.round(d.calls_in) + " calls, " + fmtCount(d.in.total) + " samples; other calls: " +
		Math.round(d.calls_out) + ", " + fmtCount(d.out.total) + " samples" +
		(d.samples_waiting ? "; " + d.samples_waiting + " waiting for their call's end" : "");
	el.innerHTML = "";
	if (!inRoot || d.in.total <= 0) {
		el.innerHTML = "<div class=\"empty\">No samples inside those calls.</div>";
		return;
	}
	/* red: a larger share of the band's samples than of the other calls' */
	var outShare = new Map();
	if (outRoot && d.out.total > 0) {
		(function walk(n) { outShare.set(pathKey(n), n.value / d.out.total); n.children.forEach(walk); })(outRoot);
	}
	(function walk(n) {
		n.share = n.value / d.in.total;
		n.other = outShare.get(pathKey(n)) || 0;
		/* the middle of RdBu's range, where black labels stay readable */
		n.color = d3.interpolateRdBu(0.5 - 0.7 * Math.max(-0.5, Math.min(0.5, n.share - n.other)));
		n.children.forEach(walk);
	})(inRoot);
	staticChart(el, inRoot, inverted, $("banddetails"), function (x) {
		return x.data.name + ": " + (100 * x.data.share).toFixed(1) + "% of the band's samples, " +
			(100 * x.data.other).toFixed(1) + "% of the other calls'";
	});
}

/* A flame graph of a tree that does not update (a band, a sandwich, a
 * range): its own colours, clicks zoom within it. */
function staticChart(el, r, upsideDown, detailsEl, label) {
	var c = flamegraph.default()
		.width(Math.max(300, el.clientWidth - 18))
		.cellHeight(18).transitionDuration(0).minFrameSize(1).sort(true).inverted(upsideDown).selfValue(false)
		.getName(function (x) { return x.data.name; })
		.getChildren(function (x) { return x.children; })
		.setColorMapper(function (x) { return x.data.color; })
		.setSearchHandler(function () {})
		.setDetailsHandler(function (text) { detailsEl.textContent = text || ""; })
		.setLabelHandler(label);
	d3.select(el).datum(r).call(c);
	/* it stands on its root: in view when the graph is higher than its box */
	if (!upsideDown) el.scrollTop = el.scrollHeight - el.clientHeight;
	return c;
}

/* ---- the sandwich of one function: who calls it (an inverted tree, drawn
 * with the function at the bottom and its callers above) and what it
 * calls (the function at the top, its callees below) ---- */
var sandwichFn = null;
function openSandwich(name) {
	sandwichFn = name;
	fetch("/api/sandwich?function=" + encodeURIComponent(name), {headers: {"X-Sonde-Token": token}})
		.then(function (r) { return r.json(); })
		.then(function (ans) {
			if (!ans.ok) { say(ans.error, true); return; }
			if (sandwichFn === name) drawSandwich(ans.data);
		}, function (e) { say("sandwich: " + e.message, true); });
}
function drawSandwich(d) {
	var pane = $("sandpane");
	pane.hidden = false;
	pane.dataset.function = d.function;
	pane.dataset.total = d.total;
	$("sandtitle").textContent = d.function + ": " + fmtCount(d.total) + " samples, " +
		pct(d.total, d.view_total).toFixed(1) + "% of the view";
	[["callers", $("sandcallers"), false], ["callees", $("sandcallees"), true]].forEach(function (x) {
		var m = d[x[0]], el = x[1], r = treeOf(m);
		el.innerHTML = "";
		el.dataset.total = m.total;
		if (!r || m.total <= 0) { el.innerHTML = "<div class=\"empty\">No samples.</div>"; return; }
		/* the tree's root ("all") is no caller or callee: draw from the function */
		var fn = r.children[0];
		fn.parent = null;
		staticChart(el, fn, x[2], $("sanddetails"), function (y) {
			return y.data.name + " (" + y.data.kind + "): " + fmtCount(y.data.value) + " samples, " +
				pct(y.data.value, d.total).toFixed(2) + "% of " + d.function + "'s";
		});
	});
}

/* ---- the subsecond heat map of the samples held (the server bins them
 * as `sonde heatmap` does, render/heatmap.h): columns are seconds, rows
 * offsets within the second, the end of the second at the top. Drag from a
 * cell to another (in either order): the flame graph of exactly the samples
 * from the earlier cell's start to the later one's end (/api/range) ---- */
var heat = null, heatSel = null, heatDrag = null;
function openHeatmap() {
	/* it needs the room of the other panes under the flame graph */
	["chartclose", "bandclose", "sandclose", "threadclose"].forEach(function (id) { if (!$(id).closest("[hidden]")) $(id).click(); });
	fetch("/api/heatmap", {headers: {"X-Sonde-Token": token}})
		.then(function (r) { return r.json(); })
		.then(function (ans) {
			if (!ans.ok) { say(ans.error, true); return; }
			heat = ans.data;
			heatSel = null;
			drawHeatmap();
		}, function (e) { say("heat map: " + e.message, true); });
}
/* A cell's place in time order, and the first and last whole ns of cells
 * k0..k1 (heatmap.h: start rounded up, end down; start_ns is a whole
 * second, exact as a Number) */
function cellK(col, row) { return col * heat.rows + (heat.rows - 1 - row); }
function kStartNs(k) {
	var R = BigInt(heat.rows);
	return BigInt(heat.start_ns) + (BigInt(k) * 1000000000n + R - 1n) / R;
}
function kEndNs(k) { return BigInt(heat.start_ns) + (BigInt(k) + 1n) * 1000000000n / BigInt(heat.rows); }
function fmtSec(ns) { return (Number(ns - BigInt(heat.start_ns)) / 1e9).toFixed(3) + " s"; }

function drawHeatmap() {
	var pane = $("heatpane"), el = $("heatmap");
	pane.hidden = false;
	el.dataset.total = heat.total;
	el.dataset.cols = heat.cols;
	el.dataset.rows = heat.rows;
	$("heattitle").textContent = "Subsecond heat map: " + fmtCount(heat.total) + " samples over " + heat.cols +
		" s, rows of " + (1000 / heat.rows).toFixed(0) + " ms" + (heat.idle_dropped ? "; " + heat.idle_dropped + " idle left out" : "");
	el.innerHTML = "";
	if (!heat.cols) { el.innerHTML = "<div class=\"empty\">No samples held yet.</div>"; return; }
	var L = 34, T = 4, B = 16, cw = Math.max(3, Math.min(24, Math.floor((el.clientWidth - L - 8) / heat.cols)));
	var ch = Math.max(2, Math.floor(200 / heat.rows)), W = L + cw * heat.cols + 4, H = T + ch * heat.rows + B;
	var colour = d3.scaleLinear().domain([0, heat.max / 2, heat.max]).range(["#ffffff", "#ff5032", "#e50914"]);
	var svg = d3.select(el).append("svg").attr("width", W).attr("height", H);
	var cells = [];
	heat.cells.forEach(function (c, col) { c.forEach(function (n, row) { cells.push([col, row, n]); }); });
	svg.append("g").selectAll("rect").data(cells).join("rect").attr("class", "cell")
		.attr("x", function (d) { return L + d[0] * cw; }).attr("y", function (d) { return T + d[1] * ch; })
		.attr("width", cw).attr("height", ch).attr("fill", function (d) { return d[2] ? colour(d[2]) : "#fff"; })
		.attr("data-col", function (d) { return d[0]; }).attr("data-row", function (d) { return d[1]; })
		.attr("data-n", function (d) { return d[2]; })
		.on("mousedown", function (ev, d) { ev.preventDefault(); heatDrag = cellK(d[0], d[1]); heatSel = [heatDrag, heatDrag]; markHeat(); })
		.on("mouseover", function (ev, d) {
			var k = cellK(d[0], d[1]);
			$("heatdetails").textContent = "second " + d[0] + ", " + fmtSec(kStartNs(k)) + "–" + fmtSec(kEndNs(k)) + ": " + d[2] + " samples";
			if (heatDrag === null) return;
			heatSel = [Math.min(heatDrag, k), Math.max(heatDrag, k)];
			markHeat();
		});
	svg.append("text").attr("x", 2).attr("y", T + 8).text("1 s");
	svg.append("text").attr("x", 2).attr("y", T + ch * heat.rows).text("0");
	var every = Math.max(1, Math.ceil(30 / cw));
	for (var c = 0; c < heat.cols; c += every)
		svg.append("text").attr("x", L + c * cw).attr("y", H - 4).text(c);
}
document.addEventListener("mouseup", function () {
	if (heatDrag === null) return;
	heatDrag = null;
	if (heatSel) fetchRange(heatSel[0], heatSel[1]);
});
function markHeat() {
	d3.selectAll("#heatmap rect.cell").classed("sel", function (d) {
		var k = cellK(d[0], d[1]);
		return !!heatSel && k >= heatSel[0] && k <= heatSel[1];
	});
}
function fetchRange(k0, k1) {
	var from = kStartNs(k0), to = kEndNs(k1), sel = heatSel;
	fetch("/api/range?from_ns=" + from + "&to_ns=" + to, {headers: {"X-Sonde-Token": token}})
		.then(function (r) { return r.json(); })
		.then(function (ans) {
			if (!ans.ok) { say(ans.error, true); return; }
			if (sel === heatSel) drawRange(ans.data);
		}, function (e) { say("range: " + e.message, true); });
}
function drawRange(d) {
	var el = $("rangeflame"), r = treeOf(d.flame);
	el.dataset.total = d.flame.total;
	el.dataset.from = d.from_ns;
	el.dataset.to = d.to_ns;
	$("rangetitle").textContent = "From " + fmtSec(BigInt(d.from_ns)) + " to " + fmtSec(BigInt(d.to_ns)) + ": " +
		fmtCount(d.flame.total) + " samples";
	el.innerHTML = "";
	if (!r || d.flame.total <= 0) { el.innerHTML = "<div class=\"empty\">No samples in that range.</div>"; return; }
	staticChart(el, r, inverted, $("rangedetails"), function (x) {
		return x.data.name + " (" + x.data.kind + "): " + fmtCount(x.data.value) + " samples, " +
			pct(x.data.value, d.flame.total).toFixed(2) + "% of the range's";
	});
}

/* ---- the thread table: every target thread's state from the last pass of
 * the thread-state sampler, the rows `sonde threads` prints (/api/threads:
 * the `threads` command's answer); Sample threads turns the sampler on or
 * off (`sample threads`, `sample threads off`). Read again every second
 * while open ---- */
var threadTimer = 0, threadsOn = null;
function openThreads() {
	["chartclose", "bandclose", "sandclose", "heatclose"].forEach(function (id) { if (!$(id).closest("[hidden]")) $(id).click(); });
	$("threadpane").hidden = false;
	fetchThreads();
	clearInterval(threadTimer);
	threadTimer = setInterval(fetchThreads, 1000);
}
function closeThreads() {
	$("threadpane").hidden = true;
	clearInterval(threadTimer);
	threadTimer = 0;
}
function fetchThreads() {
	fetch("/api/threads", {headers: {"X-Sonde-Token": token}})
		.then(function (r) { return r.json(); })
		.then(function (ans) {
			if (!ans.ok) { say(ans.error, true); return; }
			if (!$("threadpane").hidden && !paused) drawThreads(ans.data);
		}, function (e) { say("threads: " + e.message, true); });
}
function fmtLower(ns, lower) { return ns === null ? "-" : (lower ? ">" : "") + fmtNs(ns); }
function drawThreads(d) {
	var el = $("threads");
	window.sondeThreads = d; /* what the table shows, for the page's tests */
	el.dataset.time = d.time_ns === null ? "" : d.time_ns;
	el.dataset.rows = d.threads.length;
	/* a pass older than a few intervals: the sampler is off (or the targets exited) */
	var fresh = d.ago_ns !== null && d.ago_ns < 2e9 && !ended;
	if (threadsOn === null) threadsOn = fresh; /* what the page finds, until it changes it */
	$("threadsample").textContent = threadsOn ? "Stop sampling threads" : "Sample threads";
	$("threadsample").classList.toggle("on", !!threadsOn);
	if (d.time_ns === null) {
		$("threadtitle").textContent = "No pass yet: Sample threads takes every thread's state.";
	} else {
		var c = d.counts;
		$("threadtitle").textContent = d.threads.length + " threads (" + Object.keys(c).filter(function (k) { return c[k]; })
			.map(function (k) { return c[k] + " " + k; }).join(", ") + ") " + (fresh ? "now" : fmtNs(d.ago_ns) + " ago");
	}
	var html = d.threads.map(function (t) {
		var whole = t.frames.map(function (f) { return f[0] + (f[1] === "kernel" ? " [k]" : ""); }).join("\n");
		return "<tr class=\"" + esc(t.state) + "\" data-tid=\"" + t.tid + "\" data-state=\"" + esc(t.state) + "\" data-syscall=\"" +
			esc(t.syscall === null ? "" : t.syscall) + "\" data-call=\"" + esc(t.call === null ? "" : t.call) + "\"><td>" + t.tid +
			"</td><td class=\"name\">" + esc(t.comm) + "</td><td class=\"name state\">" + esc(t.state) + "</td><td>" +
			fmtLower(t.state_ns, t.state_lower_bound) + "</td><td class=\"name\">" + esc(t.syscall === null ? "-" : t.syscall) +
			"</td><td>" + fmtLower(t.syscall_ns, t.syscall_lower_bound) + "</td><td class=\"name\">" + esc(t.call === null ? "-" : t.call) +
			"</td><td>" + fmtLower(t.call_ns, false) + "</td><td class=\"name stack\" title=\"" + esc(whole) + "\">" + esc(t.stack) + "</td></tr>";
	}).join("");
	var body = el.querySelector("tbody");
	if (body.innerHTML !== html) body.innerHTML = html;
}
function toggleThreads() {
	var on = !threadsOn;
	command(on ? "sample threads" : "sample threads off").then(function (a) {
		if (a.ok) threadsOn = on;
		fetchThreads();
	});
}

/* ---- commands ------------------------------------------------------------ */
function say(text, isError) {
	var a = $("answer");
	a.textContent = text;
	a.classList.toggle("error", !!isError);
}

function command(line) {
	return fetch("/api/command", {
		method: "POST", body: line,
		headers: {"X-Sonde-Token": token, "Content-Type": "text/plain"},
	}).then(function (r) { return r.json(); }).then(function (ans) {
		/* errors name the command already */
		if (ans.ok) say(line + ": " + (ans.text || "ok").trim(), false);
		else say(ans.error, true);
		return ans;
	}, function (e) {
		say(line + ": " + e.message, true);
		return {ok: false, error: e.message};
	});
}

/* ---- status and hot list patches (src/web/jsondelta.h) ------------------
 * A `status_delta` or `hot_delta` event holds only what changed since the
 * last status or hot list: members merged into objects, the keyed lists
 * patched by key (drop, set, order). */
var PATCH_LISTS = {probes: "name", functions: "name", buckets: 0, slow: "span_id"}; /* member -> key */
var PATCH_SORTED = {buckets: true}; /* ascending by key: sorted here, never sent an order */

function isObject(x) { return x !== null && typeof x === "object" && !Array.isArray(x); }

function patchObject(old, patch) {
	var out = isObject(old) ? Object.assign({}, old) : {};
	Object.keys(patch).forEach(function (k) {
		var p = patch[k];
		if (!isObject(p)) out[k] = p;
		else if (k in PATCH_LISTS && Array.isArray(out[k])) out[k] = patchList(out[k], p, k);
		else out[k] = patchObject(out[k], p);
	});
	return out;
}

function patchList(list, p, member) {
	var key = PATCH_LISTS[member];
	var keyOf = function (e) { return key === 0 ? e[0] : e[key]; };
	var drop = new Set(p.drop || []);
	var out = list.filter(function (e) { return !drop.has(keyOf(e)); });
	var at = new Map(out.map(function (e, i) { return [keyOf(e), i]; }));
	(p.set || []).forEach(function (e) {
		var k = keyOf(e);
		if (!at.has(k)) { at.set(k, out.length); out.push(e); return; }
		var i = at.get(k);
		out[i] = isObject(e) ? patchObject(out[i], e) : e;
	});
	if (PATCH_SORTED[member]) out.sort(function (a, b) { return keyOf(a) - keyOf(b); });
	else if (p.order) {
		var byKey = new Map(out.map(function (e) { return [keyOf(e), e]; }));
		out = p.order.map(function (k) { return byKey.get(k); });
	}
	return out;
}

/* ---- connection state ------------------------------------------------------ */
var conn = "connecting", ended = false, recording = false;
var lastStatus = null, lastHot = null;
/* what the page holds, for its tests: the status and hot list as patched */
window.sondeState = function () { return {status: lastStatus, hot: lastHot}; };
function showConn() {
	var el = $("conn");
	var s = paused ? "paused" : conn !== "live" ? conn : recording ? "recording" : ended ? "ended" : conn;
	var label = {live: "live", paused: "paused", ended: "target exited", disconnected: "disconnected",
		connecting: "connecting", recording: "recording"}[s];
	el.className = "conn " + s;
	el.textContent = label;
	document.body.dataset.conn = s;
}
function setPaused(on) {
	paused = on;
	$("pause").classList.toggle("on", on);
	$("pause").textContent = on ? "Resume" : "Pause";
	showConn();
	if (!on) {
		if (lastStatus) showStatus(lastStatus);
		if (lastHot) showHot(lastHot);
		runSearch();
		draw();
	}
}

function connect() {
	var es = new EventSource("/api/events?token=" + encodeURIComponent(token));
	es.onopen = function () { conn = "live"; showConn(); };
	es.onerror = function () {
		conn = es.readyState === EventSource.CLOSED ? "disconnected" : "disconnected";
		showConn();
	};
	es.addEventListener("state", function (e) {
		var state = JSON.parse(e.data).state;
		ended = state === "ended";
		/* a recording (sonde serve FILE): nothing to steer, the views work */
		recording = state === "recording";
		document.body.classList.toggle("recording", recording);
		conn = "live";
		showConn();
	});
	/* kept while paused: an unchanged status or hot list is not sent again,
	 * a changed one comes as what changed (a patch of the last one) */
	var got = window.sondeEvents = {status: 0, status_delta: 0, hot: 0, hot_delta: 0, last: {}};
	var count = function (e) { got[e.type]++; got.last[e.type.split("_")[0]] = {type: e.type, size: e.data.length}; };
	var onStatus = function (s) { lastStatus = s; if (!paused) showStatus(s); };
	var onHot = function (h) { lastHot = h; if (!paused) showHot(h); };
	es.addEventListener("status", function (e) { count(e); onStatus(JSON.parse(e.data)); });
	es.addEventListener("status_delta", function (e) { count(e); onStatus(patchObject(lastStatus, JSON.parse(e.data))); });
	es.addEventListener("hot", function (e) { count(e); onHot(JSON.parse(e.data)); });
	es.addEventListener("hot_delta", function (e) { count(e); onHot(patchObject(lastHot, JSON.parse(e.data))); });
	es.addEventListener("flame", function (e) {
		/* applied while paused too, so the next delta has its base */
		applyFlame(JSON.parse(e.data));
		if (paused) { draw(); return; } /* counts only; the matched share stays as drawn */
		runSearch();
		draw();
	});
}

/* ---- wiring ------------------------------------------------------------------- */
function onEnter(input, fn) {
	input.addEventListener("keydown", function (e) {
		if (e.key === "Enter") { e.preventDefault(); fn(input.value.trim()); }
	});
}
function duration(inputId, cmd) {
	var v = $(inputId).value.trim();
	if (!v) { say(cmd + ": give a duration, such as 10s", true); return; }
	command(cmd + " " + v);
}

$("pause").onclick = function () { setPaused(!paused); };
$("invert").onclick = function () {
	inverted = !inverted;
	$("invert").classList.toggle("on", inverted);
	chart = null;
	flameFromBottom = 0;
	draw();
};
$("resetzoom").onclick = resetZoom;
$("search").addEventListener("input", function () { setSearch($("search").value); });
$("setwindow").onclick = function () { duration("window", "window"); };
onEnter($("window"), function () { duration("window", "window"); });
$("setewma").onclick = function () { duration("ewma", "ewma"); };
onEnter($("ewma"), function () { duration("ewma", "ewma"); });
function setView() {
	var kind = $("viewkind").value, fn = $("viewfunc").value.trim(), thr = $("viewthr").value.trim();
	command(kind === "all" ? "all" : kind + " " + fn + (kind !== "in" && thr ? " " + thr : ""));
}
$("setview").onclick = setView;
onEnter($("viewfunc"), setView);
onEnter($("viewthr"), setView);
function trace(fn) {
	if (!fn) { say("trace: name a function", true); return; }
	command("trace " + fn).then(function (a) { if (a.ok) $("probefunc").value = ""; });
}
$("trace").onclick = function () { trace($("probefunc").value.trim()); };
onEnter($("probefunc"), trace);
onEnter($("cmd"), function (line) {
	if (!line) return;
	command(line).then(function (a) { if (a.ok) $("cmd").value = ""; });
});
document.querySelector("#probes tbody").addEventListener("click", function (e) {
	var b = e.target.closest("button.untrace");
	var tr = e.target.closest("tr");
	if (b) command("untrace " + tr.dataset.name);
	else if (tr && tr.dataset.name && tr.dataset.kind !== "line") selectProbe(tr.dataset.name); /* a line has no durations */
});
$("bandclose").onclick = function () { $("bandpane").hidden = true; band = null; showHist(lastProbes); };
document.querySelector("#hot tbody").addEventListener("click", function (e) {
	var tr = e.target.closest("tr");
	if (!tr) return;
	/* a function: its sandwich, and a search for it in the flame graph */
	var off = tr.dataset.re === searchTerm;
	setSearch(off ? "" : tr.dataset.re);
	if (off) { $("sandpane").hidden = true; sandwichFn = null; }
	else openSandwich(tr.dataset.name);
});
document.querySelector("#slow tbody").addEventListener("click", function (e) {
	var tr = e.target.closest("tr");
	if (tr && tr.dataset.span) openChart(tr.dataset.span);
});
$("threadsbtn").onclick = function () { if ($("threadpane").hidden) openThreads(); else closeThreads(); };
$("threadclose").onclick = closeThreads;
$("threadsample").onclick = toggleThreads;
$("heatbtn").onclick = openHeatmap;
$("heatreload").onclick = openHeatmap;
$("heatclose").onclick = function () { $("heatpane").hidden = true; heatSel = null; };
$("chartclose").onclick = function () { $("chartpane").hidden = true; };
$("sandclose").onclick = function () { $("sandpane").hidden = true; sandwichFn = null; };

/* ---- the explorer: the selected function's source lines (as sonde
 * explore and top's pane show them: sites, jumps), their samples held and
 * their probes' exact counts, and its basic blocks as a graph laid out by
 * dagre; a line's buttons place a line probe or a branch probe through the
 * command language (/api/command). Fetched again every 2 s while open ---- */
var exploreFn = null, exploreData = null, exploreTimer = 0;
function baseName(p) { return (p || "").replace(/^.*\//, ""); }
function openExplore(name) {
	if (!name) { say("x: no frame selected: point at one, or go to a match with n", true); return; }
	exploreFn = name;
	$("explorepane").hidden = false;
	$("exploretitle").textContent = "exploring " + name + "...";
	fetchExplore();
	clearInterval(exploreTimer);
	exploreTimer = setInterval(fetchExplore, 2000);
}
function closeExplore() {
	exploreFn = null;
	clearInterval(exploreTimer);
	$("explorepane").hidden = true;
}
function fetchExplore() {
	var name = exploreFn;
	if (!name) return;
	fetch("/api/explore?func=" + encodeURIComponent(name), {headers: {"X-Sonde-Token": token}})
		.then(function (r) { return r.json(); })
		.then(function (ans) {
			if (exploreFn !== name) return;
			if (!ans.ok) { $("exploretitle").textContent = name + ": " + ans.error; say(ans.error, true); return; }
			drawExplore(ans.data);
		}, function (e) { say("explore: " + e.message, true); });
}
/* What the probes on a line counted: its line probe's hits, and per jump
 * its outcomes' shares. */
function exploreProbes(l) {
	var out = [], jumps = {};
	(l.probes || []).forEach(function (p) {
		if (p.kind === "line") { out.push("line " + p.count); return; }
		var j = jumps[p.jump] || (jumps[p.jump] = {taken: 0, not: 0});
		if (p.outcome === "taken") j.taken = p.count; else j.not = p.count;
	});
	Object.keys(jumps).forEach(function (k) {
		var j = jumps[k], n = j.taken + j.not;
		out.push("#" + k + " taken " + pct(j.taken, n).toFixed(1) + "% not taken " +
			pct(j.not, n).toFixed(1) + "% of " + n);
	});
	return out.join("; ");
}
function drawExplore(d) {
	exploreData = d;
	var pane = $("explorepane");
	pane.dataset.function = d.function;
	$("exploretitle").textContent = d.function + " (" + baseName(d.binary) + "): " + d.blocks.length +
		" blocks, " + d.loops.length + " loop" + (d.loops.length === 1 ? "" : "s") + ", " +
		fmtCount(d.samples || 0) + " samples held with it on the stack";
	$("exploredetails").textContent = d.source ? d.source : "source not found: " + (d.file || "?");
	var most = d.lines.reduce(function (m, l) { return Math.max(m, l.total || 0); }, 0);
	/* no source: a line shows its first instruction */
	var firstInsn = {};
	if (!d.source)
		d.insns.forEach(function (i) {
			if (i.line && i.file === d.file && !firstInsn[i.line]) firstInsn[i.line] = "0x" + i.addr.toString(16) + "  " + i.text;
		});
	var rows = d.lines.map(function (l) {
		var heat = most > 0 && l.total ? "background: rgba(230, 90, 30, " + (0.1 + 0.6 * l.total / most).toFixed(2) + ")" : "";
		var probes = exploreProbes(l);
		var buttons = l.sites ? "<button class=\"line\" type=\"button\" title=\"trace this line (a line probe)\">line</button>" : "";
		if (l.branches) buttons += " <button class=\"branch\" type=\"button\" title=\"trace its conditional jumps' outcomes\">branch</button>";
		return "<tr data-line=\"" + l.line + "\" data-sites=\"" + l.sites + "\" data-branches=\"" + l.branches +
			"\" data-total=\"" + (l.total || 0) + "\"><td>" + buttons + "</td><td>" + l.line + "</td><td>" + (l.sites ? l.sites + (l.refused ? "!" : "") : "") +
			"</td><td>" + (l.branches || "") + "</td><td>" + (l.self || "") + "</td><td style=\"" + heat + "\">" +
			(l.total || "") + "</td><td class=\"probes\">" + esc(probes) +
			"</td><td class=\"src\">" + esc(l.text || firstInsn[l.line] || "") + "</td></tr>";
	});
	document.querySelector("#explore tbody").innerHTML = rows.join("");
	drawBlocks(d);
}
/* The blocks as a graph: dagre lays them out, d3 draws them. */
function drawBlocks(d) {
	var g = new dagre.graphlib.Graph();
	g.setGraph({rankdir: "TB", nodesep: 16, ranksep: 22});
	g.setDefaultEdgeLabel(function () { return {}; });
	var back = {};
	d.loops.forEach(function (l) { back[l.from + ">" + l.head] = true; });
	d.blocks.forEach(function (b) {
		var label = "B" + b.id + (b.lo_line ? (b.lo_line === b.hi_line ? " line " + b.lo_line : " lines " + b.lo_line + "-" + b.hi_line) : "");
		g.setNode("B" + b.id, {label: label, width: 8 + 6.6 * label.length, height: 22, block: b});
	});
	d.blocks.forEach(function (b) { b.succ.forEach(function (s) { g.setEdge("B" + b.id, "B" + s); }); });
	dagre.layout(g);
	var el = $("exploregraph");
	el.innerHTML = "";
	var gw = g.graph().width || 10, gh = g.graph().height || 10;
	var svg = d3.select(el).append("svg").attr("width", gw + 20).attr("height", gh + 20)
		.append("g").attr("transform", "translate(10,10)");
	var line = d3.line().x(function (p) { return p.x; }).y(function (p) { return p.y; }).curve(d3.curveBasis);
	g.edges().forEach(function (e) {
		var from = e.v.slice(1), to = e.w.slice(1);
		svg.append("path").attr("d", line(g.edge(e).points)).attr("class", back[from + ">" + to] ? "back" : "")
			.attr("data-edge", e.v + ">" + e.w);
	});
	g.nodes().forEach(function (id) {
		var n = g.node(id), b = n.block;
		var grp = svg.append("g").attr("class", "block").attr("data-block", b.id)
			.attr("transform", "translate(" + (n.x - n.width / 2) + "," + (n.y - n.height / 2) + ")")
			.style("cursor", "pointer")
			.on("click", function () {
				var tr = document.querySelector("#explore tr[data-line=\"" + b.lo_line + "\"]");
				document.querySelectorAll("#explore tr.cur").forEach(function (x) { x.classList.remove("cur"); });
				if (tr) { tr.classList.add("cur"); tr.scrollIntoView({block: "center"}); }
			});
		grp.append("rect").attr("width", n.width).attr("height", n.height).attr("rx", 3)
			.attr("class", (b.loop_head ? "loophead " : "") + (b.exits ? "exits" : ""));
		grp.append("text").attr("x", 4).attr("y", 15).text(n.label);
	});
}
document.querySelector("#explore tbody").addEventListener("click", function (e) {
	var b = e.target.closest("button"), tr = e.target.closest("tr");
	if (!b || !tr || !exploreData) return;
	var spec = baseName(exploreData.binary) + ":" + baseName(exploreData.file) + ":" + tr.dataset.line;
	command((b.classList.contains("branch") ? "trace branch " : "trace ") + spec).then(fetchExplore);
});
$("explorebtn").onclick = function () { openExplore(selected ? selected.name : null); };
$("exploreclose").onclick = closeExplore;

/* ---- keys: sonde top's (src/tui/tuikeys.c) wherever the page has the same
 * action, and h for the heat map, which top has not. One table makes both
 * the handler and the help (?). ---- */
var KEYS = [
	[["/"], "search", "search function names (a regular expression)",
		function () { $("search").focus(); $("search").select(); }],
	[["n", "N"], "next/previous match", "select the next / previous match (z: zoom into it)",
		function (k) { nextMatch(k === "n" ? 1 : -1); }],
	[["Escape"], "clear the search", "clear the search (in a text box: leave the box)",
		function () { setSearch(""); $("details").textContent = ""; }],
	[["z"], "zoom in", "zoom into the selected frame: the last one pointed at, clicked or gone to with n/N", zoomIn],
	[["Z", "Backspace"], "zoom out", "zoom out: back to the previous zoom", zoomOut],
	[["i"], "icicle", "icicle: the roots at the top / back to the flame graph", function () { $("invert").click(); }],
	[["p"], "pause", "pause / resume the display (data keeps coming)", function () { setPaused(!paused); }],
	[[":"], "command", "the command line: any command of sonde top's language", function () { $("cmd").focus(); }],
	[["h"], "heat map", "the subsecond heat map of the samples held", function () { openHeatmap(); }],
	[["x"], "explore", "explore the selected function: its lines with live counts, blocks, loops; probe a line or a branch by click",
		function () { openExplore(selected ? selected.name : null); }],
	[["?"], "all keys", "this help (Esc, q, Enter or ? closes it)", function () { showHelp(true); }],
];
var keyName = function (k) { return k === "Escape" ? "Esc" : k; };
var kbds = function (ks) { return ks.map(function (k) { return "<kbd>" + esc(keyName(k)) + "</kbd>"; }).join(" "); };
$("keyhint").innerHTML = KEYS.map(function (k) { return "<span>" + kbds(k[0]) + " " + esc(k[1]) + "</span>"; }).join(" ");
$("helpkeys").innerHTML = KEYS.map(function (k) {
	return "<tr data-keys=\"" + esc(k[0].map(keyName).join(" ")) + "\"><td>" + kbds(k[0]) + "</td><td>" + esc(k[2]) + "</td></tr>";
}).join("");
function showHelp(on) { $("help").hidden = !on; }
$("help").addEventListener("click", function (e) { if (e.target === $("help")) showHelp(false); });

document.addEventListener("keydown", function (e) {
	var t = e.target;
	var typing = t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA");
	if (e.ctrlKey || e.metaKey || e.altKey) return;
	if (!$("help").hidden) {
		/* as top's overlays: these close it, ':' goes on to the command line */
		if (["Escape", "q", "Enter", "?", ":"].indexOf(e.key) >= 0) {
			e.preventDefault();
			showHelp(false);
			if (e.key === ":") $("cmd").focus();
		}
		return;
	}
	if (typing) {
		if (e.key === "Escape") t.blur();
		return;
	}
	var k = KEYS.find(function (x) { return x[0].indexOf(e.key) >= 0; });
	if (k) { e.preventDefault(); k[3](e.key); }
});

/* The flame graph is drawn to its box: as wide, and at least as high with
 * the root at the bottom. The box changes with the window and whenever a pane
 * under it (band, flame chart, sandwich, heat map) opens or closes: drawn
 * again then, not at the next update -- which a recording never sends, and
 * until which the frames would sit below the visible box. A new width makes
 * a new chart (after a pause, for a window being dragged); a new height
 * only lays the frames out again. */
var flameBox = {w: 0, h: 0}, resizeTimer = 0;
new ResizeObserver(function (entries) {
	var b = entries[entries.length - 1].borderBoxSize[0], w = b.inlineSize, h = b.blockSize;
	if (w === flameBox.w && h === flameBox.h) return;
	var newWidth = w !== flameBox.w && flameBox.w !== 0;
	flameBox = {w: w, h: h};
	/* paused: the frozen graph is not drawn again (its nodes have moved
	 * on), its root only kept in view */
	if (!newWidth) { if (chart) { if (paused) keepRoot(); else draw(); } return; }
	clearTimeout(resizeTimer);
	resizeTimer = setTimeout(function () { chart = null; draw(); }, 150);
}).observe($("flame"), {box: "border-box"});

if (!token) say("no token in this page's URL: open the URL sonde serve printed", true);
showConn();
connect();
})();
