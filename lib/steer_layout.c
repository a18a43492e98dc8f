// SPDX-License-Identifier: BSD-3-Clause
/*
 * Whether a new build of the steer program can take over the running one's pinned maps:
 * the object's map layout version and every pinned map's type, key, value and size, and
 * the migrations between layout versions.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log_internal.h"
#include "steer_internal.h"

#define ABI_SECTION ".rodata.xp_abi"

/*
 * Migrations between layout versions, none yet. One would rewrite the maps whose layout
 * changed (create them anew, copy, pin in place of the old) before the new object reuses
 * them; maps whose layout is unchanged are reused as they are.
 */
static const struct xp_steer_migration migrations[] = {
	{ 0 }, /* end; version 0 is never a layout */
};

const struct xp_steer_migration *xp_steer_migration_find(__u32 from, __u32 to)
{
	for (const struct xp_steer_migration *m = migrations; m->from; m++)
		if (m->from == from && m->to == to)
			return m;
	return NULL;
}

__u32 xp_steer_obj_version(const struct bpf_object *bo)
{
	const struct bpf_map *m = bo ? bpf_object__find_map_by_name(bo, ABI_SECTION) : NULL;
	const __u32 *v;
	size_t sz = 0;

	/* An object built before the version existed has the first layout. */
	if (!m)
		return 1;
	v = bpf_map__initial_value((struct bpf_map *)m, &sz);
	return v && sz >= sizeof(*v) ? *v : 1;
}

int xp_steer_layout_check(const char *ifname, const int *fds, const struct bpf_object *bo,
			  __u32 running, __u32 next, bool migrate)
{
	static const char *const what[] = { "type", "key size", "value size", "max_entries",
					    "flags" };

	if (running != next && !migrate) {
		xp_err("%s: the new program's map layout is version %u, the running one's %u, and "
		       "no migration exists between them; unload and load it instead (rules and "
		       "counters are lost)\n",
		       ifname, next, running);
		return -EPROTO;
	}
	for (int i = 0; i < XP_M_NR; i++) {
		const struct bpf_map *m = xp_steer_obj_map(bo, i);
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info), have[5], want[5];
		int k;

		if (!m) {
			xp_err("%s: the new program has no map %s; give the steer.o that `make` "
			       "builds (build/bpf/steer.o)\n",
			       ifname, xp_steer_map_names[i]);
			return -ENOEXEC;
		}
		if (bpf_obj_get_info_by_fd(fds[i], &info, &len))
			return -errno;
		have[0] = info.type, have[1] = info.key_size, have[2] = info.value_size;
		have[3] = info.max_entries, have[4] = info.map_flags;
		want[0] = bpf_map__type(m), want[1] = bpf_map__key_size(m);
		want[2] = bpf_map__value_size(m), want[3] = bpf_map__max_entries(m);
		want[4] = bpf_map__map_flags(m);
		for (k = 0; k < 5 && have[k] == want[k]; k++)
			;
		if (k == 5 || migrate)
			continue;
		xp_err("%s: the new program's map %s differs in %s (%u, running %u) under the "
		       "same layout version %u; bump XP_STEER_ABI_VERSION and add a migration, or "
		       "unload and load it instead\n",
		       ifname, xp_steer_map_names[i], what[k], want[k], have[k], next);
		return -EPROTO;
	}
	return 0;
}
