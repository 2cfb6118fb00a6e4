#include "drain.h"

#include <bpf/libbpf.h>
#include <errno.h>

#include "enginestate.h"
#include "recordids.h"
#include "sonde_abi.h"
#include "unwind.h"

/* The unwind tables' requests (a miss, an exec), and the exits that may
 * free tables. Requests are read before every record of the main ring
 * buffer, so a load does not wait behind samples being symbolized. */
int on_unwind_request(void *ctx, void *data, size_t size)
{
	struct engine *e = ctx;
	const struct sonde_unwind_request *r = data;
	char err[256];
	if (size < sizeof(*r))
		return 0;
	if (r->kind == SONDE_UNWIND_REQ_EXEC)
		unwind_load_pid(e->unwind, (pid_t)r->pid, err, sizeof(err));
	else
		unwind_on_miss(e->unwind, (pid_t)r->pid);
	return 0;
}

static void unwind_follow(struct engine *e, const void *data, size_t size)
{
	const struct sonde_hdr *h = data;
	if (!e->unwind)
		return;
	ring_buffer__consume(e->unwind_rb);
	if (size >= sizeof(*h) && h->kind == SONDE_REC_EXIT)
		unwind_on_exit(e->unwind, (pid_t)h->pid);
}

int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct engine *e = ctx;
	unwind_follow(e, data, size);
	return deliver_cut(e, data, size);
}

int deliver_cut(void *ctx, const void *data, size_t size)
{
	struct engine *e = ctx;
	/* The kernel wrote the caller's probe ids: records go as they are,
	 * but for those of a probe being taken back (detach_probe). */
	if (e->discarding != NO_PROBE && record_probe(data, size) == e->discarding)
		return 0;
	return e->opt.on_record(e->opt.arg, data, size);
}

int engine_poll(struct engine *e, int timeout_ms)
{
	/* The BPF side wakes us only when a lot is waiting (see wakeup_bytes),
	 * so a poll that times out still drains what arrived meanwhile. */
	if (e->unwind_rb)
		ring_buffer__consume(e->unwind_rb);
	int n = ring_buffer__poll(e->rb, timeout_ms);
	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return -1;
	int m = ring_buffer__consume(e->rb);
	return m < 0 ? (m == -EINTR ? n : -1) : n + m;
}

int engine_ring_fd(struct engine *e)
{
	return ring_buffer__epoll_fd(e->rb);
}

static int drop_record(void *arg, const void *data, size_t size)
{
	(void)data;
	(void)size;
	(*(int *)arg)++;
	return 0;
}

int engine_discard_pending(struct engine *e)
{
	engine_record_fn fn = e->opt.on_record;
	void *arg = e->opt.arg;
	int n = 0;
	e->opt.on_record = drop_record;
	e->opt.arg = &n;
	ring_buffer__consume(e->rb);
	e->opt.on_record = fn;
	e->opt.arg = arg;
	return n;
}
