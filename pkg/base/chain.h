/*
 * base/chain.h - the growth of a chained hash table.
 *
 * The tree's hash tables (kube/cache, kube/intern, kube/objmap) are each an
 * array of a power of two of chains of intrusive nodes of their own type,
 * indexed by the low bits of a hash. Their nodes and keys differ; how the
 * array doubles does not, and it is written once, here. A macro rather than
 * a function over void pointers: the bucket array keeps its node type, so
 * no node is read through a pointer of another type.
 */
#ifndef HCP_BASE_CHAIN_H
#define HCP_BASE_CHAIN_H

#include <stddef.h>
#include <stdlib.h>

/*
 * Doubles the table whose bucket array is `buckets` (an lvalue of type
 * `type **`, `nbuckets` chains, a power of two, both updated in place):
 * every node of type `type`, linked through its member `next`, moves to
 * chain hash_of(node) & (2 * nbuckets - 1) of a new array, pushed at the
 * front of it in the order the old chains are walked, and the old array is
 * freed. hash_of is a function or macro taking a `type *` and returning the
 * node's hash (the same one it was inserted by). When the new array cannot
 * be allocated the table is left as it was: its chains are only longer
 * than wanted, never wrong.
 */
#define HCP_CHAIN_GROW(type, buckets, nbuckets, next, hash_of)                                    \
    do {                                                                                          \
        size_t chain_n_ = (nbuckets) * 2;                                                         \
        type **chain_nb_ = calloc(chain_n_, sizeof(*chain_nb_));                                  \
        if (chain_nb_ == NULL)                                                                    \
            break;                                                                                \
        for (size_t chain_i_ = 0; chain_i_ < (nbuckets); chain_i_++) {                            \
            type *chain_e_ = (buckets)[chain_i_], *chain_next_;                                   \
            for (; chain_e_; chain_e_ = chain_next_) {                                            \
                type **chain_b_ = &chain_nb_[hash_of(chain_e_) & (chain_n_ - 1)];                 \
                chain_next_ = chain_e_->next;                                                     \
                chain_e_->next = *chain_b_;                                                       \
                *chain_b_ = chain_e_;                                                             \
            }                                                                                     \
        }                                                                                         \
        free(buckets);                                                                            \
        (buckets) = chain_nb_;                                                                    \
        (nbuckets) = chain_n_;                                                                    \
    } while (0)

#endif
