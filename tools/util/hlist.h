/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lists whose members unlink themselves without the head, as the kernel's hlist: each
 * member has a pointer to the next and one to whatever points at it (the head or the
 * previous member's next). A connection closes from its own callback this way, in
 * O(1). @next and @pprev name the member's two fields (a struct may be on two lists).
 */
#ifndef XPILE_UT_HLIST_H
#define XPILE_UT_HLIST_H

/* @node first on the list whose head pointer is at @head. */
#define UT_HLIST_ADD(head, node, next, pprev)                \
	do {                                                 \
		(node)->next = *(head);                      \
		if ((node)->next)                            \
			(node)->next->pprev = &(node)->next; \
		(node)->pprev = (head);                      \
		*(head) = (node);                            \
	} while (0)

/* @node off its list (its fields are left as they were). */
#define UT_HLIST_DEL(node, next, pprev)                      \
	do {                                                 \
		*(node)->pprev = (node)->next;               \
		if ((node)->next)                            \
			(node)->next->pprev = (node)->pprev; \
	} while (0)

#endif
