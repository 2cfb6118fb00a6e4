#!/bin/bash
# The assets of src/render/assets/ (the scripts, stylesheets and page the SVG
# and HTML outputs embed) are source code no compiler reads, so they are
# checked here, each failure naming the file and the line:
#   *.js    node compiles it as a classic browser script (vm.Script: not a
#           module, not CommonJS, so a top-level `return` or `import` fails);
#           it holds no @NAME@ placeholder (scripts get values from CFG)
#   *.css   comments and strings closed; (), [] and {} balanced and nested
#   *.html  every element closed, in order (void elements need no end tag;
#           the content of <script> and <style> is not markup)
#   all     UTF-8 (the outputs declare it); nothing that ends the element an
#           asset is copied into ("]]>" ends an SVG's CDATA section, "</script"
#           and "</style" an HTML element); declared in src/render/assets.h,
#           which is how the C side reaches it
# ASSETS (a directory) checks other files the same way, declared in HEADER
# (sonde serve's page: src/web/page/ and src/web/page.h).
set -u
SRC=${SRC:-$(cd "$(dirname "$0")/.." && pwd)}
ASSETS=${ASSETS:-$SRC/src/render/assets}
HEADER=${HEADER:-$SRC/src/render/assets.h}
command -v node >/dev/null || {
	echo "assets: node is not installed (scripts/bootstrap.sh test installs it)"
	exit 1
}
shopt -s nullglob
files=("$ASSETS"/*.js "$ASSETS"/*.css "$ASSETS"/*.html)
[ ${#files[@]} -gt 0 ] || {
	echo "assets: no assets in $ASSETS"
	exit 1
}

node - "$HEADER" "${files[@]}" <<'JS'
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [header, ...files] = process.argv.slice(2);
const declared = fs.readFileSync(header, "utf8");
let failed = 0;

function lineOf(text, index) {
	return text.slice(0, index).split("\n").length;
}

// Returns a problem ("line N: ...") or null.
function checkJs(text, file) {
	try {
		new vm.Script(text, {filename: file});
	} catch (e) {
		const where = (e.stack || "").split("\n")[0];
		return `${where}: ${e.message}`;
	}
	const m = /@[A-Z0-9_]+@/.exec(text);
	if (m)
		return `line ${lineOf(text, m.index)}: placeholder ${m[0]} in a script`;
	return null;
}

const CLOSING = {")": "(", "]": "[", "}": "{"};

function checkCss(text) {
	const open = []; // [char, index]
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (c === "/" && text[i + 1] === "*") {
			const end = text.indexOf("*/", i + 2);
			if (end < 0)
				return `line ${lineOf(text, i)}: comment not closed`;
			i = end + 1;
		} else if (c === '"' || c === "'") {
			let j = i + 1;
			while (j < text.length && text[j] !== c && text[j] !== "\n")
				j += text[j] === "\\" ? 2 : 1;
			if (text[j] !== c)
				return `line ${lineOf(text, i)}: string not closed`;
			i = j;
		} else if (c === "(" || c === "[" || c === "{") {
			open.push([c, i]);
		} else if (CLOSING[c]) {
			const top = open.pop();
			if (!top || top[0] !== CLOSING[c])
				return `line ${lineOf(text, i)}: '${c}' closes ${top ? "'" + top[0] + "' of line " + lineOf(text, top[1]) : "nothing"}`;
		}
	}
	if (open.length) {
		const [c, i] = open[open.length - 1];
		return `line ${lineOf(text, i)}: '${c}' not closed`;
	}
	return null;
}

const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
		      "source", "track", "wbr"]);

function checkHtml(text) {
	const open = []; // [name, index]
	const tag = /<!--[^]*?-->|<!([^>]*)>|<\/?([A-Za-z][A-Za-z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>|</g;
	let m;
	while ((m = tag.exec(text))) {
		const at = lineOf(text, m.index);
		if (m[0] === "<")
			return `line ${at}: '<' starts no tag`;
		if (m[0].startsWith("<!"))
			continue; // a comment or the doctype
		const name = m[2].toLowerCase();
		if (m[0][1] === "/") {
			const top = open.pop();
			if (!top || top[0] !== name)
				return `line ${at}: </${name}> closes ${top ? "<" + top[0] + "> of line " + lineOf(text, top[1]) : "nothing"}`;
		} else if (!VOID.has(name) && !m[3].endsWith("/")) {
			open.push([name, m.index]);
			if (name === "script" || name === "style") { // raw text up to its end tag
				const end = text.toLowerCase().indexOf("</" + name, tag.lastIndex);
				if (end < 0)
					return `line ${at}: <${name}> not closed`;
				tag.lastIndex = end;
			}
		}
	}
	if (open.length) {
		const [name, i] = open[open.length - 1];
		return `line ${lineOf(text, i)}: <${name}> not closed`;
	}
	return null;
}

for (const file of files) {
	const name = path.basename(file);
	const bytes = fs.readFileSync(file);
	const problems = [];
	let text = "";
	try {
		text = new TextDecoder("utf-8", {fatal: true}).decode(bytes);
	} catch (e) {
		problems.push("not UTF-8");
	}
	const ext = path.extname(name);
	const check = {".js": checkJs, ".css": checkCss, ".html": checkHtml}[ext];
	const problem = check(text, file);
	if (problem)
		problems.push(problem);
	if (ext !== ".html") {
		for (const end of ["]]>", "</script", "</style"]) {
			const i = text.toLowerCase().indexOf(end);
			if (i >= 0)
				problems.push(`line ${lineOf(text, i)}: "${end}" would end the element it is copied into`);
		}
	}
	const symbol = "asset_" + name.replace(/[^A-Za-z0-9_]/g, "_");
	if (!new RegExp("\\b" + symbol + "\\[\\]").test(declared))
		problems.push(`${symbol} is not declared in ${header}`);
	for (const p of problems)
		console.log(`assets: ${name}: ${p}`);
	if (problems.length)
		failed++;
	else
		console.log(`assets: ${name} ok`);
}
process.exit(failed ? 1 : 0);
JS
