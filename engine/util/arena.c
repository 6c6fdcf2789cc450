/*
 * arena.c: a bump allocator for one lowering (akg/akg.h, akg_arena). Every backend's emitter keeps
 * the strings and nodes of one sketch's lowering in one, released at once; a cap bounds what a
 * pathological sketch may take. Blocks of at least AKG_ARENA_BLOCK bytes, each allocation zeroed
 * and aligned for any type.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"

#define AKG_ARENA_BLOCK (64u * 1024u)

struct akg_arena_chunk {
    struct akg_arena_chunk *next;
    size_t used, size;
    max_align_t data[];
};

void *akg_arena_alloc(akg_arena *a, size_t n, int *over_cap)
{
    *over_cap = 0;
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    struct akg_arena_chunk *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t size = n > AKG_ARENA_BLOCK ? n : AKG_ARENA_BLOCK;
        if (a->cap && a->total + size > a->cap) {
            *over_cap = 1;
            return NULL;
        }
        b = malloc(sizeof *b + size);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->size = size;
        a->head = b;
        a->total += size;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

void akg_arena_free(akg_arena *a)
{
    while (a->head) {
        struct akg_arena_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->total = 0;
}
