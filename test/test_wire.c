/*
 * test_wire.c - the channel and the protocol on their own, over a
 * socketpair: partial sends, many descriptors, truncated and corrupt
 * headers, and messages the decoders must refuse.
 */
#include "tests.h"

#include "../lib/base/alloc.h"
#include "../lib/base/shm.h"
#include "../lib/base/sparse.h"
#include "../lib/cluster/rankmsg.h" /* internal: the messages between ranks */
#include "../lib/node/inbox.h"
#include "../lib/node/journal.h"
#include "../lib/node/proto.h" /* internal: these tests drive the protocol */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

static void channel_pair(rt__chan *a, rt__chan *b, int sndbuf)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    if (sndbuf)
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    rt__chan_init(a, sv[0]);
    rt__chan_init(b, sv[1]);
}

/* Receive what is there; returns the next message's result, as
 * rt__chan_next does. */
static int receive(rt__chan *c, rt__hdr *h, const char **payload, int *fds)
{
    int got = rt__chan_next(c, h, payload, fds);
    if (got != 0)
        return got;
    rt__chan_fill(c);
    return rt__chan_next(c, h, payload, fds);
}

/* A socket buffer far smaller than what is queued: every flush sends part
 * of it, and every message arrives whole and in order. */
START_TEST(partial_sends_deliver_every_message_in_order)
{
    rt__chan tx, rx;
    channel_pair(&tx, &rx, 4096);
    enum { N = 2000, LEN = 1000 };
    char payload[LEN];
    for (int i = 0; i < N; i++) {
        memset(payload, 'a' + i % 26, sizeof payload);
        rt__hdr h = {.type = RT__MSG_TASK, .id = (uint64_t)i + 1, .word = 1,
                     .len = (uint64_t)(i % LEN)};
        ck_assert_int_eq(rt__chan_put(&tx, &h, payload, NULL), 0);
    }
    int received = 0, partial = 0;
    while (received < N) {
        int rc = rt__chan_flush(&tx);
        ck_assert_int_ge(rc, 0);
        partial += rc == 1;
        rt__hdr h;
        const char *p;
        int fds[RT__MSG_MAX_FDS];
        while (receive(&rx, &h, &p, fds) == 1) {
            ck_assert_uint_eq(h.id, (uint64_t)received + 1);
            ck_assert_uint_eq(h.len, (uint64_t)(received % LEN));
            for (size_t k = 0; k < h.len; k++)
                ck_assert_int_eq(p[k], 'a' + received % 26);
            received++;
        }
    }
    ck_assert_int_gt(partial, 0); /* the socket was full at least once */
    rt__chan_close(&tx);
    rt__chan_close(&rx);
}
END_TEST

static int memfd_holding(int value)
{
    int fd = memfd_create("wire-test", MFD_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, &value, sizeof value), (ssize_t)sizeof value);
    return fd;
}

static int value_in(int fd)
{
    int value = -1;
    ck_assert_int_eq(pread(fd, &value, sizeof value, 0), (ssize_t)sizeof value);
    return value;
}

/* More descriptors than one sendmsg carries (64 per send, 253 for the
 * kernel): each still arrives with its own message. */
START_TEST(many_descriptors_arrive_with_their_messages)
{
    int before = count_fds();
    rt__chan tx, rx;
    channel_pair(&tx, &rx, 0);
    enum { N = 600 };
    for (int i = 0; i < N; i++) {
        int fd = memfd_holding(i);
        rt__hdr h = {.type = RT__MSG_RESULT, .id = (uint64_t)i, .nfds = i % 3 ? 1 : 0,
                     .len = sizeof(int)};
        if (!h.nfds)
            close(fd);
        ck_assert_int_eq(rt__chan_put(&tx, &h, &i, h.nfds ? &fd : NULL), 0);
    }
    int received = 0;
    while (received < N) {
        ck_assert_int_ge(rt__chan_flush(&tx), 0);
        rt__hdr h;
        const char *p;
        int fds[RT__MSG_MAX_FDS];
        int rc;
        while ((rc = receive(&rx, &h, &p, fds)) == 1) {
            ck_assert_uint_eq(h.id, (uint64_t)received);
            int value;
            if (h.nfds) {
                value = value_in(fds[0]);
                close(fds[0]);
            } else {
                memcpy(&value, p, sizeof value);
            }
            ck_assert_int_eq(value, received);
            received++;
        }
        ck_assert_int_ge(rc, 0);
    }
    rt__chan_close(&tx);
    rt__chan_close(&rx);
    ck_assert_int_eq(count_fds(), before); /* every descriptor was closed */
}
END_TEST

