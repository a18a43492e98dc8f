// SPDX-License-Identifier: BSD-3-Clause
/*
 * A replay of translated BPF code (bpf_replay.h). Fake addresses: every region (the
 * packet, the context, each stack frame, each map) sits in its own 4 GB window, so a
 * stray access is an error naming the address, never a read of something else.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_replay.h"

#define MAX_REGIONS 64
#define MAX_MAPS 32
#define MAX_FRAMES 8
#define STACK 512
#define MAX_STEPS 1000000
#define WINDOW (1ULL << 32)
#define PKT_BASE (1ULL << 40)
#define CTX_BASE (PKT_BASE + WINDOW)
#define RXQ_BASE (CTX_BASE + WINDOW)
#define STACK_BASE (RXQ_BASE + WINDOW)
#define MAP_BASE (STACK_BASE + MAX_FRAMES * WINDOW)
#define PKT_HEADROOM 256

/* Newer than Debian 12's uapi headers. */
#define INSN_ADDR_PERCPU (-1) /* MOV64 with this off: this CPU's address of a per-CPU ptr */
#define INSN_NOSPEC 0xc0 /* BPF_ST | this: a speculation barrier */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* sign-extending load */
#endif

struct region {
	__u64 base, size;
	__u8 *mem;
};

struct map_copy {
	__u32 id, type, value_size, max_entries;
	__u64 base; /* the struct bpf_map the code's ld_imm64 points at */
};

struct bpf_replay {
	struct bpf_insn *insns;
	__u32 ninsns;
	__u8 *jited;
	__u32 jited_len;
	__u32 value_off; /* offsetof(struct bpf_array, value) */
	__u32 data_off, data_end_off, rxq_off, queue_index_off;
	__u64 call_base; /* __bpf_call_base: helper calls' imm is relative to it */
	struct map_copy map[MAX_MAPS];
	__u32 nmaps;
	struct region reg[MAX_REGIONS];
	__u32 nreg, fixed_regs; /* regions up to fixed_regs live across runs (the maps) */
	struct {
		__u64 addr;
		char name[128];
	} sym[16]; /* helpers the code calls */
	__u32 nsym;
};

static int fail(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return ret;
}

static struct region *region_add(struct bpf_replay *r, __u64 base, __u64 size)
{
	struct region *g;

	if (r->nreg == MAX_REGIONS)
		return NULL;
	g = &r->reg[r->nreg];
	g->mem = calloc(1, size ? size : 1);
	if (!g->mem)
		return NULL;
	g->base = base;
	g->size = size;
	r->nreg++;
	return g;
}

static __u8 *mem_at(struct bpf_replay *r, __u64 addr, __u32 size)
{
	for (__u32 i = 0; i < r->nreg; i++) {
		struct region *g = &r->reg[i];

		if (addr >= g->base && addr + size <= g->base + g->size)
			return g->mem + (addr - g->base);
	}
	return NULL;
}

/* Byte offset of member @name of struct @id, looking into anonymous members; -1 if none. */
static int member_off(const struct btf *btf, __u32 id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;

	while (t && btf_is_mod(t))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_composite(t))
		return -1;
	m = btf_members(t);
	for (__u16 i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		int off;

		if (n && !strcmp(n, name))
			return btf_member_bit_offset(t, i) / 8;
		if (n && *n)
			continue;
		off = member_off(btf, m->type, name);
		if (off >= 0)
			return btf_member_bit_offset(t, i) / 8 + off;
	}
	return -1;
}

static int struct_member(const struct btf *btf, const char *st, const char *name, __u32 *off)
{
	int id = btf__find_by_name_kind(btf, st, BTF_KIND_STRUCT);
	int o = id > 0 ? member_off(btf, id, name) : -1;

	if (o < 0)
		return -1;
	*off = o;
	return 0;
}

static int layouts_read(struct bpf_replay *r, char *err, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int bad;

	if (!btf)
		return fail(err, len, -ENOENT, "no kernel BTF (/sys/kernel/btf/vmlinux)");
	bad = struct_member(btf, "bpf_array", "value", &r->value_off) ||
	      struct_member(btf, "xdp_buff", "data", &r->data_off) ||
	      struct_member(btf, "xdp_buff", "data_end", &r->data_end_off) ||
	      struct_member(btf, "xdp_buff", "rxq", &r->rxq_off) ||
	      struct_member(btf, "xdp_rxq_info", "queue_index", &r->queue_index_off);
	btf__free(btf);
	return bad ? fail(err, len, -ENOENT, "kernel BTF lacks bpf_array or xdp_buff fields") : 0;
}

