/*
 * Single-threaded pthread functions for wasm32-wasip1, linked into the Rust
 * tests built against Debian's wasi-libc.
 *
 * Rust's standard library for wasm32-wasip1 refers to these symbols (its
 * thread::spawn goes through pthread_create), and newer wasi-libc releases
 * define them as stubs for targets without threads. The wasi-libc in Debian
 * 12 (2022) predates that, so the link fails without this file. The
 * behaviour matches the newer wasi-libc: creating a thread reports ENOTSUP,
 * so thread::spawn returns an error (and Builder::spawn an Err) instead of
 * the program failing to link; as no thread can exist, joining or
 * detaching one is EINVAL; attribute calls succeed and do nothing.
 *
 * Built by .ci/platforms/build-stubs with `zig cc -target wasm32-wasi`.
 */
#include <errno.h>
#include <stddef.h>

typedef struct pthread_attr_stub pthread_attr_t;
typedef unsigned long pthread_t;

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                   void *(*start)(void *), void *arg)
{
    (void)thread; (void)attr; (void)start; (void)arg;
    return ENOTSUP;
}

int pthread_join(pthread_t thread, void **result)
{
    (void)thread; (void)result;
    return EINVAL;
}

int pthread_detach(pthread_t thread)
{
    (void)thread;
    return EINVAL;
}

int pthread_attr_init(pthread_attr_t *attr) { (void)attr; return 0; }
int pthread_attr_destroy(pthread_attr_t *attr) { (void)attr; return 0; }

int pthread_attr_setstacksize(pthread_attr_t *attr, size_t size)
{
    (void)attr; (void)size;
    return 0;
}
