// SPDX-License-Identifier: BSD-3-Clause
/*
 * The ethtool requests of `xpile-loader wire` (lib/ethtool.c, lib/flow_text.c): the
 * bytes of ETHTOOL_SRXCLSRLINS / SRXCLSRLDEL / SRXFHINDIR as the kernel's uapi lays
 * them out (checked at fixed offsets, not through the same struct the code uses), the
 * flow text read and written back, a NIC's rule decoded, and the location chosen.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include "xpile/ethtool.h"
#include "xt.h"

/* struct ethtool_rxnfc on x86-64 (include/uapi/linux/ethtool.h) */
#define NFC_SIZE 192
#define NFC_FS 16
#define FS_H_U 4
#define FS_M_U 76
#define FS_RING 152
#define FS_LOC 160

static int parse(const char *text, struct xp_flow *f, char *err, size_t len)
{
	char buf[512], *argv[64], *sp;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &sp); t && argc < 64; t = strtok_r(NULL, " ", &sp))
		argv[argc++] = t;
	err[0] = 0;
	return xp_flow_parse(argc, argv, f, err, len);
}

static uint32_t u32_at(const uint8_t *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static uint64_t u64_at(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static void test_layout(void)
{
	/* If the uapi ever moved a field, the byte checks below would be checking air. */
	XT_EQ(sizeof(struct ethtool_rxnfc), NFC_SIZE);
	XT_EQ(offsetof(struct ethtool_rxnfc, fs), NFC_FS);
	XT_EQ(offsetof(struct ethtool_rx_flow_spec, h_u), FS_H_U);
	XT_EQ(offsetof(struct ethtool_rx_flow_spec, m_u), FS_M_U);
	XT_EQ(offsetof(struct ethtool_rx_flow_spec, ring_cookie), FS_RING);
	XT_EQ(offsetof(struct ethtool_rx_flow_spec, location), FS_LOC);
	XT_EQ(sizeof(struct ethtool_rxfh_indir), 8);
}

/* "udp dport 4789 queue 2" at location 7: every byte of the request. */
static void test_encode_udp4_bytes(void)
{
	struct ethtool_rxnfc nfc;
	uint8_t want[NFC_SIZE] = { 0 }, *got = (uint8_t *)&nfc;
	struct xp_flow f;
	char err[256];

	XT_REQUIRE(parse("udp dport 4789 queue 2", &f, err, sizeof(err)) == 0);
	memset(&nfc, 0xa5, sizeof(nfc));
	XT_REQUIRE(xp_flow_encode(&f, 7, &nfc) == 0);
	want[0] = 0x32; /* ETHTOOL_SRXCLSRLINS */
	want[NFC_FS] = 0x02; /* UDP_V4_FLOW */
	/* udp_ip4_spec: ip4src 0..3, ip4dst 4..7, psrc 8..9, pdst 10..11 (big endian) */
	want[NFC_FS + FS_H_U + 10] = 0x12;
	want[NFC_FS + FS_H_U + 11] = 0xb5;
	want[NFC_FS + FS_M_U + 10] = 0xff;
	want[NFC_FS + FS_M_U + 11] = 0xff;
	want[NFC_FS + FS_RING] = 2;
	want[NFC_FS + FS_LOC] = 7;
	for (size_t i = 0; i < NFC_SIZE; i++)
		if (got[i] != want[i]) {
			fprintf(stderr, "  byte %zu: 0x%02x, want 0x%02x\n", i, got[i], want[i]);
			XT_CHECK(got[i] == want[i]);
		}
}

static void test_encode_tcp4_prefix(void)
{
	struct ethtool_rxnfc nfc;
	uint8_t *b = (uint8_t *)&nfc, *h = b + NFC_FS + FS_H_U, *m = b + NFC_FS + FS_M_U;
	struct xp_flow f;
	char err[256];

	XT_REQUIRE(parse("tcp src 198.18.7.9/24 dst 198.19.0.1 sport 4096-8191 queue 5", &f, err,
			 sizeof(err)) == 0);
	XT_REQUIRE(xp_flow_encode(&f, RX_CLS_LOC_ANY, &nfc) == 0);
	XT_EQ(u32_at(b, NFC_FS), TCP_V4_FLOW);
	/* the source is masked to its prefix; the destination is a host */
	XT_CHECK(!memcmp(h, "\xc6\x12\x07\x00", 4));
	XT_CHECK(!memcmp(m, "\xff\xff\xff\x00", 4));
	XT_CHECK(!memcmp(h + 4, "\xc6\x13\x00\x01", 4));
	XT_CHECK(!memcmp(m + 4, "\xff\xff\xff\xff", 4));
	/* 4096-8191: port 0x1000 under mask 0xf000 */
	XT_CHECK(!memcmp(h + 8, "\x10\x00", 2));
	XT_CHECK(!memcmp(m + 8, "\xf0\x00", 2));
	XT_CHECK(!memcmp(m + 10, "\x00\x00", 2)); /* dport: any */
	XT_EQ(u64_at(b, NFC_FS + FS_RING), 5);
	XT_EQ(u32_at(b, NFC_FS + FS_LOC), RX_CLS_LOC_ANY);
}

static void test_encode_ip6_and_user(void)
{
	struct ethtool_rxnfc nfc;
	uint8_t *b = (uint8_t *)&nfc, *h = b + NFC_FS + FS_H_U, *m = b + NFC_FS + FS_M_U;
	struct xp_flow f;
	char err[256];

	XT_REQUIRE(parse("ipv6 udp dst 2001:db8::1/64 dport 53 drop", &f, err, sizeof(err)) == 0);
	XT_EQ(f.family, 6);
	XT_REQUIRE(xp_flow_encode(&f, 3, &nfc) == 0);
	XT_EQ(u32_at(b, NFC_FS), UDP_V6_FLOW);
	/* udp_ip6_spec: ip6src 0..15, ip6dst 16..31, psrc 32, pdst 34 */
	XT_CHECK(!memcmp(h + 16, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\0", 16));
	XT_CHECK(!memcmp(m + 16, "\xff\xff\xff\xff\xff\xff\xff\xff\0\0\0\0\0\0\0\0", 16));
	XT_CHECK(!memcmp(h + 34, "\x00\x35", 2));
	XT_CHECK(!memcmp(m + 34, "\xff\xff", 2));
	XT_CHECK(u64_at(b, NFC_FS + FS_RING) == RX_CLS_FLOW_DISC);

	/* no ports: the "user" flow types carry the protocol and, for IPv4, ip_ver */
	XT_REQUIRE(parse("proto 47 dst 198.18.0.0/15 queue 1", &f, err, sizeof(err)) == 0);
	XT_REQUIRE(xp_flow_encode(&f, 0, &nfc) == 0);
	XT_EQ(u32_at(b, NFC_FS), IPV4_USER_FLOW);
	/* usr_ip4_spec: ip4src, ip4dst, l4_4_bytes, tos 12, ip_ver 13, proto 14 */
	XT_EQ(h[13], ETH_RX_NFC_IP4);
	XT_EQ(m[13], 0);
	XT_EQ(h[14], 47);
	XT_EQ(m[14], 0xff);
	XT_CHECK(!memcmp(m + 4, "\xff\xfe\x00\x00", 4));
	XT_REQUIRE(parse("ipv6 src 2001:db8::/32 queue 0", &f, err, sizeof(err)) == 0);
	XT_REQUIRE(xp_flow_encode(&f, 0, &nfc) == 0);
	XT_EQ(u32_at(b, NFC_FS), IPV6_USER_FLOW);
	XT_EQ(h[37], 0); /* l4_proto: any */
	XT_EQ(m[37], 0);
}

static void test_del_bytes(void)
{
	struct ethtool_rxnfc nfc;
	uint8_t *b = (uint8_t *)&nfc;

	memset(&nfc, 0xa5, sizeof(nfc));
	xp_flow_del_encode(1023, &nfc);
	XT_EQ(u32_at(b, 0), 0x31); /* ETHTOOL_SRXCLSRLDEL */
	XT_EQ(u32_at(b, NFC_FS + FS_LOC), 1023);
	for (size_t i = 4; i < NFC_SIZE; i++)
		if (i < NFC_FS + FS_LOC || i >= NFC_FS + FS_LOC + 4)
			XT_CHECK(b[i] == 0);
}

static void test_rss_bytes(void)
{
	static const uint32_t q[] = { 0, 2, 3 };
	uint8_t buf[8 + 128 * 4];
	struct ethtool_rxfh_indir *ind = (void *)buf;
	unsigned count[4] = { 0 };

	XT_EQ(xp_rss_indir_len(128), sizeof(buf));
	XT_REQUIRE(xp_rss_indir_encode(ind, 128, q, 3) == 0);
	XT_EQ(u32_at(buf, 0), 0x39); /* ETHTOOL_SRXFHINDIR */
	XT_EQ(u32_at(buf, 4), 128);
	for (unsigned i = 0; i < 128; i++) {
		uint32_t v = u32_at(buf, 8 + 4 * i);

		XT_EQ(v, q[i % 3]);
		count[v < 4 ? v : 1]++;
	}
	/* equal weight: 128 entries over 3 queues is 43/43/42, queue 1 never */
	XT_EQ(count[0], 43);
	XT_EQ(count[2], 43);
	XT_EQ(count[3], 42);
	XT_EQ(count[1], 0);
	XT_EQ(xp_rss_indir_encode(ind, 128, q, 0), -EINVAL);
	XT_EQ(xp_rss_indir_encode(ind, 0, q, 3), -EINVAL);
}

static void test_text_round_trip(void)
{
	static const char *const texts[] = {
		"ip udp dport 4789 queue 2",
		"ip tcp src 198.18.0.0/15 dst 198.19.1.2/32 sport 1024-2047 dport 443 queue 0",
		"ipv6 tcp src 2001:db8::/48 dport 80 drop",
		"ip proto 47 queue 3",
		"ipv6 icmpv6 queue 1",
		"ip queue 7",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct ethtool_rxnfc nfc;
		struct xp_flow f, g;
		char err[256], out[256];

		XT_REQUIRE(parse(texts[i], &f, err, sizeof(err)) == 0);
		XT_REQUIRE(xp_flow_format(&f, out, sizeof(out)) > 0);
		if (!XT_CHECK(!strcmp(out, texts[i])))
			fprintf(stderr, "  '%s' came back as '%s'\n", texts[i], out);
		/* what the NIC would report back is the same flow */
		XT_REQUIRE(xp_flow_encode(&f, 9, &nfc) == 0);
		XT_REQUIRE(xp_flow_decode(&nfc.fs, &g) == 0);
		XT_EQ(g.id, 9);
		XT_REQUIRE(xp_flow_format(&g, out, sizeof(out)) > 0);
		XT_CHECK(!strcmp(out, texts[i]));
	}
}

static void test_text_refused(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "udp dport 4789", "missing 'queue N' or 'drop'" },
		{ "udp dport 4789 queue 2 drop", "'drop' after 'queue'" },
		{ "udp dport 4789 queue -2", "queue: expected a number, got '-2'" },
		{ "udp dport 4789 queue", "'queue' needs a value" },
		{ "dport 4789 queue 2", "need tcp or udp" },
		{ "icmp dport 1 queue 2", "need tcp or udp" },
		{ "udp dport 1000-2000 queue 2", "aligned block" },
		{ "udp vlan 3 queue 2", "unknown flow word 'vlan'" },
		{ "prio 1 udp queue 2", "unknown flow word 'prio'" },
		{ "udp udp queue 2", "given twice" },
		{ "udp dport 0443x queue 2", "dport" },
		{ "src 198.18.0.0/15 dst 2001:db8::1 queue 1", "same IP version" },
		{ "ipv6 src 198.18.0.1 queue 1", "contradicts" },
		{ "udp queue 1 id 3 id 4", "'id' given twice" },
		{ "udp queue 1 id 0x80000000", "id: expected a number" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xp_flow f;
		char err[256];

		XT_EQ(parse(bad[i].text, &f, err, sizeof(err)), -EINVAL);
		if (!XT_CHECK(strstr(err, bad[i].want) != NULL))
			fprintf(stderr, "  '%s': said '%s', expected '%s'\n", bad[i].text, err,
				bad[i].want);
		XT_CHECK(!strchr(err, '\n'));
	}
}

static void test_decode_foreign(void)
{
	struct ethtool_rxnfc nfc;
	struct xp_flow f;
	char err[256];

	XT_REQUIRE(parse("tcp dport 80 queue 1", &f, err, sizeof(err)) == 0);
	XT_REQUIRE(xp_flow_encode(&f, 1, &nfc) == 0);
	nfc.fs.m_u.tcp_ip4_spec.ip4src = htonl(0xff00ff00); /* not a prefix */
	XT_EQ(xp_flow_decode(&nfc.fs, &f), -EOPNOTSUPP);
	XT_REQUIRE(parse("tcp dport 80 queue 1", &f, err, sizeof(err)) == 0);
	XT_REQUIRE(xp_flow_encode(&f, 1, &nfc) == 0);
	nfc.fs.m_u.tcp_ip4_spec.pdst = htons(0x0ff0);
	XT_EQ(xp_flow_decode(&nfc.fs, &f), -EOPNOTSUPP);
	memset(&nfc, 0, sizeof(nfc));
	nfc.fs.flow_type = ETHER_FLOW;
	XT_EQ(xp_flow_decode(&nfc.fs, &f), -EOPNOTSUPP);
	nfc.fs.flow_type = TCP_V4_FLOW | FLOW_EXT;
	XT_EQ(xp_flow_decode(&nfc.fs, &f), -EOPNOTSUPP);
	nfc.fs.flow_type = TCP_V4_FLOW;
	nfc.fs.ring_cookie = 1ULL << 32; /* a VF's queue */
	XT_EQ(xp_flow_decode(&nfc.fs, &f), -EOPNOTSUPP);
}

static void test_pick_loc(void)
{
	static const uint32_t used[] = { 1023, 1021, 0 };
	uint32_t loc = 0;

	XT_EQ(xp_flow_pick_loc(used, 0, 1024, &loc), 0);
	XT_EQ(loc, 1023);
	XT_EQ(xp_flow_pick_loc(used, 3, 1024, &loc), 0);
	XT_EQ(loc, 1022);
	XT_EQ(xp_flow_pick_loc(used, 1, 1, &loc), 0);
	XT_EQ(loc, 0);
	XT_EQ(xp_flow_pick_loc(used + 2, 1, 1, &loc), -ENOSPC);
	XT_EQ(xp_flow_pick_loc(used, 0, 0, &loc), -ENOSPC);
}

int main(void)
{
	XT_RUN(test_layout);
	XT_RUN(test_encode_udp4_bytes);
	XT_RUN(test_encode_tcp4_prefix);
	XT_RUN(test_encode_ip6_and_user);
	XT_RUN(test_del_bytes);
	XT_RUN(test_rss_bytes);
	XT_RUN(test_text_round_trip);
	XT_RUN(test_text_refused);
	XT_RUN(test_decode_foreign);
	XT_RUN(test_pick_loc);
	return xt_done();
}