/* Write raw bytes to the peer of rx, as a hostile or broken worker would. */
static void raw(int fd, const void *bytes, size_t len)
{
    ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
}

START_TEST(a_truncated_header_waits_for_the_rest)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    rt__chan rx;
    rt__chan_init(&rx, sv[1]);
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    rt__hdr h = {.type = RT__MSG_RESULT, .id = 7, .len = 5}, got;
    char msg[sizeof h + RT__MSG_ALIGN] = {0};
    memcpy(msg, &h, sizeof h);
    memcpy(msg + sizeof h, "hello", 5);
    const char *p;
    int fds[RT__MSG_MAX_FDS];
    raw(sv[0], msg, 20); /* part of the header */
    ck_assert_int_eq(receive(&rx, &got, &p, fds), 0);
    raw(sv[0], msg + 20, sizeof h - 20 + 2); /* the header, part of the payload */
    ck_assert_int_eq(receive(&rx, &got, &p, fds), 0);
    raw(sv[0], msg + sizeof h + 2, sizeof msg - sizeof h - 2);
    ck_assert_int_eq(receive(&rx, &got, &p, fds), 1);
    ck_assert_uint_eq(got.id, 7);
    ck_assert_int_eq(memcmp(p, "hello", 5), 0);
    close(sv[0]);
    rt__chan_close(&rx);
}
END_TEST

/* Each corrupt header is refused before any arithmetic on its length. */
START_TEST(corrupt_headers_are_refused)
{
    static const rt__hdr bad[] = {
        {.type = RT__MSG_RESULT, .nfds = 4},                        /* too many fds */
        {.type = RT__MSG_RESULT, .len = UINT64_MAX - 5},           /* wraps when padded */
        {.type = RT__MSG_RESULT, .len = (uint64_t)1 << 40},        /* 1 TiB inline */
        {.type = RT__MSG_RESULT, .nfds = 1, .len = 8},             /* fd never sent */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        rt__chan rx;
        rt__chan_init(&rx, sv[1]);
        raw(sv[0], &bad[i], sizeof bad[i]);
        rt__hdr h;
        const char *p;
        int fds[RT__MSG_MAX_FDS];
        ck_assert_int_gt(rt__chan_fill(&rx), 0);
        ck_assert_msg(rt__chan_next(&rx, &h, &p, fds) == -1, "header %zu accepted", i);
        close(sv[0]);
        rt__chan_close(&rx);
    }
}
END_TEST

/* The decoders refuse messages of the wrong kind or shape, and close the
 * descriptors those carried. */
START_TEST(decoders_refuse_what_breaks_the_protocol)
{
    int before = count_fds();
    int fds[3] = {memfd_holding(1), memfd_holding(2), -1};
    rt__hdr two = {.type = RT__MSG_RESULT, .nfds = 2, .len = 4};
    rt__result_msg r;
    ck_assert_int_eq(rt__proto_read_result(&two, NULL, fds, &r), -1);
    ck_assert_int_eq(count_fds(), before);
    rt__hdr task = {.type = RT__MSG_TASK, .id = 1, .word = 0};
    rt__task_msg m;
    ck_assert_int_eq(rt__proto_read_task(&task, "", fds, &m), -1); /* no function */
    rt__hdr name = {.type = RT__MSG_NAME, .len = 3};
    ck_assert_int_eq(rt__proto_read_result(&name, "abc", fds, &r), -1);
    ck_assert_str_eq(rt__msg_name(RT__MSG_RESULT), "RESULT");
    ck_assert_str_eq(rt__msg_name(999), "unknown");
}
END_TEST

