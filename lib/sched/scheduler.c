/* scheduler.c - nodes, classes, their queues and placement: decisions
 * only.  Leases and how much work each is given are leases.c's. */
#include "scheduler.h"

#include "base/alloc.h"
#include "base/error.h"
#include "devices/family.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- node sets ------------------------------------------------------------ */

/* Each distinct set once, for the scheduler's life: a request keeps its
 * set's address, which compares (and hashes) as the set itself.  Any
 * thread may add one (submitters, under the runtime's lock; a group's
 * maker, in the round), so they have their own lock. */
struct rt__nodesets {
    pthread_mutex_t lock;
    rt__nodeset **set;
    size_t count, cap;
};

static rt__nodesets *nodesets_new(void)
{
    rt__nodesets *ns = rt__calloc(1, sizeof *ns);
    if (ns)
        pthread_mutex_init(&ns->lock, NULL);
    return ns;
}

static void nodesets_free(rt__nodesets *ns)
{
    for (size_t i = 0; ns && i < ns->count; i++)
        rt__free(ns->set[i]);
    if (ns) {
        rt__free(ns->set);
        pthread_mutex_destroy(&ns->lock);
    }
    rt__free(ns);
}

static int same_set(const rt__nodeset *a, const rt__nodeset *b)
{
    return a->nwords == b->nwords && !memcmp(a->bits, b->bits, a->nwords * sizeof *a->bits);
}

/* The kept copy of set (made rt__malloc()ed; freed here when one is
 * kept already), or NULL without memory. */
static const rt__nodeset *intern(rt__nodesets *ns, rt__nodeset *set)
{
    const rt__nodeset *kept = NULL;
    pthread_mutex_lock(&ns->lock);
    for (size_t i = 0; i < ns->count && !kept; i++)
        if (same_set(ns->set[i], set))
            kept = ns->set[i];
    if (!kept && ns->count == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 8;
        rt__nodeset **grown = rt__realloc(ns->set, cap * sizeof *grown);
        if (grown) {
            ns->set = grown;
            ns->cap = cap;
        }
    }
    if (!kept && ns->count < ns->cap)
        kept = ns->set[ns->count++] = set;
    pthread_mutex_unlock(&ns->lock);
    if (kept != set)
        rt__free(set);
    return kept;
}

int rt__sched_init(rt__sched *s, const rt__names *names)
{
    memset(s, 0, sizeof *s);
    rt__link_init(&s->waiting);
    rt__link_init(&s->feedable);
    rt__link_init(&s->unplaced);
    rt__link_init(&s->all_groups);
    rt__link_init(&s->all_classes);
    s->names = *names;
    if (!(s->nodesets = nodesets_new()) || rt__idmap_init(&s->classes) < 0 ||
        rt__idmap_init(&s->groups) < 0) {
        rt__idmap_free(&s->classes);
        nodesets_free(s->nodesets);
        s->nodesets = NULL;
        return -1;
    }
    return 0;
}

int rt__sched_name(rt__sched *s, const char *name)
{
    int i = rt__names_find(&s->names, name);
    if (i >= 0 || s->names.count == RT__CUSTOM_MAX || strlen(name) >= RT__NAME_LEN)
        return i;
    i = s->names.count++;
    strcpy(s->names.name[i], name);
    return i;
}

/* The custom resource a request's accelerator type is, or RT__ANY_TYPE:
 * its GPUs go on instances of that type alone. */
int rt__sched_gpu_type(const rt__sched *s, const rt__res *req)
{
    size_t plen = strlen(RT__ACCEL_PREFIX);
    for (int i = 0; i < s->names.count; i++)
        if (req->custom[i] > 0 && strncmp(s->names.name[i], RT__ACCEL_PREFIX, plen) == 0)
            return i;
    return RT__ANY_TYPE;
}

