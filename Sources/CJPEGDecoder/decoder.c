#include "CJPEGDecoder.h"
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

typedef enum { STAGE_CREATED, STAGE_HEADER_READ, STAGE_DONE } stage;

/// Bytes handed to libjpeg at a time. libjpeg-turbo decodes Huffman codes on a fast path whenever its input buffer
/// holds at least 512 bytes per block of an MCU, and that path turns an invalid code into a zero without a warning;
/// its slow path warns ("Corrupt JPEG data: bad Huffman code"). Feeding at most 256 bytes at a time keeps every
/// decode on the slow path, so damaged data is found wherever it is, not only where the buffer happens to run low.
#define TCJ_CHUNK_BYTES 256

struct tcj_decoder {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    struct jpeg_progress_mgr progress;
    struct jpeg_source_mgr source;
    size_t consumed;       // bytes of `data` handed to libjpeg so far
    size_t chunk;          // bytes handed at a time: TCJ_CHUNK_BYTES, or all of them for trusted bytes
    jmp_buf jump;
    int created;           // jpeg_create_decompress succeeded
    stage stage;
    JSAMPROW *rows;        // row pointers of the decode in progress (freed by destroy, also after a longjmp)
    const uint8_t *data;
    size_t size;
    tcj_diagnostics diagnostics;
};

/// What warning `code` means; `in_header`: it came while reading the markers before the first scan.
static tcj_finding finding_of(int code, int in_header) {
    switch (code) {
    case JWRN_JPEG_EOF: return TCJ_FINDING_DATA_ENDED;
    case JWRN_EXTRANEOUS_DATA: return in_header ? TCJ_FINDING_JUNK_IN_HEADER : TCJ_FINDING_DAMAGED_DATA;
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC: return TCJ_FINDING_METADATA;
    default: return TCJ_FINDING_DAMAGED_DATA;
    }
}

static void stop(tcj_decoder *decoder, tcj_error error, const char *message) {
    tcj_diagnostics *diagnostics = &decoder->diagnostics;
    diagnostics->error = error;
    diagnostics->error_in_header = decoder->stage == STAGE_CREATED;
    snprintf(diagnostics->error_message, TCJ_MESSAGE_LENGTH, "%s", message);
    decoder->stage = STAGE_DONE;
    longjmp(decoder->jump, 1);
}

/// libjpeg's fatal-error hook: record, then jump back to the entry point's setjmp (never returns to libjpeg).
static void on_error(j_common_ptr common) {
    tcj_decoder *decoder = (tcj_decoder *)common->client_data;
    char message[JMSG_LENGTH_MAX];
    (*common->err->format_message)(common, message);
    int code = common->err->msg_code;
    tcj_error error = code == JERR_EMPTY_IMAGE ? TCJ_ERROR_EMPTY_IMAGE
                    : code == JERR_OUT_OF_MEMORY ? TCJ_ERROR_OUT_OF_MEMORY : TCJ_ERROR_OTHER;
    // Both carry their number in the message's first parameter (ERREXIT1): the marker, or the precision.
    if (code == JERR_SOF_UNSUPPORTED) {
        error = TCJ_ERROR_UNSUPPORTED_FRAME;
        decoder->diagnostics.frame_marker = common->err->msg_parm.i[0];
    } else if (code == JERR_BAD_PRECISION) {
        error = TCJ_ERROR_UNSUPPORTED_FRAME;
        decoder->diagnostics.precision = common->err->msg_parm.i[0];
    }
    stop(decoder, error, message);
}

/// libjpeg's message hook: every warning (level < 0) is classified and recorded once; trace messages are dropped.
/// (libjpeg's default shows only the first warning of a read.)
static void on_message(j_common_ptr common, int level) {
    if (level >= 0) return;
    tcj_decoder *decoder = (tcj_decoder *)common->client_data;
    tcj_diagnostics *diagnostics = &decoder->diagnostics;
    common->err->num_warnings++;
    tcj_finding finding = finding_of(common->err->msg_code, decoder->stage == STAGE_CREATED);
    diagnostics->findings_seen |= 1u << finding;
    char message[JMSG_LENGTH_MAX];
    (*common->err->format_message)(common, message);
    for (int index = 0; index < diagnostics->recorded_count; index++) {
        if (strcmp(diagnostics->recorded_messages[index], message) == 0) return;
    }
    if (diagnostics->recorded_count == TCJ_MAX_RECORDED_WARNINGS) return;
    diagnostics->recorded_findings[diagnostics->recorded_count] = finding;
    snprintf(diagnostics->recorded_messages[diagnostics->recorded_count], TCJ_MESSAGE_LENGTH, "%s", message);
    diagnostics->recorded_count++;
}

/// Never print: messages are recorded by on_message and on_error.
static void on_output(j_common_ptr common) { (void)common; }