/* __bpf_call_base and the names of the helpers at @addrs, from /proc/kallsyms. */
static int syms_read(struct bpf_replay *r, char *err, size_t len)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], name[128];
	unsigned long long a;
	char kind;

	if (!f)
		return fail(err, len, -errno, "/proc/kallsyms: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &a, &kind, name) == 3 &&
		    !strcmp(name, "__bpf_call_base"))
			r->call_base = a;
	rewind(f);
	for (__u32 i = 0; i < r->ninsns; i++) {
		const struct bpf_insn *in = &r->insns[i];
		__u64 to = r->call_base + (__s64)in->imm;
		__u32 k;

		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg)
			continue;
		for (k = 0; k < r->nsym && r->sym[k].addr != to; k++)
			;
		if (k == r->nsym && r->nsym < 16)
			r->sym[r->nsym++].addr = to;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &a, &kind, name) == 3)
			for (__u32 k = 0; k < r->nsym; k++)
				if (r->sym[k].addr == a && !r->sym[k].name[0])
					memcpy(r->sym[k].name, name, sizeof(name));
	(void)fclose(f); /* read only */
	if (!r->call_base)
		return fail(err, len, -EPERM, "no __bpf_call_base in /proc/kallsyms (needs root)");
	return 0;
}

static int map_copy(struct bpf_replay *r, __u32 id, char *err, size_t len)
{
	struct bpf_map_info mi = { 0 };
	__u32 n = sizeof(mi), elem;
	struct map_copy *m = &r->map[r->nmaps];
	struct region *hdr, *vals = NULL;
	int fd = bpf_map_get_fd_by_id(id), ret = 0, ncpu = libbpf_num_possible_cpus();
	__u8 *buf = NULL;

	if (fd < 0)
		return fail(err, len, -errno, "map id %u: %s", id, strerror(errno));
	if (bpf_obj_get_info_by_fd(fd, &mi, &n)) {
		ret = fail(err, len, -errno, "map id %u: %s", id, strerror(errno));
		goto out;
	}
	m->id = id;
	m->type = mi.type;
	m->value_size = mi.value_size;
	m->max_entries = mi.max_entries;
	m->base = MAP_BASE + (__u64)r->nmaps * 2 * WINDOW;
	elem = (mi.value_size + 7) & ~7u;
	if (mi.type == BPF_MAP_TYPE_ARRAY) {
		hdr = region_add(r, m->base, r->value_off + (__u64)elem * mi.max_entries);
	} else if (mi.type == BPF_MAP_TYPE_PERCPU_ARRAY) {
		hdr = region_add(r, m->base, r->value_off + 8ULL * mi.max_entries);
		vals = hdr ? region_add(r, m->base + WINDOW, (__u64)elem * mi.max_entries) : NULL;
		if (hdr && !vals)
			hdr = NULL;
	} else {
		hdr = region_add(r, m->base, r->value_off); /* passed to helpers only */
	}
	if (!hdr || (ncpu < 1 && vals)) {
		ret = fail(err, len, -ENOMEM, "map id %u: no memory", id);
		goto out;
	}
	buf = malloc((size_t)elem * (vals ? ncpu : 1));
	for (__u32 k = 0; buf && k < mi.max_entries && mi.type != BPF_MAP_TYPE_XSKMAP &&
			  (mi.type == BPF_MAP_TYPE_ARRAY || vals);
	     k++) {
		if (bpf_map_lookup_elem(fd, &k, buf)) {
			ret = fail(err, len, -errno, "map %s: lookup %u: %s", mi.name, k,
				   strerror(errno));
			goto out;
		}
		if (vals) {
			__u64 p = vals->base + (__u64)k * elem;

			memcpy(hdr->mem + r->value_off + 8ULL * k, &p, 8);
			memcpy(vals->mem + (__u64)k * elem, buf, mi.value_size); /* CPU 0's */
		} else {
			memcpy(hdr->mem + r->value_off + (__u64)k * elem, buf, mi.value_size);
		}
	}
	if (!buf)
		ret = fail(err, len, -ENOMEM, "map id %u: no memory", id);
	r->nmaps++;
out:
	free(buf);
	close(fd);
	return ret;
}