/* Each GPU's type as the index of its "accelerator_type:T". */
static void type_gpus(rt__sched *s, rt__instances *gpus,
                      const char (*types)[RT__TYPE_LEN])
{
    for (int i = 0; types && i < gpus->count; i++) {
        char name[RT__NAME_LEN + RT__TYPE_LEN];
        snprintf(name, sizeof name, RT__ACCEL_PREFIX "%s", types[i]);
        gpus->type[i] = (signed char)(types[i][0] ? rt__sched_name(s, name) : RT__ANY_TYPE);
    }
}

/* Keep count ids in kept: those given, or for one not given (or when
 * none are) its index. */
static const char (*keep_ids(char (*kept)[RT__ID_LEN], const char (*given)[RT__ID_LEN],
                             int count))[RT__ID_LEN]
{
    for (int i = 0; i < count; i++) {
        if (given && given[i][0])
            memcpy(kept[i], given[i], RT__ID_LEN);
        else
            snprintf(kept[i], RT__ID_LEN, "%d", i);
    }
    return (const char (*)[RT__ID_LEN])kept;
}

/* count rows of size bytes from *at, which moves past them. */
static void *rows(char **at, int count, size_t size)
{
    void *first = *at;
    *at += (size_t)count * size;
    return first;
}

/* A node with room for what ngpus GPUs and naccel accelerator instances
 * have, in one allocation (its rows' sizes are its fields'); NULL
 * without memory. */
static rt__sched_node *node_new(int ngpus, int naccel)
{
    const rt__sched_node *shape = NULL; /* sizeof only */
    size_t per_gpu = sizeof *shape->gpu_cpus + sizeof *shape->gpu_bus +
                     sizeof *shape->gpu_sick + sizeof *shape->gpu_ids;
    rt__sched_node *n = rt__calloc(1, sizeof *n + (size_t)ngpus * per_gpu +
                                          (size_t)naccel * sizeof *shape->accel_ids);
    if (!n)
        return NULL;
    char *at = (char *)(n + 1);
    n->gpu_cpus = rows(&at, ngpus, sizeof *n->gpu_cpus);
    n->gpu_bus = rows(&at, ngpus, sizeof *n->gpu_bus);
    n->gpu_sick = rows(&at, ngpus, sizeof *n->gpu_sick);
    n->gpu_ids = rows(&at, ngpus, sizeof *n->gpu_ids);
    n->accel_ids = rows(&at, naccel, sizeof *n->accel_ids);
    return n;
}

int rt__sched_add_node(rt__sched *s, const rt__node_spec *spec)
{
    const rt__res *total = &spec->total;
    int ngpus = spec->ngpus;
    if (s->nnodes == RT__NODES_MAX)
        return -1;
    rt__sched_node **grown = rt__realloc(s->node, (size_t)(s->nnodes + 1) * sizeof *grown);
    if (!grown)
        return -1;
    s->node = grown;
    int accel_index = -1;
    for (int i = 0; i < s->names.count; i++)
        if (total->custom[i] > 0 && rt__family_of_resource(s->names.name[i]) != RT__FAM_NONE)
            accel_index = i;
    int naccel = accel_index >= 0 ? (int)(total->custom[accel_index] / RT__UNIT) : 0;
    rt__sched_node *n = node_new(ngpus, naccel);
    if (!n)
        return -1;
    n->accel_index = accel_index;
    rt__pool *free = &n->free;
    n->total = free->res = *total;
    n->bind_cpus = spec->bind_cpus;
    snprintf(n->labels, sizeof n->labels, "%s", spec->labels ? spec->labels : "");
    rt__instances_init(&free->gpus, ngpus, keep_ids(n->gpu_ids, spec->gpu_ids, ngpus));
    type_gpus(s, &free->gpus, spec->gpu_types);
    if (spec->gpu_cpus)
        memcpy(n->gpu_cpus, spec->gpu_cpus, (size_t)ngpus * sizeof *n->gpu_cpus);
    if (spec->gpu_bytes)
        memcpy(free->gpus.bytes, spec->gpu_bytes, (size_t)ngpus * sizeof *free->gpus.bytes);
    for (int i = 0; i < ngpus; i++) {
        if (spec->gpu_bus)
            snprintf(n->gpu_bus[i], sizeof n->gpu_bus[i], "%s", spec->gpu_bus[i]);
        if (spec->gpu_sick && spec->gpu_sick[i][0]) {
            snprintf(n->gpu_sick[i], sizeof n->gpu_sick[i], "%s", spec->gpu_sick[i]);
            rt__instance_sicken(&free->gpus, i);
        }
    }
    if (n->accel_index >= 0)
        rt__instances_init(&free->accel, naccel, keep_ids(n->accel_ids, spec->accel_ids, naccel));
    n->unheld = n->free;
    s->node[s->nnodes++] = n;
    return 0;
}

