/* Dot product and axpy on float rows for tokfx._word2vec, written with GCC/Clang vector
 * extensions so that the dot product's 8 partial sums live in SIMD registers (plain C gives the
 * compiler no licence to reorder a float sum, so it would stay scalar). The order of the
 * arithmetic is fixed and mirrored by tokfx/reference/word2vec.py: element k goes to partial sum
 * k % 8, the sums are added as ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)); no fused multiply-add
 * (setup.py passes -ffp-contract=off). */
#ifndef TOKFX_VECTOR_MATH_H
#define TOKFX_VECTOR_MATH_H

#include <string.h>

/* 4 lanes: one SSE or NEON register, so nothing goes through the stack. */
typedef float tokfx_f32x4 __attribute__((vector_size(16)));

static inline tokfx_f32x4 tokfx_load4(const float* p) {
    tokfx_f32x4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float tokfx_dot(const float* a, const float* b, int dim) {
    tokfx_f32x4 low = {0, 0, 0, 0}, high = {0, 0, 0, 0};  /* partial sums 0-3 and 4-7 */
    int k = 0;
    for (; k + 8 <= dim; k += 8) {
        low += tokfx_load4(a + k) * tokfx_load4(b + k);
        high += tokfx_load4(a + k + 4) * tokfx_load4(b + k + 4);
    }
    float s[8];
    memcpy(s, &low, sizeof low);
    memcpy(s + 4, &high, sizeof high);
    for (int j = 0; k < dim; ++k, ++j)
        s[j] += a[k] * b[k];
    return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

/* y += g * x */
static inline void tokfx_axpy(float g, const float* x, float* y, int dim) {
    for (int k = 0; k < dim; ++k)
        y[k] += g * x[k];
}

/* Ask for a row's cache lines ahead of its use (the negatives are random rows). */
static inline void tokfx_prefetch(const float* row, int dim) {
    for (int k = 0; k < dim; k += 16)
        __builtin_prefetch(row + k);
}

#endif
