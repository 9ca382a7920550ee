// See include/CImageOps.h. The resample follows Pillow's Resample.c (fixed-point coefficients, 8-bit intermediate,
// two passes), whose output is the quality reference docs/benchmarks.md compares against.
#include "CImageOps.h"
#include <lcms2.h>
#include <zlib.h>
#include <math.h>
#include <stdio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <cpuid.h>
#include <smmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#define PRECISION_BITS (32 - 8 - 2)
/// Weights of the vertical pass: a Lanczos weight is at most 1, so 14 bits keep it inside int16.
#define VERTICAL_BITS 14
#define ALWAYS_INLINE static inline __attribute__((always_inline))

static double sinc(double x) {
    if (x == 0.0) return 1.0;
    x *= M_PI;
    return sin(x) / x;
}

static double lanczos3(double x) {
    return (x > -3.0 && x < 3.0) ? sinc(x) * sinc(x / 3.0) : 0.0;
}

ALWAYS_INLINE uint8_t clip8(int32_t value) {
    if (value >= (255 << PRECISION_BITS)) return 255;
    if (value <= 0) return 0;
    return (uint8_t)(value >> PRECISION_BITS);
}

/// The taps of one axis: for output pixel i, `count[i]` input pixels from `first[i]`, with `ksize` fixed-point weights
/// from `weights + i * ksize`.
typedef struct {
    int ksize;
    int *first;
    int *count;
    int32_t *weights;
    /// The same weights with VERTICAL_BITS of precision, for the vertical pass: 8-bit samples times 16-bit weights
    /// is what SSE2 multiplies eight at a time (pmaddwd), where 32-bit products need SSE4.1.
    int16_t *weights16;
} taps;

static void taps_free(taps *t) {
    free(t->first);
    free(t->count);
    free(t->weights);
    free(t->weights16);
}

static int taps_make(int in_size, double in0, double in1, int out_size, taps *t) {
    memset(t, 0, sizeof *t);
    double scale = (in1 - in0) / out_size;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = 3.0 * filterscale;
    int ksize = (int)ceil(support) * 2 + 1;
    if ((size_t)out_size > SIZE_MAX / sizeof(double) / (size_t)ksize) return -2;
    double *row = malloc(sizeof(double) * (size_t)ksize);
    t->ksize = ksize;
    t->first = malloc(sizeof(int) * (size_t)out_size);
    t->count = malloc(sizeof(int) * (size_t)out_size);
    t->weights = calloc((size_t)out_size * (size_t)ksize, sizeof(int32_t));
    t->weights16 = calloc((size_t)out_size * (size_t)ksize, sizeof(int16_t));
    if (!row || !t->first || !t->count || !t->weights || !t->weights16) {
        free(row);
        taps_free(t);
        return -2;
    }
    for (int i = 0; i < out_size; i++) {
        double center = in0 + (i + 0.5) * scale;
        double sum = 0.0, ss = 1.0 / filterscale;
        int xmin = (int)floor(center - support + 0.5);
        if (xmin < 0) xmin = 0;
        int xmax = (int)floor(center + support + 0.5);
        if (xmax > in_size) xmax = in_size;
        xmax -= xmin;
        if (xmax > ksize) xmax = ksize;
        for (int x = 0; x < xmax; x++) {
            double w = lanczos3((x + xmin - center + 0.5) * ss);
            row[x] = w;
            sum += w;
        }
        int32_t *fixed = t->weights + (size_t)i * (size_t)ksize;
        int16_t *fixed16 = t->weights16 + (size_t)i * (size_t)ksize;
        for (int x = 0; x < xmax; x++) {
            double w = sum != 0.0 ? row[x] / sum : 0.0;
            fixed[x] = (int32_t)(w < 0 ? w * (1 << PRECISION_BITS) - 0.5 : w * (1 << PRECISION_BITS) + 0.5);
            fixed16[x] = (int16_t)(w < 0 ? w * (1 << VERTICAL_BITS) - 0.5 : w * (1 << VERTICAL_BITS) + 0.5);
        }
        t->first[i] = xmin;
        t->count[i] = xmax;
    }
    free(row);
    return 0;
}

