/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What one run of a loaded XDP program does on one packet, counted by replaying its
 * translated instructions (the verifier's output: inlined map lookups, rewritten context
 * accesses) in user space over copies of its maps. The kernel here has no PMU for
 * `bpftool prog profile`, and a count needs no PMU: instructions executed, helper calls
 * by name, bpf-to-bpf calls. Map writes stay in the copies, so a second run of the
 * same packet sees what the first left (a flow cache entry, say). Context and map
 * layouts come from the kernel's BTF.
 */
#ifndef XPILE_BENCH_BPF_REPLAY_H
#define XPILE_BENCH_BPF_REPLAY_H

#include <linux/types.h>

#define BPF_REPLAY_HELPERS 4

struct bpf_replay_count {
	__u64 insns; /* BPF instructions executed, calls and exit included */
	__u32 helpers; /* helper calls (lookups the verifier did not inline are among them) */
	__u32 pseudo_calls; /* bpf-to-bpf calls */
	__u32 retval;
	__u32 nhelper; /* distinct helpers called, in order of first call */
	struct {
		char name[128];
		__u32 calls;
	} helper[BPF_REPLAY_HELPERS];
};

/* Size of a loaded program: translated instructions and JITed bytes. */
struct bpf_replay_size {
	__u32 xlated_insns, jited_bytes;
	__u32 helper_sites, pseudo_call_sites; /* call instructions in the translated code */
};

struct bpf_replay;

/* Copies program @prog_fd's translated code and its maps' contents (CPU 0's values of
 * per-CPU maps). -errno, with the reason in @err. */
int bpf_replay_open(int prog_fd, struct bpf_replay **out, char *err, size_t errlen);
/* One run on @pkt (@len bytes) received on queue @rxq; 0 or -errno (reason in @err). */
int bpf_replay_run(struct bpf_replay *r, const void *pkt, __u32 len, __u32 rxq,
		   struct bpf_replay_count *c, char *err, size_t errlen);
void bpf_replay_size(const struct bpf_replay *r, struct bpf_replay_size *s);
/* Writes the JITed image to @path (raw x86-64: objdump -D -b binary -m i386:x86-64). */
int bpf_replay_dump_jited(const struct bpf_replay *r, const char *path);
void bpf_replay_close(struct bpf_replay *r);

#endif