/* A result's word carries status, errno and run time; each comes back. */
START_TEST(results_round_trip)
{
    rt__chan tx, rx;
    channel_pair(&tx, &rx, 0);
    rt__result_msg sent[] = {
        {.id = 1, .status = 7, .run_us = 1234, .data = "abc", .len = 3, .fd = -1},
        {.id = 2, .sys_errno = 12, .fd = -1},
        {.id = 3, .status = -1, .run_us = (uint64_t)1 << 40, .fd = -1},
        {.id = 4, .packed = 1, .data = "xyz", .len = 3, .fd = -1},
    };
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(rt__proto_send_result(&tx, &sent[i]), 0);
    ck_assert_int_eq(rt__chan_flush(&tx), 0);
    for (size_t i = 0; i < 4; i++) {
        rt__hdr h;
        const char *p;
        int fds[RT__MSG_MAX_FDS];
        rt__result_msg r;
        ck_assert_int_eq(receive(&rx, &h, &p, fds), 1);
        ck_assert_int_eq(rt__proto_read_result(&h, p, fds, &r), 0);
        ck_assert_uint_eq(r.id, sent[i].id);
        ck_assert_int_eq(r.status, sent[i].status);
        ck_assert_int_eq(r.sys_errno, sent[i].sys_errno);
        ck_assert_int_eq(r.packed, sent[i].packed);
        ck_assert_uint_eq(r.len, sent[i].len);
    }
    rt__chan_close(&tx);
    rt__chan_close(&rx);
}
END_TEST

/* The devices' one text form: what is encoded decodes to the same, and
 * text that is not that form is refused. */
START_TEST(devices_round_trip_and_bad_text_is_refused)
{
    rt__devices d = {"0,3", "", "0-7", 2500, "85899345920,85899345920", "neuron_cores",
                     "CUDA_VISIBLE_DEVICES=0,3\nROCR_VISIBLE_DEVICES"};
    char *text = rt__devices_encode(&d), *copy = NULL;
    ck_assert_ptr_nonnull(text);
    rt__devices back;
    ck_assert_int_eq(rt__devices_decode(text, strlen(text), &back, &copy), 0);
    ck_assert_str_eq(back.gpus, "0,3");
    ck_assert_str_eq(back.cpus, "0-7");
    ck_assert_int_eq(back.share, 2500);
    ck_assert_str_eq(back.memory, d.memory);
    ck_assert_str_eq(back.accel_name, "neuron_cores");
    ck_assert_str_eq(back.env, d.env);
    ck_assert(rt__devices_same(&back, &d));
    back.share = 5000;
    ck_assert(!rt__devices_same(&back, &d));
    rt__free(copy);
    rt__free(text);
    const char *bad[] = {"", "0\n\n\n2500", "0\n\n\nx\n\n\n", "0\n\n\n10001\n\n\n",
                         "0\n\n\n-1\n\n\n", "0\n\n\n25 \n\n\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        copy = NULL;
        ck_assert_msg(rt__devices_decode(bad[i], strlen(bad[i]), &back, &copy) == -1,
                      "accepted \"%s\"", bad[i]);
        ck_assert_ptr_null(copy);
    }
}
END_TEST

/* Each rank message's words: what one side writes the other reads back,
 * and task words no sender writes are refused. */