int bpf_replay_open(int prog_fd, struct bpf_replay **out, char *err, size_t len)
{
	struct bpf_prog_info pi = { 0 };
	__u32 n = sizeof(pi), ids[MAX_MAPS];
	struct bpf_replay *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &n)) {
		ret = fail(err, len, -errno, "program info: %s", strerror(errno));
		goto fail;
	}
	r->ninsns = pi.xlated_prog_len / sizeof(struct bpf_insn);
	r->jited_len = pi.jited_prog_len;
	r->insns = calloc(r->ninsns ? r->ninsns : 1, sizeof(struct bpf_insn));
	r->jited = calloc(1, r->jited_len ? r->jited_len : 1);
	if (!r->insns || !r->jited || pi.nr_map_ids > MAX_MAPS) {
		ret = fail(err, len, -ENOMEM, "program of %u maps: too big to replay",
			   pi.nr_map_ids);
		goto fail;
	}
	memset(&pi, 0, sizeof(pi));
	pi.xlated_prog_len = r->ninsns * sizeof(struct bpf_insn);
	pi.xlated_prog_insns = (__u64)(unsigned long)r->insns;
	pi.jited_prog_len = r->jited_len;
	pi.jited_prog_insns = (__u64)(unsigned long)r->jited;
	pi.nr_map_ids = MAX_MAPS;
	pi.map_ids = (__u64)(unsigned long)ids;
	n = sizeof(pi);
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &n)) {
		ret = fail(err, len, -errno, "program info: %s", strerror(errno));
		goto fail;
	}
	if ((ret = layouts_read(r, err, len)) || (ret = syms_read(r, err, len)))
		goto fail;
	for (__u32 i = 0; i < pi.nr_map_ids; i++)
		if ((ret = map_copy(r, ids[i], err, len)))
			goto fail;
	r->fixed_regs = r->nreg;
	*out = r;
	return 0;
fail:
	bpf_replay_close(r);
	return ret;
}

void bpf_replay_close(struct bpf_replay *r)
{
	if (!r)
		return;
	for (__u32 i = 0; i < r->nreg; i++)
		free(r->reg[i].mem);
	free(r->insns);
	free(r->jited);
	free(r);
}

void bpf_replay_size(const struct bpf_replay *r, struct bpf_replay_size *s)
{
	memset(s, 0, sizeof(*s));
	s->jited_bytes = r->jited_len;
	for (__u32 i = 0; i < r->ninsns; i++) {
		const struct bpf_insn *in = &r->insns[i];

		s->xlated_insns++;
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW))
			i++; /* two slots, one instruction */
		else if (in->code == (BPF_JMP | BPF_CALL))
			in->src_reg == BPF_PSEUDO_CALL ? s->pseudo_call_sites++ : s->helper_sites++;
	}
}

int bpf_replay_dump_jited(const struct bpf_replay *r, const char *path)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fwrite(r->jited, 1, r->jited_len, f) == r->jited_len;
	if (fclose(f) || !ok)
		return -EIO;
	return 0;
}

static const struct map_copy *map_by_addr(const struct bpf_replay *r, __u64 a)
{
	for (__u32 i = 0; i < r->nmaps; i++)
		if (r->map[i].base == a)
			return &r->map[i];
	return NULL;
}