/// One output pixel of the horizontal pass for C channels (a constant at each call site, so the loop is specialised):
/// `n` taps of `k` over the pixels from `p`.
ALWAYS_INLINE void horizontal_pixel(const uint8_t *p, const int32_t *k, int n, uint8_t *dst, const int C) {
    int32_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0, s3 = s0;
    for (int x = 0; x < n; x++) {
        int32_t w = k[x];
        s0 += p[x * C] * w;
        if (C > 1) s1 += p[x * C + 1] * w;
        if (C > 2) s2 += p[x * C + 2] * w;
        if (C > 3) s3 += p[x * C + 3] * w;
    }
    dst[0] = clip8(s0);
    if (C > 1) dst[1] = clip8(s1);
    if (C > 2) dst[2] = clip8(s2);
    if (C > 3) dst[3] = clip8(s3);
}

#if defined(__x86_64__)
/// horizontal_pixel with SSE4.1 for 3 or 4 channels: each tap's pixel widened to four 32-bit lanes and multiplied by
/// its weight in one instruction (the same 32-bit products and sums, so the same bytes). For 3 channels each 4-byte
/// load also reads the next pixel's first byte, so the caller keeps the last tap's load inside the row.
__attribute__((target("sse4.1")))
static void horizontal_pixel_sse41(const uint8_t *p, const int32_t *k, int n, uint8_t *dst, const int C) {
    __m128i sum = _mm_set1_epi32(1 << (PRECISION_BITS - 1));
    for (int x = 0; x < n; x++) {
        int32_t sample;
        memcpy(&sample, p + (size_t)x * (size_t)C, 4);
        sum = _mm_add_epi32(sum, _mm_mullo_epi32(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(sample)), _mm_set1_epi32(k[x])));
    }
    // The arithmetic shift keeps the sign; packing with saturation is clip8's clamp to 0...255.
    __m128i shifted = _mm_srai_epi32(sum, PRECISION_BITS);
    uint32_t packed = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(_mm_packs_epi32(shifted, shifted), _mm_setzero_si128()));
    memcpy(dst, &packed, (size_t)C);
}

/// Whether the CPU has SSE4.1 (every x86-64 CPU since 2008; the build's baseline is SSE2), from `cpuid`, whose answer
/// is kept (threads that start at once may each ask).
static int has_sse41(void) {
    static int answer = -1;  // atomic: threads may ask at once, and every one computes the same answer
    int known = __atomic_load_n(&answer, __ATOMIC_RELAXED);
    if (known < 0) {
        unsigned int eax, ebx, ecx, edx;
        known = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_1) != 0;
        __atomic_store_n(&answer, known, __ATOMIC_RELAXED);
    }
    return known;
}
#endif

/// The horizontal pass over `rows` rows of `in` from `first_row`; `portable`: without SIMD (for tests to compare).
static void horizontal(const uint8_t *in, int in_width, int first_row, int rows, int channels,
                       uint8_t *out, int out_width, const taps *t, int portable) {
    size_t in_stride = (size_t)in_width * (size_t)channels, out_stride = (size_t)out_width * (size_t)channels;
#if defined(__x86_64__)
    int simd = !portable && channels >= 3 && has_sse41();
#else
    (void)portable;
#endif
    for (int y = 0; y < rows; y++) {
        const uint8_t *src = in + (size_t)(first_row + y) * in_stride;
        uint8_t *dst = out + (size_t)y * out_stride;
        for (int i = 0; i < out_width; i++) {
            const uint8_t *p = src + (size_t)t->first[i] * (size_t)channels;
            const int32_t *k = t->weights + (size_t)i * (size_t)t->ksize;
            int n = t->count[i];
            uint8_t *pixel = dst + (size_t)i * (size_t)channels;
#if defined(__x86_64__)
            if (simd && (size_t)(t->first[i] + n) * (size_t)channels + (size_t)(4 - channels) <= in_stride) {
                if (channels == 3) horizontal_pixel_sse41(p, k, n, pixel, 3);
                else horizontal_pixel_sse41(p, k, n, pixel, 4);
                continue;
            }
#endif
            switch (channels) {
            case 1: horizontal_pixel(p, k, n, pixel, 1); break;
            case 2: horizontal_pixel(p, k, n, pixel, 2); break;
            case 3: horizontal_pixel(p, k, n, pixel, 3); break;
            default: horizontal_pixel(p, k, n, pixel, 4); break;
            }
        }
    }
}

