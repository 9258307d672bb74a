/*
 * sink_io.h - output helpers shared by the file-writing sinks of connectors/: chunked writes
 * (print_sink.c) and the file operations of two-phase commit (jsonl_sink.c), so any later
 * file sink publishes part files the same way.
 */
#ifndef SL_CONNECTORS_SINK_IO_H
#define SL_CONNECTORS_SINK_IO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Writes all n bytes to fd (retrying short writes and EINTR), holding `lock` (may be NULL)
 * for the whole chunk. Returns 0 or -errno. Not for the per-record path: once per chunk. */
int sl_sink_write_all(int fd, const char *p, size_t n, pthread_mutex_t *lock);

/*
 * Publishes `src` as `dst`, both names in directory `dirfd`, never replacing an existing
 * `dst`; idempotent, so a commit can be replayed after a crash at any point of it:
 *   src present, dst absent        renamed (atomically; link + unlink where the file
 *                                  system lacks RENAME_NOREPLACE)
 *   src absent, dst present        already done: 0
 *   both, the same inode           a crash between link and unlink: src is unlinked, 0
 *   both, different files          -EEXIST, nothing touched (a name reused: refuse)
 *   neither                        -ENOENT (the data is gone)
 * Does not fsync the directory: the caller does, once for a batch. Any thread.
 */
int sl_sink_publish(int dirfd, const char *src, const char *dst);

/* fsync(2) of an open directory (or file), retrying EINTR. Returns 0 or -errno. */
int sl_sink_fsync(int fd);

/* For the partitioned sink (fs_part_sink.c), which keeps one sl_jsonl_sink_ops instance
 * per partition directory: ends the instance's current part file now (exactly-once: OPEN
 * -> SEALED, so its fd closes; at-least-once: the buffer is written out). 0 or -errno. */
int sl_jsonl_sink_roll(void *state);

/* Whether a meta of sl_jsonl_sink_ops's precommit lists no file (nothing left to commit). */
bool sl_jsonl_meta_empty(const void *meta, size_t len);

#endif
