// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ABI of libxpile.so.0, pinned: the size, alignment and field offsets of every
 * public struct of lib/include/xpile/.
 *
 * Two kinds of structs are ABI (see the top of each header):
 * - read or written in place by inline code compiled into the caller: xp_cache
 *   (the cache hit paths), xp_deal (xp_deal_put), xp_xsk and xp_ring (the ring
 *   helpers), xp_layout and xp_topology (address arithmetic), xp_ledger_acct
 *   (xp_ledger_move), xp_ledger_map (xp_ledger_mark), xp_ledger_cut
 *   (xp_ledger_cut_take), xp_lines;
 * - filled or read across the call boundary: every opts struct (append-only under the
 *   rule of xpile/opts.h), the stats, info, report, plan and feature structs.
 *
 * A failure here means a binary built against the old headers would misread the new
 * library. CHANGING ANY OF THESE NUMBERS NEEDS A SONAME BUMP (libxpile.so.1, Makefile
 * and lib/libxpile.map), except appending a field to an opts struct as xpile/opts.h
 * says (then update its line and its __last_field). Regenerate the table with
 * tests/lib/abi_layouts.py after an intended change.
 */
#include <stdalign.h>
#include <stddef.h>

#include "xpile/deal.h"
#include "xpile/umem.h"
#include "xpile/owner.h"
#include "xpile/opts.h"
#include "xpile/log.h"
#include "xpile/api.h"
#include "xpile/ethtool.h"
#include "xpile/handover.h"
#include "xpile/host.h"
#include "xpile/layout.h"
#include "xpile/ledger.h"
#include "xpile/mem.h"
#include "xpile/pile.h"
#include "xpile/region.h"
#include "xpile/steer.h"
#include "xpile/text.h"
#include "xpile/xsk.h"
#include "xt.h"

struct pin {
	const char *what;
	size_t have, want;
};

