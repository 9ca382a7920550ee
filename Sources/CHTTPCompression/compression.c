// HTTP content codings of the service's text responses (JSON, HTML, JS, CSS): gzip through zlib, br through Debian's
// libbrotlienc. One-shot: the bodies are small and whole.
#include "httpcompression.h"

#include <brotli/encode.h>
#include <zlib.h>

size_t tc_gzip_bound(size_t length) {
    // deflateBound for the default window and memory level, plus the gzip header and trailer (18 bytes).
    return length + (length >> 12) + (length >> 14) + (length >> 25) + 13 + 18;
}

int tc_gzip(const uint8_t *input, size_t length, uint8_t *output, size_t *output_length, int level) {
    z_stream stream = {0};
    int status = deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // 15 + 16: gzip wrapper
    if (status != Z_OK) return status == 0 ? Z_STREAM_ERROR : status;
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)length;
    stream.next_out = output;
    stream.avail_out = (uInt)*output_length;
    if ((size_t)stream.avail_in != length || (size_t)stream.avail_out != *output_length) {
        deflateEnd(&stream);
        return Z_BUF_ERROR;  // more than 4 GiB: not a text response
    }
    status = deflate(&stream, Z_FINISH);
    *output_length = stream.total_out;
    int ended = deflateEnd(&stream);
    if (status != Z_STREAM_END) return status == Z_OK ? Z_BUF_ERROR : status;
    return ended == Z_OK ? 0 : ended;
}

size_t tc_brotli_bound(size_t length) {
    return BrotliEncoderMaxCompressedSize(length);
}

int tc_brotli(const uint8_t *input, size_t length, uint8_t *output, size_t *output_length, int quality) {
    return BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, length, input, output_length, output) == BROTLI_TRUE;
}
