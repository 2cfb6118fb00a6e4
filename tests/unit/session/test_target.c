/* Unit tests for target: PID lists, telling a PID list from a name, living
 * processes, descendants, and a command held until released. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procmaps.h"
#include "target.h"

Test(target, pid_lists)
{
	pid_t p[4];
	char err[256] = "";
	cr_assert_eq(target_parse_pids("12,345,6", p, 4, err, sizeof(err)), 3);
	cr_expect_eq(p[0], 12);
	cr_expect_eq(p[1], 345);
	cr_expect_eq(p[2], 6);
	cr_expect_eq(target_parse_pids("7,", p, 4, err, sizeof(err)), 1, "a trailing comma ends it");
	cr_expect_eq(p[0], 7);
}

static void expect_refused(const char *s, int max, const char *want)
{
	pid_t p[4];
	char err[256] = "";
	cr_expect_eq(target_parse_pids(s, p, max, err, sizeof(err)), -1, "'%s' taken", s);
	cr_expect(strstr(err, want), "'%s' for '%s' does not say '%s'", err, s, want);
}

Test(target, bad_pid_lists)
{
	expect_refused("12x", 4, "bad PID list '12x'");
	expect_refused("0", 4, "bad PID list");
	expect_refused("-3", 4, "bad PID list");
	expect_refused(",1", 4, "bad PID list");
	expect_refused("1,,2", 4, "bad PID list");
	expect_refused("99999999999", 4, "bad PID list");
	expect_refused("", 4, "empty PID list");
	expect_refused("1,2,3", 2, "too many PIDs in '1,2,3' (at most 2)");
}

Test(target, pid_list_or_name)
{
	cr_expect(target_is_pid_list("123"));
	cr_expect(target_is_pid_list("1,2"));
	cr_expect(target_is_pid_list("12x"), "a bad PID list is still one");
	cr_expect(!target_is_pid_list("nginx"));
	cr_expect(!target_is_pid_list("x12"));
	cr_expect(!target_is_pid_list(""));
}

Test(target, alive_and_reaped)
{
	cr_expect(procmaps_alive(getpid()));
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	cr_assert_gt(c, 0);
	waitpid(c, NULL, 0);
	cr_expect(!procmaps_alive(c), "a reaped child is gone");
}

static bool holds(const pid_t *v, int n, pid_t p)
{
	for (int i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

Test(target, descendants_in_tree_order)
{
	int ready[2];
	cr_assert_eq(pipe(ready), 0);
	pid_t child = fork();
	if (child == 0) {
		pid_t grandchild = fork();
		if (grandchild == 0) {
			pause();
			_exit(0);
		}
		if (write(ready[1], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
			_exit(1);
		pause();
		_exit(0);
	}
	pid_t grandchild = 0;
	cr_assert_eq(read(ready[0], &grandchild, sizeof(grandchild)), (ssize_t)sizeof(grandchild));
	pid_t self = getpid(), *d = NULL;
	int n = target_descendants(&self, 1, &d);
	bool has_child = holds(d, n, child), has_grandchild = holds(d, n, grandchild);
	int ci = -1, gi = -1;
	for (int i = 0; i < n; i++) {
		ci = d[i] == child ? i : ci;
		gi = d[i] == grandchild ? i : gi;
	}
	bool self_in = holds(d, n, self);
	free(d);
	pid_t *below = NULL;
	int nb = target_descendants(&child, 1, &below);
	bool only_grandchild = nb == 1 && below[0] == grandchild;
	free(below);
	kill(grandchild, SIGKILL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	cr_expect(has_child);
	cr_expect(has_grandchild);
	cr_expect_lt(ci, gi, "a parent before its children");
	cr_expect(!self_in, "no root");
	cr_expect(only_grandchild, "the child's descendants: its child alone");
}

Test(target, a_command_is_held_until_released)
{
	char *const ok[] = {"true", NULL};
	struct target_cmd t;
	char err[256] = "";
	cr_assert_eq(target_spawn(ok, NULL, &t, err, sizeof(err)), 0, "%s", err);
	usleep(50000);
	cr_expect(!target_cmd_exited(&t), "held before exec");
	cr_expect_eq(target_release(&t, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < 200 && !target_cmd_exited(&t); i++)
		usleep(10000);
	cr_expect(t.exited);
	cr_expect(WIFEXITED(t.wait_status) && WEXITSTATUS(t.wait_status) == 0);

	char *const missing[] = {"sonde-no-such-command-here", NULL};
	cr_assert_eq(target_spawn(missing, NULL, &t, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(target_release(&t, err, sizeof(err)), -1);
	cr_expect(strstr(err, "command not found"), "'%s'", err);
	target_cmd_kill(&t);
}
