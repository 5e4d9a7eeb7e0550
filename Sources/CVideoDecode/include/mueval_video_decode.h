#ifndef MUEVAL_VIDEO_DECODE_H
#define MUEVAL_VIDEO_DECODE_H

#include <stddef.h>
#include <stdint.h>

/// An open face video: H.264 in MP4 (fragmented or not), read through libavformat's `mov` demuxer alone.
typedef struct mueval_video mueval_video;

/// What is taken from the video, and the largest frame decoded at all.
typedef struct {
    /// Frames kept a second of video (the rest are decoded, since H.264 frames depend on each other, and dropped).
    double samples_per_second;
    /// After this many frames kept, the video counts as ended.
    int64_t max_samples;
    /// A frame wider or taller than this is refused before the decoder allocates for it.
    int max_width;
    int max_height;
    /// CLOCK_MONOTONIC seconds after which decoding stops with an error, however few frames are kept (0: none).
    double deadline;
} mueval_video_limits;

/// Opens the regular file at `path` (a FIFO or device is refused, never waited on) as MP4 and the first video
/// stream's H.264 decoder, and nothing else: no other demuxer, decoder or protocol, so a playlist or an MP4's
/// data references name files that are never opened. NULL on an error described in `error`.
mueval_video *mueval_video_open(const char *path, mueval_video_limits limits, char *error, size_t error_size);

/// The next frame kept: 1 with `time` (seconds from the first frame, never decreasing), `width`, `height` and
/// `pixels` (width × height bytes of 8-bit full-range grey, valid until the next call); 0 at the end (or after
/// `max_samples`); -1 on an error described in `error`, the deadline passed included.
int mueval_video_next(mueval_video *video, double *time, int *width, int *height, const uint8_t **pixels,
                      char *error, size_t error_size);

void mueval_video_close(mueval_video *video);

#endif
