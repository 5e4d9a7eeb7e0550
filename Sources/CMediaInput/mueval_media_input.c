// The file-reading glue both decoders use (CAudioDecode, CVideoDecode): one copy, so that what libavformat may
// open is decided in one place.
#include "mueval_media_input.h"

#include <libavformat/avformat.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int mueval_media_read(void *opaque, uint8_t *buffer, int size) {
    ssize_t got;
    do { got = read(*(int *)opaque, buffer, (size_t)size); } while (got < 0 && errno == EINTR);
    if (got < 0) return AVERROR(errno);
    return got == 0 ? AVERROR_EOF : (int)got;
}

int64_t mueval_media_seek(void *opaque, int64_t offset, int whence) {
    int descriptor = *(int *)opaque;
    if (whence == AVSEEK_SIZE) {
        struct stat info;
        return fstat(descriptor, &info) == 0 ? (int64_t)info.st_size : AVERROR(errno);
    }
    off_t position = lseek(descriptor, (off_t)offset, whence & ~AVSEEK_FORCE);
    return position < 0 ? AVERROR(errno) : (int64_t)position;
}

int mueval_media_refuse_open(AVFormatContext *format, AVIOContext **pb, const char *url, int flags, AVDictionary **options) {
    (void)format; (void)pb; (void)url; (void)flags; (void)options;
    return AVERROR(EPERM);
}

int mueval_media_fail(char *error, size_t size, const char *what, int code) {
    char reason[128] = "";
    if (code < 0) av_strerror(code, reason, sizeof reason);
    snprintf(error, size, "%s%s%s", what, reason[0] ? ": " : "", reason);
    return -1;
}