/* Why no node could ever hold req->gpu_bytes: the most memory of a GPU
 * of its type, or none known. */
static int memory_infeasible(const rt__sched *s, const rt__res *req, int type)
{
    uint64_t most = 0;
    for (int i = 0; i < s->nnodes; i++) {
        uint64_t m = rt__instances_largest(&s->node[i]->free.gpus, type);
        most = m > most ? m : most;
    }
    if (most == 0)
        return rt__error(RT_EINFEASIBLE, "gpu_memory: no node knows its GPUs' memory "
                         "(NVML did not say, and rt_config.gpu_memory is not set)");
    return rt__error(RT_EINFEASIBLE, "a request for %llu bytes of GPU memory can never be "
                     "met: the largest GPU%s has %llu", (unsigned long long)req->gpu_bytes,
                     type == RT__ANY_TYPE ? "" : " of that type", (unsigned long long)most);
}

int rt__sched_gpu_unhealthy(rt__sched *s, int node, const char *bus, const char *why)
{
    rt__sched_node *n = node >= 0 && node < s->nnodes ? s->node[node] : NULL;
    int marked = 0;
    for (int i = 0; n && bus[0] && i < n->free.gpus.count; i++) {
        if (strcmp(n->gpu_bus[i], bus) != 0 || rt__instance_sick(&n->free.gpus, i))
            continue;
        rt__instance_sicken(&n->free.gpus, i);
        rt__instance_sicken(&n->unheld.gpus, i);
        snprintf(n->gpu_sick[i], sizeof n->gpu_sick[i], "%s", why);
        rt__sched_groups_sicken(s, node, i);
        marked++;
    }
    return marked;
}

int rt__sched_select(const rt__sched *s, const char *selector, const rt__nodeset **nodes)
{
    *nodes = NULL;
    if (!selector)
        return 0;
    size_t nwords = ((size_t)s->nnodes + 63) / 64, picked = 0;
    rt__nodeset *set = rt__calloc(1, sizeof *set + nwords * sizeof *set->bits);
    if (!set)
        return rt__error(RT_ENOMEM, "label_selector: out of memory");
    set->nwords = nwords;
    for (int i = 0; i < s->nnodes; i++)
        if (rt__selector_matches(selector, s->node[i]->labels)) {
            set->bits[i / 64] |= (uint64_t)1 << (i % 64);
            picked++;
        }
    if (!picked) {
        rt__free(set);
        return rt__error(RT_EINFEASIBLE, "label_selector \"%s\" picks no node: no node's "
                         "labels match it (rtask-info shows them)", selector);
    }
    if (!(*nodes = intern(s->nodesets, set)))
        return rt__error(RT_ENOMEM, "label_selector: out of memory");
    return 0;
}

/* Whether node i could ever hold req, its GPUs of type: 0, or
 * RT_EINFEASIBLE, with the message that says why when say is set (only
 * once no node could: a message formats numbers, and a request that one
 * node refuses and the next takes is made at every submission). */
