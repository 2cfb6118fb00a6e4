/* capexpr — parses "VAR... [if EXPR]" (see capexpr.h): a tokenizer and a
 * recursive-descent parser with C's precedence. */
#include "capexpr.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "util.h"

static char *dupn(const char *s, size_t n)
{
	return xasprintf("%.*s", (int)n, s);
}

enum tok_kind { T_END, T_ID, T_NUM, T_OP };

struct parser {
	const char *text;
	size_t pos;     /* next character */
	enum tok_kind kind;
	size_t start;   /* the current token's place */
	size_t len;
	int64_t num;
	int depth;
	struct errbuf e; /* the first failure: what comes after it follows from it */
};

static const char *const ops2[] = {"->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", NULL};
static const char ops1[] = ".[]()*&!~-+/%<>|^,";

/* A failure at the current token, named with its place in the text (the
 * first failure is the one reported). */
static void fail_at(struct parser *p, const char *what)
{
	if (p->kind == T_END)
		errbuf_first(&p->e, "%s at the end of \"%s\"", what, p->text);
	else
		errbuf_first(&p->e, "%s at \"%.*s\" (column %zu of \"%s\")", what, (int)p->len,
			     p->text + p->start, p->start + 1, p->text);
}

static void next(struct parser *p)
{
	const char *s = p->text;
	while (s[p->pos] && isspace((unsigned char)s[p->pos]))
		p->pos++;
	p->start = p->pos;
	char c = s[p->pos];
	if (!c) {
		p->kind = T_END;
		p->len = 0;
		return;
	}
	if (isalpha((unsigned char)c) || c == '_') {
		while (isalnum((unsigned char)s[p->pos]) || s[p->pos] == '_')
			p->pos++;
		p->kind = T_ID;
	} else if (isdigit((unsigned char)c)) {
		errno = 0;
		char *end;
		unsigned long long v = strtoull(s + p->pos, &end, 0);
		p->kind = T_NUM;
		p->len = (size_t)(end - (s + p->pos));
		if (errno || isalnum((unsigned char)*end) || *end == '_' || v > INT64_MAX) {
			while (isalnum((unsigned char)s[p->pos]) || s[p->pos] == '_')
				p->pos++;
			p->len = p->pos - p->start;
			fail_at(p, "not a number (decimal, 0x hex or 0 octal, at most 2^63-1)");
			return;
		}
		p->num = (int64_t)v;
		p->pos = (size_t)(end - s);
	} else {
		p->kind = T_OP;
		size_t n = 0;
		for (int i = 0; ops2[i]; i++)
			if (strncmp(s + p->pos, ops2[i], 2) == 0)
				n = 2;
		if (!n && strchr(ops1, c))
			n = 1;
		if (!n) {
			p->len = 1;
			fail_at(p, "unexpected character");
			return;
		}
		p->pos += n;
	}
	p->len = p->pos - p->start;
}

static bool is_op(const struct parser *p, const char *op)
{
	return p->kind == T_OP && p->len == strlen(op) && strncmp(p->text + p->start, op, p->len) == 0;
}

static bool is_keyword_if(const struct parser *p)
{
	return p->kind == T_ID && p->len == 2 && strncmp(p->text + p->start, "if", 2) == 0;
}

static struct cap_node *node(enum cap_kind kind, enum cap_op op, struct cap_node *l,
			     struct cap_node *r)
{
	struct cap_node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->op = op;
	n->l = l;
	n->r = r;
	return n;
}

static void node_free(struct cap_node *n)
{
	if (!n)
		return;
	node_free(n->l);
	node_free(n->r);
	free(n->name);
	free(n);
}

static struct cap_node *expr(struct parser *p);

static bool enter(struct parser *p)
{
	if (++p->depth > CAPEXPR_MAX_DEPTH) {
		fail_at(p, "nested too deep");
		return false;
	}
	return true;
}

