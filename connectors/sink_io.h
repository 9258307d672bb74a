/*
 * sink_io.h - output helpers shared by the file-writing sinks of connectors/.
 */
#ifndef SL_CONNECTORS_SINK_IO_H
#define SL_CONNECTORS_SINK_IO_H

#include <pthread.h>
#include <stddef.h>

/* Writes all n bytes to fd (retrying short writes and EINTR), holding `lock` (may be NULL)
 * for the whole chunk. Returns 0 or -errno. Not for the per-record path: once per chunk. */
int sl_sink_write_all(int fd, const char *p, size_t n, pthread_mutex_t *lock);

#endif
