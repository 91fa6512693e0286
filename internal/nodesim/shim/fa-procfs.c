/*
 * fa-procfs: procfs read semantics for a simulated node's proc/sys files.
 *
 * The kernel's integer sysctl handlers (proc_dointvec, proc_doulongvec_minmax
 * and friends in kernel/sysctl.c) return nothing for a read at a non-zero
 * file offset: the whole value comes from the first read(2) or not at all.
 * dash's and busybox's read builtin read one byte per read(2), so on a real
 * node `read v </proc/sys/net/netfilter/nf_conntrack_max` yields "2" of
 * 262144. A plain file would hand out every byte. Preloaded into a simulated
 * node's shells (the probe bundle does so when FLEET_AUDIT_ROOT/lib holds
 * this library), read(2) of a file under $FLEET_AUDIT_ROOT/proc/sys that
 * holds numbers returns 0 bytes past offset 0, as the kernel does. String
 * sysctls (proc_dostring: kernel/osrelease, kernel/hostname) do honour the
 * offset, and so does every other file here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ssize_t (*real_read)(int, void *, size_t);

/* integer reports whether the file behind fd holds what the kernel's
   integer sysctl handlers print: numbers separated by tabs, then a newline. */
static int integer(int fd) {
	char b[256];
	ssize_t n = pread(fd, b, sizeof b, 0);
	if (n <= 0) return 0;
	int digits = 0;
	for (ssize_t i = 0; i < n; i++) {
		char c = b[i];
		if (c >= '0' && c <= '9') digits = 1;
		else if (c != '-' && c != '\t' && c != ' ' && c != '\n') return 0;
	}
	return digits;
}

ssize_t read(int fd, void *buf, size_t count) {
	if (!real_read) real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	const char *root = getenv("FLEET_AUDIT_ROOT");
	if (root && *root) {
		off_t off = lseek(fd, 0, SEEK_CUR);
		if (off > 0) {
			char link[64], path[PATH_MAX];
			snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
			ssize_t l = readlink(link, path, sizeof path - 1);
			size_t rl = strlen(root);
			if (l > 0) {
				path[l] = 0;
				if (strncmp(path, root, rl) == 0 && strncmp(path + rl, "/proc/sys/", 10) == 0 && integer(fd)) return 0;
			}
		}
	}
	return real_read(fd, buf, count);
}
