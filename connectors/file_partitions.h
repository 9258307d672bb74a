/*
 * file_partitions.h - the partition directories of a PARTITIONED BY filesystem table, read
 * back (file_partitions.c): `path/c1=v1/c2=v2/<files>` as Flink's filesystem connector and
 * sluice's partitioned sink (fs_part_sink.c) write them. Internal to the connectors layer.
 */
#ifndef SL_FILE_PARTITIONS_H
#define SL_FILE_PARTITIONS_H

#include <stddef.h>

#include <sluice/job.h>

/* A table's files under its partition directories, from sl_file_list_partitions(). */
struct sl_file_parts {
	char **paths;  /* n files, "root/c1=v1/.../name", sorted by directory then name */
	char **values; /* n * ncols partition values, unescaped; NULL for the default
			* partition (a NULL or empty value, as the sink names it) */
	int n, ncols;
};

/*
 * Lists the files of table directory `root` partitioned by columns cols[0..ncols): each
 * level of directories must be named `<column>=<escaped value>` for that level's column,
 * with the table's files (not starting with '.' or '_': hidden files, _SUCCESS markers)
 * only at the last level. `default_name` is the directory value that stands for NULL
 * ('partition.default-name', Flink's __DEFAULT_PARTITION__). A directory or file out of
 * place is an error naming it, not skipped: it would be rows read from nowhere or lost. An
 * empty root gives no files, a missing one is an error. Plan time. 0, or -errno with err naming the
 * place. Free *out with sl_file_parts_free().
 */
int sl_file_list_partitions(const char *root, const char *const *cols, int ncols,
			    const char *default_name, struct sl_file_parts *out,
			    struct sl_error *err);
void sl_file_parts_free(struct sl_file_parts *p);

/* Decodes a %XX-escaped partition path value (Flink's PartitionPathUtils.unescapePathName:
 * a '%' not followed by two hex digits stays) into out[cap], NUL-terminated; returns its
 * length, or -ENAMETOOLONG when it does not fit. */
int sl_fs_unescape(const char *s, size_t n, char *out, size_t cap);

#endif
