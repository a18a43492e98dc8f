// SPDX-License-Identifier: BSD-3-Clause
/* Placeholder so the API links; the implementation follows. */
#include "xpile/pile.h"
#include "log_internal.h"

int xp_pool_create(const __u64 *handles, __u32 n, const struct xp_pool_opts *opts,
		   struct xp_pool **out)
{
	xp_err("pile: not implemented yet\n");
	return -ENOSYS;
}
void xp_pool_destroy(struct xp_pool *p) {}
int xp_pool_get(struct xp_pool *p, __u64 *objs, __u32 n) { return -ENOSYS; }
int xp_pool_put(struct xp_pool *p, const __u64 *objs, __u32 n) { return -ENOSYS; }
__u32 xp_pool_size(const struct xp_pool *p) { return 0; }
__u32 xp_pool_avail(const struct xp_pool *p) { return 0; }
__u32 xp_pool_cached(const struct xp_pool *p) { return 0; }
__u32 xp_pool_in_use(const struct xp_pool *p) { return 0; }
enum xp_pool_backend xp_pool_backend(const struct xp_pool *p) { return XP_POOL_PILE; }
const char *xp_pool_backend_name(enum xp_pool_backend b) { return b == XP_POOL_RING ? "ring" : "pile"; }
bool xp_pool_debug(const struct xp_pool *p) { return false; }
int xp_pool_audit(struct xp_pool *p) { return -ENOSYS; }
int xp_cache_create(struct xp_pool *p, __u32 size, struct xp_cache **out) { return -ENOSYS; }
void xp_cache_destroy(struct xp_cache *c) {}
int xp_cache_flush(struct xp_cache *c) { return -ENOSYS; }
int xp_cache_get_slow(struct xp_cache *c, __u64 *objs, __u32 n) { return -ENOSYS; }
int xp_cache_put_slow(struct xp_cache *c, const __u64 *objs, __u32 n) { return -ENOSYS; }
