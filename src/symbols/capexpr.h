/* capexpr — the part of a probe spec after its location: what to capture
 * and when.
 *
 *   LOCATION [VAR...] [if EXPR]
 *
 * VAR is a C-like path to a value: a name (a local, an argument or a
 * global), then any of `.member`, `->member`, `[index]`, prefixed by `*`
 * (the pointed-to value) or `&` (the address): `len`, `req->hdr.size`,
 * `buf[3]`, `*p`, `&x`. Captures are separated by spaces or commas.
 * EXPR is a C expression over such paths and integer constants: `||`,
 * `&&`, `|`, `^`, `&`, `==` `!=`, `<` `<=` `>` `>=`, `<<` `>>`, `+` `-`,
 * `*` `/` `%`, unary `!` `~` `-` `*` `&`, parentheses; C's precedence.
 * str(PATH) captures the string at the address PATH holds (for values
 * without a type: a USDT probe's arguments).
 *
 * This module only parses: names and types are resolved against DWARF at
 * each probe address by dwarfvar.h. Input is bounded (CAPEXPR_MAX_TEXT
 * bytes, CAPEXPR_MAX_DEPTH nesting) and any text gives a tree or one line
 * of error (tests/fuzz/fuzz_capexpr.c). */
#ifndef SONDE_CAPEXPR_H
#define SONDE_CAPEXPR_H

#include <stddef.h>
#include <stdint.h>

#define CAPEXPR_MAX_TEXT 1024
#define CAPEXPR_MAX_DEPTH 32
#define CAPEXPR_MAX_CAPTURES 8 /* CAPTURE_MAX (capdesc.h) */

enum cap_kind {
	CAP_VAR,    /* name */
	CAP_NUM,    /* num */
	CAP_MEMBER, /* l.name */
	CAP_ARROW,  /* l->name */
	CAP_INDEX,  /* l[r] */
	CAP_DEREF,  /* *l */
	CAP_ADDR,   /* &l */
	CAP_UNARY,  /* op l: '-', '!', '~' */
	CAP_BINARY, /* l op r */
	CAP_STR,    /* str(l): the NUL-terminated string at address l (USDT
		     * arguments, which carry no type: usdtfetch.h) */
};

/* Binary operators. */
enum cap_op {
	CAP_OP_NONE,
	CAP_OP_ADD, CAP_OP_SUB, CAP_OP_MUL, CAP_OP_DIV, CAP_OP_MOD,
	CAP_OP_SHL, CAP_OP_SHR, CAP_OP_BAND, CAP_OP_BOR, CAP_OP_BXOR,
	CAP_OP_EQ, CAP_OP_NE, CAP_OP_LT, CAP_OP_LE, CAP_OP_GT, CAP_OP_GE,
	CAP_OP_LAND, CAP_OP_LOR,
	CAP_OP_NEG, CAP_OP_NOT, CAP_OP_BNOT, /* unary */
};

struct cap_node {
	enum cap_kind kind;
	enum cap_op op;
	char *name;  /* CAP_VAR, CAP_MEMBER, CAP_ARROW */
	int64_t num; /* CAP_NUM */
	struct cap_node *l, *r;
};

struct cap_spec {
	struct cap_node *captures[CAPEXPR_MAX_CAPTURES];
	char *texts[CAPEXPR_MAX_CAPTURES]; /* each capture as written: its name in reports */
	int ncaptures;
	struct cap_node *pred; /* NULL: every hit */
	char *pred_text;
};

/* Parses the text after a probe's location ("" is valid: nothing
 * captured, no predicate). Returns 0, or -1 with one line in err (what is
 * wrong, and where) and *out empty. */
int capexpr_parse(const char *text, struct cap_spec *out, char *err, size_t errlen);

void capexpr_free(struct cap_spec *s);

/* Splits a --trace spec "LOCATION [VAR...] [if EXPR]" at the first blank
 * outside (), <> and [] that does not continue a C++ name ("operator new",
 * "f(int) const"): returns the length of LOCATION; *tail points at the
 * rest ("" if none). */
size_t capexpr_split_spec(const char *spec, const char **tail);

/* The operator as C writes it ("<=", "&&", "-"...). */
const char *capexpr_op_text(enum cap_op op);

/* A path or expression of the tree as text ("c->buf[i]", "(len > 4096)"),
 * malloc'd: how errors name the part they are about. */
char *capexpr_node_text(const struct cap_node *n);

#endif
