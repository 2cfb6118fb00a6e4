/* probeplan: probe_plan_make on tests/targets/captures (gcc -O0: every
 * variable in a stack slot): a function spec with captures and a predicate
 * becomes the function's entry (file offset and size as its ELF symbol
 * says, through the program headers) and one fetch program reading the
 * captures' DWARF types; a spec capturing nothing plans no program; a line
 * spec is one probe of the line's addresses, each with a program of the
 * same types; and a bad location, variable or expression refuses the whole
 * spec with one line, leaving nothing to free. A USDT span pair's key: the
 * 8-byte unsigned arguments both probes have, the same at every site. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probepy.h"
#include "sonde_abi.h"
#include "probeplan.h"
#include "sonde_abi.h"

#define CAPTURES TARGET_DIR "/captures-gcc-O0"
#define CAPTURES_SRC SRC_DIR "/tests/targets/captures/captures.c"

static const struct probe_scope scope = {.executable = CAPTURES};

/* A function's file offset and size, from .symtab and the PT_LOAD holding it. */
static void elf_function(const char *path, const char *name, uint64_t *off, uint64_t *size)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "open %s", path);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(e);
	uint64_t vaddr = 0;
	*size = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n = gelf_getsym(d, (int)i, &s) ? elf_strptr(e, sh.sh_link, s.st_name)
								   : NULL;
			if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(s.st_info) == STT_FUNC) {
				vaddr = s.st_value;
				*size = s.st_size;
			}
		}
	}
	cr_assert_neq(vaddr, 0, "%s has no function %s", path, name);
	size_t nph;
	cr_assert_eq(elf_getphdrnum(e, &nph), 0);
	*off = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz)
			*off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	cr_assert_neq(*off, 0);
	elf_end(e);
	close(fd);
}

/* The source line marked LINE_MIX. */
static unsigned line_mix(void)
{
	FILE *f = fopen(CAPTURES_SRC, "r");
	cr_assert_not_null(f, "open %s", CAPTURES_SRC);
	char buf[512];
	unsigned n = 0, found = 0;
	while (!found && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, "/* LINE_MIX */") && !strstr(buf, "(LINE_MIX)"))
			found = n;
	}
	fclose(f);
	cr_assert_neq(found, 0);
	return found;
}

/* "handle req->hdr.size n if req->hdr.size > 1000": handle's entry at its
 * symbol's file offset (no instruction to move past at -O0), and one
 * program reading an unsigned short ("short unsigned int") and an int, with the predicate kept as
 * written. */
Test(probeplan, function_with_captures_and_predicate)
{
	uint64_t off, size;
	elf_function(CAPTURES, "handle", &off, &size);
	struct probe_plan p;
	char err[512] = "";
	cr_assert_eq(probe_plan_make("handle req->hdr.size n if req->hdr.size > 1000", &scope, &p,
				     err, sizeof(err)),
		     0, "%s", err);
	cr_expect_str_eq(p.location, "handle");
	cr_assert_eq(p.n, 1);
	cr_expect_not(p.line);
	cr_expect_str_eq(p.t[0].function, "handle");
	cr_expect_eq(p.t[0].offset, off, "offset 0x%lx, the symbol's 0x%lx",
		     (unsigned long)p.t[0].offset, (unsigned long)off);
	cr_expect_eq(p.t[0].entry_skip, 0);
	cr_expect_eq(p.t[0].size, size);
	const struct capture_plan *c = &p.captures;
	cr_assert_eq(c->n, 1);
	cr_assert_eq(c->spec.ncaptures, 2);
	cr_expect_str_eq(c->spec.texts[0], "req->hdr.size");
	cr_expect_str_eq(c->spec.texts[1], "n");
	cr_assert_not_null(c->spec.pred_text);
	cr_expect_str_eq(c->spec.pred_text, "req->hdr.size > 1000");
	const struct fetch_build *b = &c->builds[0];
	cr_assert_eq(b->ndesc, 2);
	cr_expect_str_eq(b->desc[0].type, "short unsigned int"); /* gcc's DWARF name */
	cr_expect_eq(b->desc[0].kind, CAPTURE_UNSIGNED);
	cr_expect_eq(b->desc[0].size, 2);
	cr_expect_str_eq(b->desc[1].type, "int");
	cr_expect_eq(b->desc[1].kind, CAPTURE_SIGNED);
	cr_expect_eq(b->desc[1].size, 4);
	cr_expect_eq(b->prog->nvalues, 2);
	cr_expect_gt(b->prog->nops, 0);
	probe_plan_free(&p);
	cr_expect_null(p.t);
	cr_expect_null(p.location);
}

