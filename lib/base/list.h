/*
 * list.h - intrusive circular doubly linked lists, as libuv's queue.h.
 *
 * A record embeds an rt__link for each list it can be on; a list is a
 * sentinel link, empty when it points to itself.  Inserting and removing
 * are O(1) and allocate nothing.  A link that is on no list points to
 * itself too (rt__link_init), so removing it twice is harmless.
 */
#ifndef RT_LIST_H
#define RT_LIST_H

#include <stddef.h>

typedef struct rt__link {
    struct rt__link *next, *prev;
} rt__link;

/* The record that embeds link as its member. */
#define RT__OWNER(link, type, member) \
    ((type *)(void *)((char *)(link) - offsetof(type, member)))

/* The same, or NULL when link is the list's head: a walk ends there.  The
 * first record of the list at head, and the one after rec (NULL at the
 * end); rec may be removed only after its successor is taken. */
#define RT__ENTRY(head, link, type, member) \
    ((link) == (head) ? NULL : RT__OWNER(link, type, member))
#define RT__FIRST(head, type, member) RT__ENTRY(head, (head)->next, type, member)
#define RT__NEXT(head, rec, type, member) RT__ENTRY(head, (rec)->member.next, type, member)

static inline void rt__link_init(rt__link *l)
{
    l->next = l->prev = l;
}

static inline int rt__list_empty(const rt__link *head)
{
    return head->next == head;
}

static inline void rt__list_insert_after(rt__link *at, rt__link *l)
{
    l->prev = at;
    l->next = at->next;
    at->next->prev = l;
    at->next = l;
}

static inline void rt__list_push_back(rt__link *head, rt__link *l)
{
    rt__list_insert_after(head->prev, l);
}

static inline void rt__list_push_front(rt__link *head, rt__link *l)
{
    rt__list_insert_after(head, l);
}

/* Move every link of from to the end of to, in order; from is left empty. */
static inline void rt__list_move_all(rt__link *to, rt__link *from)
{
    if (rt__list_empty(from))
        return;
    rt__link *first = from->next, *last = from->prev;
    first->prev = to->prev;
    to->prev->next = first;
    last->next = to;
    to->prev = last;
    rt__link_init(from);
}

static inline void rt__list_remove(rt__link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    rt__link_init(l);
}

#endif
