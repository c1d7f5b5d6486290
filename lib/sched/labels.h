/*
 * labels.h - nodes' labels, and the selectors that pick nodes by them
 * (Ray's node labels and label_selector).
 *
 * A node's labels are "key=value" pairs kept as one string,
 * "k1=v1,k2=v2".  A selector is a list of terms separated by commas
 * outside parentheses, each of which must hold:
 *   key=value      the node's label key is value
 *   key=!value     it is not (another value, or no such label)
 *   key=in(a,b)    it is one of those
 *   key=!in(a,b)   it is none of those, or there is no such label
 * Keys are letters, digits and . _ - /; values letters, digits and . _ -.
 */
#ifndef RT_LABELS_H
#define RT_LABELS_H

#include <stddef.h>

#define RT__LABELS_LEN 1024 /* a node's labels, with the NUL */
#define RT__LABEL_LEN 64    /* one key or one value, with the NUL */

/* Add labels given as "k=v,..." to out (a label of the same key is
 * replaced); what names them in a message ("RTASK_LABELS").  0, or
 * RT_EINVAL with a message, out unchanged. */
int rt__labels_add(char out[RT__LABELS_LEN], const char *labels, const char *what);
/* Set one label; 0, or -1 when it is not a label or out has no room. */
int rt__labels_set(char out[RT__LABELS_LEN], const char *key, const char *value);
/* The value of key in labels, into value; 0, or -1 when there is none. */
int rt__labels_get(const char *labels, const char *key, char value[RT__LABEL_LEN]);

/* 0 when selector is well formed, else RT_EINVAL with a message. */
int rt__selector_check(const char *selector);
/* Whether labels meet every term of selector (checked). */
int rt__selector_matches(const char *selector, const char *labels);

#endif
