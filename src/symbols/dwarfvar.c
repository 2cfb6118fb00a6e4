/* dwarfvar — DWARF variables at a probe address -> a fetch program (see
 * dwarfvar.h). A path is compiled bottom-up: each step leaves a `val` that
 * says where the value is (its address on the machine's stack, a register,
 * or the value itself on the stack) and its DWARF type; a capture ends by
 * reading the value (or a string at it) into its slot. */
#include "dwarfvar.h"

#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "dwarfdie.h"
#include "dwarfexpr.h"
#include "errbuf.h"
#include "probes.h"
#include "sonde_abi.h"
#include "util.h"

struct val {
	enum dwarfexpr_where where;
	int reg;
	Dwarf_Die type; /* valid when has_type */
	bool has_type;
	/* A type made here (&x: a pointer to type; a constant: int). */
	enum { SYN_NONE, SYN_PTR_TO, SYN_INT } syn;
	bool loclist;   /* its location came from a location list */
	bool abi;       /* an argument read where the calling convention puts it */
	uint8_t status; /* CAPTURE_OK, or why the value cannot be read here */
	char why[96];
};

struct ctx {
	const char *binary;
	int fd, dbg_fd;
	Elf *elf, *dbg_elf;
	Dwarf *dw;
	struct cfi_table *cfi;
	uint64_t vaddr;
	Dwarf_Die cu;
	Dwarf_Die *scopes;
	int nscopes;
	struct sonde_fetch_op *ops;
	int nops;
	struct errbuf e; /* the first failure: what comes after it follows from it */
};

/* ---- the program ------------------------------------------------------- */

static void emit(struct ctx *c, uint8_t code, uint8_t a, uint16_t b, int64_t imm)
{
	if (c->e.failed)
		return;
	if (dwarfexpr_emit(c->ops, &c->nops, SONDE_FETCH_OPS,
			   (struct sonde_fetch_op){.code = code, .a = a, .b = b, .imm = imm}))
		errbuf_first(&c->e,
			     "the captures and predicate need more than %d operations: capture fewer",
			     SONDE_FETCH_OPS);
}

/* ---- types ---------------------------------------------------------------- */

static char *val_type_name(const struct val *v)
{
	char buf[300];
	if (v->syn == SYN_INT)
		return xstrdup("long");
	Dwarf_Die t = v->type;
	dwarfdie_type_name(&t, v->has_type, buf, sizeof(buf), 0);
	if (v->syn == SYN_PTR_TO)
		return xasprintf("%s *", buf);
	return xstrdup(buf);
}

/* The stripped type of a value (false: void). */
static bool val_stripped(const struct val *v, Dwarf_Die *out)
{
	if (!v->has_type)
		return false;
	*out = v->type;
	return dwarfdie_strip(out);
}

/* ---- names ------------------------------------------------------------- */

/* A definition (with a location) of global `name`: in the probe's compile
 * unit first, then in any other. */
static bool find_global(struct ctx *c, const char *name, Dwarf_Die *out)
{
	if (dwarfdie_find_definition(&c->cu, name, out))
		return true;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(c->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(c->dw, off + hsize, &cu) && dwarfdie_find_definition(&cu, name, out))
			return true;
		off = next;
	}
	return false;
}