static int could_hold(const rt__sched *s, int i, const rt__res *req, int type, int say)
{
    const rt__sched_node *n = s->node[i];
    int rc = say ? rt__res_feasible(&n->total, req, &s->names)
                 : rt__res_fits(&n->total, req) ? 0 : RT_EINFEASIBLE;
    if (rc == 0 && req->gpu_bytes &&
        rt__instances_largest(&n->free.gpus, type) < req->gpu_bytes)
        rc = RT_EINFEASIBLE;
    else if (rc == 0 && !rt__instances_could(&n->free.gpus, req->gpu, type))
        rc = !say ? RT_EINFEASIBLE
                  : rt__error(RT_EINFEASIBLE, "a request for %g GPU%s%s can never be met: no "
                              "node has that many healthy GPUs%s (rt_unhealthy_gpus())",
                              (double)req->gpu / RT__UNIT, type == RT__ANY_TYPE ? "" : " of type ",
                              type == RT__ANY_TYPE
                                  ? "" : s->names.name[type] + strlen(RT__ACCEL_PREFIX),
                              type == RT__ANY_TYPE ? "" : " of that type");
    return rc;
}

int rt__sched_feasible(const rt__sched *s, const rt__res *req)
{
    int type = rt__sched_gpu_type(s, req), last = -1;
    for (int i = 0; i < s->nnodes; i++) {
        if (!rt__res_on_node(req, i))
            continue;
        if (could_hold(s, i, req, type, 0) == 0)
            return 0;
        last = i;
    }
    /* Why not, as the last node looked at says. */
    int rc = last < 0 ? RT_EINFEASIBLE : could_hold(s, last, req, type, 1);
    return rc == RT_EINFEASIBLE && req->gpu_bytes ? memory_infeasible(s, req, type) : rc;
}

/* ---- classes ------------------------------------------------------------ */

/* A word at a time: every submission finds its class by it. */
static uint64_t hash_of(const rt__res *req, int max_calls)
{
    const unsigned char *p = (const unsigned char *)req;
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)(unsigned)max_calls, w;
    _Static_assert(sizeof *req % sizeof w == 0, "a request is whole words");
    for (size_t i = 0; i < sizeof *req; i += sizeof w) {
        memcpy(&w, p + i, sizeof w);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 29;
    }
    return h;
}

/* A class; NULL without memory, or when its group was removed. */
static rt__class *new_class(rt__sched *s, const rt__res *req, int max_calls, void *owner)
{
    rt__group *g = req->group ? rt__sched_group(s, req->group) : NULL;
    if (req->group && !g)
        return NULL;
    rt__class *c = rt__calloc(1, sizeof *c);
    if (c) {
        c->req = *req;
        rt__link_init(&c->in_group);
        rt__list_push_back(&s->all_classes, &c->in_all);
        if (g)
            rt__group_join(g, c);
        c->gpu_type = rt__sched_gpu_type(s, req);
        c->max_calls = max_calls;
        c->owner = owner;
        rt__link_init(&c->wait);
        rt__link_init(&c->feed);
        rt__link_init(&c->leased);
    }
    return c;
}

static void free_class(rt__class *c)
{
    rt__list_remove(&c->in_all);
    if (c->group)
        rt__group_leave(c);
    rt__free(c);
}

rt__class *rt__sched_class(rt__sched *s, const rt__res *req, int max_calls)
{
    uint64_t h = hash_of(req, max_calls);
    for (rt__idnode *n = rt__idmap_find(&s->classes, h); n; n = rt__idmap_next(n)) {
        rt__class *c = RT__OWNER(n, rt__class, byreq);
        if (c->max_calls == max_calls && rt__res_equal(&c->req, req))
            return c;
    }
    rt__class *c = new_class(s, req, max_calls, NULL);
    if (!c)
        return NULL;
    c->byreq.id = h;
    rt__idmap_add(&s->classes, &c->byreq);
    return c;
}

rt__class *rt__sched_actor_class(rt__sched *s, const rt__res *req, void *owner)
{
    return new_class(s, req, 0, owner); /* found through its actor, never by request */
}

int rt__sched_release_class(rt__sched *s, rt__class *c)
{
    if (c->pending.count || c->leases || c->inflight)
        return 0;
    if (!c->owner)
        rt__idmap_remove(&s->classes, &c->byreq);
    if (s->blocked == c)
        s->blocked = NULL;
    free_class(c);
    return 1;
}