/// Called between passes and scans: refuses a progressive image with too many scans before it costs much.
static void on_progress(j_common_ptr common) {
    if (!common->is_decompressor) return;
    j_decompress_ptr info = (j_decompress_ptr)common;
    if (info->input_scan_number > TCJ_MAX_SCANS) {
        char message[TCJ_MESSAGE_LENGTH];
        snprintf(message, sizeof message, "Progressive JPEG image has more than %d scans", TCJ_MAX_SCANS);
        stop((tcj_decoder *)common->client_data, TCJ_ERROR_TOO_MANY_SCANS, message);
    }
}

static void source_init(j_decompress_ptr info) { (void)info; }

/// Hands libjpeg the next chunk; past the end, a fake EOI marker with a "Premature end of JPEG file" warning, as
/// libjpeg's own memory source does.
static boolean source_fill(j_decompress_ptr info) {
    static const JOCTET end_of_image[2] = { 0xFF, JPEG_EOI };
    tcj_decoder *decoder = (tcj_decoder *)info->client_data;
    if (decoder->consumed >= decoder->size) {
        WARNMS(info, JWRN_JPEG_EOF);
        decoder->source.next_input_byte = end_of_image;
        decoder->source.bytes_in_buffer = 2;
        return TRUE;
    }
    size_t count = decoder->size - decoder->consumed;
    if (count > decoder->chunk) count = decoder->chunk;
    decoder->source.next_input_byte = decoder->data + decoder->consumed;
    decoder->source.bytes_in_buffer = count;
    decoder->consumed += count;
    return TRUE;
}

static void source_skip(j_decompress_ptr info, long count) {
    if (count <= 0) return;
    struct jpeg_source_mgr *source = info->src;
    while ((size_t)count > source->bytes_in_buffer) {
        count -= (long)source->bytes_in_buffer;
        (void)source_fill(info);  // never suspends: past the end it repeats the fake EOI
    }
    source->next_input_byte += count;
    source->bytes_in_buffer -= (size_t)count;
}

static void source_term(j_decompress_ptr info) { (void)info; }

void tcj_decoder_trust(tcj_decoder *decoder) {
    if (decoder->consumed == 0) decoder->chunk = SIZE_MAX;
}

tcj_decoder *tcj_decoder_create(const uint8_t *data, size_t size) {
    tcj_decoder *decoder = calloc(1, sizeof(tcj_decoder));
    if (!decoder) return NULL;
    decoder->data = data;
    decoder->size = size;
    decoder->chunk = TCJ_CHUNK_BYTES;
    decoder->stage = STAGE_CREATED;
    decoder->info.err = jpeg_std_error(&decoder->errors);
    decoder->errors.error_exit = on_error;
    decoder->errors.emit_message = on_message;
    decoder->errors.output_message = on_output;
    decoder->info.client_data = decoder;
    if (setjmp(decoder->jump)) {
        // jpeg_create_decompress ran out of memory; destroying what it made is safe at any point.
        jpeg_destroy_decompress(&decoder->info);
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->info);  // zeroes every field but err and client_data
    decoder->created = 1;
    jpeg_save_markers(&decoder->info, JPEG_APP0 + 1, 0xFFFF);  // APP1: EXIF
    jpeg_save_markers(&decoder->info, JPEG_APP0 + 2, 0xFFFF);  // APP2: ICC profile chunks
    decoder->progress.progress_monitor = on_progress;
    decoder->info.progress = &decoder->progress;
    decoder->source.init_source = source_init;
    decoder->source.fill_input_buffer = source_fill;
    decoder->source.skip_input_data = source_skip;
    decoder->source.resync_to_restart = jpeg_resync_to_restart;
    decoder->source.term_source = source_term;
    decoder->info.src = &decoder->source;
    return decoder;
}

void tcj_decoder_destroy(tcj_decoder *decoder) {
    if (!decoder) return;
    if (decoder->created) jpeg_destroy_decompress(&decoder->info);
    free(decoder->rows);
    free(decoder);
}

static tcj_color_space color_space_of(J_COLOR_SPACE space) {
    switch (space) {
    case JCS_GRAYSCALE: return TCJ_COLOR_GRAY;
    case JCS_RGB: return TCJ_COLOR_RGB;
    case JCS_YCbCr: return TCJ_COLOR_YCBCR;
    case JCS_CMYK: return TCJ_COLOR_CMYK;
    case JCS_YCCK: return TCJ_COLOR_YCCK;
    default: return TCJ_COLOR_UNKNOWN;
    }
}