/* A spec that captures nothing and has no predicate: the function's
 * address, no program. */
Test(probeplan, nothing_captured_no_program)
{
	uint64_t off, size;
	elf_function(CAPTURES, "checksum", &off, &size);
	struct probe_plan p;
	char err[512] = "";
	cr_assert_eq(probe_plan_make("checksum", &scope, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.n, 1);
	cr_expect_eq(p.t[0].offset, off);
	cr_expect_null(p.captures.builds);
	cr_expect_eq(p.captures.n, 0);
	cr_expect_null(p.captures.spec.pred_text);
	probe_plan_free(&p);
}

/* "captures.c:LINE acc step": a line probe, every address on that line,
 * and a program at each reading the same types (unsigned, int). */
Test(probeplan, line_spec_one_probe_same_types)
{
	unsigned line = line_mix();
	char spec[128], where[64];
	snprintf(where, sizeof(where), "captures.c:%u", line);
	snprintf(spec, sizeof(spec), "%s acc step", where);
	struct probe_plan p;
	char err[512] = "";
	cr_assert_eq(probe_plan_make(spec, &scope, &p, err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(p.location, where);
	cr_assert_geq(p.n, 1);
	cr_expect(p.line);
	cr_assert_eq(p.captures.n, p.n, "a program per address");
	for (int i = 0; i < p.n; i++) {
		cr_expect_eq(p.t[i].line, line);
		cr_expect_str_eq(p.t[i].function, "mix");
		const struct fetch_build *b = &p.captures.builds[i];
		cr_assert_eq(b->ndesc, 2);
		cr_expect_str_eq(b->desc[0].name, "acc");
		cr_expect_str_eq(b->desc[0].type, "unsigned int");
		cr_expect_str_eq(b->desc[1].name, "step");
		cr_expect_str_eq(b->desc[1].type, "int");
	}
	/* the line's addresses are inside mix */
	uint64_t off, size;
	elf_function(CAPTURES, "mix", &off, &size);
	for (int i = 0; i < p.n; i++)
		cr_expect(p.t[i].offset > off && p.t[i].offset < off + size,
			  "address 0x%lx outside mix [0x%lx, 0x%lx)", (unsigned long)p.t[i].offset,
			  (unsigned long)off, (unsigned long)(off + size));
	probe_plan_free(&p);
}

/* Refusals, one line each naming what is wrong, and *out left empty: a
 * function the binary lacks, a variable handle cannot see, a predicate
 * that does not parse. */
Test(probeplan, refusals)
{
	static const struct {
		const char *spec, *says;
	} cases[] = {
		{"no_such_function", "no function 'no_such_function'"},
		{"handle no_such_var", "no_such_var is not visible at handle"},
		{"handle n if n >", "at the end of"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct probe_plan p;
		memset(&p, 0x5a, sizeof(p));
		char err[512] = "";
		cr_expect_eq(probe_plan_make(cases[i].spec, &scope, &p, err, sizeof(err)), -1,
			     "%s was planned", cases[i].spec);
		cr_expect_neq(err[0], '\0', "%s: no error", cases[i].spec);
		cr_expect_null(strchr(err, '\n'), "%s: more than one line: %s", cases[i].spec, err);
		cr_expect_not_null(strstr(err, cases[i].says), "%s: \"%s\" does not say %s",
				   cases[i].spec, err, cases[i].says);
		cr_expect(p.t == NULL && p.location == NULL && p.captures.builds == NULL &&
				  p.n == 0,
			  "%s: something left in the plan", cases[i].spec);
	}
}

/* A site of a pair with the operands args ("8@%rbp 8@%r12 -4@%eax"). */
static struct probe_target site(const char *args, bool is_return, struct usdt_arg *store)
{
	struct probe_target t = {.usdt = true, .usdt_pair = true, .usdt_return = is_return,
				 .usdt_args = store};
	char *copy = strdup(args), *save = NULL;
	for (char *a = strtok_r(copy, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
		cr_assert_eq(usdt_parse_arg(a, &store[t.usdt_nargs]), 0, "operand %s", a);
		t.usdt_nargs++;
	}
	free(copy);
	return t;
}

Test(probeplan, pair_key_is_the_pointer_arguments_both_have)
{
	struct usdt_arg a[4][USDT_MAX_ARGS];
	/* Python 3.11's function__entry and function__return. */
	struct probe_target t[] = {site("8@%rbp 8@%r12 -4@%eax", false, a[0]),
				   site("8@%rbp 8@%r12 -4@%eax", true, a[1])};
	struct usdt_pair_key k;
	probe_plan_pair_key(t, 1, 2, &k);
	cr_assert_eq(k.n, 2);
	cr_expect_eq(k.positions[0], 0);
	cr_expect_eq(k.positions[1], 1);
	cr_expect_eq(k.entry[0].reg, 6); /* rbp, DWARF's number */
	cr_expect_eq(k.ret[1].reg, 12);
	/* A return's operand may differ from its entry's: each is read where
	 * its own note says. A signed, narrower or constant argument is no key. */
	struct probe_target u[] = {site("8@%rbx -8@%rax 4@%ecx 8@$7", false, a[0]),
				   site("8@16(%rsp) 8@%rdx 8@%rcx 8@%r8", true, a[1])};
	probe_plan_pair_key(u, 1, 2, &k);
	cr_assert_eq(k.n, 1);
	cr_expect_eq(k.positions[0], 0);
	cr_expect_eq(k.ret[0].kind, USDT_ARG_MEM);
	cr_expect_eq(k.ret[0].offset, 16);
	/* Two entry sites reading arg0 from different places: not a key. */
	struct probe_target v[] = {site("8@%rbx 8@%r12", false, a[0]), site("8@%rdi 8@%r12", false, a[1]),
				   site("8@%rbx 8@%r12", true, a[2])};
	probe_plan_pair_key(v, 2, 3, &k);
	cr_assert_eq(k.n, 1);
	cr_expect_eq(k.positions[0], 1);
	/* No pointer argument at all: no key (every return closes the innermost call). */
	struct probe_target w[] = {site("-4@%eax", false, a[0]), site("-4@%eax", true, a[1])};
	probe_plan_pair_key(w, 1, 2, &k);
	cr_expect_eq(k.n, 0);
}

Test(probeplan, python_pair_planned_from_its_notes)
{
	if (access("/usr/bin/python3.11", R_OK))
		cr_skip_test("Debian's python3.11 is not installed");
	struct probe_scope py = {.executable = "/usr/bin/python3.11"};
	struct probe_plan p;
	char err[512];
	cr_assert_eq(probe_plan_make("usdt:/usr/bin/python3.11:python:function__entry,function__return",
				     &py, &p, err, sizeof(err)),
		     0, "%s", err);
	cr_expect(p.pair && !p.line);
	cr_assert_geq(p.n, 2);
	cr_expect_eq(p.nentries, 1);
	cr_expect(!p.t[0].usdt_return && p.t[p.n - 1].usdt_return);
	cr_expect_eq(p.pair_key.n, 2);
	probe_plan_free(&p);
	/* A glob: a point plan whose runs of one location are its probes. */
	cr_assert_eq(probe_plan_make("usdt:/usr/bin/python3.11:python:gc__*", &py, &p, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect(p.line && !p.pair);
	cr_assert_eq(p.n, 2);
	cr_expect_str_eq(p.t[0].location, "usdt:/usr/bin/python3.11:python:gc__done");
	cr_expect_str_eq(p.t[1].location, "usdt:/usr/bin/python3.11:python:gc__start");
	probe_plan_free(&p);
	cr_expect_eq(probe_plan_make("usdt:/usr/bin/python3.11:python:function__entry,nope", &py, &p,
				     err, sizeof(err)),
		     -1);
	cr_expect(strstr(err, "has no USDT probe python:nope (it has "), "%s", err);
}

/* ---- py: specs: the ways a name splits into a file and a qualname ----- */

Test(probeplan, py_names_split_every_way_their_dots_allow)
{
	struct sonde_py_match m;
	char err[256];
	cr_assert_eq(probepy_ways("py:pkg.mod.Cls.meth", "pkg.mod.Cls.meth", &m, err, sizeof(err)), 0);
	cr_assert_eq(m.n, 3);
	const char *file[3] = {"pkg.py", "pkg/mod.py", "pkg/mod/Cls.py"};
	const char *qual[3] = {"mod.Cls.meth", "Cls.meth", "meth"};
	for (int i = 0; i < 3; i++) {
		cr_assert_str_eq(m.way[i].file, file[i]);
		cr_assert_eq(m.way[i].file_len, strlen(file[i]));
		cr_assert_str_eq(m.way[i].qual, qual[i]);
		cr_assert_eq(m.way[i].qual_len, strlen(qual[i]));
	}
	cr_assert_eq(probepy_ways("py:srv/app.py:Server.handle", "srv/app.py:Server.handle", &m, err,
				  sizeof(err)),
		     0);
	cr_assert_eq(m.n, 1);
	cr_assert_str_eq(m.way[0].file, "srv/app.py");
	cr_assert_str_eq(m.way[0].qual, "Server.handle");
	/* A name with more dots than ways: the first ways only. */
	cr_assert_eq(probepy_ways("py:a.b.c.d.e.f", "a.b.c.d.e.f", &m, err, sizeof(err)), 0);
	cr_assert_eq(m.n, SONDE_PY_MATCH_WAYS);
	const char *bad[] = {"handle", "a..b", ".a", "a.", ":f", "app.py:", "a/b.c", "app.py:x/y"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(probepy_ways("py:?", bad[i], &m, err, sizeof(err)), -1, "%s", bad[i]);
		cr_assert(strstr(err, "expected py:"), "%s: %s", bad[i], err);
	}
	char longname[100];
	memset(longname, 'x', sizeof(longname));
	memcpy(longname, "app.", 4);
	longname[99] = 0;
	cr_assert_eq(probepy_ways("py:app.xxx", longname, &m, err, sizeof(err)), -1);
	cr_assert(strstr(err, "more than 63 characters"), "%s", err);
}

/* Two py: specs that may name one function (the session refuses the
 * second): the same qualified name, one file ending the other's. */
Test(probeplan, py_specs_that_may_name_one_function)
{
	cr_assert(probes_py_may_share("py:app.handle", "py:app.py:handle"));
	cr_assert(probes_py_may_share("py:app.handle", "py:srv/app.py:handle"));
	cr_assert(probes_py_may_share("py:pkg.mod.f", "py:mod.py:f"));
	cr_assert(!probes_py_may_share("py:app.handle", "py:app.Server.handle"));
	cr_assert(!probes_py_may_share("py:app.handle", "py:myapp.py:handle"));
	cr_assert(!probes_py_may_share("py:app.handle", "handle"));
	cr_assert(!probes_py_may_share("py:app.handle", "py:bad"));
}