/* ---- queues --------------------------------------------------------------- */

/* The waiting list holds the classes with pending tasks, oldest first
 * task first, so that a decision stops at the first class that fits or
 * blocks.  Tasks arrive in submission order, so a class that starts
 * waiting goes last, unless a task sent back makes it older; taking a
 * task makes its class younger, and it moves back, rarely far. */

static uint32_t head_seq(const rt__class *c)
{
    return c->pending.head->call.seq;
}

static rt__class *waiting_class(const rt__sched *s, const rt__link *l)
{
    return RT__ENTRY(&s->waiting, l, rt__class, wait);
}

/* Link c (with pending tasks) where its first task's age says, searching
 * back from before `from` (the list's head: from the end). */
static void place_before(rt__sched *s, rt__class *c, rt__link *from)
{
    rt__link *prev = from->prev;
    rt__class *p;
    while ((p = waiting_class(s, prev)) && rt__seq_before(head_seq(c), head_seq(p)))
        prev = prev->prev;
    rt__list_insert_after(prev, &c->wait);
}

/* c's first task got younger: it may move back. */
static void move_back(rt__sched *s, rt__class *c)
{
    rt__link *next = c->wait.next;
    rt__class *n = waiting_class(s, next);
    if (!n || rt__seq_before(head_seq(c), head_seq(n)))
        return;
    rt__list_remove(&c->wait);
    while ((n = waiting_class(s, next->next)) && rt__seq_before(head_seq(n), head_seq(c)))
        next = next->next;
    rt__list_insert_after(next, &c->wait);
}

/* c's first task got older (a task went back in front): it may move
 * forward. */
static void move_forward(rt__sched *s, rt__class *c)
{
    rt__link *from = c->wait.next;
    rt__list_remove(&c->wait);
    place_before(s, c, from);
}

/* Keep c on the feedable list exactly while it has tasks and leases. */
static void update_feedable(rt__sched *s, rt__class *c)
{
    int should = c->pending.count > 0 && c->leases > 0;
    int is = c->feed.next != &c->feed;
    if (should && !is)
        rt__list_push_back(&s->feedable, &c->feed);
    else if (!should && is)
        rt__list_remove(&c->feed);
}

/* c's queue got a new first task. */
static void reorder(rt__sched *s, rt__class *c, int was_waiting)
{
    if (was_waiting)
        move_forward(s, c);
    else
        place_before(s, c, &s->waiting);
    update_feedable(s, c);
}

void rt__sched_push(rt__sched *s, rt__class *c, rt__task *t)
{
    t->run.cls = c;
    rt__tasks_push(&c->pending, t);
    s->npending++;
    if (c->pending.count == 1) {
        place_before(s, c, &s->waiting);
        update_feedable(s, c);
    }
}

void rt__sched_push_front(rt__sched *s, rt__class *c, rt__task *t)
{
    int was_waiting = c->pending.count > 0;
    t->run.cls = c;
    rt__tasks_push_front(&c->pending, t);
    s->npending++;
    reorder(s, c, was_waiting);
}

void rt__sched_requeue(rt__sched *s, rt__class *c, rt__tasks *q)
{
    if (!q->count)
        return;
    int was_waiting = c->pending.count > 0;
    for (rt__task *t = q->head; t; t = t->next)
        t->run.cls = c;
    s->npending += q->count;
    rt__tasks_append(q, &c->pending);
    c->pending = *q;
    *q = (rt__tasks){0};
    reorder(s, c, was_waiting);
}

rt__task *rt__sched_pop(rt__sched *s, rt__class *c)
{
    rt__task *t = rt__tasks_pop(&c->pending);
    s->npending -= t != NULL;
    if (t && c->pending.count == 0) {
        rt__list_remove(&c->wait);
        update_feedable(s, c);
    } else if (t) {
        move_back(s, c);
    }
    return t;
}

