// SPDX-License-Identifier: BSD-3-Clause
/*
 * Stands in for systemd's NOTIFY_SOCKET: binds a Unix datagram socket at PATH, runs
 * CMD... with NOTIFY_SOCKET=PATH, and prints every datagram it gets as
 * "SECONDS MESSAGE" (seconds since CMD started, the message's newlines as spaces)
 * until CMD exits; then exits with CMD's status. For the agent's suites.
 *
 *   notify PATH CMD [ARGS...]
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t fwd_sig;

static void on_sig(int sig)
{
	fwd_sig = sig;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, status = 0;
	pid_t pid;
	double t0;

	if (argc < 3 || strlen(argv[1]) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "usage: notify PATH CMD [ARGS...]\n");
		return 2;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		fprintf(stderr, "notify: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGTERM, on_sig);
	signal(SIGHUP, on_sig);
	signal(SIGINT, on_sig);
	t0 = now();
	pid = fork();
	if (pid == 0) {
		setenv("NOTIFY_SOCKET", argv[1], 1);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[512];
		ssize_t n;

		if (fwd_sig) {
			kill(pid, fwd_sig); /* the test signals us; the agent is the one meant */
			fwd_sig = 0;
		}
		if (poll(&p, 1, 50) > 0 && (n = recv(fd, buf, sizeof(buf) - 1, 0)) > 0) {
			buf[n] = 0;
			for (char *c = buf; *c; c++)
				if (*c == '\n')
					*c = ' ';
			printf("%.6f %s\n", now() - t0, buf);
			continue;
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	/* Whatever came in just before the exit. */
	for (;;) {
		char buf[512];
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

		if (n <= 0)
			break;
		buf[n] = 0;
		for (char *c = buf; *c; c++)
			if (*c == '\n')
				*c = ' ';
		printf("%.6f %s\n", now() - t0, buf);
	}
	close(fd);
	unlink(argv[1]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
