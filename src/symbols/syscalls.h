/* syscalls — the names of this machine's system calls (the numbers
 * raw_syscalls:sys_enter reports), from the kernel headers at build time. */
#ifndef SONDE_SYSCALLS_H
#define SONDE_SYSCALLS_H

/* The name of system call nr ("read", "futex"), or NULL when unknown. */
const char *syscalls_name(long nr);

#endif