#if defined(__SSE2__)
/// The vertical pass with SSE2, sixteen columns at a time, every tap summed in registers before the next sixteen: two
/// rows' samples interleaved as 16-bit pairs, multiplied by the pair of weights and summed by one pmaddwd, four columns
/// an instruction; the sums shifted and packed to bytes with saturation, which is the clamp to 0...255. The columns
/// past the last sixteen one at a time. The same sums as `vertical`'s portable loop, so the same bytes.
static void vertical_sse2(const uint8_t *in, size_t stride, int row_offset, uint8_t *out, int out_height, const taps *t) {
    const __m128i zero = _mm_setzero_si128();
    for (int yy = 0; yy < out_height; yy++) {
        const int16_t *k = t->weights16 + (size_t)yy * (size_t)t->ksize;
        const uint8_t *rows = in + (size_t)(t->first[yy] - row_offset) * stride;
        int n = t->count[yy];
        uint8_t *dst = out + (size_t)yy * stride;
        size_t x = 0;
        for (; x + 16 <= stride; x += 16) {
            __m128i s0 = _mm_set1_epi32(1 << (VERTICAL_BITS - 1)), s1 = s0, s2 = s0, s3 = s0;
            int y = 0;
            for (; y + 1 < n; y += 2) {
                const uint8_t *row0 = rows + (size_t)y * stride + x;
                const __m128i weights = _mm_set1_epi32((int32_t)(((uint32_t)(uint16_t)k[y + 1] << 16) | (uint16_t)k[y]));
                __m128i a = _mm_loadu_si128((const __m128i *)(const void *)row0);
                __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(row0 + stride));
                __m128i alo = _mm_unpacklo_epi8(a, zero), ahi = _mm_unpackhi_epi8(a, zero);
                __m128i blo = _mm_unpacklo_epi8(b, zero), bhi = _mm_unpackhi_epi8(b, zero);
                s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi16(alo, blo), weights));
                s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi16(alo, blo), weights));
                s2 = _mm_add_epi32(s2, _mm_madd_epi16(_mm_unpacklo_epi16(ahi, bhi), weights));
                s3 = _mm_add_epi32(s3, _mm_madd_epi16(_mm_unpackhi_epi16(ahi, bhi), weights));
            }
            if (y < n) {  // an odd tap: its pair's second weight is zero
                const __m128i weights = _mm_set1_epi32((int32_t)(uint16_t)k[y]);
                __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(rows + (size_t)y * stride + x));
                __m128i alo = _mm_unpacklo_epi8(a, zero), ahi = _mm_unpackhi_epi8(a, zero);
                s0 = _mm_add_epi32(s0, _mm_madd_epi16(_mm_unpacklo_epi16(alo, zero), weights));
                s1 = _mm_add_epi32(s1, _mm_madd_epi16(_mm_unpackhi_epi16(alo, zero), weights));
                s2 = _mm_add_epi32(s2, _mm_madd_epi16(_mm_unpacklo_epi16(ahi, zero), weights));
                s3 = _mm_add_epi32(s3, _mm_madd_epi16(_mm_unpackhi_epi16(ahi, zero), weights));
            }
            __m128i lo = _mm_packs_epi32(_mm_srai_epi32(s0, VERTICAL_BITS), _mm_srai_epi32(s1, VERTICAL_BITS));
            __m128i hi = _mm_packs_epi32(_mm_srai_epi32(s2, VERTICAL_BITS), _mm_srai_epi32(s3, VERTICAL_BITS));
            _mm_storeu_si128((__m128i *)(void *)(dst + x), _mm_packus_epi16(lo, hi));
        }
        for (; x < stride; x++) {
            int32_t sum = 1 << (VERTICAL_BITS - 1);
            for (int y = 0; y < n; y++) sum += rows[(size_t)y * stride + x] * k[y];
            int32_t value = sum >> VERTICAL_BITS;
            dst[x] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
        }
    }
}
#endif