int tcj_read_header(tcj_decoder *decoder, tcj_header *header) {
    if (decoder->stage != STAGE_CREATED) {
        if (decoder->diagnostics.error == TCJ_ERROR_NONE) {
            decoder->diagnostics.error = TCJ_ERROR_MISUSE;
            snprintf(decoder->diagnostics.error_message, TCJ_MESSAGE_LENGTH, "tcj_read_header called twice");
        }
        return -1;
    }
    if (setjmp(decoder->jump)) return -1;
    if (decoder->size == 0) ERREXIT(&decoder->info, JERR_INPUT_EMPTY);
    jpeg_read_header(&decoder->info, TRUE);
    decoder->stage = STAGE_HEADER_READ;
    header->width = (int)decoder->info.image_width;
    header->height = (int)decoder->info.image_height;
    header->color_space = color_space_of(decoder->info.jpeg_color_space);
    header->adobe_marker = decoder->info.saw_Adobe_marker ? 1 : 0;
    return 0;
}

static int require_header(tcj_decoder *decoder, const char *function) {
    if (decoder->stage == STAGE_HEADER_READ) return 0;
    if (decoder->diagnostics.error == TCJ_ERROR_NONE) {
        decoder->diagnostics.error = TCJ_ERROR_MISUSE;
        snprintf(decoder->diagnostics.error_message, TCJ_MESSAGE_LENGTH, "%s called before tcj_read_header or after a decode",
                 function);
    }
    return -1;
}

int tcj_output_size(tcj_decoder *decoder, int scale_num, int scale_denom, int *width, int *height) {
    if (require_header(decoder, "tcj_output_size") != 0) return -1;
    if (setjmp(decoder->jump)) return -1;
    decoder->info.scale_num = (unsigned int)scale_num;
    decoder->info.scale_denom = (unsigned int)scale_denom;
    jpeg_calc_output_dimensions(&decoder->info);
    *width = (int)decoder->info.output_width;
    *height = (int)decoder->info.output_height;
    return 0;
}

int tcj_decode(tcj_decoder *decoder, int scale_num, int scale_denom, tcj_pixel_format format,
               uint8_t *pixels, size_t capacity) {
    if (require_header(decoder, "tcj_decode") != 0) return -1;
    if (setjmp(decoder->jump)) return -1;
    struct jpeg_decompress_struct *info = &decoder->info;
    info->scale_num = (unsigned int)scale_num;
    info->scale_denom = (unsigned int)scale_denom;
    info->out_color_space = format == TCJ_PIXELS_GRAY ? JCS_GRAYSCALE : format == TCJ_PIXELS_CMYK ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(info);
    size_t stride = (size_t)info->output_width * (size_t)info->output_components;
    if (info->output_components != (int)format) stop(decoder, TCJ_ERROR_MISUSE, "output components differ from the format");
    // Exactly the output's size: the caller counts on every byte being written.
    if (stride * info->output_height != capacity) stop(decoder, TCJ_ERROR_MISUSE, "pixel buffer size differs from the output size");
    decoder->rows = malloc(sizeof(JSAMPROW) * info->output_height);
    if (!decoder->rows) stop(decoder, TCJ_ERROR_OUT_OF_MEMORY, "Insufficient memory for row pointers");
    for (JDIMENSION row = 0; row < info->output_height; row++) decoder->rows[row] = pixels + row * stride;
    while (info->output_scanline < info->output_height) {
        jpeg_read_scanlines(info, decoder->rows + info->output_scanline, info->output_height - info->output_scanline);
    }
    jpeg_finish_decompress(info);
    decoder->stage = STAGE_DONE;
    return 0;
}

void tcj_exif(const tcj_decoder *decoder, const uint8_t **data, size_t *length) {
    *data = NULL;
    *length = 0;
    if (decoder->stage != STAGE_HEADER_READ) return;
    for (jpeg_saved_marker_ptr marker = decoder->info.marker_list; marker; marker = marker->next) {
        if (marker->marker == JPEG_APP0 + 1 && marker->data_length >= 6 && memcmp(marker->data, "Exif\0\0", 6) == 0) {
            *data = marker->data + 6;
            *length = marker->data_length - 6;
            return;
        }
    }
}

int tcj_icc_profile(tcj_decoder *decoder, uint8_t **data, unsigned *length) {
    *data = NULL;
    *length = 0;
    if (require_header(decoder, "tcj_icc_profile") != 0) return -1;
    if (setjmp(decoder->jump)) return -1;
    JOCTET *profile = NULL;
    unsigned int size = 0;
    // A damaged chunk sequence is a warning (JWRN_BOGUS_ICC, recorded) and no profile.
    if (jpeg_read_icc_profile(&decoder->info, &profile, &size)) {
        *data = profile;
        *length = size;
    }
    return 0;
}

const tcj_diagnostics *tcj_decoder_diagnostics(const tcj_decoder *decoder) { return &decoder->diagnostics; }