START_TEST(rank_message_words_round_trip)
{
    rt__answer r = {.id = 9, .status = -3, .sys_errno = 5, .run_us = 77, .result = "ab",
                    .len = 3, .refused = 1}, r2;
    rt__rank_msg m = rt__rank_answer(4, &r);
    ck_assert_uint_eq(m.type, RT__RANK_ANSWER);
    ck_assert_ptr_null(m.owned); /* small: inline, the caller's buffer */
    ck_assert_ptr_nonnull(r.result);
    rt__rank_answer_read(&m, &r2);
    ck_assert_uint_eq(r2.id, 9);
    ck_assert_int_eq(r2.status, -3);
    ck_assert_int_eq(r2.sys_errno, 5);
    ck_assert_uint_eq(r2.run_us, 77);
    ck_assert_int_eq(r2.refused, 1);
    ck_assert_str_eq(r2.result, "ab"); /* a copy of the caller's own */
    rt_free(r2.result);
    ck_assert_int_eq(r2.packed, 0);
    rt__answer several = {.id = 3, .result = "ab", .len = 3, .packed = 1};
    m = rt__rank_answer(4, &several);
    rt__rank_answer_read(&m, &r2);
    ck_assert_int_eq(r2.packed, 1);
    ck_assert_int_eq(r2.held, 0);
    rt_free(r2.result);
    rt__answer big = {.id = 1, .len = 1 << 20, .result = rt__buf_alloc(1 << 20)};
    void *bytes = big.result;
    m = rt__rank_answer(4, &big);
    ck_assert_ptr_eq(m.owned, bytes); /* large: handed to the message, never copied */
    ck_assert_ptr_null(big.result);
    rt_free(m.owned);
    rt__loss loss = {.pid = 42, .wait_status = 9, .started = 1, .broke = 1}, l2;
    m = rt__rank_lost(4, &loss);
    rt__rank_lost_read(&m, &l2);
    ck_assert_int_eq(l2.pid, 42);
    ck_assert_int_eq(l2.wait_status, 9);
    ck_assert_uint_eq(l2.started, 1);
    ck_assert_int_eq(l2.broke, 1);
    ck_assert_int_eq(l2.lost_channel, 0);
    int fresh, max_calls;
    rt__amount cpu;
    m = rt__rank_lease(4, 1, 3, RT__UNIT / 2);
    rt__rank_lease_read(&m, &fresh, &max_calls, &cpu);
    ck_assert_int_eq(fresh, 1);
    ck_assert_int_eq(max_calls, 3);
    ck_assert_int_eq(cpu, RT__UNIT / 2);
    rt__task t = {.call.id = 8, .call.kind = RT__KIND_CREATE, .call.fn = NULL};
    rt__rank_task_words w;
    char label[RT__RANK_LABEL];
    m = rt__rank_task(4, &t, 1, 0, label);
    ck_assert_int_eq(rt__rank_task_read(&m, &w), 0);
    ck_assert_uint_eq(w.id, 8);
    ck_assert_int_eq(w.kind, RT__KIND_CREATE);
    ck_assert_int_eq(w.has_fn, 0);
    ck_assert_int_eq(w.has_fini, 1);
    m.w[1] = RT__KIND_TASK; /* a task without a function */
    ck_assert_int_eq(rt__rank_task_read(&m, &w), -1);
    m.w[1] = 99;
    ck_assert_int_eq(rt__rank_task_read(&m, &w), -1);
    m.w[1] = RT__KIND_CREATE;
    m.w[2] = 4;
    ck_assert_int_eq(rt__rank_task_read(&m, &w), -1);
    /* Objects other ranks hold: only in a table, whose bytes name them. */
    rt__more more = {.key = {0xabcdef, 77}};
    rt__task table = {.call.id = 9, .call.kind = RT__KIND_TASK, .call.fn = (rt__any_fn)1,
                      .call.args_form = RT__ARGS_LIST, .call.more = &more};
    m = rt__rank_task(4, &table, 0, 2, label);
    m.len = 2 * sizeof(rt__rank_ref) + 16;
    ck_assert_int_eq(rt__rank_task_read(&m, &w), 0);
    ck_assert_uint_eq(w.remote, 2);
    ck_assert_uint_eq(w.key[0], 0xabcdef); /* a checkpoint's key goes with it */
    ck_assert_uint_eq(w.key[1], 77);
    m.len = sizeof(rt__rank_ref);
    ck_assert_int_eq(rt__rank_task_read(&m, &w), -1); /* no room for their refs */
    m = rt__rank_task(4, &t, 1, 1, label);
    ck_assert_int_eq(rt__rank_task_read(&m, &w), -1); /* not a table */
    /* A result held where it was made: its length, no bytes. */
    rt__answer held = {.id = 5, .len = (size_t)3 << 30, .held = 1}, h2;
    m = rt__rank_answer(4, &held);
    ck_assert_uint_eq(m.len, 0);
    rt__rank_answer_read(&m, &h2);
    ck_assert_int_eq(h2.held, 1);
    ck_assert_int_eq(h2.packed, 0);
    ck_assert_uint_eq(h2.len, (size_t)3 << 30);
    ck_assert_ptr_null(h2.result);
    uint64_t object;
    unsigned run;
    int found;
    m = rt__rank_object(RT__RANK_OBJECT, 77, 3, 0);
    rt__rank_object_read(&m, &object, &run, &found);
    ck_assert_uint_eq(object, 77);
    ck_assert_uint_eq(run, 3);
    ck_assert_int_eq(found, 0);
}
END_TEST

