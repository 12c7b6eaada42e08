/* wait: timeout, wakeup from another thread, posting from another thread
 * while the main thread is blocked in wait. */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "tests/sock/harness.h"

int case_wait_timeout(void)
{
    tern_sock_set_t *set;
    tern_sock_event_t ev;
    CHECK_OK(tern_sock_set_create(&set));
    CHECK(tern_sock_wait(set, 0, &ev) == TERN_ERR_TIMED_OUT, "poll of an empty set");
    long long t0 = now_ms();
    CHECK(tern_sock_wait(set, 150, &ev) == TERN_ERR_TIMED_OUT, "timed wait");
    long long dt = now_ms() - t0;
    CHECK(dt >= 140 && dt < 2000, "waited %lld ms for 150", dt);
    tern_sock_set_destroy(set);
    return 0;
}

struct thread_arg {
    tern_sock_set_t *set;
    tern_sock_t *rd, *wr;
    char *buf;
    tern_status_t st1, st2;
};

static void *wakeup_thread(void *p)
{
    struct thread_arg *t = p;
    usleep(100000);
    t->st1 = tern_sock_wakeup(t->set);
    return NULL;
}

int case_wakeup_from_thread(void)
{
    tern_sock_set_t *set;
    tern_sock_event_t ev;
    pthread_t th;
    CHECK_OK(tern_sock_set_create(&set));
    struct thread_arg t = {.set = set};
    CHECK(pthread_create(&th, NULL, wakeup_thread, &t) == 0, "pthread_create");
    long long t0 = now_ms();
    tern_status_t st = tern_sock_wait(set, TMO, &ev);
    long long dt = now_ms() - t0;
    pthread_join(th, NULL);
    CHECK(st == TERN_OK && ev.op == TERN_SOCK_OP_WAKEUP, "%s op %d", tern_strerror(st), (int)ev.op);
    CHECK(ev.sock == NULL && ev.status == TERN_OK, "wakeup event");
    CHECK(dt >= 50 && dt < TMO - 500, "woken after %lld ms", dt);
    CHECK_OK(t.st1);
    /* wakeups coalesce and are not lost when nobody waits */
    CHECK_OK(tern_sock_wakeup(set));
    CHECK_OK(tern_sock_wakeup(set));
    CHECK_OK(tern_sock_wait(set, 0, &ev));
    CHECK(ev.op == TERN_SOCK_OP_WAKEUP, "pending wakeup");
    CHECK(tern_sock_wait(set, 0, &ev) == TERN_ERR_TIMED_OUT, "coalesced");
    tern_sock_set_destroy(set);
    return 0;
}

static void *post_thread(void *p)
{
    struct thread_arg *t = p;
    usleep(100000);
    t->st1 = tern_sock_post_read(t->rd, t->buf, 5, 5, NULL);
    t->st2 = tern_sock_post_write(t->wr, "ready", 5, 5, NULL);
    return NULL;
}

int case_post_from_thread_while_waiting(void)
{
    tern_sock_set_t *set;
    tern_sock_t *c, *a;
    tern_sock_event_t ev;
    pthread_t th;
    char buf[8] = {0};
    CHECK_OK(tern_sock_set_create(&set));
    CHECK_CALL(make_pair(set, &c, &a, NULL, NULL));
    struct thread_arg t = {.set = set, .rd = a, .wr = c, .buf = buf};
    CHECK(pthread_create(&th, NULL, post_thread, &t) == 0, "pthread_create");
    /* blocked here (nothing is posted yet) until the thread's posts wake us */
    long long t0 = now_ms();
    CHECK_CALL(expect_event(set, a, TERN_SOCK_OP_READ, TMO, &ev));
    long long dt = now_ms() - t0;
    pthread_join(th, NULL);
    CHECK_OK(t.st1);
    CHECK_OK(t.st2);
    CHECK(ev.status == TERN_OK && ev.num_bytes == 5 && memcmp(buf, "ready", 5) == 0, "read");
    CHECK(dt < TMO - 500, "noticed after %lld ms", dt);
    CHECK_CALL(expect_event(set, c, TERN_SOCK_OP_WRITE, TMO, &ev));
    CHECK_CALL(close_and_wait(set, c));
    CHECK_CALL(close_and_wait(set, a));
    tern_sock_set_destroy(set);
    return 0;
}
