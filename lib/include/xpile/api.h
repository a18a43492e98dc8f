/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XP_API marks what libxpile.so exports. The library is built with
 * -fvisibility=hidden and a version script (lib/libxpile.map), so a function without
 * it stays internal however it is declared.
 */
#ifndef XPILE_API_H
#define XPILE_API_H

#define XP_API __attribute__((visibility("default")))

#endif /* XPILE_API_H */