static int take_kept(void *ctx, const rt__result_msg *r)
{
    uint64_t *ids = ctx;
    ids[ids[0]++ + 1] = r->id;
    return 0;
}

/* A journal hands back the results kept after the ones received, and
 * stops at bytes that are not a result. */
START_TEST(a_journal_gives_back_what_was_not_received)
{
    static rt__journal j;
    rt__journal_clear(&j, 10); /* results 1..10 were sent */
    for (uint64_t id = 11; id <= 13; id++) {
        rt__result_msg r = {.id = id, .data = "xyz", .len = 3, .fd = -1};
        ck_assert_int_eq(rt__journal_keep(&j, &r, id), 0);
    }
    rt__result_msg big = {.id = 14, .fd = 5, .len = 1 << 20};
    ck_assert_int_eq(rt__journal_keep(&j, &big, 14), -1); /* a memfd is sent at once */
    uint64_t ids[8] = {0};
    rt__journal_replay(&j, 11, take_kept, ids); /* 11 came through the socket */
    ck_assert_uint_eq(ids[0], 2);
    ck_assert_uint_eq(ids[1], 12);
    ck_assert_uint_eq(ids[2], 13);
    memset(ids, 0, sizeof ids);
    j.data[sizeof(rt__hdr) + 16] = 0x7f; /* the second header scribbled on */
    rt__journal_replay(&j, 10, take_kept, ids);
    ck_assert_uint_eq(ids[0], 1);
    ck_assert_uint_eq(ids[1], 11);
    rt__journal_clear(&j, 13);
    memset(ids, 0, sizeof ids);
    rt__journal_replay(&j, 10, take_kept, ids);
    ck_assert_uint_eq(ids[0], 0);
}
END_TEST

/* A live worker's journal is read as it is kept: from where the last
 * read left off, after the results received, and not while results it
 * sent wait in the socket (they come first). */
