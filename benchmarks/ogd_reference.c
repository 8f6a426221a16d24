/* Projected OGD in plain C, the rule ocolearn's benchmarks time (squared loss, eta / sqrt(t),
 * L2 ball of radius r), float32 as in ocolearn:
 *
 *     w <- P(w - eta / sqrt(t) (w . x_t - y_t) x_t),   P(v) = v min(1, r / ||v||).
 *
 * The textbook loop: one pass for w . x, one for the step and ||w||^2, one to scale when the
 * ball is active. Compiled by benchmarks/c_reference.py with the system compiler at -O3
 * -march=native, with and without -ffast-math (without it the sums stay in order and do not
 * vectorize). Rows are read in place from the caller's arrays: no loading is counted. */
#include <math.h>
#include <stddef.h>

/* One pass over the n rows of X (n x d, row-major) and y; w (d) is updated in place. */
void ogd(const float *X, const float *y, long n, long d, float eta, float radius, float *w) {
    for (long t = 0; t < n; t++) {
        const float *x = X + t * d;
        float p = 0.0f;
        for (long i = 0; i < d; i++) p += w[i] * x[i];
        const float a = -eta / sqrtf((float)(t + 1)) * (p - y[t]);
        float s = 0.0f;
        for (long i = 0; i < d; i++) {
            w[i] += a * x[i];
            s += w[i] * w[i];
        }
        if (s > radius * radius) {
            const float f = radius / sqrtf(s);
            for (long i = 0; i < d; i++) w[i] *= f;
        }
    }
}

/* A sweep: c configurations (rates eta[c], radii radius[c]) over the same rows, round by round
 * (each row is read once for all configurations, as a vmapped sweep reads it); W is c x d. */
void ogd_sweep(const float *X, const float *y, long n, long d, long c, const float *eta, const float *radius,
               float *W) {
    for (long t = 0; t < n; t++) {
        const float *x = X + t * d;
        const float scale = 1.0f / sqrtf((float)(t + 1));
        for (long j = 0; j < c; j++) {
            float *w = W + j * d;
            float p = 0.0f;
            for (long i = 0; i < d; i++) p += w[i] * x[i];
            const float a = -eta[j] * scale * (p - y[t]);
            float s = 0.0f;
            for (long i = 0; i < d; i++) {
                w[i] += a * x[i];
                s += w[i] * w[i];
            }
            if (s > radius[j] * radius[j]) {
                const float f = radius[j] / sqrtf(s);
                for (long i = 0; i < d; i++) w[i] *= f;
            }
        }
    }
}
