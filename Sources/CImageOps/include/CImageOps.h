// Pixel operations of the thumbnailer, in C for speed in every build (a debug build of Swift loops is 20-50x slower,
// and the test suite resizes real photos): a separable Lanczos-3 resample, alpha premultiplication, the eight EXIF
// orientations, and ICC profiles to sRGB through Little CMS. Functions over caller-owned buffers: no global state, no
// longjmp; callable from any thread. The one allocation that escapes is an ICC transform (tio_icc_transform_free).
#ifndef TILECACHE_CIMAGEOPS_H
#define TILECACHE_CIMAGEOPS_H
#include <stddef.h>
#include <stdint.h>

/// Resamples the region (x0, y0, x1, y1) of `in` (in_width x in_height pixels of `channels` bytes, rows packed) to
/// out_width x out_height pixels in `out`, with Lanczos-3 widened by the scale factor when shrinking (Pillow's and
/// libvips' method). Sample positions are centred: output pixel i covers input [x0 + i*s, x0 + (i+1)*s), s = (x1-x0)/out.
/// Vertical pass first, to an 8-bit intermediate, then horizontal, both in fixed point; on x86-64 the vertical pass
/// runs sixteen columns at a time in SSE2 and the horizontal one a pixel's channels at once in SSE4.1 (3 and 4 channels,
/// when the CPU has it), elsewhere plain C the compiler vectorises as it can.
/// Returns 0, -1 for invalid arguments (a size <= 0, a region outside the image, 1 > channels > 4), -2 when out of
/// memory.
int tio_resample_lanczos3(const uint8_t *in, int in_width, int in_height, int channels,
                          double x0, double y0, double x1, double y1,
                          uint8_t *out, int out_width, int out_height);

/// tio_resample_lanczos3 in plain C, without SIMD: the same bytes, for tests to compare the SIMD loops against.
int tio_resample_lanczos3_portable(const uint8_t *in, int in_width, int in_height, int channels,
                                   double x0, double y0, double x1, double y1,
                                   uint8_t *out, int out_width, int out_height);

/// Premultiplies colour by alpha in place (the alpha channel is the last of `channels`, 2 or 4), rounding.
void tio_premultiply(uint8_t *pixels, size_t pixel_count, int channels);

/// Undoes tio_premultiply in place (colour of a fully transparent pixel becomes 0).
void tio_unpremultiply(uint8_t *pixels, size_t pixel_count, int channels);

/// Writes `in` (width x height, `channels` bytes a pixel) into `out` transformed as EXIF orientation `orientation`
/// (1-8) says, so the result is upright: 1 copies, 2 mirrors, 3 rotates 180°, 4 flips, 5 transposes, 6 rotates 90°
/// clockwise, 7 transverses, 8 rotates 90° counter-clockwise. For 5-8 the output is height x width.
/// Returns 0, or -1 for an orientation outside 1-8 or a size <= 0.
int tio_orient(const uint8_t *in, int width, int height, int channels, int orientation, uint8_t *out);

/// What tio_icc_transform_make found.
typedef enum {
    /// A transform to sRGB was made.
    TIO_ICC_CONVERTED = 0,
    /// The profile describes sRGB already (its description says so): the pixels are sRGB as they are.
    TIO_ICC_ALREADY_SRGB = 1,
    /// The profile could not be used (unreadable, or for another colour space than the pixels): `message` says why.
    TIO_ICC_UNUSABLE = -1,
} tio_icc_result;

/// The pixels an ICC transform converts.
typedef enum {
    /// RGB, 3 bytes a pixel, to RGB.
    TIO_PIXELS_RGB = 0,
    /// RGB and alpha, 4 bytes a pixel, to the same (alpha copied).
    TIO_PIXELS_RGBA = 1,
    /// CMYK ink amounts, 4 bytes a pixel, to RGB.
    TIO_PIXELS_CMYK = 2,
    /// CMYK as Adobe stores it (inverted, 255 = no ink), 4 bytes a pixel, to RGB.
    TIO_PIXELS_CMYK_INVERTED = 3,
} tio_pixels;

/// A conversion from the colour space an ICC profile describes to sRGB (Little CMS, relative colorimetric intent, as
/// libvips' thumbnailer), made once and applied to any number of images, by any number of threads at once (no
/// one-pixel cache; a Little CMS context of its own). Made by tio_icc_transform_make, freed by tio_icc_transform_free.
typedef struct tio_icc_transform tio_icc_transform;

/// Makes the conversion from `profile` to sRGB for pixels laid out as `pixels`: TIO_ICC_CONVERTED with `*transform`
/// set; TIO_ICC_ALREADY_SRGB, or TIO_ICC_UNUSABLE with the reason in `message` (of `message_size` bytes), with
/// `*transform` NULL. Making one takes milliseconds (Little CMS samples the profile's curves): keep it for the next image.
tio_icc_result tio_icc_transform_make(const uint8_t *profile, size_t profile_size, tio_pixels pixels,
                                      tio_icc_transform **transform, char *message, size_t message_size);

/// Converts `pixel_count` pixels laid out as `pixels` (the layout the transform was made for) from `in` to `out`:
/// RGB, or RGBA for TIO_PIXELS_RGBA (alpha copied).
void tio_icc_transform_apply(const tio_icc_transform *transform, const uint8_t *in, uint8_t *out, size_t pixel_count,
                             tio_pixels pixels);

/// Frees a transform (NULL is ignored).
void tio_icc_transform_free(tio_icc_transform *transform);

/// Inflates the zlib stream `in` (a PNG iCCP chunk's profile) into `out`, at most `*out_size` bytes; on return
/// `*out_size` is the inflated size. Returns 0, or -1 when the stream is damaged or larger than `out`.
int tio_inflate(const uint8_t *in, size_t in_size, uint8_t *out, size_t *out_size);

/// 1 when the profile is an RGB profile whose description names sRGB (converting to sRGB changes nothing), 0 when it
/// is another profile, -1 when it cannot be read.
int tio_icc_describes_srgb(const uint8_t *profile, size_t profile_size);

#endif
