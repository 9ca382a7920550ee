#ifndef TILECACHE_HTTPCOMPRESSION_H
#define TILECACHE_HTTPCOMPRESSION_H

#include <stddef.h>
#include <stdint.h>

/// The largest output `tc_gzip` may write for `length` input bytes.
size_t tc_gzip_bound(size_t length);

/// Compresses `input` into a gzip member (RFC 1952) at `level` (1-9). `*output_length` holds the capacity of `output`
/// on entry and the bytes written on return. Returns 0, or zlib's error code (never Z_OK) when it fails.
int tc_gzip(const uint8_t *input, size_t length, uint8_t *output, size_t *output_length, int level);

/// The largest output `tc_brotli` may write for `length` input bytes (0 when too large for brotli).
size_t tc_brotli_bound(size_t length);

/// Compresses `input` as a brotli stream (RFC 7932) at `quality` (0-11). `*output_length` as for `tc_gzip`.
/// Returns 1 on success, 0 when brotli fails.
int tc_brotli(const uint8_t *input, size_t length, uint8_t *output, size_t *output_length, int quality);

#endif