static const char *sym_name(const struct bpf_replay *r, __u64 addr)
{
	for (__u32 k = 0; k < r->nsym; k++)
		if (r->sym[k].addr == addr && r->sym[k].name[0])
			return r->sym[k].name;
	return "?";
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* The helpers an XDP steer program calls, as they behave with no socket or device
 * behind a redirect (the bench's case: the real run's verdict is checked against ours). */
static int helper(struct bpf_replay *r, const char *name, __u64 *reg, __u64 pkt_len, char *err,
		  size_t len)
{
	const struct map_copy *m;
	__u8 *key;

	if (ends_with(name, "_map_redirect")) {
		reg[0] = reg[3] & 3; /* the flags' fallback action */
	} else if (!strcmp(name, "bpf_xdp_redirect")) {
		reg[0] = XDP_REDIRECT;
	} else if (!strcmp(name, "bpf_xdp_get_buff_len")) {
		reg[0] = pkt_len;
	} else if (ends_with(name, "_lookup_elem")) {
		m = map_by_addr(r, reg[1]);
		key = mem_at(r, reg[2], 4);
		if (!m || !key ||
		    (m->type != BPF_MAP_TYPE_ARRAY && m->type != BPF_MAP_TYPE_PERCPU_ARRAY))
			return fail(err, len, -ENOTSUP, "%s: only array lookups are replayed",
				    name);
		reg[0] = 0;
		if (*(__u32 *)key < m->max_entries) {
			__u64 elem = (m->value_size + 7) & ~7u, k = *(__u32 *)key;

			if (m->type == BPF_MAP_TYPE_ARRAY)
				reg[0] = m->base + r->value_off + elem * k;
			else /* the pointer array's entry: CPU 0's value */
				memcpy(&reg[0], mem_at(r, m->base + r->value_off + 8 * k, 8), 8);
		}
	} else {
		return fail(err, len, -ENOTSUP, "helper %s is not replayed", name);
	}
	return 0;
}

static __u64 alu(__u8 op, __u64 d, __u64 s, int is64, __s16 off)
{
	__u32 sh = s & (is64 ? 63 : 31);

	if (!is64) {
		d = (__u32)d;
		s = (__u32)s;
	}
	switch (op) {
	case BPF_ADD:
		d += s;
		break;
	case BPF_SUB:
		d -= s;
		break;
	case BPF_MUL:
		d *= s;
		break;
	case BPF_DIV:
		if (off == 1)
			d = s ? (__u64)(is64 ? (__s64)d / (__s64)s : (__s32)d / (__s32)s) : 0;
		else
			d = s ? d / s : 0;
		break;
	case BPF_MOD:
		if (off == 1)
			d = s ? (__u64)(is64 ? (__s64)d % (__s64)s : (__s32)d % (__s32)s) : d;
		else
			d = s ? d % s : d;
		break;
	case BPF_OR:
		d |= s;
		break;
	case BPF_AND:
		d &= s;
		break;
	case BPF_XOR:
		d ^= s;
		break;
	case BPF_LSH:
		d <<= sh;
		break;
	case BPF_RSH:
		d = is64 ? d >> sh : (__u32)d >> sh;
		break;
	case BPF_ARSH:
		d = is64 ? (__u64)((__s64)d >> sh) : (__u32)((__s32)d >> sh);
		break;
	case BPF_NEG:
		d = -d;
		break;
	case BPF_MOV:
		if (off == 8 || off == 16 || off == 32) /* movsx */
			s = off == 8  ? (__u64)(__s8)s :
			    off == 16 ? (__u64)(__s16)s :
					(__u64)(__s32)s;
		d = s;
		break;
	}
	return is64 ? d : (__u32)d;
}

static int cond(__u8 op, __u64 a, __u64 b, int is64)
{
	__s64 sa = is64 ? (__s64)a : (__s32)a, sb = is64 ? (__s64)b : (__s32)b;

	if (!is64) {
		a = (__u32)a;
		b = (__u32)b;
	}
	switch (op) {
	case BPF_JEQ:
		return a == b;
	case BPF_JNE:
		return a != b;
	case BPF_JGT:
		return a > b;
	case BPF_JGE:
		return a >= b;
	case BPF_JLT:
		return a < b;
	case BPF_JLE:
		return a <= b;
	case BPF_JSGT:
		return sa > sb;
	case BPF_JSGE:
		return sa >= sb;
	case BPF_JSLT:
		return sa < sb;
	case BPF_JSLE:
		return sa <= sb;
	case BPF_JSET:
		return !!(a & b);
	}
	return -1;
}

static __u64 bswap(__u64 v, __s32 bits, int to_be)
{
	if (!to_be) /* the host is little-endian: to_le truncates */
		return bits == 16 ? (__u16)v : bits == 32 ? (__u32)v : v;
	return bits == 16 ? __builtin_bswap16(v) :
	       bits == 32 ? __builtin_bswap32(v) :
			    __builtin_bswap64(v);
}

static void count_helper(struct bpf_replay_count *c, const char *name)
{
	__u32 k;

	c->helpers++;
	for (k = 0; k < c->nhelper && strcmp(c->helper[k].name, name); k++)
		;
	if (k == c->nhelper && k < BPF_REPLAY_HELPERS) {
		snprintf(c->helper[k].name, sizeof(c->helper[k].name), "%s", name);
		c->nhelper++;
	}
	if (k < c->nhelper)
		c->helper[k].calls++;
}

#define SZ(code) \
	((code)&0x18) == BPF_B ? 1 : ((code)&0x18) == BPF_H ? 2 : ((code)&0x18) == BPF_W ? 4 : 8

static __u64 load(const __u8 *p, int sz)
{
	__u64 v = 0;

	memcpy(&v, p, sz); /* little-endian host */
	return v;
}

int bpf_replay_run(struct bpf_replay *r, const void *pkt, __u32 plen, __u32 rxq,
		   struct bpf_replay_count *c, char *err, size_t len)
{
	struct {
		__u32 pc;
		__u64 saved[4]; /* r6-r9 */
	} frame[MAX_FRAMES];
	struct region *g;
	__u64 reg[11] = { 0 }, v;
	__u32 pc = 0, depth = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	r->nreg = r->fixed_regs;
	if (!(g = region_add(r, PKT_BASE, PKT_HEADROOM + plen)))
		return -ENOMEM;
	memcpy(g->mem + PKT_HEADROOM, pkt, plen);
	if (!(g = region_add(r, CTX_BASE, 256)))
		return -ENOMEM;
	v = PKT_BASE + PKT_HEADROOM;
	memcpy(g->mem + r->data_off, &v, 8);
	v += plen;
	memcpy(g->mem + r->data_end_off, &v, 8);
	v = RXQ_BASE;
	memcpy(g->mem + r->rxq_off, &v, 8);
	if (!(g = region_add(r, RXQ_BASE, 256)))
		return -ENOMEM;
	memcpy(g->mem + r->queue_index_off, &rxq, 4);
	for (__u32 f = 0; f < MAX_FRAMES; f++)
		if (!region_add(r, STACK_BASE + f * WINDOW, STACK))
			return -ENOMEM;
	reg[1] = CTX_BASE;
	reg[10] = STACK_BASE + STACK;

	for (;;) {
		const struct bpf_insn *in;
		__u8 cls, op, *p;
		__u64 src;
		int sz, t;

		if (pc >= r->ninsns)
			return fail(err, len, -EFAULT, "pc %u past the end", pc);
		if (++c->insns > MAX_STEPS)
			return fail(err, len, -ELOOP, "more than %u instructions", MAX_STEPS);
		in = &r->insns[pc];
		cls = BPF_CLASS(in->code);
		op = BPF_OP(in->code);
		sz = SZ(in->code);
		switch (cls) {
		case BPF_ALU:
		case BPF_ALU64:
			if (op == BPF_END) {
				reg[in->dst_reg] = bswap(reg[in->dst_reg], in->imm,
							 cls == BPF_ALU64 || BPF_SRC(in->code));
				break;
			}
			if (cls == BPF_ALU64 && op == BPF_MOV && BPF_SRC(in->code) == BPF_X &&
			    in->off == INSN_ADDR_PERCPU) {
				reg[in->dst_reg] = reg[in->src_reg]; /* CPU 0's copy */
				break;
			}
			src = BPF_SRC(in->code) == BPF_X ? reg[in->src_reg] : (__u64)(__s64)in->imm;
			reg[in->dst_reg] =
				alu(op, reg[in->dst_reg], src, cls == BPF_ALU64,
				    op == BPF_MOV ? (BPF_SRC(in->code) == BPF_X ? in->off : 0) :
						    in->off);
			break;
		case BPF_LD:
			if (in->code != (BPF_LD | BPF_IMM | BPF_DW) || pc + 1 >= r->ninsns)
				return fail(err, len, -ENOTSUP, "pc %u: opcode %#x not replayed",
					    pc, in->code);
			if (in->src_reg == BPF_PSEUDO_MAP_FD ||
			    in->src_reg == BPF_PSEUDO_MAP_VALUE) {
				const struct map_copy *m = NULL;

				for (__u32 i = 0; i < r->nmaps; i++)
					if (r->map[i].id == (__u32)in->imm)
						m = &r->map[i];
				if (!m)
					return fail(err, len, -ENOENT, "pc %u: map id %d unknown",
						    pc, in->imm);
				v = m->base;
				if (in->src_reg == BPF_PSEUDO_MAP_VALUE)
					v += r->value_off + (__u32)in[1].imm;
			} else if (!in->src_reg) {
				v = (__u32)in->imm | (__u64)(__u32)in[1].imm << 32;
			} else {
				return fail(err, len, -ENOTSUP,
					    "pc %u: ld_imm64 kind %u not replayed", pc,
					    in->src_reg);
			}
			reg[in->dst_reg] = v;
			pc++;
			break;
		case BPF_LDX:
			if (BPF_MODE(in->code) != BPF_MEM && BPF_MODE(in->code) != BPF_MEMSX)
				return fail(err, len, -ENOTSUP, "pc %u: opcode %#x not replayed",
					    pc, in->code);
			if (!(p = mem_at(r, reg[in->src_reg] + in->off, sz)))
				return fail(err, len, -EFAULT, "pc %u: load of %d at %#llx", pc, sz,
					    (unsigned long long)(reg[in->src_reg] + in->off));
			v = load(p, sz);
			if (BPF_MODE(in->code) == BPF_MEMSX)
				v = sz == 1 ? (__u64)(__s8)v :
				    sz == 2 ? (__u64)(__s16)v :
					      (__u64)(__s32)v;
			reg[in->dst_reg] = v;
			break;
		case BPF_ST:
		case BPF_STX:
			if (cls == BPF_ST && BPF_MODE(in->code) == INSN_NOSPEC)
				break;
			if (BPF_MODE(in->code) != BPF_MEM)
				return fail(err, len, -ENOTSUP, "pc %u: opcode %#x not replayed",
					    pc, in->code);
			if (!(p = mem_at(r, reg[in->dst_reg] + in->off, sz)))
				return fail(err, len, -EFAULT, "pc %u: store of %d at %#llx", pc,
					    sz, (unsigned long long)(reg[in->dst_reg] + in->off));
			v = cls == BPF_STX ? reg[in->src_reg] : (__u64)(__s64)in->imm;
			memcpy(p, &v, sz);
			break;
		case BPF_JMP:
		case BPF_JMP32:
			if (op == BPF_JA) {
				pc += cls == BPF_JMP32 ? in->imm : in->off;
				break;
			}
			if (op == BPF_EXIT) {
				if (!depth) {
					c->retval = reg[0];
					return ret;
				}
				depth--;
				pc = frame[depth].pc;
				memcpy(&reg[6], frame[depth].saved, sizeof(frame[depth].saved));
				reg[10] -= WINDOW;
				break;
			}
			if (op == BPF_CALL && in->src_reg == BPF_PSEUDO_CALL) {
				if (depth == MAX_FRAMES - 1)
					return fail(err, len, -ELOOP, "calls nested too deep");
				c->pseudo_calls++;
				frame[depth].pc = pc;
				memcpy(frame[depth].saved, &reg[6], sizeof(frame[depth].saved));
				depth++;
				reg[10] += WINDOW;
				pc += in->imm;
				break;
			}
			if (op == BPF_CALL) {
				const char *name = sym_name(r, r->call_base + (__s64)in->imm);

				if (in->src_reg)
					return fail(err, len, -ENOTSUP,
						    "pc %u: kfunc call not replayed", pc);
				count_helper(c, name);
				if ((ret = helper(r, name, reg, plen, err, len)))
					return ret;
				break;
			}
			src = BPF_SRC(in->code) == BPF_X ? reg[in->src_reg] : (__u64)(__s64)in->imm;
			t = cond(op, reg[in->dst_reg], src, cls == BPF_JMP);
			if (t < 0)
				return fail(err, len, -ENOTSUP, "pc %u: opcode %#x not replayed",
					    pc, in->code);
			if (t)
				pc += in->off;
			break;
		}
		pc++;
	}
}