/* The names visible at the address, for an error line. */
static void visible_names(struct ctx *c, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (int s = 0; s < c->nscopes; s++) {
		Dwarf_Die child;
		if (dwarf_child(&c->scopes[s], &child) != 0)
			continue;
		do {
			int tag = dwarf_tag(&child);
			if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
				continue;
			const char *n = dwarf_diename(&child);
			if (!n || len + strlen(n) + 8 >= size)
				continue;
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", n);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (!len)
		snprintf(buf, size, "none");
}

static bool at_entry(struct ctx *c);

/* Where the address is, for an error line: "FUNC (FILE:LINE)" at a
 * function's entry, "FILE:LINE" at a line inside one (as a line probe is
 * written). */
static void where_text(struct ctx *c, char *buf, size_t size)
{
	const char *fn = NULL;
	for (int s = 0; s < c->nscopes && !fn; s++) {
		int tag = dwarf_tag(&c->scopes[s]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
			fn = dwarf_diename(&c->scopes[s]);
	}
	Dwarf_Line *line = dwarf_getsrc_die(&c->cu, c->vaddr);
	int lineno = 0;
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	if (line)
		dwarf_lineno(line, &lineno);
	const char *base = file ? strrchr(file, '/') : NULL;
	if (file && lineno && !at_entry(c))
		snprintf(buf, size, "%s:%d", base ? base + 1 : file, lineno);
	else if (file && lineno)
		snprintf(buf, size, "%s (%s:%d)", fn ? fn : "0x?", base ? base + 1 : file, lineno);
	else
		snprintf(buf, size, "%s", fn ? fn : "this address");
}

/* The out-of-line function whose code holds the address: the one whose
 * frame the machine is in. For an inlined instance, dwarf_getscopes gives
 * the abstract definition of the inlined function after it, not the
 * function it was inlined into, whose frame base its locations use (an
 * -O0 always_inline argument is DW_OP_fbreg of the inlining function). */
static bool machine_function(struct ctx *c, Dwarf_Die *out)
{
	Dwarf_Die child;
	if (dwarf_child(&c->cu, &child) != 0)
		return false;
	do {
		if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, c->vaddr) == 1) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The frame base expression of the function whose frame holds the
 * address (machine_function; else the innermost subprogram scope). */
static bool frame_base(struct ctx *c, Dwarf_Op **fb, size_t *nfb)
{
	Dwarf_Die fn, *f = NULL;
	if (machine_function(c, &fn))
		f = &fn;
	for (int s = 0; s < c->nscopes && !f; s++)
		if (dwarf_tag(&c->scopes[s]) == DW_TAG_subprogram)
			f = &c->scopes[s];
	Dwarf_Attribute a;
	if (!f || !dwarf_attr_integrate(f, DW_AT_frame_base, &a))
		return false;
	return dwarf_getlocation_addr(&a, c->vaddr, fb, nfb, 1) == 1;
}

static uint32_t cfa_rule_here(struct ctx *c)
{
	const struct cfi_row *row = c->cfi ? cfi_table_find(c->cfi, c->vaddr) : NULL;
	return row ? row->rule : 0;
}

/* The innermost function holding the address, and whether the address is
 * its entry (before its prologue). */
static Dwarf_Die *function_scope(struct ctx *c)
{
	for (int s = 0; s < c->nscopes; s++)
		if (dwarf_tag(&c->scopes[s]) == DW_TAG_subprogram)
			return &c->scopes[s];
	return NULL;
}

static bool at_entry(struct ctx *c)
{
	Dwarf_Die *fn = function_scope(c);
	Dwarf_Addr lo;
	return fn && dwarf_entrypc(fn, &lo) == 0 && lo == c->vaddr;
}

/* A parameter at its function's entry, where the compiler's location (a
 * stack slot the prologue fills, at -O0) does not hold it yet: where the
 * x86-64 System V calling convention puts it. Integers and pointers only,
 * after integer and pointer parameters only (a struct or float before it
 * makes its place depend on rules sonde does not follow). Returns true
 * with v set, false when it cannot say. */
static bool abi_parameter(struct ctx *c, Dwarf_Die *param, struct val *v)
{
	static const int regs[] = {5, 4, 1, 2, 8, 9}; /* rdi rsi rdx rcx r8 r9 */
	Dwarf_Die *fn = function_scope(c);
	Dwarf_Die child, rt;
	if (!fn || dwarf_child(fn, &child) != 0)
		return false;
	/* A struct returned in memory takes rdi. */
	int k = 0;
	if (dwarfdie_type(fn, &rt) && dwarfdie_strip(&rt) &&
	    (dwarf_tag(&rt) == DW_TAG_structure_type || dwarf_tag(&rt) == DW_TAG_union_type))
		return false;
	do {
		if (dwarf_tag(&child) != DW_TAG_formal_parameter)
			continue;
		Dwarf_Die t;
		if (!dwarfdie_type(&child, &t) || !dwarfdie_is_integer(&t))
			return false;
		if (dwarf_dieoffset(&child) == dwarf_dieoffset(param)) {
			if (k < 6) {
				v->where = DWARFEXPR_REG;
				v->reg = regs[k];
			} else { /* on the stack, above the return address */
				emit(c, FETCH_REG, 7, 0, 8 + 8 * (k - 6));
				v->where = DWARFEXPR_MEM;
			}
			return !c->e.failed;
		}
		k++;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* libdw's operations as dwarfexpr reads them (allocated). */
static struct dwarfexpr_op *expr_ops(const Dwarf_Op *e, size_t n)
{
	struct dwarfexpr_op *ops = xmalloc((n ? n : 1) * sizeof(*ops));
	for (size_t i = 0; i < n; i++)
		ops[i] = (struct dwarfexpr_op){e[i].atom, e[i].number, e[i].number2};
	return ops;
}

/* A location that is one expression for the whole function (not a list)
 * and is a stack slot: at -O0 it holds the value only after the prologue. */
static bool slot_after_prologue(Dwarf_Attribute *a, const Dwarf_Op *e, size_t n)
{
	int form = dwarf_whatform(a);
	if (form == DW_FORM_sec_offset || form == DW_FORM_loclistx || form == DW_FORM_data4 ||
	    form == DW_FORM_data8)
		return false; /* a location list: valid where it says */
	for (size_t i = 0; i < n; i++)
		if (e[i].atom == DW_OP_fbreg || e[i].atom == DW_OP_breg6 || e[i].atom == DW_OP_breg7 ||
		    e[i].atom == DW_OP_call_frame_cfa)
			return true;
	return false;
}

/* Resolves variable `die` into v: its location at the address. */
static int load_variable(struct ctx *c, Dwarf_Die *die, const char *name, struct val *v)
{
	memset(v, 0, sizeof(*v));
	v->has_type = dwarfdie_type(die, &v->type);
	Dwarf_Attribute a;
	if (dwarf_attr_integrate(die, DW_AT_const_value, &a)) {
		Dwarf_Sword sv;
		Dwarf_Word uv;
		if (dwarf_formsdata(&a, &sv) == 0)
			emit(c, FETCH_CONST, 0, 0, sv);
		else if (dwarf_formudata(&a, &uv) == 0)
			emit(c, FETCH_CONST, 0, 0, (int64_t)uv);
		else
			return errbuf_first(&c->e,
					    "%s is a constant sonde cannot read (not an integer)", name);
		v->where = DWARFEXPR_VAL;
		return c->e.failed ? -1 : 0;
	}
	if (!dwarf_hasattr_integrate(die, DW_AT_location) &&
	    dwarf_hasattr_integrate(die, DW_AT_declaration))
		return errbuf_first(&c->e, "%s is declared in %s but defined in another binary (a library): "
					   "capture it in a probe on that binary",
					name, c->binary);
	Dwarf_Op *expr;
	size_t n;
	int got = dwarf_attr_integrate(die, DW_AT_location, &a)
			  ? dwarf_getlocation_addr(&a, c->vaddr, &expr, &n, 1)
			  : 0;
	if (got <= 0 || n == 0) {
		v->status = CAPTURE_OPTIMIZED_OUT;
		snprintf(v->why, sizeof(v->why), "optimized out");
		return 0;
	}
	if (dwarf_tag(die) == DW_TAG_formal_parameter && at_entry(c) &&
	    slot_after_prologue(&a, expr, n)) {
		if (abi_parameter(c, die, v)) {
			v->abi = true;
			return 0;
		}
		if (c->e.failed)
			return -1;
		v->status = CAPTURE_UNAVAILABLE;
		snprintf(v->why, sizeof(v->why),
			 "not available at the entry: its stack slot is filled after the prologue");
		return 0;
	}
	/* DW_OP_addrx: the address comes from .debug_addr. */
	struct dwarfexpr_op *copy = expr_ops(expr, n);
	for (size_t i = 0; i < n; i++) {
		if (copy[i].atom != DW_OP_addrx && copy[i].atom != DW_OP_GNU_addr_index)
			continue;
		Dwarf_Attribute r;
		Dwarf_Addr addr;
		if (dwarf_getlocation_attr(&a, &expr[i], &r) || dwarf_formaddr(&r, &addr)) {
			free(copy);
			return errbuf_first(&c->e, "%s: DW_OP_addrx whose address sonde cannot find", name);
		}
		copy[i].number = addr;
		copy[i].number2 = 1;
	}
	Dwarf_Op *fb = NULL;
	size_t nfb = 0;
	frame_base(c, &fb, &nfb);
	struct dwarfexpr_op *fbops = fb ? expr_ops(fb, nfb) : NULL;
	struct dwarfexpr_input in = {.expr = copy,
				     .n = n,
				     .fb = fbops,
				     .nfb = fbops ? nfb : 0,
				     .cfa_rule = cfa_rule_here(c)};
	struct dwarfexpr_output out = {.ops = c->ops + c->nops,
				       .max = SONDE_FETCH_OPS - c->nops,
				       .where = DWARFEXPR_MEM};
	char why[256];
	int k = dwarfexpr_translate(&in, &out, why, sizeof(why));
	int where = out.where, reg = out.reg;
	free(copy);
	free(fbops);
	if (k < 0) {
		char at[256];
		where_text(c, at, sizeof(at));
		return errbuf_first(&c->e, "%s at %s: %s", name, at, why);
	}
	c->nops += k;
	v->where = where;
	v->reg = reg;
	int form = dwarf_whatform(&a);
	v->loclist = form == DW_FORM_sec_offset || form == DW_FORM_loclistx ||
		     form == DW_FORM_data4 || form == DW_FORM_data8;
	if (where == DWARFEXPR_UNAVAILABLE) {
		v->status = CAPTURE_UNAVAILABLE;
		snprintf(v->why, sizeof(v->why),
			 "not available at this address (DW_OP_entry_value: its value at the call)");
	}
	return 0;
}

/* ---- compiling paths ------------------------------------------------------ */

static int compile(struct ctx *c, const struct cap_node *n, struct val *v, int depth);

/* Puts the value itself on the stack (DWARFEXPR_VAL), reading it where it is. */
static int rvalue(struct ctx *c, struct val *v, const char *what)
{
	if (v->status)
		return 0;
	Dwarf_Die t;
	bool typed = val_stripped(v, &t);
	uint64_t size = v->syn ? 8 : typed ? dwarfdie_type_size(&t) : 0;
	int tag = typed && !v->syn ? dwarf_tag(&t) : 0;
	if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_array_type)
		return errbuf_first(&c->e, "%s is a %s, not a number", what, val_type_name(v));
	if (!v->syn && (!typed || size == 0 || size > 8))
		return errbuf_first(&c->e, "%s has type %s, which sonde cannot read as a value", what,
					val_type_name(v));
	bool sign = false;
	if (tag == DW_TAG_base_type || tag == DW_TAG_enumeration_type) {
		Dwarf_Attribute a;
		Dwarf_Word enc = 0;
		Dwarf_Die base = t;
		if (tag == DW_TAG_enumeration_type && dwarfdie_type(&t, &base))
			dwarfdie_strip(&base);
		if (dwarf_attr(&base, DW_AT_encoding, &a))
			dwarf_formudata(&a, &enc);
		sign = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	}
	if (v->syn)
		size = 8;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return errbuf_first(&c->e, "%s is %llu bytes: sonde reads values of 1, 2, 4 or 8", what,
					(unsigned long long)size);
	if (v->where == DWARFEXPR_MEM)
		emit(c, FETCH_DEREF, (uint8_t)size, sign, 0);
	else if (v->where == DWARFEXPR_REG)
		emit(c, FETCH_REG, (uint8_t)v->reg, 0, 0);
	if (v->where != DWARFEXPR_MEM && size < 8)
		emit(c, FETCH_EXT, (uint8_t)size, sign, 0);
	v->where = DWARFEXPR_VAL;
	return c->e.failed ? -1 : 0;
}


static int compile_member(struct ctx *c, const struct cap_node *n, struct val *v, int depth)
{
	if (compile(c, n->l, v, depth + 1))
		return -1;
	char *what = capexpr_node_text(n->l);
	Dwarf_Die t;
	int rc = -1;
	if (n->kind == CAP_ARROW) {
		if (!val_stripped(v, &t) || dwarf_tag(&t) != DW_TAG_pointer_type) {
			if (!v->status)
				errbuf_first(&c->e, "%s is a %s, not a pointer: use \".\"", what,
					     val_type_name(v));
			goto out;
		}
		if (rvalue(c, v, what))
			goto out;
		Dwarf_Die pt;
		v->has_type = dwarfdie_type(&t, &pt);
		v->type = pt;
		v->where = DWARFEXPR_MEM;
	}
	if (!val_stripped(v, &t) ||
	    (dwarf_tag(&t) != DW_TAG_structure_type && dwarf_tag(&t) != DW_TAG_union_type)) {
		Dwarf_Die pt;
		if (v->status) {
		} else if (dwarf_tag(&t) == DW_TAG_pointer_type && dwarfdie_type(&t, &pt) && dwarfdie_strip(&pt) &&
			   (dwarf_tag(&pt) == DW_TAG_structure_type || dwarf_tag(&pt) == DW_TAG_union_type))
			errbuf_first(&c->e, "%s is a %s: use %s->%s", what, val_type_name(v), what, n->name);
		else
			errbuf_first(&c->e, "%s is a %s, which has no members", what, val_type_name(v));
		goto out;
	}
	Dwarf_Die m;
	uint64_t off = 0;
	if (!dwarfdie_find_member(&t, n->name, &m, &off, 0)) {
		char names[256];
		dwarfdie_member_names(&t, names, sizeof(names));
		errbuf_first(&c->e, "%s has no member \"%s\" (%s has: %s)", what, n->name,
			     val_type_name(v), names);
		goto out;
	}
	if (dwarf_hasattr(&m, DW_AT_bit_size)) {
		errbuf_first(&c->e, "%s.%s is a bit-field: sonde does not read bit-fields", what, n->name);
		goto out;
	}
	if (!v->status) {
		if (v->where == DWARFEXPR_MEM) {
			if (off) {
				emit(c, FETCH_CONST, 0, 0, (int64_t)off);
				emit(c, FETCH_ADD, 0, 0, 0);
			}
		} else {
			/* A small struct held in a register or computed: its bytes. */
			if (v->where == DWARFEXPR_REG)
				emit(c, FETCH_REG, (uint8_t)v->reg, 0, 0);
			if (off) {
				emit(c, FETCH_CONST, 0, 0, (int64_t)off * 8);
				emit(c, FETCH_SHR, 0, 0, 0);
			}
			v->where = DWARFEXPR_VAL;
		}
	}
	v->has_type = dwarfdie_type(&m, &v->type);
	rc = c->e.failed ? -1 : 0;
out:
	free(what);
	return c->e.failed ? -1 : rc;
}

static int compile_index(struct ctx *c, const struct cap_node *n, struct val *v, int depth)
{
	if (compile(c, n->l, v, depth + 1))
		return -1;
	char *what = capexpr_node_text(n->l);
	Dwarf_Die t, elem;
	int rc = -1;
	if (!val_stripped(v, &t) ||
	    (dwarf_tag(&t) != DW_TAG_array_type && dwarf_tag(&t) != DW_TAG_pointer_type)) {
		if (!v->status)
			errbuf_first(&c->e, "%s is a %s, not an array or a pointer", what, val_type_name(v));
		goto out;
	}
	bool array = dwarf_tag(&t) == DW_TAG_array_type;
	bool has_elem = dwarfdie_type(&t, &elem);
	uint64_t esize = has_elem ? dwarfdie_type_size(&elem) : 0;
	if (!esize) {
		errbuf_first(&c->e, "%s: elements of unknown size", what);
		goto out;
	}
	if (array && n->r->kind == CAP_NUM) {
		Dwarf_Word total;
		if (dwarf_aggregate_size(&t, &total) == 0 && total / esize > 0 &&
		    (uint64_t)n->r->num >= total / esize) {
			errbuf_first(&c->e, "%s[%lld] is out of bounds: %s has %llu elements", what,
					 (long long)n->r->num, what, (unsigned long long)(total / esize));
			goto out;
		}
	}
	if (!v->status) {
		if (array && v->where != DWARFEXPR_MEM) {
			errbuf_first(&c->e,
				     "%s is an array held outside memory here: sonde cannot index it",
				     what);
			goto out;
		}
		if (!array && rvalue(c, v, what))
			goto out;
		struct val iv;
		if (compile(c, n->r, &iv, depth + 1))
			goto out;
		char *itext = capexpr_node_text(n->r);
		int r = iv.status ? errbuf_first(&c->e, "index %s is %s", itext, iv.why)
				  : rvalue(c, &iv, itext);
		free(itext);
		if (r)
			goto out;
		emit(c, FETCH_CONST, 0, 0, (int64_t)esize);
		emit(c, FETCH_MUL, 0, 0, 0);
		emit(c, FETCH_ADD, 0, 0, 0);
	}
	v->where = DWARFEXPR_MEM;
	v->type = elem;
	v->has_type = true;
	v->syn = SYN_NONE;
	rc = 0;
out:
	free(what);
	return c->e.failed ? -1 : rc;
}

/* A variable by name: in the scopes holding the address, innermost first
 * (an extern declaration there by its definition), else a global. */
static int compile_var(struct ctx *c, const struct cap_node *n, struct val *v)
{
	Dwarf_Die d;
	bool found = false;
	for (int s = 0; s < c->nscopes && !found; s++)
		found = dwarfdie_find_in_scope(&c->scopes[s], n->name, &d);
	if (found && !dwarfdie_has_location(&d) && dwarf_hasattr_integrate(&d, DW_AT_declaration)) {
		Dwarf_Die def; /* extern: defined in another unit */
		if (find_global(c, n->name, &def))
			d = def;
	}
	if (!found)
		found = find_global(c, n->name, &d);
	if (!found) {
		char at[256], names[512];
		where_text(c, at, sizeof(at));
		visible_names(c, names, sizeof(names));
		return errbuf_first(&c->e, "%s is not visible at %s; visible: %s", n->name,
				    at, names);
	}
	return load_variable(c, &d, n->name, v);
}

/* *P: the value P points at (its address is P's value). */
static int compile_deref(struct ctx *c, const struct cap_node *n, struct val *v, int depth)
{
	if (compile(c, n->l, v, depth + 1))
		return -1;
	char *what = capexpr_node_text(n->l);
	Dwarf_Die t, pt;
	if (!val_stripped(v, &t) || dwarf_tag(&t) != DW_TAG_pointer_type) {
		if (!v->status)
			errbuf_first(&c->e, "%s is a %s, not a pointer", what, val_type_name(v));
	} else if (!dwarfdie_type(&t, &pt)) {
		errbuf_first(&c->e, "%s is a void pointer: it points at nothing sonde can read",
			     what);
	} else {
		if (!v->status)
			rvalue(c, v, what);
		v->type = pt;
		v->where = DWARFEXPR_MEM;
	}
	free(what);
	return c->e.failed ? -1 : 0;
}

/* &X: X's address, as a value (X must be in memory). */
static int compile_addr(struct ctx *c, const struct cap_node *n, struct val *v, int depth)
{
	if (compile(c, n->l, v, depth + 1))
		return -1;
	if (!v->status && v->where != DWARFEXPR_MEM) {
		char *what = capexpr_node_text(n->l);
		errbuf_first(&c->e, "%s has no address here (it is %s)", what,
			     v->where == DWARFEXPR_REG ? "in a register" : "a computed value");
		free(what);
		return -1;
	}
	v->where = DWARFEXPR_VAL;
	v->syn = SYN_PTR_TO;
	return 0;
}

/* An operand of the predicate, its value put on the stack: 0 with *sign
 * (false for a 64-bit value or a pointer, which a signed comparison would
 * get wrong), or -1. */
static int compile_operand(struct ctx *c, const struct cap_node *n, int depth, bool *sign)
{
	struct val v;
	char *text = capexpr_node_text(n);
	int rc = compile(c, n, &v, depth);
	if (!rc && v.status)
		rc = errbuf_first(&c->e, "the predicate reads %s, which is %s", text, v.why);
	if (!rc)
		rc = rvalue(c, &v, text);
	free(text);
	if (rc)
		return -1;
	Dwarf_Die t;
	*sign = true;
	if (!v.syn && val_stripped(&v, &t))
		*sign = !(dwarf_tag(&t) == DW_TAG_pointer_type || dwarfdie_type_size(&t) == 8);
	return 0;
}

/* A unary or binary operator of the predicate over its operands' values. */
static int compile_operator(struct ctx *c, const struct cap_node *n, struct val *v, int depth)
{
	bool lsign, rsign = true;
	if (compile_operand(c, n->l, depth + 1, &lsign))
		return -1;
	if (n->kind == CAP_UNARY) {
		emit(c, dwarfexpr_op_code(n->op), 0, 0, 0);
	} else {
		if (compile_operand(c, n->r, depth + 1, &rsign))
			return -1;
		/* Values are extended to 64 bits: a signed comparison is right
		 * unless a side is a 64-bit unsigned value or a pointer. */
		emit(c, dwarfexpr_op_code(n->op), 0, lsign && rsign, 0);
	}
	v->where = DWARFEXPR_VAL;
	v->syn = SYN_INT;
	return c->e.failed ? -1 : 0;
}

/* A path or a predicate's expression, bottom-up: *v says where its value
 * is and its type. */
static int compile(struct ctx *c, const struct cap_node *n, struct val *v, int depth)
{
	if (depth > CAPEXPR_MAX_DEPTH * 2)
		return errbuf_first(&c->e, "expression nested too deep");
	memset(v, 0, sizeof(*v));
	switch (n->kind) {
	case CAP_VAR:
		return compile_var(c, n, v);
	case CAP_NUM:
		emit(c, FETCH_CONST, 0, 0, n->num);
		v->where = DWARFEXPR_VAL;
		v->syn = SYN_INT;
		return c->e.failed ? -1 : 0;
	case CAP_MEMBER:
	case CAP_ARROW:
		return compile_member(c, n, v, depth);
	case CAP_INDEX:
		return compile_index(c, n, v, depth);
	case CAP_DEREF:
		return compile_deref(c, n, v, depth);
	case CAP_ADDR:
		return compile_addr(c, n, v, depth);
	case CAP_UNARY:
	case CAP_BINARY:
		return compile_operator(c, n, v, depth);
	case CAP_STR:
		return errbuf_first(&c->e, "str(...) is for values without a type (USDT "
					   "arguments): a char * or char array is read as a string "
					   "already");
	}
	return errbuf_first(&c->e, "unknown expression");
}

/* ---- captures ------------------------------------------------------------ */

static void describe(struct capture_desc *d, const struct val *v)
{
	d->type = val_type_name(v);
	Dwarf_Die t;
	bool typed = val_stripped(v, &t);
	d->kind = CAPTURE_SIGNED;
	d->size = 8;
	if (v->syn == SYN_PTR_TO) {
		d->kind = CAPTURE_POINTER;
		return;
	}
	if (v->syn == SYN_INT || !typed)
		return;
	d->size = (uint32_t)dwarfdie_type_size(&t);
	int tag = dwarf_tag(&t);
	if (tag == DW_TAG_pointer_type) {
		d->kind = CAPTURE_POINTER;
		return;
	}
	Dwarf_Die base = t;
	if (tag == DW_TAG_enumeration_type) {
		d->kind = CAPTURE_ENUM;
		Dwarf_Die e;
		if (dwarf_child(&t, &e) == 0) {
			do {
				Dwarf_Attribute a;
				Dwarf_Sword sv;
				if (dwarf_tag(&e) != DW_TAG_enumerator ||
				    !dwarf_attr(&e, DW_AT_const_value, &a) || dwarf_formsdata(&a, &sv))
					continue;
				d->enums = xrealloc(d->enums, (d->nenums + 1) * sizeof(*d->enums));
				d->enums[d->nenums].value = sv;
				d->enums[d->nenums++].name = xstrdup(dwarf_diename(&e) ? dwarf_diename(&e) : "?");
			} while (dwarf_siblingof(&e, &e) == 0);
		}
		return;
	}
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	if (dwarf_attr(&base, DW_AT_encoding, &a))
		dwarf_formudata(&a, &enc);
	if (enc == DW_ATE_boolean)
		d->kind = CAPTURE_BOOL;
	else if (enc == DW_ATE_float)
		d->kind = CAPTURE_FLOAT;
	else if (enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char)
		d->kind = CAPTURE_UNSIGNED;
}

static int compile_capture(struct ctx *c, const struct cap_node *n, const char *text, int slot,
			   struct capture_desc *d)
{
	int start = c->nops;
	struct val v;
	d->name = xstrdup(text);
	if (compile(c, n, &v, 0))
		return -1;
	Dwarf_Die t, elem;
	bool typed = val_stripped(&v, &t);
	int tag = typed && !v.syn ? dwarf_tag(&t) : 0;
	if (v.status) {
		c->nops = start;
		describe(d, &v);
		d->status = v.status;
		snprintf(d->why, sizeof(d->why), "%s", v.why);
		emit(c, FETCH_STATUS, (uint8_t)slot, v.status, 0);
		return c->e.failed ? -1 : 0;
	}
	bool chars = (tag == DW_TAG_array_type || tag == DW_TAG_pointer_type) &&
		     dwarfdie_type(&t, &elem) && dwarfdie_is_char(&elem);
	if (chars) {
		d->type = val_type_name(&v);
		d->kind = CAPTURE_STRING;
		uint64_t max = CAPTURE_STR_MAX;
		if (tag == DW_TAG_array_type) {
			if (v.where != DWARFEXPR_MEM)
				return errbuf_first(&c->e,
						    "%s is a char array held outside memory here", text);
			Dwarf_Word total;
			if (dwarf_aggregate_size(&t, &total) == 0 && total && total < max)
				max = total + 1 > max ? max : total + 1;
		} else if (rvalue(c, &v, text)) {
			return -1;
		}
		d->size = (uint32_t)max;
		emit(c, FETCH_EMIT_STR, (uint8_t)slot, 0, (int64_t)max);
		return c->e.failed ? -1 : 0;
	}
	if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) {
		char names[256];
		dwarfdie_member_names(&t, names, sizeof(names));
		char *tn = val_type_name(&v);
		errbuf_first(&c->e, "%s is a %s: capture one of its members (%s)", text, tn, names);
		free(tn);
		return -1;
	}
	if (tag == DW_TAG_array_type) {
		char *tn = val_type_name(&v);
		errbuf_first(&c->e, "%s is an array (%s): capture an element, like %s[0]", text, tn, text);
		free(tn);
		return -1;
	}
	describe(d, &v);
	if (rvalue(c, &v, text))
		return -1;
	emit(c, FETCH_EMIT, (uint8_t)slot, 0, 0);
	return c->e.failed ? -1 : 0;
}

/* ---- opening -------------------------------------------------------------- */

static bool has_cus(Dwarf *dw)
{
	Dwarf_Off next;
	size_t hsize;
	return dw && dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL) == 0;
}

/* The compile unit holding the address by its ranges: DWARF 5 from clang
 * has no .debug_aranges, which dwarf_addrdie reads. */
static bool cu_by_ranges(struct ctx *c)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(c->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(c->dw, off + hsize, &cu) && dwarf_haspc(&cu, c->vaddr) == 1) {
			c->cu = cu;
			return true;
		}
		off = next;
	}
	return false;
}