static struct cap_node *primary(struct parser *p)
{
	struct cap_node *n = NULL;
	if (p->e.failed)
		return NULL;
	if (p->kind == T_ID && !is_keyword_if(p)) {
		char *name = dupn(p->text + p->start, p->len);
		next(p);
		if (strcmp(name, "str") == 0 && is_op(p, "(")) { /* str(PATH) */
			free(name);
			next(p);
			n = node(CAP_STR, CAP_OP_NONE, expr(p), NULL);
			if (!p->e.failed && !is_op(p, ")"))
				fail_at(p, "expected \")\" after str(...");
			next(p);
		} else {
			n = node(CAP_VAR, CAP_OP_NONE, NULL, NULL);
			n->name = name;
		}
	} else if (p->kind == T_NUM) {
		n = node(CAP_NUM, CAP_OP_NONE, NULL, NULL);
		n->num = p->num;
		next(p);
	} else if (is_op(p, "(")) {
		next(p);
		n = expr(p);
		if (!p->e.failed && !is_op(p, ")"))
			fail_at(p, "expected \")\"");
		next(p);
	} else {
		fail_at(p, "expected a variable, a number or \"(\"");
	}
	if (p->e.failed) {
		node_free(n);
		return NULL;
	}
	for (;;) {
		if (is_op(p, ".") || is_op(p, "->")) {
			enum cap_kind k = is_op(p, ".") ? CAP_MEMBER : CAP_ARROW;
			next(p);
			if (p->kind != T_ID) {
				fail_at(p, "expected a member name");
				break;
			}
			n = node(k, CAP_OP_NONE, n, NULL);
			n->name = dupn(p->text + p->start, p->len);
			next(p);
		} else if (is_op(p, "[")) {
			next(p);
			struct cap_node *i = expr(p);
			n = node(CAP_INDEX, CAP_OP_NONE, n, i);
			if (p->e.failed)
				break;
			if (!is_op(p, "]")) {
				fail_at(p, "expected \"]\"");
				break;
			}
			next(p);
		} else {
			break;
		}
	}
	if (p->e.failed) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct cap_node *unary(struct parser *p)
{
	if (p->e.failed || !enter(p))
		return NULL;
	struct cap_node *n;
	if (is_op(p, "*") || is_op(p, "&") || is_op(p, "-") || is_op(p, "!") || is_op(p, "~")) {
		char c = p->text[p->start];
		next(p);
		struct cap_node *l = unary(p);
		if (!l) {
			p->depth--;
			return NULL;
		}
		if (c == '*')
			n = node(CAP_DEREF, CAP_OP_NONE, l, NULL);
		else if (c == '&')
			n = node(CAP_ADDR, CAP_OP_NONE, l, NULL);
		else
			n = node(CAP_UNARY, c == '-' ? CAP_OP_NEG : c == '!' ? CAP_OP_NOT : CAP_OP_BNOT,
				 l, NULL);
	} else {
		n = primary(p);
	}
	p->depth--;
	return n;
}

/* Binary levels, loosest first. */
static const struct {
	const char *text[5];
	enum cap_op op[5];
} levels[] = {
	{{"||"}, {CAP_OP_LOR}},
	{{"&&"}, {CAP_OP_LAND}},
	{{"|"}, {CAP_OP_BOR}},
	{{"^"}, {CAP_OP_BXOR}},
	{{"&"}, {CAP_OP_BAND}},
	{{"==", "!="}, {CAP_OP_EQ, CAP_OP_NE}},
	{{"<", "<=", ">", ">="}, {CAP_OP_LT, CAP_OP_LE, CAP_OP_GT, CAP_OP_GE}},
	{{"<<", ">>"}, {CAP_OP_SHL, CAP_OP_SHR}},
	{{"+", "-"}, {CAP_OP_ADD, CAP_OP_SUB}},
	{{"*", "/", "%"}, {CAP_OP_MUL, CAP_OP_DIV, CAP_OP_MOD}},
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

static struct cap_node *binary(struct parser *p, size_t level)
{
	if (level == NLEVELS)
		return unary(p);
	if (!enter(p))
		return NULL;
	struct cap_node *l = binary(p, level + 1);
	while (l && !p->e.failed) {
		enum cap_op op = CAP_OP_NONE;
		for (int i = 0; i < 5 && levels[level].text[i]; i++)
			if (is_op(p, levels[level].text[i]))
				op = levels[level].op[i];
		if (op == CAP_OP_NONE)
			break;
		next(p);
		struct cap_node *r = binary(p, level + 1);
		if (!r) {
			node_free(l);
			l = NULL;
			break;
		}
		l = node(CAP_BINARY, op, l, r);
	}
	p->depth--;
	if (p->e.failed) {
		node_free(l);
		return NULL;
	}
	return l;
}

static struct cap_node *expr(struct parser *p)
{
	return binary(p, 0);
}

static bool is_path(const struct cap_node *n)
{
	switch (n->kind) {
	case CAP_VAR:
		return true;
	case CAP_MEMBER:
	case CAP_ARROW:
	case CAP_DEREF:
	case CAP_ADDR:
		return is_path(n->l);
	case CAP_INDEX:
		return is_path(n->l);
	case CAP_STR:
		return n->l && is_path(n->l);
	default:
		return false;
	}
}

static char *trimmed(const char *s, size_t a, size_t b)
{
	while (a < b && isspace((unsigned char)s[a]))
		a++;
	while (b > a && isspace((unsigned char)s[b - 1]))
		b--;
	return dupn(s + a, b - a);
}

int capexpr_parse(const char *text, struct cap_spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (strlen(text) > CAPEXPR_MAX_TEXT) {
		errbuf_set(err, errlen, "captures and predicate are longer than %d bytes",
			   CAPEXPR_MAX_TEXT);
		return -1;
	}
	struct parser p = {.text = text, .e = {.err = err, .errlen = errlen}};
	next(&p);
	while (!p.e.failed && p.kind != T_END && !is_keyword_if(&p)) {
		if (is_op(&p, ",")) {
			next(&p);
			continue;
		}
		size_t start = p.start;
		struct cap_node *n = unary(&p);
		if (!n)
			break;
		if (!is_path(n)) {
			node_free(n);
			p.start = start;
			p.len = p.pos - start;
			p.kind = T_OP;
			fail_at(&p, "a capture is a variable path (name, .member, ->member, [index], *, &): "
				    "arithmetic belongs after \"if\"");
			break;
		}
		if (out->ncaptures == CAPEXPR_MAX_CAPTURES) {
			node_free(n);
			fail_at(&p, "too many captures (at most 8 per probe)");
			break;
		}
		char *t = trimmed(text, start, p.start);
		bool twice = false;
		for (int i = 0; i < out->ncaptures; i++)
			twice |= strcmp(out->texts[i], t) == 0;
		if (twice) {
			node_free(n);
			free(t);
			p.start = start;
			p.len = p.pos - start;
			p.kind = T_OP;
			fail_at(&p, "captured twice");
			break;
		}
		out->texts[out->ncaptures] = t;
		out->captures[out->ncaptures++] = n;
	}
	if (!p.e.failed && is_keyword_if(&p)) {
		size_t start = p.pos;
		next(&p);
		if (p.kind == T_END)
			fail_at(&p, "\"if\" needs an expression");
		else
			out->pred = expr(&p);
		if (!p.e.failed && p.kind != T_END)
			fail_at(&p, "unexpected text after the predicate");
		if (!p.e.failed)
			out->pred_text = trimmed(text, start, strlen(text));
	}
	if (p.e.failed) {
		capexpr_free(out);
		return -1;
	}
	return 0;
}

void capexpr_free(struct cap_spec *s)
{
	for (int i = 0; i < s->ncaptures; i++) {
		node_free(s->captures[i]);
		free(s->texts[i]);
	}
	node_free(s->pred);
	free(s->pred_text);
	memset(s, 0, sizeof(*s));
}

/* A word a C++ name goes on with after a blank ("operator new",
 * "f(int) const"). */
static bool continues_name(const char *before, size_t n, const char *after)
{
	static const char *const next[] = {"const", "volatile", "&", "&&", NULL};
	if (n == 6 && strncmp(before, "branch", 6) == 0) /* a branch probe's location */
		return true;
	if (n >= 8 && strncmp(before + n - 8, "operator", 8) == 0 &&
	    (n == 8 || !isalnum((unsigned char)before[n - 9])))
		return true;
	for (int i = 0; next[i]; i++) {
		size_t k = strlen(next[i]);
		if (strncmp(after, next[i], k) == 0 && (!after[k] || isspace((unsigned char)after[k])))
			return true;
	}
	return false;
}

size_t capexpr_split_spec(const char *spec, const char **tail)
{
	int depth = 0;
	size_t i = 0;
	for (; spec[i]; i++) {
		char c = spec[i];
		if (c == '(' || c == '<' || c == '[')
			depth++;
		else if ((c == ')' || c == '>' || c == ']') && depth > 0)
			depth--;
		else if ((c == ' ' || c == '\t') && depth == 0) {
			const char *t = spec + i;
			while (*t == ' ' || *t == '\t')
				t++;
			if (!continues_name(spec, i, t))
				break;
		}
	}
	const char *t = spec + i;
	while (*t == ' ' || *t == '\t')
		t++;
	*tail = t;
	return i;
}

const char *capexpr_op_text(enum cap_op op)
{
	static const char *const names[] = {
		[CAP_OP_NONE] = "", [CAP_OP_ADD] = "+", [CAP_OP_SUB] = "-", [CAP_OP_MUL] = "*",
		[CAP_OP_DIV] = "/", [CAP_OP_MOD] = "%", [CAP_OP_SHL] = "<<", [CAP_OP_SHR] = ">>",
		[CAP_OP_BAND] = "&", [CAP_OP_BOR] = "|", [CAP_OP_BXOR] = "^", [CAP_OP_EQ] = "==",
		[CAP_OP_NE] = "!=", [CAP_OP_LT] = "<", [CAP_OP_LE] = "<=", [CAP_OP_GT] = ">",
		[CAP_OP_GE] = ">=", [CAP_OP_LAND] = "&&", [CAP_OP_LOR] = "||", [CAP_OP_NEG] = "-",
		[CAP_OP_NOT] = "!", [CAP_OP_BNOT] = "~",
	};
	return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

char *capexpr_node_text(const struct cap_node *n)
{
	switch (n->kind) {
	case CAP_VAR: return xstrdup(n->name);
	case CAP_NUM: return xasprintf("%lld", (long long)n->num);
	default: break;
	}
	char *l = n->l ? capexpr_node_text(n->l) : xstrdup("");
	char *r = n->r ? capexpr_node_text(n->r) : NULL;
	char *s;
	switch (n->kind) {
	case CAP_MEMBER: s = xasprintf("%s.%s", l, n->name); break;
	case CAP_ARROW: s = xasprintf("%s->%s", l, n->name); break;
	case CAP_INDEX: s = xasprintf("%s[%s]", l, r ? r : ""); break;
	case CAP_DEREF: s = xasprintf("*%s", l); break;
	case CAP_ADDR: s = xasprintf("&%s", l); break;
	case CAP_STR: s = xasprintf("str(%s)", l); break;
	case CAP_UNARY: s = xasprintf("%s%s", capexpr_op_text(n->op), l); break;
	default: s = xasprintf("(%s %s %s)", l, capexpr_op_text(n->op), r ? r : ""); break;
	}
	free(l);
	free(r);
	return s;
}