/// The vertical pass: every byte of a row is one column of samples, whatever the channel count. `in` starts at the
/// row `row_offset` of the taps' input. With SSE2 (every x86-64 CPU), `vertical_sse2`; otherwise, or when `portable`
/// (for tests to compare), row by row into a row of sums, an inner loop along a contiguous row that the compiler
/// vectorises for the target it has.
static int vertical(const uint8_t *in, size_t stride, int row_offset, uint8_t *out, int out_height, const taps *t, int portable) {
#if defined(__SSE2__)
    if (!portable) {
        vertical_sse2(in, stride, row_offset, out, out_height, t);
        return 0;
    }
#else
    (void)portable;
#endif
    int32_t *sums = malloc(stride * sizeof(int32_t));
    if (!sums) return -2;
    for (int yy = 0; yy < out_height; yy++) {
        const int16_t *k = t->weights16 + (size_t)yy * (size_t)t->ksize;
        const uint8_t *rows = in + (size_t)(t->first[yy] - row_offset) * stride;
        int n = t->count[yy];
        for (size_t x = 0; x < stride; x++) sums[x] = 1 << (VERTICAL_BITS - 1);
        for (int y = 0; y < n; y++) {
            const uint8_t *row = rows + (size_t)y * stride;
            int32_t w = k[y];
            for (size_t x = 0; x < stride; x++) sums[x] += row[x] * w;
        }
        uint8_t *dst = out + (size_t)yy * stride;
        for (size_t x = 0; x < stride; x++) {
            int32_t value = sums[x] >> VERTICAL_BITS;
            dst[x] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
        }
    }
    free(sums);
    return 0;
}

static int resample(const uint8_t *in, int in_width, int in_height, int channels, double x0, double y0, double x1, double y1,
                    uint8_t *out, int out_width, int out_height, int portable) {
    if (!in || !out || in_width <= 0 || in_height <= 0 || out_width <= 0 || out_height <= 0 || channels < 1 || channels > 4)
        return -1;
    if (!(x0 >= 0 && y0 >= 0 && x1 <= in_width && y1 <= in_height && x1 > x0 && y1 > y0)) return -1;
    int need_h = out_width != in_width || x0 != 0 || x1 != in_width;
    int need_v = out_height != in_height || y0 != 0 || y1 != in_height;
    size_t channels_z = (size_t)channels;
    if (!need_h && !need_v) {
        memcpy(out, in, (size_t)in_width * (size_t)in_height * channels_z);
        return 0;
    }
    taps h = {0}, v = {0};
    if (need_h && taps_make(in_width, x0, x1, out_width, &h) != 0) return -2;
    if (need_v && taps_make(in_height, y0, y1, out_height, &v) != 0) {
        taps_free(&h);
        return -2;
    }
    int status = 0;
    if (need_h && need_v) {
        // Vertical first: it runs along rows (sixteen columns at a time with SSE2), so it takes the large input; the
        // horizontal pass, a pixel at a time, then sees only the out_height rows (Pillow goes the other way round; the results differ by
        // the rounding of the 8-bit intermediate).
        uint8_t *tmp = malloc((size_t)out_height * (size_t)in_width * channels_z);
        if (!tmp) {
            status = -2;
        } else {
            status = vertical(in, (size_t)in_width * channels_z, 0, tmp, out_height, &v, portable);
            if (status == 0) horizontal(tmp, in_width, 0, out_height, channels, out, out_width, &h, portable);
            free(tmp);
        }
    } else if (need_h) {
        horizontal(in, in_width, 0, in_height, channels, out, out_width, &h, portable);
    } else {
        status = vertical(in, (size_t)in_width * channels_z, 0, out, out_height, &v, portable);
    }
    taps_free(&h);
    taps_free(&v);
    return status;
}

int tio_resample_lanczos3(const uint8_t *in, int in_width, int in_height, int channels,
                          double x0, double y0, double x1, double y1,
                          uint8_t *out, int out_width, int out_height) {
    return resample(in, in_width, in_height, channels, x0, y0, x1, y1, out, out_width, out_height, 0);
}

int tio_resample_lanczos3_portable(const uint8_t *in, int in_width, int in_height, int channels,
                                   double x0, double y0, double x1, double y1,
                                   uint8_t *out, int out_width, int out_height) {
    return resample(in, in_width, in_height, channels, x0, y0, x1, y1, out, out_width, out_height, 1);
}