static void ctx_close(struct ctx *c)
{
	free(c->scopes);
	if (c->dw)
		dwarf_end(c->dw);
	if (c->dbg_elf)
		elf_end(c->dbg_elf);
	if (c->dbg_fd >= 0)
		close(c->dbg_fd);
	if (c->elf)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	cfi_table_free(c->cfi);
}

static int ctx_open(struct ctx *c, const char *binary, uint64_t file_offset, char *err,
		    size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->fd = c->dbg_fd = -1;
	c->binary = binary;
	c->e = (struct errbuf){.err = err, .errlen = errlen};
#if !defined(__x86_64__)
	return errbuf_first(&c->e, "captures are read on x86-64 only (DWARF register numbers)");
#endif
	elf_version(EV_CURRENT);
	c->fd = open(binary, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0)
		return errbuf_first(&c->e, "cannot open %s: %s", binary, strerror(errno));
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF)
		return errbuf_first(&c->e, "%s is not an ELF file", binary);
	char why[256];
	c->cfi = cfi_table_from_fd(c->fd, binary, why, sizeof(why));
	if (!c->cfi || !cfi_table_vaddr(c->cfi, file_offset, &c->vaddr))
		return errbuf_first(&c->e, "offset 0x%llx of %s is in no loaded segment",
					(unsigned long long)file_offset, binary);
	c->dw = dwarf_begin_elf(c->elf, DWARF_C_READ, NULL);
	if (!has_cus(c->dw)) {
		if (c->dw)
			dwarf_end(c->dw);
		c->dw = NULL;
		c->dbg_fd = probes_debug_file(c->elf, binary, &c->dbg_elf);
		if (c->dbg_fd >= 0)
			c->dw = dwarf_begin_elf(c->dbg_elf, DWARF_C_READ, NULL);
	}
	if (!has_cus(c->dw))
		return errbuf_first(&c->e,
				    "%s has no DWARF debug info: install its debug symbols (the -dbgsym "
				    "package, or libc6-dbg for libc) or rebuild it with -g",
				    binary);
	if (!dwarf_addrdie(c->dw, c->vaddr, &c->cu) && !cu_by_ranges(c))
		return errbuf_first(&c->e,
				    "no DWARF compile unit of %s covers address 0x%llx (built without -g?)",
				    binary, (unsigned long long)c->vaddr);
	c->nscopes = dwarf_getscopes(&c->cu, c->vaddr, &c->scopes);
	if (c->nscopes <= 0) {
		c->nscopes = 1;
		c->scopes = xmalloc(sizeof(*c->scopes));
		c->scopes[0] = c->cu;
	}
	return 0;
}

