/* pysyms and symstack's mixed mode, pure parts: the module a Python file's
 * path names, and where each run of Python frames goes in a native stack
 * (in place of the evaluation loop's frames, innermost run innermost).
 * And, on a real Debian python3.11, a code object named from the process's
 * memory, still named after the process exited, forgotten after the hold. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pysyms.h"
#include "symstack.h"

static const char *module(const char *path)
{
	static char buf[256];
	return pysyms_module(path, buf, sizeof(buf));
}

Test(pysyms, modules_from_paths)
{
	cr_expect_str_eq(module("/usr/lib/python3.11/json/encoder.py"), "json.encoder");
	cr_expect_str_eq(module("/usr/lib/python3.11/json/__init__.py"), "json");
	cr_expect_str_eq(module("/root/.pyenv/versions/3.12.1/lib/python3.12/asyncio/events.py"),
			 "asyncio.events");
	cr_expect_str_eq(module("/usr/lib/python3/dist-packages/requests/api.py"), "requests.api");
	cr_expect_str_eq(module("/venv/lib/python3.12/site-packages/flask/app.py"), "flask.app");
	cr_expect_str_eq(module("/srv/app/server.py"), "server");
	cr_expect_str_eq(module("app.py"), "app");
	cr_expect_str_eq(module("<string>"), "<string>");
	cr_expect_str_eq(module("<frozen importlib._bootstrap>"), "importlib._bootstrap");
	cr_expect_str_eq(module("<frozen >"), "<frozen >");
}

static struct sym_frame fr(const char *name)
{
	return (struct sym_frame){.name = name, .module = "", .file = ""};
}

/* The names of out[0 .. n) joined by ';' (innermost first). */
static const char *names(const struct sym_frame *out, int n)
{
	static char buf[512];
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(buf, ";");
		strcat(buf, out[i].name);
	}
	return buf;
}

#define LOOP "_PyEval_EvalFrameDefault"

Test(pysyms, each_run_takes_one_loop_frame)
{
	/* Native, innermost first: a C function called from the inner run,
	 * the inner loop, a C call between, the outer loop, main. */
	struct sym_frame native[] = {fr("PyUnicode_Join"), fr(LOOP), fr("PyObject_Call"),
				     fr(LOOP), fr("main")};
	struct sym_frame py[] = {fr("app.leaf"), fr("app.handle"), fr("app.main")};
	struct pysyms_frame raw[] = {{0}, {.run_start = true}, {.run_start = true}};
	struct sym_frame out[16];
	int n = symstack_mix_python(native, 5, false, py, raw, 3, out, 16);
	cr_expect_str_eq(names(out, n), "PyUnicode_Join;app.leaf;app.handle;PyObject_Call;app.main;main");
}

Test(pysyms, runs_left_over_go_with_the_last_loop_frame)
{
	struct sym_frame native[] = {fr(LOOP), fr("main")};
	struct sym_frame py[] = {fr("a"), fr("b"), fr("c")};
	struct pysyms_frame raw[] = {{.run_start = true}, {.run_start = true}, {.run_start = true}};
	struct sym_frame out[16];
	int n = symstack_mix_python(native, 2, false, py, raw, 3, out, 16);
	cr_expect_str_eq(names(out, n), "a;b;c;main");
}

Test(pysyms, loop_frames_without_a_run_stay)
{
	struct sym_frame native[] = {fr(LOOP), fr("x"), fr(LOOP), fr("main")};
	struct sym_frame py[] = {fr("a")};
	struct pysyms_frame raw[] = {{.run_start = true}};
	struct sym_frame out[16];
	int n = symstack_mix_python(native, 4, false, py, raw, 1, out, 16);
	cr_expect_str_eq(names(out, n), "a;x;" LOOP ";main");
}

Test(pysyms, without_a_loop_frame_python_goes_outermost_before_the_cut)
{
	struct sym_frame native[] = {fr("leaf"), fr("[broken stack: heap]")};
	struct sym_frame py[] = {fr("a"), fr("b")};
	struct pysyms_frame raw[] = {{0}, {.run_start = true}};
	struct sym_frame out[16];
	int n = symstack_mix_python(native, 2, true, py, raw, 2, out, 16);
	cr_expect_str_eq(names(out, n), "leaf;a;b;[broken stack: heap]");
	n = symstack_mix_python(native, 1, false, py, raw, 2, out, 16);
	cr_expect_str_eq(names(out, n), "leaf;a;b");
}

Test(pysyms, the_output_never_overruns)
{
	struct sym_frame native[] = {fr(LOOP), fr("main")};
	struct sym_frame py[] = {fr("a"), fr("b"), fr("c")};
	struct pysyms_frame raw[] = {{0}, {0}, {.run_start = true}};
	struct sym_frame out[2];
	int n = symstack_mix_python(native, 2, false, py, raw, 3, out, 2);
	cr_expect_eq(n, 2);
	cr_expect_str_eq(names(out, n), "a;b");
}

/* A python3.11 that defines work(), prints its code object's address
 * (id() is the address in CPython) and waits for its stdin to close. */
static pid_t start_python(int *stdin_fd, uint64_t *code)
{
	int in[2], out[2];
	cr_assert(pipe(in) == 0 && pipe(out) == 0);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl("/usr/bin/python3.11", "python3.11", "-c",
		      "import sys\ndef work(): pass\nprint(id(work.__code__), flush=True)\n"
		      "sys.stdin.read()",
		      (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	FILE *f = fdopen(out[0], "r");
	unsigned long long addr = 0;
	cr_assert(f && fscanf(f, "%llu", &addr) == 1, "python3.11 printed no address");
	fclose(f);
	*stdin_fd = in[1];
	*code = addr;
	return pid;
}

Test(pysyms, an_exited_process_is_named_until_the_hold_ends)
{
	if (access("/usr/bin/python3.11", X_OK))
		cr_skip_test("Debian's python3.11 is not installed");
	int stdin_fd;
	uint64_t code;
	pid_t pid = start_python(&stdin_fd, &code);
	struct py_process p;
	char err[256];
	cr_assert_eq(pyprocess_open(pid, &p, err, sizeof(err)), 1, "%s", err);
	struct pysyms *ps = pysyms_new();
	pysyms_add(ps, &p);
	struct pysyms_frame fr = {.code = code};
	struct sym_frame out;
	uint64_t t0 = 1000000000ull;
	cr_assert(pysyms_name(ps, pid, &fr, t0, &out));
	cr_expect_str_eq(out.name, "<string>.work");
	close(stdin_fd);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	pysyms_exited(ps, pid, t0 + 1);
	/* Past the re-check: the process's memory is gone, its names stay. */
	cr_assert(pysyms_name(ps, pid, &fr, t0 + 5000000000ull, &out));
	cr_expect_str_eq(out.name, "<string>.work");
	pysyms_sweep(ps, t0 + 5000000000ull, 10000000000ull);
	cr_expect(pysyms_has(ps, pid), "forgotten before the hold ended");
	pysyms_sweep(ps, t0 + 10000000001ull, 10000000000ull);
	cr_expect(!pysyms_has(ps, pid), "kept after the hold");
	struct pysyms_stats st;
	pysyms_get_stats(ps, &st);
	cr_expect_eq(st.processes, 0);
	cr_expect_eq(st.processes_forgotten, 1);
	pysyms_free(ps);
}
