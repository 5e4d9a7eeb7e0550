// Face video decoding for the face scan: libavformat's `mov` demuxer and libavcodec's H.264 decoder read
// what phones record, and each frame kept becomes 8-bit grey (its luma plane), which is all a Haar cascade
// and the expression model look at. In C because libav's API is macros and pointer-heavy structs that
// Swift calls badly; this file is only glue, built like CAudioDecode's (docs/SECURITY.md, "Names and media
// from files and devices").
#include "mueval_video_decode.h"

#include "mueval_ffmpeg.h"
#include "mueval_media_input.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { INPUT_BLOCK = 65536 };

/// Past this, a timestamp is a damaged or hostile header, not a recording (eleven days).
static const double LATEST_TIME = 1e6;

struct mueval_video {
    /// FFmpeg's functions, loaded before anything else is done.
    const struct mueval_ffmpeg *ff;
    mueval_video_limits limits;
    int descriptor;
    AVIOContext *input;
    AVFormatContext *format;
    AVCodecContext *codec;
    AVPacket *packet;
    AVFrame *frame;
    int stream;
    double time_base;
    /// The first frame's timestamp: times count from it.
    int64_t first;
    double last_time;
    /// The time from which the next frame is kept.
    double due;
    int64_t kept;
    int flushing;
    int ended;
    uint8_t *grey;
    size_t grey_size;
    /// Limited-range luma (16…235) to full range, as OpenCV's conversion to BGR and back to grey gives it.
    uint8_t expand[256];
};

/// 8-bit YUV whose first plane is the luma, one byte a pixel: what H.264's 8-bit profiles decode to.
static int is_eight_bit_luma(enum AVPixelFormat format) {
    switch (format) {
    case AV_PIX_FMT_YUV420P: case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUV422P: case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUV444P: case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_NV12: case AV_PIX_FMT_GRAY8:
        return 1;
    default:
        return 0;
    }
}

void mueval_video_close(mueval_video *video) {
    if (!video) return;
    const struct mueval_ffmpeg *ff = video->ff;
    ff->avcodec_free_context(&video->codec);
    ff->avformat_close_input(&video->format);
    if (video->input) ff->av_freep(&video->input->buffer);
    ff->avio_context_free(&video->input);
    ff->av_frame_free(&video->frame);
    ff->av_packet_free(&video->packet);
    if (video->descriptor >= 0) close(video->descriptor);
    free(video->grey);
    free(video);
}