/* clang-format off */
#define S(T, size, align) \
	{ "sizeof(struct " #T ")", sizeof(struct T), size }, \
	{ "alignof(struct " #T ")", alignof(struct T), align }
#define F(T, f, off) { "offsetof(struct " #T ", " #f ")", offsetof(struct T, f), off }
/* clang-format on */

static const struct pin pins[] = {
	S(xp_deal_opts, 32, 8),
	F(xp_deal_opts, sz, 0),
	F(xp_deal_opts, max_get, 8),
	F(xp_deal_opts, stack, 12),
	F(xp_deal_opts, pull_max, 16),
	F(xp_deal_opts, reserved_, 20),
	F(xp_deal_opts, seed, 24),
	S(xp_deal_stats, 48, 8),
	F(xp_deal_stats, gets, 0),
	F(xp_deal_stats, uneven, 8),
	F(xp_deal_stats, topups, 16),
	F(xp_deal_stats, pulled, 24),
	F(xp_deal_stats, spilled, 32),
	F(xp_deal_stats, fails, 40),
	S(xp_deal, 464, 8),
	F(xp_deal, nch, 0),
	F(xp_deal, cap, 4),
	F(xp_deal, count, 8),
	F(xp_deal, next, 12),
	F(xp_deal, data_off, 16),
	F(xp_deal, ishift, 20),
	F(xp_deal, idiv, 24),
	F(xp_deal, chmask, 28),
	F(xp_deal, chmagic, 32),
	F(xp_deal, cache, 40),
	F(xp_deal, st, 48),
	F(xp_deal, present, 96),
	F(xp_deal, npresent, 104),
	F(xp_deal, max_get, 108),
	F(xp_deal, pull_max, 112),
	F(xp_deal, ovcap, 116),
	F(xp_deal, over, 120),
	F(xp_deal, stk, 128),
	F(xp_deal, rng, 136),
	F(xp_deal, len, 144),
	F(xp_deal, order, 400),
	S(xp_flow, 56, 4),
	F(xp_flow, id, 0),
	F(xp_flow, has_id, 4),
	F(xp_flow, family, 5),
	F(xp_flow, l4proto, 6),
	F(xp_flow, src_len, 7),
	F(xp_flow, dst_len, 8),
	F(xp_flow, src, 9),
	F(xp_flow, dst, 25),
	F(xp_flow, sport, 42),
	F(xp_flow, sport_mask, 44),
	F(xp_flow, dport, 46),
	F(xp_flow, dport_mask, 48),
	F(xp_flow, drop, 50),
	F(xp_flow, queue, 52),
	S(xp_ethtool_caps, 72, 4),
	F(xp_ethtool_caps, driver, 0),
	F(xp_ethtool_caps, rx_rings, 32),
	F(xp_ethtool_caps, rss, 36),
	F(xp_ethtool_caps, rss_size, 40),
	F(xp_ethtool_caps, rss_err, 44),
	F(xp_ethtool_caps, ntuple, 48),
	F(xp_ethtool_caps, ntuple_rules, 52),
	F(xp_ethtool_caps, ntuple_size, 56),
	F(xp_ethtool_caps, ntuple_loc_any, 60),
	F(xp_ethtool_caps, ntuple_err, 64),
	F(xp_ethtool_caps, ntuple_feature_known, 68),
	F(xp_ethtool_caps, ntuple_on, 69),
	F(xp_ethtool_caps, ntuple_fixed, 70),
	S(xp_ho_hdr, 16, 4),
	F(xp_ho_hdr, magic, 0),
	F(xp_ho_hdr, version, 4),
	F(xp_ho_hdr, type, 6),
	F(xp_ho_hdr, len, 8),
	F(xp_ho_hdr, nfds, 12),
	S(xp_umem_rec, 32, 8),
	F(xp_umem_rec, offset, 0),
	F(xp_umem_rec, size, 8),
	F(xp_umem_rec, chunk_size, 16),
	F(xp_umem_rec, headroom, 20),
	F(xp_umem_rec, flags, 24),
	F(xp_umem_rec, page_size, 28),
	S(xp_xsk_rec, 60, 4),
	F(xp_xsk_rec, ifname, 0),
	F(xp_xsk_rec, ifindex, 16),
	F(xp_xsk_rec, queue, 20),
	F(xp_xsk_rec, rx_size, 24),
	F(xp_xsk_rec, tx_size, 28),
	F(xp_xsk_rec, fill_size, 32),
	F(xp_xsk_rec, comp_size, 36),
	F(xp_xsk_rec, flags, 40),
	F(xp_xsk_rec, fill_prod, 44),
	F(xp_xsk_rec, rx_cons, 48),
	F(xp_xsk_rec, tx_prod, 52),
	F(xp_xsk_rec, comp_cons, 56),
	S(xp_wire_plan, 2052, 4),
	F(xp_wire_plan, n, 0),
	F(xp_wire_plan, map, 4),
	S(xp_if_features, 164, 4),
	F(xp_if_features, native_xdp, 0),
	F(xp_if_features, xsk_zerocopy, 1),
	F(xp_if_features, multibuf, 2),
	F(xp_if_features, redirect_target, 3),
	F(xp_if_features, features_known, 4),
	F(xp_if_features, dispatcher, 5),
	F(xp_if_features, dispatcher_why, 6),
	F(xp_if_features, rx_queues, 136),
	F(xp_if_features, tx_queues, 140),
	F(xp_if_features, combined, 144),
	F(xp_if_features, max_combined, 148),
	F(xp_if_features, max_rx, 152),
	F(xp_if_features, max_tx, 156),
	F(xp_if_features, channels_known, 160),
	S(xp_topology, 20, 4),
	F(xp_topology, channels, 0),
	F(xp_topology, ranks, 4),
	F(xp_topology, interleave, 8),
	F(xp_topology, l1_sets, 12),
	F(xp_topology, l2_sets, 16),
	S(xp_layout_opts, 56, 8),
	F(xp_layout_opts, sz, 0),
	F(xp_layout_opts, frame_size, 8),
	F(xp_layout_opts, headroom, 12),
	F(xp_layout_opts, nframes, 16),
	F(xp_layout_opts, kind, 20),
	F(xp_layout_opts, topo, 24),
	F(xp_layout_opts, page_size, 44),
	F(xp_layout_opts, stride, 48),
	F(xp_layout_opts, flags, 52),
	S(xp_layout, 96, 8),
	F(xp_layout, kind, 0),
	F(xp_layout, frame_size, 4),
	F(xp_layout, chunk_size, 8),
	F(xp_layout, umem_flags, 12),
	F(xp_layout, headroom, 16),
	F(xp_layout, data_off, 20),
	F(xp_layout, nframes, 24),
	F(xp_layout, stride, 28),
	F(xp_layout, page_size, 32),
	F(xp_layout, frames_per_page, 36),
	F(xp_layout, rot_lines, 40),
	F(xp_layout, area_size, 48),
	F(xp_layout, topo, 56),
	F(xp_layout, m3_classes, 76),
	F(xp_layout, m3_magic, 80),
	F(xp_layout, m3_chinv, 88),
	S(xp_ledger_acct, 80, 8),
	F(xp_ledger_acct, n, 0),
	F(xp_ledger_acct, ledger, 40),
	F(xp_ledger_acct, state, 48),
	F(xp_ledger_acct, nslots, 56),
	F(xp_ledger_acct, moved, 64),
	F(xp_ledger_acct, shift, 72),
	F(xp_ledger_acct, debug, 76),
	S(xp_ledger_opts, 48, 8),
	F(xp_ledger_opts, sz, 0),
	F(xp_ledger_opts, handles, 8),
	F(xp_ledger_opts, nframes, 16),
	F(xp_ledger_opts, max_accts, 20),
	F(xp_ledger_opts, debug, 24),
	F(xp_ledger_opts, handle_of, 32),
	F(xp_ledger_opts, ctx, 40),
	S(xp_ledger_map, 32, 8),
	F(xp_ledger_map, state, 0),
	F(xp_ledger_map, nslots, 8),
	F(xp_ledger_map, shift, 16),
	F(xp_ledger_map, acct, 24),
	S(xp_ledger_report, 360, 8),
	F(xp_ledger_report, place, 0),
	F(xp_ledger_report, state, 40),
	F(xp_ledger_report, bad_transitions, 80),
	F(xp_ledger_report, slack, 88),
	F(xp_ledger_report, nframes, 96),
	F(xp_ledger_report, ok, 100),
	F(xp_ledger_report, live, 101),
	F(xp_ledger_report, why, 102),
	S(xp_ledger_cut, 48, 8),
	F(xp_ledger_cut, n, 0),
	F(xp_ledger_cut, moved, 40),
	S(xp_mem_opts, 32, 8),
	F(xp_mem_opts, sz, 0),
	F(xp_mem_opts, size, 8),
	F(xp_mem_opts, hugepages, 16),
	F(xp_mem_opts, bind_node, 20),
	F(xp_mem_opts, numa_node, 24),
	F(xp_mem_opts, lock, 28),
	F(xp_mem_opts, reserved_, 29),
	S(xp_mem, 40, 8),
	F(xp_mem, base, 0),
	F(xp_mem, size, 8),
	F(xp_mem, page_size, 16),
	F(xp_mem, hugepages, 20),
	F(xp_mem, numa_node, 24),
	F(xp_mem, locked, 28),
	F(xp_mem, fd, 32),
	S(xp_steer_health, 28, 4),
	F(xp_steer_health, iface_gone, 0),
	F(xp_steer_health, prog_gone, 1),
	F(xp_steer_health, prog_replaced, 2),
	F(xp_steer_health, pins_gone, 3),
	F(xp_steer_health, pins_replaced, 4),
	F(xp_steer_health, attached_id, 8),
	F(xp_steer_health, attached_name, 12),
	S(xp_user, 284, 4),
	F(xp_user, pid, 0),
	F(xp_user, comm, 4),
	F(xp_user, prog_id, 20),
	F(xp_user, nqueues, 24),
	F(xp_user, queues, 28),
	S(xp_pool_opts, 40, 8),
	F(xp_pool_opts, sz, 0),
	F(xp_pool_opts, backend, 8),
	F(xp_pool_opts, flags, 12),
	F(xp_pool_opts, umem_size, 16),
	F(xp_pool_opts, handle_align, 24),
	F(xp_pool_opts, max_caches, 28),
	F(xp_pool_opts, stripes, 32),
	F(xp_pool_opts, reserved_, 36),
	S(xp_cache_stats, 80, 8),
	F(xp_cache_stats, get_hits, 0),
	F(xp_cache_stats, put_hits, 8),
	F(xp_cache_stats, get_misses, 16),
	F(xp_cache_stats, put_misses, 24),
	F(xp_cache_stats, refills, 32),
	F(xp_cache_stats, flushes, 40),
	F(xp_cache_stats, objs_refilled, 48),
	F(xp_cache_stats, objs_flushed, 56),
	F(xp_cache_stats, bypasses, 64),
	F(xp_cache_stats, fails, 72),
	S(xp_cache, 128, 64),
	F(xp_cache, len, 0),
	F(xp_cache, put_lim, 4),
	F(xp_cache, size, 8),
	F(xp_cache, dlen, 12),
	F(xp_cache, pool, 16),
	F(xp_cache, st, 24),
	F(xp_cache, priv, 104),
	F(xp_cache, cap, 112),
	F(xp_cache, pad_, 116),
	F(xp_cache, objs, 128),
	S(xp_region_opts, 32, 8),
	F(xp_region_opts, sz, 0),
	F(xp_region_opts, size, 8),
	F(xp_region_opts, chunk, 16),
	F(xp_region_opts, spaces, 24),
	F(xp_region_opts, algo, 28),
	S(xp_region_stats, 40, 8),
	F(xp_region_stats, free_chunks, 0),
	F(xp_region_stats, loose_chunks, 8),
	F(xp_region_stats, largest_block, 16),
	F(xp_region_stats, free_blocks, 24),
	F(xp_region_stats, coalesces, 32),
	S(xp_arena_opts, 40, 8),
	F(xp_arena_opts, sz, 0),
	F(xp_arena_opts, size, 8),
	F(xp_arena_opts, chunk, 16),
	F(xp_arena_opts, spaces, 24),
	F(xp_arena_opts, hugepages, 28),
	F(xp_arena_opts, numa_node, 32),
	F(xp_arena_opts, algo, 36),
	S(xp_arena_buf, 32, 8),
	F(xp_arena_buf, base, 0),
	F(xp_arena_buf, off, 8),
	F(xp_arena_buf, size, 16),
	F(xp_arena_buf, nchunks, 24),
	F(xp_arena_buf, reserved_, 28),
	S(xp_steer_opts, 64, 8),
	F(xp_steer_opts, sz, 0),
	F(xp_steer_opts, ifname, 8),
	F(xp_steer_opts, mode, 16),
	F(xp_steer_opts, pin_path, 24),
	F(xp_steer_opts, bpf_obj, 32),
	F(xp_steer_opts, attach_existing, 40),
	F(xp_steer_opts, force, 41),
	F(xp_steer_opts, default_action, 48),
	F(xp_steer_opts, frags, 56),
	F(xp_steer_opts, link, 60),
	F(xp_steer_opts, reserved_, 61),
	S(xp_steer_replace_opts, 16, 8),
	F(xp_steer_replace_opts, sz, 0),
	F(xp_steer_replace_opts, bpf_obj, 8),
	S(xp_steer_stats, 240, 8),
	F(xp_steer_stats, verdict, 0),
	F(xp_steer_stats, parse_err, 128),
	S(xp_steer_info, 544, 4),
	F(xp_steer_info, ifname, 0),
	F(xp_steer_info, ifindex, 16),
	F(xp_steer_info, prog_id, 20),
	F(xp_steer_info, mode, 24),
	F(xp_steer_info, legacy, 28),
	F(xp_steer_info, pin_path, 29),
	S(xp_lines, 32, 8),
	F(xp_lines, f, 0),
	F(xp_lines, max_len, 8),
	F(xp_lines, buf, 16),
	F(xp_lines, lineno, 24),
	S(xp_ring, 64, 8),
	F(xp_ring, cached_prod, 0),
	F(xp_ring, cached_cons, 4),
	F(xp_ring, mask, 8),
	F(xp_ring, size, 12),
	F(xp_ring, producer, 16),
	F(xp_ring, consumer, 24),
	F(xp_ring, flags, 32),
	F(xp_ring, ring, 40),
	F(xp_ring, map, 48),
	F(xp_ring, map_len, 56),
	S(xp_umem_opts, 40, 8),
	F(xp_umem_opts, sz, 0),
	F(xp_umem_opts, area, 8),
	F(xp_umem_opts, size, 16),
	F(xp_umem_opts, chunk_size, 24),
	F(xp_umem_opts, headroom, 28),
	F(xp_umem_opts, flags, 32),
	F(xp_umem_opts, reserved_, 36),
	S(xp_xsk_opts, 64, 8),
	F(xp_xsk_opts, sz, 0),
	F(xp_xsk_opts, ifname, 8),
	F(xp_xsk_opts, queue, 16),
	F(xp_xsk_opts, rx_size, 20),
	F(xp_xsk_opts, tx_size, 24),
	F(xp_xsk_opts, fill_size, 28),
	F(xp_xsk_opts, comp_size, 32),
	F(xp_xsk_opts, mode, 36),
	F(xp_xsk_opts, no_need_wakeup, 40),
	F(xp_xsk_opts, multi_buffer, 41),
	F(xp_xsk_opts, busy_poll, 42),
	F(xp_xsk_opts, busy_poll_usecs, 44),
	F(xp_xsk_opts, busy_poll_budget, 48),
	F(xp_xsk_opts, tx_budget, 52),
	F(xp_xsk_opts, tx_budget_optional, 56),
	F(xp_xsk_opts, reserved_, 57),
	S(xp_xsk, 296, 8),
	F(xp_xsk, rx, 0),
	F(xp_xsk, tx, 64),
	F(xp_xsk, fill, 128),
	F(xp_xsk, comp, 192),
	F(xp_xsk, fd, 256),
	F(xp_xsk, ifindex, 260),
	F(xp_xsk, queue, 264),
	F(xp_xsk, zerocopy, 268),
	F(xp_xsk, need_wakeup, 269),
	F(xp_xsk, multi_buffer, 270),
	F(xp_xsk, owns_umem_fd, 271),
	F(xp_xsk, umem, 272),
	F(xp_xsk, ifname, 280),
	S(xp_xsk_stats, 48, 8),
	F(xp_xsk_stats, rx_dropped, 0),
	F(xp_xsk_stats, rx_invalid_descs, 8),
	F(xp_xsk_stats, tx_invalid_descs, 16),
	F(xp_xsk_stats, rx_ring_full, 24),
	F(xp_xsk_stats, rx_fill_ring_empty_descs, 32),
	F(xp_xsk_stats, tx_ring_empty_descs, 40),
};

static void layouts(void)
{
	for (size_t i = 0; i < sizeof(pins) / sizeof(pins[0]); i++)
		if (pins[i].have != pins[i].want) {
			fprintf(stderr, "  %s is %zu, the ABI says %zu (soname bump needed)\n",
				pins[i].what, pins[i].have, pins[i].want);
			XT_CHECK(pins[i].have == pins[i].want);
		}
}

/* The opts structs have no unnamed tail padding (xpile/opts.h): what follows the last
 * field is a named reserved_, so a zero-initialised struct has a zero tail. */
static void opts_tails(void)
{
	XT_EQ(XP_OPTS_KNOWN(xp_arena_opts), sizeof(struct xp_arena_opts));
	XT_EQ(XP_OPTS_KNOWN(xp_deal_opts), sizeof(struct xp_deal_opts));
	XT_EQ(XP_OPTS_KNOWN(xp_layout_opts), sizeof(struct xp_layout_opts));
	XT_EQ(XP_OPTS_KNOWN(xp_ledger_opts), sizeof(struct xp_ledger_opts));
	XT_EQ(XP_OPTS_KNOWN(xp_region_opts), sizeof(struct xp_region_opts));
	XT_EQ(XP_OFFSETOFEND(struct xp_mem_opts, reserved_), sizeof(struct xp_mem_opts));
	XT_EQ(XP_OFFSETOFEND(struct xp_pool_opts, reserved_), sizeof(struct xp_pool_opts));
	XT_EQ(XP_OFFSETOFEND(struct xp_steer_opts, reserved_), sizeof(struct xp_steer_opts));
	XT_EQ(XP_OFFSETOFEND(struct xp_umem_opts, reserved_), sizeof(struct xp_umem_opts));
	XT_EQ(XP_OFFSETOFEND(struct xp_xsk_opts, reserved_), sizeof(struct xp_xsk_opts));
}

int main(void)
{
	XT_RUN(layouts);
	XT_RUN(opts_tails);
	return xt_done();
}