int rt__sched_withdraw(rt__sched *s, rt__class *c, rt__task *t)
{
    if (c->pending.head == t)
        return rt__sched_pop(s, c) == t;
    for (rt__task *p = c->pending.head; p; p = p->next) {
        if (p->next != t)
            continue;
        p->next = t->next; /* not the head: the class keeps its place */
        if (c->pending.tail == t)
            c->pending.tail = p;
        t->next = NULL;
        c->pending.count--;
        s->npending--;
        return 1;
    }
    return 0;
}

rt__lease *rt__sched_lease_of(const rt__class *c, const rt__task *t)
{
    for (rt__lease *l = rt__sched_first_lease(c); l; l = rt__sched_next_lease(c, l))
        for (const rt__task *in = l->inflight.head; in; in = in->next)
            if (in == t)
                return l;
    return NULL;
}

rt__class *rt__sched_first_class(const rt__sched *s)
{
    return RT__FIRST(&s->all_classes, rt__class, in_all);
}

rt__class *rt__sched_next_class(const rt__sched *s, const rt__class *c)
{
    return RT__NEXT(&s->all_classes, c, rt__class, in_all);
}

rt__class *rt__sched_waiting(const rt__sched *s)
{
    return waiting_class(s, s->waiting.next);
}

rt__class *rt__sched_next_waiting(const rt__sched *s, const rt__class *c)
{
    return waiting_class(s, c->wait.next);
}

static rt__class *feedable_class(const rt__sched *s, const rt__link *l)
{
    return RT__ENTRY(&s->feedable, l, rt__class, feed);
}

rt__class *rt__sched_feedable(const rt__sched *s)
{
    return feedable_class(s, s->feedable.next);
}

rt__class *rt__sched_next_feedable(const rt__sched *s, const rt__class *c)
{
    return feedable_class(s, c->feed.next);
}

rt__lease *rt__sched_first_lease(const rt__class *c)
{
    return RT__FIRST(&c->leased, rt__lease, link);
}

rt__lease *rt__sched_next_lease(const rt__class *c, const rt__lease *l)
{
    return RT__NEXT(&c->leased, l, rt__lease, link);
}

/* ---- decisions ------------------------------------------------------------ */

/* Whether c's request fits a pool of its group's (what it has free now,
 * or would have once its tasks ended), and where: the bundle it names, or
 * each in turn. */
static int fits_group(const rt__sched *s, const rt__class *c, int unheld, rt__grant *g)
{
    const rt__group *grp = c->group;
    if (grp->state != RT__GROUP_PLACED)
        return 0;
    for (size_t k = 0; k < grp->nbundles; k++) {
        const rt__bundle *b = &grp->bundle[k];
        if (c->req.bundle >= 0 && (size_t)c->req.bundle != k)
            continue;
        if (rt__pool_pick(unheld ? &b->unheld : &b->free, s->node[b->node]->accel_index,
                          &c->req, c->gpu_type, g)) {
            g->node = b->node;
            g->bundle = (int)k;
            return 1;
        }
    }
    return 0;
}

/* Whether c's request fits a node's pool (what it has free now, or would
 * have once its tasks ended), and where: the node that holds the objects
 * it takes first, then nodes in order, so the first fills before the
 * next. */
static int fits(const rt__sched *s, const rt__class *c, int unheld, rt__grant *g)
{
    if (c->group)
        return fits_group(s, c, unheld, g);
    int near = (int)c->req.near - 1; /* the node that holds its objects, first */
    for (int k = near >= 0 ? -1 : 0; k < s->nnodes; k++) {
        int i = k < 0 ? near : k;
        const rt__sched_node *n = s->node[i];
        if ((k >= 0 && i == near) || !rt__res_on_node(&c->req, i) ||
            !rt__pool_pick(unheld ? &n->unheld : &n->free, n->accel_index, &c->req,
                           c->gpu_type, g))
            continue;
        g->node = i;
        g->bundle = RT__NO_BUNDLE;
        return 1;
    }
    return 0;
}

/* A task class wants a lease per task it has; an actor wants its one. */
static int wants_lease(const rt__class *c)
{
    if (c->owner)
        return c->leases == 0;
    return c->leases < c->pending.count + c->inflight;
}