mueval_video *mueval_video_open(const char *path, mueval_video_limits limits, char *error, size_t error_size) {
    if (!(limits.samples_per_second > 0) || limits.max_width <= 0 || limits.max_height <= 0) {
        mueval_media_fail(error, error_size, "the face scan's limits are not positive", 0);
        return NULL;
    }
    const struct mueval_ffmpeg *ff = mueval_ffmpeg(error, error_size);
    if (!ff) return NULL;
    mueval_video *video = calloc(1, sizeof *video);
    if (!video) { mueval_media_fail(error, error_size, "out of memory", 0); return NULL; }
    video->ff = ff;
    video->limits = limits;
    video->first = AV_NOPTS_VALUE;
    for (int value = 0; value < 256; value++) {
        long full = lround((value - 16) * 255.0 / 219.0);
        video->expand[value] = (uint8_t)(full < 0 ? 0 : full > 255 ? 255 : full);
    }
    AVDictionary *options = NULL;
    int code;
    // Non-blocking: a FIFO put in the file's place is refused below, not waited on.
    if ((video->descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0) {
        mueval_media_fail(error, error_size, "cannot open the face video", AVERROR(errno));
        goto failed;
    }
    struct stat info;
    if (fstat(video->descriptor, &info) != 0 || !S_ISREG(info.st_mode)) {
        mueval_media_fail(error, error_size, "the face video is not a regular file", 0);
        goto failed;
    }
    const AVInputFormat *mov = ff->av_find_input_format("mov");
    video->packet = ff->av_packet_alloc();
    video->frame = ff->av_frame_alloc();
    uint8_t *buffer = ff->av_malloc(INPUT_BLOCK);
    if (!mov || !video->packet || !video->frame || !buffer
        || !(video->input = ff->avio_alloc_context(buffer, INPUT_BLOCK, 0, &video->descriptor, mueval_media_read, NULL, mueval_media_seek))) {
        if (!video->input) ff->av_free(buffer);
        mueval_media_fail(error, error_size, "out of memory (or libavformat without its mov demuxer)", 0);
        goto failed;
    }
    if (!(video->format = ff->avformat_alloc_context())) { mueval_media_fail(error, error_size, "out of memory", 0); goto failed; }
    video->format->pb = video->input;
    video->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    video->format->io_open = mueval_media_refuse_open;
    ff->av_dict_set(&options, "format_whitelist", "mov", 0);
    ff->av_dict_set(&options, "protocol_whitelist", "", 0);  // none at all
    ff->av_dict_set(&options, "codec_whitelist", "h264", 0);
    // The demuxer is named, never probed: bytes that look like a playlist are not MP4 and fail here.
    // On failure avformat_open_input frees the context (and leaves our AVIOContext to us).
    code = ff->avformat_open_input(&video->format, NULL, mov, &options);
    ff->av_dict_free(&options);
    if (code < 0) { mueval_media_fail(error, error_size, "cannot open the face video as MP4", code); goto failed; }

    // No avformat_find_stream_info: it would decode frames before the size below is checked. The MP4's
    // sample description already says the codec and the frame size.
    video->stream = -1;
    for (unsigned index = 0; index < video->format->nb_streams; index++) {
        if (video->format->streams[index]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) { video->stream = (int)index; break; }
    }
    if (video->stream < 0) { mueval_media_fail(error, error_size, "the face video holds no video stream", 0); goto failed; }
    AVStream *stream = video->format->streams[video->stream];
    AVCodecParameters *parameters = stream->codecpar;
    if (parameters->codec_id != AV_CODEC_ID_H264) {
        snprintf(error, error_size, "the face video is %s, not H.264 (muEval decodes H.264 face video only)",
                 ff->avcodec_get_name(parameters->codec_id));
        goto failed;
    }
    if (parameters->width <= 0 || parameters->height <= 0
        || parameters->width > limits.max_width || parameters->height > limits.max_height) {
        snprintf(error, error_size, "the face video's frames are %dx%d, beyond the %dx%d muEval decodes"
                 " (reports.face_max_width, reports.face_max_height)",
                 parameters->width, parameters->height, limits.max_width, limits.max_height);
        goto failed;
    }
    video->time_base = av_q2d(stream->time_base);
    if (!(video->time_base > 0)) { mueval_media_fail(error, error_size, "the face video's stream has no time base", 0); goto failed; }
    // Only this stream's packets are read: other tracks are discarded by the demuxer.
    for (unsigned index = 0; index < video->format->nb_streams; index++) {
        if ((int)index != video->stream) video->format->streams[index]->discard = AVDISCARD_ALL;
    }

    const AVCodec *decoder = ff->avcodec_find_decoder(AV_CODEC_ID_H264);
    if (!decoder || !(video->codec = ff->avcodec_alloc_context3(decoder))) {
        mueval_media_fail(error, error_size, "libavcodec has no H.264 decoder", 0);
        goto failed;
    }
    if ((code = ff->avcodec_parameters_to_context(video->codec, parameters)) < 0) {
        mueval_media_fail(error, error_size, "cannot start the face video's decoder", code);
        goto failed;
    }
    // The decoder refuses, before allocating, any frame (an in-band SPS may differ from the MP4's header) larger than allowed.
    video->codec->max_pixels = (int64_t)limits.max_width * limits.max_height;
    video->codec->thread_count = 1;
    ff->av_dict_set(&options, "codec_whitelist", "h264", 0);
    code = ff->avcodec_open2(video->codec, decoder, &options);
    ff->av_dict_free(&options);
    if (code < 0) { mueval_media_fail(error, error_size, "cannot start the face video's decoder", code); goto failed; }
    video->grey_size = (size_t)parameters->width * (size_t)parameters->height;
    if (!(video->grey = malloc(video->grey_size))) { mueval_media_fail(error, error_size, "out of memory", 0); goto failed; }
    return video;

failed:
    ff->av_dict_free(&options);
    mueval_video_close(video);
    return NULL;
}

static double monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/// Decodes the next frame into `video->frame`: 1 a frame, 0 the end, -1 an error.
static int decode(mueval_video *video, char *error, size_t error_size) {
    const struct mueval_ffmpeg *ff = video->ff;
    for (;;) {
        int code = ff->avcodec_receive_frame(video->codec, video->frame);
        if (code >= 0) return 1;
        if (code == AVERROR_EOF) return 0;
        // A damaged packet (a lost chunk's neighbour) is skipped, not fatal: the rest still decodes.
        if (code != AVERROR(EAGAIN) && code != AVERROR_INVALIDDATA) { mueval_media_fail(error, error_size, "cannot decode the face video", code); return -1; }
        if (video->flushing) return 0;
        code = ff->av_read_frame(video->format, video->packet);
        if (code < 0) {
            // The end, or a tail cut short (the phone's connection lost mid-fragment): what was read is the video.
            video->flushing = 1;
            code = ff->avcodec_send_packet(video->codec, NULL);
        } else if (video->packet->stream_index != video->stream) {
            ff->av_packet_unref(video->packet);
            continue;
        } else {
            code = ff->avcodec_send_packet(video->codec, video->packet);
            ff->av_packet_unref(video->packet);
        }
        if (code < 0 && code != AVERROR(EAGAIN) && code != AVERROR_EOF && code != AVERROR_INVALIDDATA) {
            mueval_media_fail(error, error_size, "cannot decode the face video", code);
            return -1;
        }
    }
}

int mueval_video_next(mueval_video *video, double *time, int *width, int *height, const uint8_t **pixels,
                      char *error, size_t error_size) {
    const struct mueval_ffmpeg *ff = video->ff;
    const double interval = 1.0 / video->limits.samples_per_second;
    while (!video->ended && video->kept < video->limits.max_samples) {
        int got = decode(video, error, error_size);
        if (got <= 0) {
            video->ended = 1;
            return got;
        }
        AVFrame *frame = video->frame;
        // Frames that are decoded but never kept (a video of a million frames at one timestamp) still take time.
        if (video->limits.deadline > 0 && monotonic_seconds() > video->limits.deadline) {
            ff->av_frame_unref(frame);
            mueval_media_fail(error, error_size, "the face video took longer to decode than the scan may run", 0);
            video->ended = 1;
            return -1;
        }
        int64_t timestamp = frame->best_effort_timestamp;
        double t;
        if (timestamp == AV_NOPTS_VALUE) {
            t = video->last_time;  // a frame without a time is taken to be where the previous one was
        } else {
            if (video->first == AV_NOPTS_VALUE) video->first = timestamp;
            t = ((double)timestamp - (double)video->first) * video->time_base;
        }
        if (!(t >= video->last_time)) t = video->last_time;  // never back (B-frames are reordered already; NaN too)
        if (t > LATEST_TIME) {
            ff->av_frame_unref(frame);
            snprintf(error, error_size, "the face video's timestamps run past %.0f s", LATEST_TIME);
            video->ended = 1;
            return -1;
        }
        video->last_time = t;
        if (t + 1e-6 < video->due) { ff->av_frame_unref(frame); continue; }
        while (video->due <= t + 1e-6) video->due += interval;

        if (frame->width <= 0 || frame->height <= 0 || frame->width > video->limits.max_width
            || frame->height > video->limits.max_height || !is_eight_bit_luma((enum AVPixelFormat)frame->format)) {
            const char *name = ff->av_get_pix_fmt_name((enum AVPixelFormat)frame->format);
            snprintf(error, error_size, "the face video has a %dx%d frame in %s (muEval decodes 8-bit YUV up to %dx%d)",
                     frame->width, frame->height, name ? name : "an unknown format", video->limits.max_width, video->limits.max_height);
            ff->av_frame_unref(frame);
            video->ended = 1;
            return -1;
        }
        size_t size = (size_t)frame->width * (size_t)frame->height;
        if (size > video->grey_size) {
            uint8_t *grown = realloc(video->grey, size);
            if (!grown) { ff->av_frame_unref(frame); mueval_media_fail(error, error_size, "out of memory", 0); video->ended = 1; return -1; }
            video->grey = grown;
            video->grey_size = size;
        }
        int full = frame->color_range == AVCOL_RANGE_JPEG || frame->format == AV_PIX_FMT_YUVJ420P
            || frame->format == AV_PIX_FMT_YUVJ422P || frame->format == AV_PIX_FMT_YUVJ444P || frame->format == AV_PIX_FMT_GRAY8;
        for (int row = 0; row < frame->height; row++) {
            const uint8_t *from = frame->data[0] + (ptrdiff_t)row * frame->linesize[0];
            uint8_t *to = video->grey + (size_t)row * (size_t)frame->width;
            if (full) {
                memcpy(to, from, (size_t)frame->width);
            } else {
                for (int column = 0; column < frame->width; column++) to[column] = video->expand[from[column]];
            }
        }
        *time = t;
        *width = frame->width;
        *height = frame->height;
        *pixels = video->grey;
        video->kept++;
        ff->av_frame_unref(frame);
        return 1;
    }
    return 0;
}
