#include "COriginCodecs.h"
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <zlib.h>

void tco_free(void *buffer) { free(buffer); }

uint32_t tco_crc32(const uint8_t *bytes, size_t count) { return (uint32_t)crc32(0L, bytes, (uInt)count); }

int tco_jpeg_encode(const uint8_t *rgb, int width, int height, int quality, tco_jpeg_form form,
                    uint8_t **out, size_t *out_size) {
    *out = NULL;
    *out_size = 0;
    tjhandle handle = tjInitCompress();
    if (!handle) return -1;
    const uint8_t *source = rgb;
    uint8_t *cmyk = NULL;
    int pixel_format = TJPF_RGB, subsampling = TJSAMP_420, flags = TJFLAG_ACCURATEDCT;
    if (form == TCO_JPEG_PROGRESSIVE) flags |= TJFLAG_PROGRESSIVE;
    if (form == TCO_JPEG_GRAY) subsampling = TJSAMP_GRAY;
    if (form == TCO_JPEG_CMYK) {
        // Adobe CMYK JPEGs store inverted values: K' = max(R,G,B), C' = R*255/K' (so R = C'*K'/255 on decode).
        cmyk = malloc((size_t)width * height * 4);
        if (!cmyk) { tjDestroy(handle); return -1; }
        for (size_t i = 0; i < (size_t)width * height; i++) {
            unsigned r = rgb[i * 3], g = rgb[i * 3 + 1], b = rgb[i * 3 + 2];
            unsigned k = r > g ? (r > b ? r : b) : (g > b ? g : b);
            cmyk[i * 4] = k ? (uint8_t)(r * 255 / k) : 0;
            cmyk[i * 4 + 1] = k ? (uint8_t)(g * 255 / k) : 0;
            cmyk[i * 4 + 2] = k ? (uint8_t)(b * 255 / k) : 0;
            cmyk[i * 4 + 3] = (uint8_t)k;
        }
        source = cmyk;
        pixel_format = TJPF_CMYK;
        subsampling = TJSAMP_444;
    }
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    int status = tjCompress2(handle, source, width, 0, height, pixel_format, &jpeg, &size, subsampling, quality, flags);
    free(cmyk);
    tjDestroy(handle);
    if (status != 0 || !jpeg) { if (jpeg) tjFree(jpeg); return -1; }
    *out = malloc(size);
    if (*out) { memcpy(*out, jpeg, size); *out_size = size; }
    tjFree(jpeg);
    return *out ? 0 : -1;
}

typedef struct { uint8_t *data; size_t size, capacity; int failed; } tco_buffer;

static void tco_png_write(png_structp png, png_bytep data, png_size_t length) {
    tco_buffer *buffer = png_get_io_ptr(png);
    if (buffer->failed) return;
    if (buffer->size + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 65536;
        while (capacity < buffer->size + length) capacity *= 2;
        uint8_t *grown = realloc(buffer->data, capacity);
        if (!grown) { buffer->failed = 1; return; }
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->data + buffer->size, data, length);
    buffer->size += length;
}

static void tco_png_flush(png_structp png) { (void)png; }

int tco_png_encode(const uint8_t *rgb, int width, int height, int bit_depth, int interlaced,
                   uint8_t **out, size_t *out_size) {
    *out = NULL;
    *out_size = 0;
    if (bit_depth != 8 && bit_depth != 16) return -1;
    size_t row_bytes = (size_t)width * 3 * (bit_depth / 8);
    // volatile: these are changed between setjmp and a possible longjmp.
    uint8_t *volatile samples = malloc(row_bytes * height);
    png_bytep *volatile rows = malloc(sizeof(png_bytep) * height);
    tco_buffer buffer = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!samples || !rows || !png || !info) goto failed;
    if (setjmp(png_jmpbuf(png))) goto failed;
    for (size_t i = 0; i < (size_t)width * height * 3; i++) {
        if (bit_depth == 8) {
            samples[i] = rgb[i];
        } else {  // big-endian, as PNG stores 16-bit samples
            samples[i * 2] = rgb[i];
            samples[i * 2 + 1] = rgb[i];
        }
    }
    for (int y = 0; y < height; y++) rows[y] = samples + row_bytes * y;
    png_set_write_fn(png, &buffer, tco_png_write, tco_png_flush);
    png_set_IHDR(png, info, width, height, bit_depth, PNG_COLOR_TYPE_RGB,
                 interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_image(png, rows);  // handles the interlace passes itself
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(rows);
    free(samples);
    if (buffer.failed) { free(buffer.data); return -1; }
    *out = buffer.data;
    *out_size = buffer.size;
    return 0;
failed:
    if (png) png_destroy_write_struct(&png, info ? &info : NULL);
    free(rows);
    free(samples);
    free(buffer.data);
    return -1;
}

int tco_gzip(const uint8_t *bytes, size_t count, uint8_t **out, size_t *out_size) {
    *out = NULL;
    *out_size = 0;
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -1;
    size_t capacity = deflateBound(&stream, count);
    uint8_t *buffer = malloc(capacity);
    if (!buffer) { deflateEnd(&stream); return -1; }
    stream.next_in = (Bytef *)bytes;
    stream.avail_in = (uInt)count;
    stream.next_out = buffer;
    stream.avail_out = (uInt)capacity;
    int status = deflate(&stream, Z_FINISH);
    size_t produced = stream.total_out;
    deflateEnd(&stream);
    if (status != Z_STREAM_END) { free(buffer); return -1; }
    *out = buffer;
    *out_size = produced;
    return 0;
}