START_TEST(a_live_journal_is_read_from_where_it_was_left)
{
    static rt__journal j;
    static char copy[RT__JOURNAL_BYTES];
    rt__journal_cursor at = {0};
    uint64_t ids[8] = {0};
    rt__journal_clear(&j, 10); /* results 1..10 were sent */
    ck_assert_int_eq(rt__journal_holds(&j, 10), 0);
    for (uint64_t id = 11; id <= 12; id++) {
        rt__result_msg r = {.id = id, .data = "xyz", .len = 3, .fd = -1};
        ck_assert_int_eq(rt__journal_keep(&j, &r, id), 0);
    }
    ck_assert_int_eq(rt__journal_holds(&j, 10), 1);
    ck_assert_int_eq(rt__journal_holds(&j, 9), -1); /* 10 is still in the socket */
    ck_assert_uint_eq(rt__journal_take_live(&j, 9, copy, &at, take_kept, ids), 0);
    ck_assert_uint_eq(rt__journal_take_live(&j, 10, copy, &at, take_kept, ids), 2);
    ck_assert_uint_eq(ids[1], 11);
    ck_assert_uint_eq(ids[2], 12);
    ck_assert_int_eq(rt__journal_holds(&j, 12), 0);
    rt__result_msg r13 = {.id = 13, .data = "xyz", .len = 3, .fd = -1};
    ck_assert_int_eq(rt__journal_keep(&j, &r13, 13), 0);
    memset(ids, 0, sizeof ids);
    ck_assert_uint_eq(rt__journal_take_live(&j, 12, copy, &at, take_kept, ids), 1);
    ck_assert_uint_eq(ids[1], 13); /* 11 and 12 were passed over: the cursor */
    rt__journal_clear(&j, 13); /* all sent; 14 is kept from the start again */
    ck_assert_int_eq(rt__journal_holds(&j, 12), -1);
    rt__result_msg r14 = {.id = 14, .data = "xyz", .len = 3, .fd = -1};
    ck_assert_int_eq(rt__journal_keep(&j, &r14, 14), 0);
    memset(ids, 0, sizeof ids);
    ck_assert_uint_eq(rt__journal_take_live(&j, 13, copy, &at, take_kept, ids), 1);
    ck_assert_uint_eq(ids[1], 14);
    rt__result_msg r15 = {.id = 15, .data = "xyz", .len = 3, .fd = -1};
    ck_assert_int_eq(rt__journal_keep(&j, &r15, 15), 0);
    j.data[at.at + 4] = 0x7f; /* its header scribbled on: not a result */
    ck_assert_int_eq(rt__journal_holds(&j, 14), 1);
    ck_assert_uint_eq(rt__journal_take_live(&j, 14, copy, &at, take_kept, ids), 0);
}
END_TEST

/* The inbox takes a batch only from an application that has seen the
 * worker linger, handle all its socket's bytes and take the batch before;
 * the worker takes each batch once, and a length a task scribbled is
 * bounded by the inbox. */
START_TEST(an_inbox_takes_a_batch_only_in_order)
{
    static rt__inbox in;
    static char room[RT__INBOX_BYTES], out[RT__INBOX_BYTES];
    uint64_t taken = 0;
    const char batch[32] = "task one";
    ck_assert_int_eq(rt__inbox_put(&in, room, 1, 0, batch, sizeof batch), 0); /* asleep */
    rt__inbox_awake(&in, 1);
    ck_assert_int_eq(rt__inbox_put(&in, room, 1, 64, batch, sizeof batch), 0); /* 64 unhandled */
    rt__inbox_handled(&in, 64);
    ck_assert_int_eq(rt__inbox_put(&in, room, 1, 64, batch, RT__INBOX_BYTES + 16), 0); /* too large */
    ck_assert_int_eq(rt__inbox_holds(&in, taken), 0);
    ck_assert_int_eq(rt__inbox_put(&in, room, 1, 64, batch, sizeof batch), 1);
    ck_assert_int_eq(rt__inbox_missed(&in), 0);
    ck_assert_int_eq(rt__inbox_holds(&in, taken), 1);
    ck_assert_int_eq(rt__inbox_put(&in, room, 2, 64, batch, sizeof batch), 0); /* 1 not taken */
    ck_assert_uint_eq(rt__inbox_take(&in, room, &taken, out), sizeof batch);
    ck_assert_str_eq(out, "task one");
    ck_assert_uint_eq(rt__inbox_take(&in, room, &taken, out), 0); /* once */
    ck_assert_int_eq(rt__inbox_put(&in, room, 2, 64, batch, sizeof batch), 1);
    rt__inbox_awake(&in, 0);
    ck_assert_int_eq(rt__inbox_missed(&in), 1); /* it must be woken */
    in.len = UINT32_MAX; /* scribbled */
    ck_assert_uint_eq(rt__inbox_take(&in, room, &taken, out), RT__INBOX_BYTES);
}
END_TEST

