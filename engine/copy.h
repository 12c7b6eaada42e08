/*
 * The engine's memory copy.  glibc's memcpy uses `rep movsb` for mid sizes,
 * which on some CPUs (seen on this project's AMD EPYC hosts) runs 20-40x
 * slower when the destination is a few bytes ahead of the source modulo
 * 4 KiB (4K aliasing between the loads and the stores in flight): 4 KiB
 * took 1.1 us instead of 42 ns.  Such copies go through a plain 16-byte
 * vector loop, never pathological; all others stay with memcpy.
 */
#ifndef TERN_ENGINE_COPY_H
#define TERN_ENGINE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

static inline void tern_copy(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    uintptr_t ahead = ((uintptr_t)dst - (uintptr_t)src) & 4095u;
    if (n >= 1024 && ahead != 0 && ahead < 64) {
        char *d = dst;
        const char *s = src;
        for (; n >= 64; n -= 64, d += 64, s += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
            _mm_storeu_si128((__m128i *)(void *)d, a);
            _mm_storeu_si128((__m128i *)(void *)(d + 16), b);
            _mm_storeu_si128((__m128i *)(void *)(d + 32), c);
            _mm_storeu_si128((__m128i *)(void *)(d + 48), e);
        }
        if (n)
            memcpy(d, s, n);
        return;
    }
#endif
    memcpy(dst, src, n);
}

/*
 * A copy of a small payload (an eager message in a fastbox slot): up to 16
 * bytes as two overlapping loads and stores, inline, where a call to
 * memcpy for 8 bytes costs more than the copy (its dispatch is on the
 * critical path of every small message).  Larger: tern_copy.
 */
static inline void tern_copy_small(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n > 0 && n < 4) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    } else if (n > 16) {
        tern_copy(dst, src, n);
    }
}

#endif
