/* ctl — the control socket of a live session, and its client.
 *
 * A live session listens on a unix stream socket SESSION_DIR/PID.sock
 * (PID = sonde's own PID). SESSION_DIR is $SONDE_RUNTIME_DIR if set, else
 * $XDG_RUNTIME_DIR/sonde, else /run/sonde for root, else /tmp/sonde-UID. The
 * directory is created mode 0700 and refused (one clear error) when it is
 * not a directory owned by the caller with no group/other access; the socket
 * is mode 0600. So only the session's owner (and root) can steer it.
 *
 * Protocol (one request per connection): the client writes one command line
 * ending in "\n" (at most COMMAND_LINE_MAX bytes); the server answers with
 * one JSON object on one line ("\n" after it), then closes:
 *
 *   {"ok":true,"text":"tracing 1 function: handle_request\n"}
 *   {"ok":true,"text":"target:   PID 4242 ...\n","data":{...}}
 *   {"ok":false,"error":"no traced function matches 'x' (traced: none)"}
 *
 * "text" is the answer as the text client prints it (each line ending in a
 * newline; "" for none); "error" is what failed (one line, no newline);
 * "data" is there when the command has structured results (`status`: the
 * session's state, liverun.h). Members may be added; clients ignore those
 * they do not know. The server never blocks: connections are non-blocking, a
 * client that sends nothing for CTL_CLIENT_TIMEOUT_MS or too long a line is
 * answered with an error and dropped; at most CTL_MAX_CLIENTS are served at
 * once (more wait in the listen backlog). */
#ifndef SONDE_CTL_H
#define SONDE_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "loop.h"

#define CTL_MAX_CLIENTS 16
#define CTL_CLIENT_TIMEOUT_MS 2000

/* Runs one command line, writing its answer text to out (for an error: the
 * one line that says what failed) and, for a command with structured
 * results, one JSON value to data (the answer's "data"; nothing written:
 * none). Returns 0, or -1 when the command failed ("ok":false). */
typedef int (*ctl_handler_fn)(void *arg, const char *line, FILE *out, FILE *data);

/* Runs one command line (linelen bytes, no line ending needed) through fn
 * and returns the answer described above: one JSON object and its "\n",
 * malloc'd, with its length in *len and whether it was "ok":true in *ok. Too
 * long a line or one holding a NUL byte is answered with an error without
 * running fn. What the control socket sends, and the web server too. NULL
 * only when out of memory. */
char *ctl_answer(ctl_handler_fn fn, void *arg, const char *line, size_t linelen, size_t *len,
		 bool *ok);

/* The session directory (created if missing, checked as above). Returns 0
 * with the path in buf, or -1 with one line in err. */
int ctl_session_dir(char *buf, size_t size, char *err, size_t errlen);

struct ctl_server;

/* Listens at SESSION_DIR/<getpid()>.sock (a stale socket of a dead PID is
 * replaced). Returns NULL with one line in err. */
struct ctl_server *ctl_server_open(char *err, size_t errlen);

/* The socket's path. */
const char *ctl_server_path(const struct ctl_server *s);

/* File descriptors to wait on with poll() for POLLIN (the listening socket
 * and every client being read; the listening socket is left out while
 * CTL_MAX_CLIENTS are being served). Writes up to max fds and returns how
 * many: more than one means clients are connected. */
size_t ctl_server_fds(const struct ctl_server *s, int *fds, size_t max);

/* Accepts what is waiting, reads what clients sent, runs every complete
 * request through fn and answers it; drops timed-out clients. Never blocks
 * (answers are written with a short bounded wait: a client that reads
 * nothing for 200 ms is dropped, no answer takes more than 1 s; SIGPIPE is
 * never raised). Call it when poll() reports one of ctl_server_fds()
 * readable, and while clients are connected at least every few hundred ms:
 * timeouts are only noticed here. The line given to fn has no line ending. */
void ctl_server_service(struct ctl_server *s, ctl_handler_fn fn, void *arg);

/* Lets the event loop drive the server instead of the caller: its sockets
 * are watched there (and kept in step as clients come and go), requests run
 * through fn, and a timer makes silent clients time out. Returns 0, or -1
 * with err. */
int ctl_server_attach(struct ctl_server *s, struct loop *lp, ctl_handler_fn fn, void *arg,
		      char *err, size_t errlen);

/* Closes every connection and removes the socket file (and its fds from the
 * loop it is attached to). NULL is allowed. */
void ctl_server_close(struct ctl_server *s);

/* Client: sends one command line to session `pid` (0 = the only running
 * session) and returns its answer as it came (the JSON object and its
 * newline; malloc'd, NUL-terminated) in *answer and *len. One final "\n" in
 * line is allowed. Returns 0, or -1 with one line in err when no answer could
 * be had (no such session, several sessions and pid 0, ...). */
int ctl_request(pid_t pid, const char *line, char **answer, size_t *len, char *err,
		size_t errlen);

/* The same, decoded: copies the answer's text to out (for an error answer,
 * its error and a newline; out NULL drops it). Returns 0 when the session
 * answered ok, 1 when it answered with an error, -1 with one line in err when
 * no answer could be had or it was not one (not JSON, no "ok"). */
int ctl_send(pid_t pid, const char *line, FILE *out, char *err, size_t errlen);

/* Lists running sessions, one per line: "PID  COMMAND-LINE-OF-SONDE".
 * Stale sockets (their PID is gone) are removed. Returns the number listed,
 * or -1 with err. */
int ctl_list(FILE *out, char *err, size_t errlen);

#endif