/* An argument table: inline arguments point into it, those in memfds
 * are taken in order from what came by ARG; a table that lies is
 * refused. */
START_TEST(argument_tables_round_trip_and_lies_are_refused)
{
    const char *a = "alpha", *c = "gamma!";
    rt__arg_msg args[3] = {{.data = a, .len = 5, .fd = -1}, {.len = 300000, .fd = 7},
                           {.data = c, .len = 6, .fd = -1}};
    size_t size = rt__args_size(args, 3, 1);
    ck_assert_uint_eq(size, 32 + 16 + 16); /* count, 3 entries, padded; 2 inline */
    char *table = calloc(1, size);
    rt__args_write(table, args, 3, 1);
    rt_value mapped[1] = {{"M", 300000}}, out[RT_ARGS_MAX];
    size_t n;
    ck_assert_int_eq(rt__args_read(table, size, mapped, 1, out, NULL, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(out[0].data, "alpha", 5), 0);
    ck_assert_ptr_eq(out[1].data, mapped[0].data);
    ck_assert_uint_eq(out[2].len, 6);
    ck_assert_int_eq(memcmp(out[2].data, "gamma!", 6), 0);
    /* Lies: a mapped argument that did not come, one too many, a
     * length past the end, a count past RT_ARGS_MAX, a short table. */
    ck_assert_int_eq(rt__args_read(table, size, mapped, 0, out, NULL, &n), -1);
    rt_value two[2] = {mapped[0], mapped[0]};
    ck_assert_int_eq(rt__args_read(table, size, two, 2, out, NULL, &n), -1);
    uint64_t huge = (uint64_t)1 << 40;
    memcpy(table + 8, &huge, 8);
    ck_assert_int_eq(rt__args_read(table, size, mapped, 1, out, NULL, &n), -1);
    uint64_t many = RT_ARGS_MAX + 1;
    memcpy(table, &many, 8);
    ck_assert_int_eq(rt__args_read(table, size, mapped, 1, out, NULL, &n), -1);
    ck_assert_int_eq(rt__args_read(table, 4, mapped, 1, out, NULL, &n), -1);
    free(table);
    /* Sent to another rank, every argument goes inline. */
    args[1] = (rt__arg_msg){.data = "big", .len = 3, .fd = 7};
    ck_assert_uint_eq(rt__args_size(args, 3, 0), 32 + 16 * 3);
}
END_TEST

/* Several results as one: what is written reads back, and bytes that
 * lie are refused. */
START_TEST(several_results_round_trip_and_lies_are_refused)
{
    rt_value parts[3] = {{"first", 5}, {"", 0}, {"third!", 6}}, out[RT_RETURNS_MAX];
    size_t size = rt__parts_size(parts, 3), n;
    ck_assert_uint_eq(size, 8 * 4 + 11);
    char *packed = calloc(1, size + 8);
    rt__parts_write(packed, parts, 3);
    ck_assert_int_eq(rt__parts_read(packed, size, out, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(memcmp(out[0].data, "first", 5), 0);
    ck_assert_uint_eq(out[1].len, 0);
    ck_assert_uint_eq(out[2].len, 6);
    ck_assert_int_eq(memcmp(out[2].data, "third!", 6), 0);
    /* Lies: bytes left over, too few, a length past the end, no
     * results, more than RT_RETURNS_MAX, a short header. */
    ck_assert_int_eq(rt__parts_read(packed, size + 1, out, &n), -1);
    ck_assert_int_eq(rt__parts_read(packed, size - 1, out, &n), -1);
    uint64_t word = UINT64_MAX;
    memcpy(packed + 8, &word, 8);
    ck_assert_int_eq(rt__parts_read(packed, size, out, &n), -1);
    word = 0;
    memcpy(packed, &word, 8);
    ck_assert_int_eq(rt__parts_read(packed, size, out, &n), -1);
    word = RT_RETURNS_MAX + 1;
    memcpy(packed, &word, 8);
    ck_assert_int_eq(rt__parts_read(packed, size, out, &n), -1);
    ck_assert_int_eq(rt__parts_read(packed, 7, out, &n), -1);
    free(packed);
    rt_value huge[2] = {{"", SIZE_MAX - 8}, {"", 16}};
    ck_assert_uint_eq(rt__parts_size(huge, 2), 0);
}
END_TEST

/* A mostly-zero buffer packs small and comes back whole, whatever its
 * runs (none, all zeros, zeros shorter than a step, bytes at either
 * end); a packing that lies about its runs or is cut short is refused. */
START_TEST(sparse_buffers_round_trip_and_lies_are_refused)
{
    enum { LEN = 4096 };
    static unsigned char in[LEN], packed[RT__SPARSE_BOUND(LEN)], out[LEN];
    unsigned seed = 7;
    for (int shape = 0; shape < 200; shape++) {
        memset(in, 0, sizeof in);
        int filled = shape % 5 == 0 ? 0 : shape % 5 == 1 ? LEN : rand_r(&seed) % 64;
        for (int i = 0; i < filled; i++)
            in[filled == LEN ? (size_t)i : (size_t)rand_r(&seed) % LEN] = (unsigned char)(1 + i % 255);
        if (shape % 7 == 3)
            in[0] = in[LEN - 1] = 9;
        size_t len = rt__sparse_pack(in, LEN, packed);
        ck_assert_uint_le(len, RT__SPARSE_BOUND(LEN));
        if (filled < 64)
            ck_assert_uint_lt(len, 66 * 9 + 16); /* a few bytes and their steps */
        memset(out, 0xee, sizeof out);
        ck_assert_int_eq(rt__sparse_unpack(packed, len, out, LEN), 0);
        ck_assert_int_eq(memcmp(in, out, LEN), 0);
        if (len > 0) {
            ck_assert_int_eq(rt__sparse_unpack(packed, len - 1, out, LEN), -1);
            ck_assert_int_eq(rt__sparse_unpack(packed, len, out, LEN - 1), -1);
            ck_assert_int_eq(rt__sparse_unpack(packed, len, out, LEN + 1), -1);
        }
    }
    uint32_t lie[2] = {0, 100}; /* 100 bytes announced, none there */
    ck_assert_int_eq(rt__sparse_unpack(lie, sizeof lie, out, LEN), -1);
    lie[0] = UINT32_MAX; /* more zeros than the buffer has */
    lie[1] = 0;
    ck_assert_int_eq(rt__sparse_unpack(lie, sizeof lie, out, LEN), -1);
}
END_TEST

Suite *wire_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("channel and protocol");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, partial_sends_deliver_every_message_in_order);
    tcase_add_test(tc, many_descriptors_arrive_with_their_messages);
    tcase_add_test(tc, a_truncated_header_waits_for_the_rest);
    tcase_add_test(tc, corrupt_headers_are_refused);
    tcase_add_test(tc, decoders_refuse_what_breaks_the_protocol);
    tcase_add_test(tc, results_round_trip);
    tcase_add_test(tc, devices_round_trip_and_bad_text_is_refused);
    tcase_add_test(tc, rank_message_words_round_trip);
    tcase_add_test(tc, a_journal_gives_back_what_was_not_received);
    tcase_add_test(tc, a_live_journal_is_read_from_where_it_was_left);
    tcase_add_test(tc, an_inbox_takes_a_batch_only_in_order);
    tcase_add_test(tc, argument_tables_round_trip_and_lies_are_refused);
    tcase_add_test(tc, several_results_round_trip_and_lies_are_refused);
    tcase_add_test(tc, sparse_buffers_round_trip_and_lies_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
