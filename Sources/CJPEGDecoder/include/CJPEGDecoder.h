// One JPEG decode over libjpeg-turbo's libjpeg API, with every finding recorded.
//
// Why not TurboJPEG's tj* API for decoding: tjDecompressHeader3 leaves its handle mid-stream after a fatal error
// (its setjmp path returns without jpeg_abort_decompress), so a pooled handle poisons the next image; it returns -1
// for a mere warning; and libjpeg's default emit_message keeps only the first warning of a read, so a damaging
// warning after a harmless one is never seen. Here each decoder reads one image, is never reused, records every
// warning with its libjpeg code, and keeps libjpeg's setjmp/longjmp inside this file: no jump crosses a Swift frame.
//
// Thread-safety: a decoder belongs to one caller at a time; decoders on different threads share nothing.
#ifndef TILECACHE_CJPEGDECODER_H
#define TILECACHE_CJPEGDECODER_H
#include <stddef.h>
#include <stdint.h>

/// Longest message kept (libjpeg's JMSG_LENGTH_MAX).
#define TCJ_MESSAGE_LENGTH 200
/// Distinct warnings kept per decode, in order of first appearance (`findings_seen` covers the rest).
#define TCJ_MAX_RECORDED_WARNINGS 8
/// More scans than this in a progressive JPEG is refused (a decode-time bomb; TurboJPEG's TJFLAG_LIMITSCANS limit).
#define TCJ_MAX_SCANS 500

/// What a libjpeg warning says about the image: a fact about the code, not a verdict (ImageCore decides).
typedef enum {
    /// The data ended before the image did (JWRN_JPEG_EOF): libjpeg inserted an end marker.
    TCJ_FINDING_DATA_ENDED = 1,
    /// Bytes that belong to no segment before a header marker (JWRN_EXTRANEOUS_DATA while reading the header):
    /// junk between segments, pixels unaffected.
    TCJ_FINDING_JUNK_IN_HEADER = 2,
    /// A metadata segment libjpeg ignored (unknown JFIF version, Adobe transform code, bad ICC marker): pixels unaffected.
    TCJ_FINDING_METADATA = 3,
    /// Damaged entropy-coded data or scan structure (bad Huffman code, premature end of a segment, lost restart
    /// marker, inconsistent progression, and bytes left over before a marker once a scan decoded, which is what a
    /// desynchronised decode leaves): pixels are wrong.
    TCJ_FINDING_DAMAGED_DATA = 4,
} tcj_finding;

/// Why a decode stopped.
typedef enum {
    TCJ_ERROR_NONE = 0,
    /// The frame header declares a zero width or height (JERR_EMPTY_IMAGE).
    TCJ_ERROR_EMPTY_IMAGE = 1,
    /// A progressive JPEG with more than TCJ_MAX_SCANS scans.
    TCJ_ERROR_TOO_MANY_SCANS = 2,
    /// Out of memory while setting up or decoding.
    TCJ_ERROR_OUT_OF_MEMORY = 3,
    /// The call was made in the wrong order (a programming error on the Swift side).
    TCJ_ERROR_MISUSE = 4,
    /// Any other fatal libjpeg error (bad marker, bad table, unsupported feature, ...).
    TCJ_ERROR_OTHER = 5,
    /// A frame libjpeg-turbo (8-bit build) does not decode, refused from its header alone: a process other than
    /// baseline, extended or progressive DCT (JERR_SOF_UNSUPPORTED: lossless SOF3/7/11/15, hierarchical SOF5/6/13/14,
    /// the reserved JPG marker; `frame_marker` says which), or a sample precision other than 8 (JERR_BAD_PRECISION;
    /// `precision` says which). ImageCore decides which of these are valid JPEGs it does not support.
    TCJ_ERROR_UNSUPPORTED_FRAME = 6,
} tcj_error;

/// Everything libjpeg reported during one decoder's life.
typedef struct {
    /// Why the decoder stopped, TCJ_ERROR_NONE while it has not.
    tcj_error error;
    /// libjpeg's message for the fatal error.
    char error_message[TCJ_MESSAGE_LENGTH];
    /// Whether the fatal error came while reading the header (before the first scan's data).
    int error_in_header;
    /// For TCJ_ERROR_UNSUPPORTED_FRAME: the SOF marker's code (0xC3 for SOF3), 0 when the precision was refused.
    int frame_marker;
    /// For TCJ_ERROR_UNSUPPORTED_FRAME: the sample precision the frame header declares, 0 when the process was refused.
    int precision;
    /// Distinct warnings recorded below.
    int recorded_count;
    tcj_finding recorded_findings[TCJ_MAX_RECORDED_WARNINGS];
    char recorded_messages[TCJ_MAX_RECORDED_WARNINGS][TCJ_MESSAGE_LENGTH];
    /// Every kind of finding among all warnings, recorded or not: bit (1 << finding) is set once one was seen.
    unsigned findings_seen;
} tcj_diagnostics;