int dwarfvar_compile(const char *binary, uint64_t file_offset, const struct cap_spec *spec,
		     struct fetch_build *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct ctx c;
	if (ctx_open(&c, binary, file_offset, err, errlen)) {
		ctx_close(&c);
		return -1;
	}
	out->prog = xcalloc(1, sizeof(*out->prog));
	c.ops = out->prog->ops;
	out->prog->vaddr = c.vaddr;
	/* The predicate first: a hit that fails it stops there. */
	if (spec->pred) {
		struct val v;
		if (compile(&c, spec->pred, &v, 0) == 0) {
			if (v.status)
				errbuf_first(&c.e, "the predicate is %s here", v.why);
			else if (rvalue(&c, &v, spec->pred_text) == 0)
				emit(&c, FETCH_PRED, 0, 0, 0);
		}
	}
	for (int i = 0; i < spec->ncaptures && !c.e.failed; i++)
		compile_capture(&c, spec->captures[i], spec->texts[i], i, &out->desc[i]);
	out->ndesc = spec->ncaptures;
	out->prog->nvalues = (uint32_t)spec->ncaptures;
	out->prog->nops = (uint32_t)c.nops;
	int rc = c.e.failed ? -1 : 0;
	ctx_close(&c);
	if (rc)
		dwarfvar_build_free(out);
	return rc;
}

