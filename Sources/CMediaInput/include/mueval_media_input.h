// What the audio and the video decoder share: FFmpeg's libraries, loaded at first use (mueval_ffmpeg.h), and the
// callbacks through which libavformat reads a phone's file over a descriptor, never a URL, and opens nothing else
// (docs/SECURITY.md, "Names and media from files and devices").
#ifndef MUEVAL_MEDIA_INPUT_H
#define MUEVAL_MEDIA_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct AVFormatContext;
struct AVIOContext;
struct AVDictionary;

/// Opens FFmpeg's lib`name`.so.`major` (dlopen) into `handle`: 0, or -1 with "FFmpeg's libavformat.so.59 could not
/// be loaded: …; install libavformat59" in `error`. The decoders' loading (mueval_ffmpeg.h) opens each library so;
/// public for the test of that message, with a major no FFmpeg has.
int mueval_media_open_library(const char *name, int major, void **handle, char *error, size_t size);

/// AVIOContext's read callback; `opaque` points to the descriptor (an int).
int mueval_media_read(void *opaque, uint8_t *buffer, int size);
/// AVIOContext's seek callback, AVSEEK_SIZE included; `opaque` points to the descriptor.
int64_t mueval_media_seek(void *opaque, int64_t offset, int whence);
/// AVFormatContext's io_open: what a demuxer would open besides the file (a playlist's segments, an MP4's
/// data references) is refused.
int mueval_media_refuse_open(struct AVFormatContext *format, struct AVIOContext **pb, const char *url, int flags,
                             struct AVDictionary **options);
/// Writes "what: libav's reason for code" (just `what` when code is not negative) into error; returns -1.
int mueval_media_fail(char *error, size_t size, const char *what, int code);

#endif
