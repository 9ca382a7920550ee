// Encoders the built-in origin uses to serve the same generated image in the forms the fault matrix needs
// (progressive, grayscale and CMYK JPEGs; 16-bit and interlaced PNGs; gzip bodies). Written in C because libpng's
// full write API reports errors with longjmp, which must never cross a Swift frame: the setjmp lives here.
// Every function returns 0 on success and stores a malloc'd buffer in *out (free it with tco_free); on failure it
// returns -1 and leaves *out NULL.
#ifndef TILECACHE_CORIGINCODECS_H
#define TILECACHE_CORIGINCODECS_H
#include <stddef.h>
#include <stdint.h>

/// The JPEG forms ImageCore's baseline encoder does not make: progressive 4:2:0, grayscale (one component, from RGB),
/// CMYK (Adobe, four components).
typedef enum { TCO_JPEG_PROGRESSIVE = 1, TCO_JPEG_GRAY = 2, TCO_JPEG_CMYK = 3 } tco_jpeg_form;

/// Encodes 8-bit RGB pixels (width*height*3 bytes) as a JPEG of the given form.
int tco_jpeg_encode(const uint8_t *rgb, int width, int height, int quality, tco_jpeg_form form,
                    uint8_t **out, size_t *out_size);

/// Encodes 8-bit RGB pixels as an RGB PNG with 8 or 16 bits per sample (16-bit samples are v*257), optionally
/// Adam7-interlaced.
int tco_png_encode(const uint8_t *rgb, int width, int height, int bit_depth, int interlaced,
                   uint8_t **out, size_t *out_size);

/// Compresses bytes into a gzip stream (RFC 1952), as a server does for `Content-Encoding: gzip`.
int tco_gzip(const uint8_t *bytes, size_t count, uint8_t **out, size_t *out_size);

/// zlib's CRC-32 (the PNG chunk checksum) of `count` bytes.
uint32_t tco_crc32(const uint8_t *bytes, size_t count);

/// Frees a buffer returned by one of the functions above.
void tco_free(void *buffer);
#endif