void dwarfvar_build_free(struct fetch_build *b)
{
	for (int i = 0; i < CAPTURE_MAX; i++) {
		free(b->desc[i].name);
		free(b->desc[i].type);
		for (uint32_t k = 0; k < b->desc[i].nenums; k++)
			free(b->desc[i].enums[k].name);
		free(b->desc[i].enums);
	}
	free(b->prog);
	memset(b, 0, sizeof(*b));
}

/* ---- listing --------------------------------------------------------------- */

int dwarfvar_list(const char *binary, uint64_t file_offset, struct dwarfvar_visible **out,
		  char *err, size_t errlen)
{
	struct ctx c;
	*out = NULL;
	if (ctx_open(&c, binary, file_offset, err, errlen)) {
		ctx_close(&c);
		return -1;
	}
	struct sonde_fetch_op scratch[SONDE_FETCH_OPS];
	struct dwarfvar_visible *v = NULL;
	int n = 0;
	for (int s = 0; s <= c.nscopes; s++) {
		/* The last round: the globals of the compile unit. */
		Dwarf_Die *scope = s < c.nscopes ? &c.scopes[s] : NULL;
		if (!scope)
			break;
		Dwarf_Die child;
		if (dwarf_child(scope, &child) != 0)
			continue;
		do {
			int tag = dwarf_tag(&child);
			const char *name = dwarf_diename(&child);
			if ((tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) || !name)
				continue;
			bool shadowed = false; /* an inner scope's, or a second declaration */
			for (int k = 0; k < n && !shadowed; k++)
				shadowed = strcmp(v[k].name, name) == 0;
			if (shadowed)
				continue;
			v = xrealloc(v, (size_t)(n + 1) * sizeof(*v));
			struct dwarfvar_visible *e = &v[n++];
			e->name = xstrdup(name);
			Dwarf_Die t;
			bool typed = dwarfdie_type(&child, &t);
			char tn[300];
			dwarfdie_type_name(&t, typed, tn, sizeof(tn), 0);
			e->type = xstrdup(tn);
			e->where = xstrdup(tag == DW_TAG_formal_parameter ? "argument"
					   : dwarf_tag(scope) == DW_TAG_compile_unit ? "global"
										    : "local");
			Dwarf_Die d = child;
			if (!dwarfdie_has_location(&d) && !find_global(&c, name, &d))
				d = child;
			struct val val;
			c.ops = scratch;
			c.nops = 0;
			char why[256] = "";
			c.e = (struct errbuf){.err = why, .errlen = sizeof(why)};
			if (!dwarfdie_has_location(&d) && dwarf_hasattr_integrate(&d, DW_AT_declaration))
				e->readable = xstrdup("no: defined in another binary");
			else if (load_variable(&c, &d, name, &val))
				e->readable = xstrdup(why);
			else if (val.status)
				e->readable = xstrdup(val.why);
			else if (val.abi)
				e->readable = xstrdup("yes (at the entry, where the calling convention "
						      "puts it)");
			else if (val.loclist)
				e->readable = xstrdup("yes (location list)");
			else
				e->readable = xstrdup("yes");
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	ctx_close(&c);
	*out = v;
	return n;
}

void dwarfvar_visible_free(struct dwarfvar_visible *v, int n)
{
	for (int i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].type);
		free(v[i].where);
		free(v[i].readable);
	}
	free(v);
}
