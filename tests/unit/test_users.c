// SPDX-License-Identifier: BSD-3-Clause
/* xpile/users.h user records (who serves which queues) and the --pin-path check. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>

#include "steer_internal.h"
#include "xpile/bpffs.h"
#include "xpile/users.h"
#include "xpile/wire.h"
#include "xt.h"

static char rundir[64];

/* Whether this process's record for @ifname exists. */
static int own_record(const char *ifname)
{
	char path[PATH_MAX];

	if (xp_wire_plan_path(ifname, path, sizeof(path)))
		return -1;
	*strrchr(path, '/') = 0;
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/engine.%d", (int)getpid());
	return !access(path, F_OK);
}

static void test_self_not_listed(void)
{
	struct xp_user u[4];
	__u32 q[] = { 0, 3 };

	XT_EQ(xp_users_register("xpu0", 7, q, 2), 0);
	XT_EQ(own_record("xpu0"), 1);
	XT_EQ(xp_users_list("xpu0", u, 4), 0); /* this process is not "another" user */
	xp_users_unregister("xpu0");
	XT_EQ(own_record("xpu0"), 0);
}

static void test_other_listed_then_stale(void)
{
	struct xp_user u[4];
	int up[2], down[2];
	char c = 0, buf[160];
	pid_t pid;

	XT_REQUIRE(!pipe(up) && !pipe(down));
	pid = fork();
	XT_REQUIRE(pid >= 0);
	if (!pid) {
		__u32 q[] = { 1, 2 };

		if (xp_users_register("xpu1", 42, q, 2))
			_exit(1);
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	XT_REQUIRE(read(up[0], &c, 1) == 1);
	XT_EQ(xp_users_list("xpu1", u, 4), 1);
	XT_EQ(u[0].pid, pid);
	XT_EQ(u[0].prog_id, 42);
	XT_EQ(u[0].nqueues, 2);
	XT_EQ(u[0].queues[1], 2);
	xp_users_format(u, 1, buf, sizeof(buf));
	XT_CHECK(strstr(buf, "queues 1,2)") != NULL);
	XT_CHECK(!strncmp(buf, "pid ", 4));
	/* The child dies without unregistering (kill -9): its record is stale. */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	XT_EQ(xp_users_list("xpu1", u, 4), 0);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

static void test_reused_pid_is_stale(void)
{
	char path[PATH_MAX];
	struct xp_user u[4];
	FILE *f;

	/* pid 1 is alive, but its start time is not the recorded one: another process. */
	XT_REQUIRE(!xp_wire_plan_path("xpu2", path, sizeof(path)));
	*strrchr(path, '/') = 0;
	XT_REQUIRE(!xp_mkdir_p(path));
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/engine.1");
	f = fopen(path, "w");
	XT_REQUIRE(f);
	fprintf(f, "pid 1\nstart 1\nprog 9\nqueues 0\n");
	fclose(f);
	XT_EQ(xp_users_list("xpu2", u, 4), 0);
	XT_CHECK(access(path, F_OK) && errno == ENOENT);
	*strrchr(path, '/') = 0;
	rmdir(path);
}

static void test_pin_path(void)
{
	char root[PATH_MAX], nope[64];
	struct statfs st;

	snprintf(nope, sizeof(nope), "/tmp/xpile-unit-%d/deep/x", (int)getpid());
	XT_EQ(xp_pin_dir_check(nope, root, sizeof(root)), -ENOTDIR);
	*strstr(nope, "/deep") = 0;
	XT_CHECK(access(nope, F_OK)); /* nothing created */
	XT_EQ(xp_pin_dir_check("", root, sizeof(root)), -EINVAL);
	if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC)
		return;
	snprintf(nope, sizeof(nope), "/sys/fs/bpf/xpile-unit-%d/a", (int)getpid());
	XT_EQ(xp_pin_dir_check(nope, root, sizeof(root)), 0);
	XT_CHECK(!strcmp(root, "/sys/fs/bpf")); /* cleanup may remove what we create */
}

/* The pin key is the namespace's inode in every namespace, the initial one too: never
 * empty, never a matter of who started the process. */
static void test_netns_key(void)
{
	char key[64], want[64], root[PATH_MAX];
	struct stat st;

	XT_REQUIRE(!stat("/proc/self/ns/net", &st));
	snprintf(want, sizeof(want), "ns%llu/", (unsigned long long)st.st_ino);
	XT_EQ(xp_netns_key(key, sizeof(key)), 0);
	XT_CHECK(!strcmp(key, want));
	XT_EQ(xp_netns_key(key, 4), -ENAMETOOLONG);
	setenv("XPILE_BPFFS", "/tmp", 1); /* an explicit bpffs must be one */
	XT_EQ(xp_bpffs_root(root, sizeof(root), false), -ENOTDIR);
	unsetenv("XPILE_BPFFS");
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	remove(path);
	return 0;
}

int main(void)
{
	snprintf(rundir, sizeof(rundir), "/tmp/xpile-users.XXXXXX");
	if (!mkdtemp(rundir))
		XT_SKIP("cannot create a temporary directory");
	setenv("XPILE_RUNDIR", rundir, 1);
	XT_RUN(test_self_not_listed);
	XT_RUN(test_other_listed_then_stale);
	XT_RUN(test_reused_pid_is_stale);
	XT_RUN(test_pin_path);
	XT_RUN(test_netns_key);
	/* The run directory holds a directory per network namespace (nsINODE/xpuN/...):
	 * what the tests left is removed deepest first. */
	nftw(rundir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	return xt_done();
}