/// The colour space the file declares.
typedef enum {
    TCJ_COLOR_UNKNOWN = 0, TCJ_COLOR_GRAY = 1, TCJ_COLOR_RGB = 2, TCJ_COLOR_YCBCR = 3, TCJ_COLOR_CMYK = 4, TCJ_COLOR_YCCK = 5,
} tcj_color_space;

/// What the header says.
typedef struct {
    int width;
    int height;
    tcj_color_space color_space;
    /// Whether an Adobe APP14 marker was seen: CMYK/YCCK samples are then stored inverted (255 = no ink).
    int adobe_marker;
} tcj_header;

/// What to decode to: one byte per pixel, RGB, or CMYK as stored (Adobe files store it inverted).
typedef enum { TCJ_PIXELS_GRAY = 1, TCJ_PIXELS_RGB = 3, TCJ_PIXELS_CMYK = 4 } tcj_pixel_format;

typedef struct tcj_decoder tcj_decoder;

/// A decoder over `size` bytes at `data`, which must stay valid and unchanged until tcj_decoder_destroy.
/// Returns NULL only when out of memory. Nothing is read yet.
tcj_decoder *tcj_decoder_create(const uint8_t *data, size_t size);

/// For a decode that is no verdict (a variant of an original validated when stored, `tilecache thumbnail`'s lenient
/// decode, whose warnings are dropped): hands libjpeg all the bytes at once, so that
/// libjpeg-turbo decodes Huffman codes on its fast path (thumbnails of the test photos at 128 px: 6-8% less time). The
/// pixels of sound data are the same; an invalid code decodes as zero there without the warning the slow path gives,
/// so a decode that judges the bytes must not be trusted. Only before the header is read (ignored afterwards).
void tcj_decoder_trust(tcj_decoder *decoder);

/// Frees the decoder and everything libjpeg allocated for it. NULL is allowed.
void tcj_decoder_destroy(tcj_decoder *decoder);

/// Reads the header (every marker up to the first scan). Returns 0 and fills `header`, or -1 (see diagnostics).
/// Call once, first.
int tcj_read_header(tcj_decoder *decoder, tcj_header *header);

/// The output size of a decode scaled by scale_num/scale_denom (libjpeg-turbo's DCT scaling: n/8 for n = 1...16).
/// Returns 0, or -1 when the header has not been read.
int tcj_output_size(tcj_decoder *decoder, int scale_num, int scale_denom, int *width, int *height);

/// Decodes every scan into `pixels` (rows of width*format bytes, packed), scaled as tcj_output_size says; `capacity`
/// must be exactly that size (a misuse error otherwise). Returns 0 when libjpeg delivered every row, so every byte
/// of `pixels` is written (warnings may have been recorded), or -1 on a fatal error.
/// Call once, after tcj_read_header.
int tcj_decode(tcj_decoder *decoder, int scale_num, int scale_denom, tcj_pixel_format format,
               uint8_t *pixels, size_t capacity);

/// The TIFF data of the first APP1 segment that starts with "Exif\0\0" (the bytes after those six), or NULL and 0
/// when there is none. Call between tcj_read_header and tcj_decode: the bytes live in libjpeg's per-image memory,
/// which the decode frees when it finishes.
void tcj_exif(const tcj_decoder *decoder, const uint8_t **data, size_t *length);

/// The embedded ICC profile, reassembled from its APP2 chunks, in a buffer the caller frees with free(); NULL and 0
/// when there is none or its chunks are damaged (a recorded warning). Returns 0, or -1 on a fatal error (out of
/// memory) or when called outside the window between tcj_read_header and tcj_decode.
int tcj_icc_profile(tcj_decoder *decoder, uint8_t **data, unsigned *length);

/// What libjpeg reported so far.
const tcj_diagnostics *tcj_decoder_diagnostics(const tcj_decoder *decoder);

#endif