void tio_premultiply(uint8_t *pixels, size_t pixel_count, int channels) {
    if (channels != 2 && channels != 4) return;
    for (size_t i = 0; i < pixel_count; i++) {
        uint8_t *p = pixels + i * (size_t)channels;
        unsigned a = p[channels - 1];
        for (int c = 0; c < channels - 1; c++) p[c] = (uint8_t)((p[c] * a + 127) / 255);
    }
}

void tio_unpremultiply(uint8_t *pixels, size_t pixel_count, int channels) {
    if (channels != 2 && channels != 4) return;
    for (size_t i = 0; i < pixel_count; i++) {
        uint8_t *p = pixels + i * (size_t)channels;
        unsigned a = p[channels - 1];
        for (int c = 0; c < channels - 1; c++) {
            unsigned value = a == 0 ? 0 : (p[c] * 255u + a / 2) / a;
            p[c] = (uint8_t)(value > 255 ? 255 : value);
        }
    }
}

int tio_orient(const uint8_t *in, int width, int height, int channels, int orientation, uint8_t *out) {
    if (!in || !out || width <= 0 || height <= 0 || channels < 1 || channels > 4 || orientation < 1 || orientation > 8)
        return -1;
    size_t c = (size_t)channels;
    int transposed = orientation >= 5;
    int out_width = transposed ? height : width, out_height = transposed ? width : height;
    for (int y = 0; y < out_height; y++) {
        for (int x = 0; x < out_width; x++) {
            int sx, sy;
            switch (orientation) {
            case 1: sx = x; sy = y; break;
            case 2: sx = width - 1 - x; sy = y; break;
            case 3: sx = width - 1 - x; sy = height - 1 - y; break;
            case 4: sx = x; sy = height - 1 - y; break;
            case 5: sx = y; sy = x; break;
            case 6: sx = y; sy = height - 1 - x; break;
            case 7: sx = width - 1 - y; sy = height - 1 - x; break;
            default: sx = width - 1 - y; sy = x; break;
            }
            memcpy(out + ((size_t)y * (size_t)out_width + (size_t)x) * c, in + ((size_t)sy * (size_t)width + (size_t)sx) * c, c);
        }
    }
    return 0;
}

/// Little CMS reports errors through a handler, per context: each call gets a context of its own whose handler
/// records the message in the caller's buffer (no global state shared between threads).
typedef struct {
    char *message;
    size_t size;
} icc_errors;

static void on_lcms_error(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)code;
    icc_errors *errors = cmsGetContextUserData(context);
    if (errors && errors->message && errors->size > 0) snprintf(errors->message, errors->size, "%s", text);
}

/// Whether an open profile is RGB and described as sRGB.
static int describes_srgb(cmsHPROFILE profile) {
    if (cmsGetColorSpace(profile) != cmsSigRgbData) return 0;
    char description[256] = {0};
    cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", description, sizeof description);
    return strstr(description, "sRGB") != NULL;
}

int tio_icc_describes_srgb(const uint8_t *profile, size_t profile_size) {
    cmsContext context = cmsCreateContext(NULL, NULL);
    if (!context) return -1;
    cmsHPROFILE handle = cmsOpenProfileFromMemTHR(context, profile, (cmsUInt32Number)profile_size);
    int result = handle ? describes_srgb(handle) : -1;
    if (handle) cmsCloseProfile(handle);
    cmsDeleteContext(context);
    return result;
}

struct tio_icc_transform {
    cmsContext context;
    cmsHTRANSFORM transform;
    /// The context's user data: the caller's message buffer while the transform is made, none afterwards.
    icc_errors errors;
};

void tio_icc_transform_free(tio_icc_transform *transform) {
    if (!transform) return;
    if (transform->transform) cmsDeleteTransform(transform->transform);
    if (transform->context) cmsDeleteContext(transform->context);
    free(transform);
}

