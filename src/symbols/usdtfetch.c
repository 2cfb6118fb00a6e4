#define _GNU_SOURCE
#include "usdtfetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarfexpr.h"
#include "errbuf.h"
#include "sonde_abi.h"
#include "util.h"

struct uctx {
	const struct usdtfetch_site *p;
	struct sonde_fetch_op *ops;
	int nops;
	char *err;
	size_t errlen;
	bool failed;
};

static int fail(struct uctx *c, const char *fmt, const char *what)
{
	if (!c->failed)
		errbuf_set(c->err, c->errlen, fmt, what);
	c->failed = true;
	return -1;
}

static void emit(struct uctx *c, uint8_t code, uint8_t a, uint16_t b, int64_t imm)
{
	if (!c->failed &&
	    dwarfexpr_emit(c->ops, &c->nops, SONDE_FETCH_OPS,
			   (struct sonde_fetch_op){.code = code, .a = a, .b = b, .imm = imm}))
		fail(c, "the captures and predicate need more than %s operations: capture fewer",
		     "128");
}

/* argN's value on the stack; *sign its signedness. */
static int compile_arg(struct uctx *c, const char *name, bool *sign)
{
	char *end;
	long i = strtol(name + 3, &end, 10);
	if (strncmp(name, "arg", 3) || end == name + 3 || *end || i < 0)
		return fail(c, "%s is not an argument: a USDT probe's are arg0, arg1, ...", name);
	if (c->p->nargs < 0)
		return fail(c, "%s: the probe has an operand sonde cannot read", name);
	if (i >= c->p->nargs) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%s (the probe has %d)", name, c->p->nargs);
		return fail(c, "no argument %s", buf);
	}
	const struct usdt_arg *a = &c->p->args[i];
	*sign = a->is_signed;
	switch (a->kind) {
	case USDT_ARG_CONST:
		emit(c, FETCH_CONST, 0, 0, a->offset);
		break;
	case USDT_ARG_REG:
		emit(c, FETCH_REG, (uint8_t)a->reg, 0, 0);
		if (a->size < 8)
			emit(c, FETCH_EXT, (uint8_t)a->size, a->is_signed, 0);
		break;
	case USDT_ARG_ADDR: /* a variable: its address in the file, moved as the file is */
		emit(c, FETCH_ADDR, 0, 0, a->offset);
		emit(c, FETCH_DEREF, (uint8_t)a->size, a->is_signed, 0);
		break;
	case USDT_ARG_MEM:
		if (a->reg == 16) /* a number off the next instruction, which the note does not name */
			return fail(c, "%s is relative to an instruction the note does not name "
				       "(a number off %%rip): sonde cannot read it", name);
		emit(c, FETCH_REG, (uint8_t)a->reg, 0, a->offset);
		emit(c, FETCH_DEREF, (uint8_t)a->size, a->is_signed, 0);
		break;
	}
	return c->failed ? -1 : 0;
}

static int compile(struct uctx *c, const struct cap_node *n, bool *sign, int depth)
{
	if (depth > CAPEXPR_MAX_DEPTH * 2)
		return fail(c, "%s", "expression nested too deep");
	bool ls = true, rs = true;
	switch (n->kind) {
	case CAP_VAR:
		return compile_arg(c, n->name, sign);
	case CAP_NUM:
		*sign = true;
		emit(c, FETCH_CONST, 0, 0, n->num);
		return c->failed ? -1 : 0;
	case CAP_UNARY:
		if (compile(c, n->l, &ls, depth + 1))
			return -1;
		emit(c, dwarfexpr_op_code(n->op), 0, 0, 0);
		*sign = true;
		return c->failed ? -1 : 0;
	case CAP_BINARY:
		if (compile(c, n->l, &ls, depth + 1) || compile(c, n->r, &rs, depth + 1))
			return -1;
		emit(c, dwarfexpr_op_code(n->op), 0, ls && rs, 0);
		*sign = true;
		return c->failed ? -1 : 0;
	case CAP_STR: {
		char *text = capexpr_node_text(n);
		fail(c, "%s: str(...) is a capture of its own, not a value in an expression", text);
		free(text);
		return -1;
	}
	default: {
		char *text = capexpr_node_text(n);
		fail(c, "%s: a USDT probe's arguments are numbers without types (no members, "
			"indexes, * or &; str(argN) reads a string)", text);
		free(text);
		return -1;
	}
	}
}

int usdtfetch_compile(const struct usdtfetch_site *p, const struct cap_spec *spec,
		      struct fetch_build *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->prog = xcalloc(1, sizeof(*out->prog));
	struct uctx c = {.p = p, .ops = out->prog->ops, .err = err, .errlen = errlen};
	out->prog->vaddr = p->vaddr;
	bool sign;
	if (spec->pred && compile(&c, spec->pred, &sign, 0) == 0)
		emit(&c, FETCH_PRED, 0, 0, 0);
	for (int i = 0; i < spec->ncaptures && !c.failed; i++) {
		struct capture_desc *d = &out->desc[i];
		d->name = xstrdup(spec->texts[i]);
		const struct cap_node *top = spec->captures[i];
		if (top->kind == CAP_STR) { /* the string at the address it holds */
			if (compile(&c, top->l, &sign, 0))
				break;
			d->kind = CAPTURE_STRING;
			d->size = CAPTURE_STR_MAX;
			d->type = xstrdup("string");
			emit(&c, FETCH_EMIT_STR, (uint8_t)i, 0, CAPTURE_STR_MAX);
			continue;
		}
		if (compile(&c, top, &sign, 0))
			break;
		/* A bare argument has its operand's size and sign. */
		const struct cap_node *n = spec->captures[i];
		d->size = 8;
		if (n->kind == CAP_VAR) {
			const struct usdt_arg *a = &p->args[strtol(n->name + 3, NULL, 10)];
			d->size = a->size;
			sign = a->is_signed;
		}
		d->kind = sign ? CAPTURE_SIGNED : CAPTURE_UNSIGNED;
		d->type = xasprintf("%s%u", sign ? "int" : "uint", d->size * 8);
		emit(&c, FETCH_EMIT, (uint8_t)i, 0, 0);
	}
	out->ndesc = spec->ncaptures;
	out->prog->nvalues = (uint32_t)spec->ncaptures;
	out->prog->nops = (uint32_t)c.nops;
	if (c.failed) {
		dwarfvar_build_free(out);
		return -1;
	}
	return 0;
}
