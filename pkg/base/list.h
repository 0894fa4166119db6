/*
 * base/list.h - the tree's one intrusive list.
 *
 * A circular doubly linked list through a hcp_link_t embedded in each
 * member; the list itself is a hcp_link_t too (its head), linked to itself
 * when empty. Every list in the tree is one of these: the requests a client
 * has in flight, the transfers of the HTTP layer, the requests a server or
 * the review checker holds, the lanes of the work queue, the families of a
 * metrics registry. Nothing is allocated: the members belong to the caller,
 * and a member is on at most one list through each link it embeds.
 *
 * A head must be initialised (hcp_list_init) before use, and must not move
 * while members are linked (they point at it). A member's link is
 * initialised by hcp_list_init too, or by being removed; hcp_list_linked()
 * then says whether it is on a list.
 */
#ifndef HCP_BASE_LIST_H
#define HCP_BASE_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct hcp_link {
    struct hcp_link *prev, *next;
} hcp_link_t;

/* The structure of type `type` whose member `member` is the link `ptr`. */
#define hcp_list_entry(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Makes head an empty list, or a member's link unlinked. */
static inline void hcp_list_init(hcp_link_t *head)
{
    head->prev = head->next = head;
}

/* True when the list has no members. */
static inline bool hcp_list_empty(const hcp_link_t *head)
{
    return head->next == head;
}

/* True when the member (whose link was initialised) is on a list. */
static inline bool hcp_list_linked(const hcp_link_t *n)
{
    return n->next != n;
}

/* Links n between a and b, which are adjacent. */
static inline void hcp_list_between(hcp_link_t *n, hcp_link_t *a, hcp_link_t *b)
{
    n->prev = a;
    n->next = b;
    a->next = n;
    b->prev = n;
}

/* Links n (not on any list) first in the list. */
static inline void hcp_list_push_front(hcp_link_t *head, hcp_link_t *n)
{
    hcp_list_between(n, head, head->next);
}

/* Links n (not on any list) last in the list. */
static inline void hcp_list_push_back(hcp_link_t *head, hcp_link_t *n)
{
    hcp_list_between(n, head->prev, head);
}

/* Unlinks n from its list and leaves it unlinked (hcp_list_linked() false).
 * Removing an unlinked member does nothing. */
static inline void hcp_list_remove(hcp_link_t *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

/* The first member's link, or NULL when the list is empty. */
static inline hcp_link_t *hcp_list_first(const hcp_link_t *head)
{
    return head->next == head ? NULL : head->next;
}

/* Unlinks and returns the first member's link, or NULL when empty. */
static inline hcp_link_t *hcp_list_pop_front(hcp_link_t *head)
{
    hcp_link_t *n = hcp_list_first(head);
    if (n != NULL)
        hcp_list_remove(n);
    return n;
}

/* Walks the links of the list from first to last. `pos` may be removed (or
 * freed) by the body: `tmp` holds its successor. */
#define HCP_LIST_FOREACH(pos, tmp, head)                                                          \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head);                             \
         (pos) = (tmp), (tmp) = (pos)->next)

#endif
