/* unreadable — a stack the unwinder cannot read past (x86-64).
 *
 *   main -> on_stack -> spin_unreadable
 *
 * on_stack switches to a stack of its own: a readable region whose top
 * touches a PROT_NONE page, and calls spin_unreadable there. Its CFI says
 * its caller's return address is 8 bytes above the CFA it claims (rsp+16
 * at the call), which is inside the PROT_NONE page: an unwinder reads
 * spin_unreadable's return address (on_stack) fine, then faults. The stack
 * must end there, [on_stack, spin_unreadable], counted as a read fault,
 * never with a frame made up past it.
 *
 * usage: unreadable SECONDS    spins that long (a thread ends it: no
 *                              signal frame on the small stack), then
 *                              prints "rounds=N"; it starts 0.3 s after
 *                              exec, when a profiler has read its maps */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int time_up;
static volatile unsigned long sink;
static unsigned long rounds;

__attribute__((noinline)) void spin_unreadable(void)
{
	unsigned long x = 1, i = 0;
	while (!time_up) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		sink = x;
		i++;
	}
	rounds = i;
}

/* on_stack(fn, top): calls fn with rsp = top, then comes back. rbx keeps
 * the real rsp; the CFI in the middle lies on purpose (see above). */
void on_stack(void (*fn)(void), void *top);
__asm__(".text\n"
	".globl on_stack\n"
	".type on_stack, @function\n"
	"on_stack:\n"
	".cfi_startproc\n"
	"	push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	"	mov %rsp, %rbx\n"
	"	mov %rsi, %rsp\n"
	".cfi_def_cfa rsp, 16\n"
	"	call *%rdi\n"
	"	mov %rbx, %rsp\n"
	".cfi_def_cfa rsp, 16\n"
	"	pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size on_stack, .-on_stack\n");

static void *timer(void *arg)
{
	usleep((useconds_t)(*(double *)arg * 1e6));
	time_up = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 16 * page;
	char *region = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	if (region == MAP_FAILED || mprotect(region + size, page, PROT_NONE) != 0) {
		perror("unreadable: mmap");
		return 1;
	}
	usleep(300000);
	pthread_t t;
	pthread_create(&t, NULL, timer, &seconds);
	on_stack(spin_unreadable, region + size);
	pthread_join(t, NULL);
	printf("rounds=%lu\n", rounds);
	return 0;
}