/* Whether a (with pending tasks) has an older pending task than b; any
 * class is older than no class. */
static int older(const rt__class *a, const rt__class *b)
{
    return !b || rt__seq_before(head_seq(a), head_seq(b));
}

/* An actor's calls never wait behind other requests: the actor already
 * holds what they need, and holding them back frees nothing. */
int rt__sched_may_feed(const rt__sched *s, const rt__class *c)
{
    return c->owner || !s->blocked || c == s->blocked || older(c, s->blocked);
}

/* The oldest class that wants a lease and fits gets it.  One that holds
 * nothing and does not fit blocks every younger class, so that the tasks
 * in its way end and it runs next, but only while what it waits for can
 * come free: if it would not fit even once every task ended (actors hold
 * what it needs), younger classes that fit are placed past it. */
rt__class *rt__sched_decide(rt__sched *s, rt__grant *g)
{
    s->blocked = NULL;
    for (rt__class *c = rt__sched_waiting(s); c; c = rt__sched_next_waiting(s, c)) {
        if (!wants_lease(c))
            continue;
        if (fits(s, c, 0, g))
            return c;
        if (c->leases == 0 && fits(s, c, 1, g)) {
            s->blocked = c; /* every younger class waits for it */
            return NULL;
        }
    }
    return NULL;
}

rt__pool *rt__sched_pool(rt__sched *s, const rt__class *c, const rt__grant *g, int unheld)
{
    if (c->group && c->group->state == RT__GROUP_PLACED) {
        rt__bundle *b = &c->group->bundle[g->bundle];
        return unheld ? &b->unheld : &b->free;
    }
    rt__sched_node *n = s->node[g->node];
    return unheld ? &n->unheld : &n->free;
}

/* An actor's holdings are not free once tasks end: they leave both pools. */
void rt__sched_take(rt__sched *s, rt__class *c, const rt__grant *g)
{
    rt__pool_take(rt__sched_pool(s, c, g, 0), &c->req, g);
    if (c->owner)
        rt__pool_take(rt__sched_pool(s, c, g, 1), &c->req, g);
    c->leases++;
    update_feedable(s, c);
}

void rt__sched_give(rt__sched *s, rt__class *c, const rt__grant *g)
{
    rt__pool_give(rt__sched_pool(s, c, g, 0), &c->req, g);
    if (c->owner)
        rt__pool_give(rt__sched_pool(s, c, g, 1), &c->req, g);
    s->gave++;
    c->leases--;
    update_feedable(s, c);
}

/* ---- the end ---------------------------------------------------------------- */

void rt__sched_discard(rt__sched *s, rt__class *c, rt__tasks *orphans)
{
    rt__list_remove(&c->wait);
    rt__list_remove(&c->feed);
    s->npending -= c->pending.count;
    if (!c->owner)
        rt__idmap_remove(&s->classes, &c->byreq);
    if (s->blocked == c)
        s->blocked = NULL;
    while (!rt__list_empty(&c->leased)) {
        rt__lease *l = RT__OWNER(c->leased.next, rt__lease, link);
        rt__list_remove(&l->link);
        rt__tasks_append(orphans, &l->inflight);
        rt__free(l);
    }
    rt__tasks_append(orphans, &c->pending);
    free_class(c);
}

void rt__sched_free(rt__sched *s, rt__tasks *orphans)
{
    while (!rt__list_empty(&s->waiting))
        rt__sched_discard(s, rt__sched_waiting(s), orphans);
    for (rt__idnode *n; s->classes.bucket && (n = rt__idmap_any(&s->classes));)
        rt__sched_discard(s, RT__OWNER(n, rt__class, byreq), orphans);
    rt__sched_groups_free(s);
    for (int i = 0; i < s->nnodes; i++)
        rt__free(s->node[i]);
    rt__free(s->node);
    nodesets_free(s->nodesets);
    rt__idmap_free(&s->classes);
    memset(s, 0, sizeof *s);
}
