/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --version, one format for every program (cli_version.c): "NAME VERSION (libbpf X,
 * libxdp Y, liburing Z)", naming the versions of the shared objects loaded into this
 * process (a library the program does not link is left out); with @json one object,
 * {"name":..., "version":..., "libbpf":..., "libxdp":..., "liburing":...|null}.
 */
#ifndef XPILE_CLI_VERSION_H
#define XPILE_CLI_VERSION_H

#include "cli_types.h"

void cli_version(FILE *f, const struct cli_prog *p, bool json);

#endif /* XPILE_CLI_VERSION_H */