tio_icc_result tio_icc_transform_make(const uint8_t *profile, size_t profile_size, tio_pixels pixels,
                                      tio_icc_transform **made, char *message, size_t message_size) {
    *made = NULL;
    if (message_size > 0) message[0] = 0;
    int cmyk = pixels == TIO_PIXELS_CMYK || pixels == TIO_PIXELS_CMYK_INVERTED;
    if (profile_size > UINT32_MAX) {
        snprintf(message, message_size, "the profile is too large (%zu bytes)", profile_size);
        return TIO_ICC_UNUSABLE;
    }
    tio_icc_transform *made_here = calloc(1, sizeof *made_here);
    if (!made_here) {
        snprintf(message, message_size, "out of memory");
        return TIO_ICC_UNUSABLE;
    }
    made_here->errors = (icc_errors){message, message_size};
    made_here->context = cmsCreateContext(NULL, &made_here->errors);
    if (!made_here->context) {
        snprintf(message, message_size, "Little CMS could not create a context (out of memory)");
        free(made_here);
        return TIO_ICC_UNUSABLE;
    }
    cmsContext context = made_here->context;
    cmsSetLogErrorHandlerTHR(context, on_lcms_error);
    tio_icc_result result = TIO_ICC_UNUSABLE;
    cmsHPROFILE source = cmsOpenProfileFromMemTHR(context, profile, (cmsUInt32Number)profile_size);
    cmsHPROFILE srgb = cmsCreate_sRGBProfileTHR(context);
    if (!source || !srgb) {
        if (message_size > 0 && !message[0]) snprintf(message, message_size, "the profile cannot be read");
        goto done;
    }
    cmsColorSpaceSignature space = cmsGetColorSpace(source);
    if (space != (cmyk ? cmsSigCmykData : cmsSigRgbData)) {
        snprintf(message, message_size, "the profile is for another colour space than the image's %s pixels", cmyk ? "CMYK" : "RGB");
        goto done;
    }
    if (describes_srgb(source)) {
        result = TIO_ICC_ALREADY_SRGB;
        goto done;
    }
    cmsUInt32Number input = pixels == TIO_PIXELS_RGB ? TYPE_RGB_8 : pixels == TIO_PIXELS_RGBA ? TYPE_RGBA_8
                          : pixels == TIO_PIXELS_CMYK ? TYPE_CMYK_8 : TYPE_CMYK_8_REV;
    cmsUInt32Number output = pixels == TIO_PIXELS_RGBA ? TYPE_RGBA_8 : TYPE_RGB_8;
    // No one-pixel cache: Little CMS's condition for one transform used by several threads at once.
    made_here->transform = cmsCreateTransformTHR(context, source, input, srgb, output, INTENT_RELATIVE_COLORIMETRIC,
                                                 cmsFLAGS_NOCACHE | (pixels == TIO_PIXELS_RGBA ? cmsFLAGS_COPY_ALPHA : 0));
    if (!made_here->transform) {
        if (message_size > 0 && !message[0]) snprintf(message, message_size, "no transform from the profile to sRGB");
        goto done;
    }
    result = TIO_ICC_CONVERTED;
done:
    if (source) cmsCloseProfile(source);
    if (srgb) cmsCloseProfile(srgb);
    // The caller's buffer is not the transform's: nothing is written to it once this returns.
    made_here->errors = (icc_errors){NULL, 0};
    if (result == TIO_ICC_CONVERTED) {
        *made = made_here;
    } else {
        tio_icc_transform_free(made_here);
    }
    return result;
}

void tio_icc_transform_apply(const tio_icc_transform *transform, const uint8_t *in, uint8_t *out, size_t pixel_count,
                             tio_pixels pixels) {
    size_t in_size = pixels == TIO_PIXELS_RGB ? 3 : 4, out_size = pixels == TIO_PIXELS_RGBA ? 4 : 3;
    // Little CMS counts pixels in 32 bits: larger images go in parts.
    while (pixel_count > 0) {
        cmsUInt32Number part = pixel_count > UINT32_MAX ? UINT32_MAX : (cmsUInt32Number)pixel_count;
        cmsDoTransform(transform->transform, in, out, part);
        in += (size_t)part * in_size;
        out += (size_t)part * out_size;
        pixel_count -= part;
    }
}

int tio_inflate(const uint8_t *in, size_t in_size, uint8_t *out, size_t *out_size) {
    uLongf size = (uLongf)*out_size;
    if (uncompress(out, &size, in, (uLong)in_size) != Z_OK) return -1;
    *out_size = (size_t)size;
    return 0;
}
