// The file-reading glue both decoders use (CAudioDecode, CVideoDecode): one copy, so that what libavformat may
// open is decided in one place; and FFmpeg's libraries, loaded when a decoder first runs.
#include "mueval_media_input.h"

#include "mueval_ffmpeg.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

// FFmpeg is loaded at first use rather than linked: linked, muevald mapped libavformat's dependency tree (librsvg,
// gnutls, x264, x265… ~140 libraries, 22 MB resident) at start, whether or not it ever decoded a file.

enum { AVUTIL, SWRESAMPLE, AVCODEC, AVFORMAT, LIBRARIES };

/// The sonames of the headers this file is compiled against: a build against another FFmpeg loads its own.
static const struct { const char *name; int major; } libraries[LIBRARIES] = {
    [AVUTIL] = { "avutil", LIBAVUTIL_VERSION_MAJOR },
    [SWRESAMPLE] = { "swresample", LIBSWRESAMPLE_VERSION_MAJOR },
    [AVCODEC] = { "avcodec", LIBAVCODEC_VERSION_MAJOR },
    [AVFORMAT] = { "avformat", LIBAVFORMAT_VERSION_MAJOR },
};

#define MUEVAL_FFMPEG_ENTRY(library, name) { library, #name, offsetof(struct mueval_ffmpeg, name) },
static const struct { int library; const char *name; size_t offset; } functions[] = {
    MUEVAL_FFMPEG_FUNCTIONS(MUEVAL_FFMPEG_ENTRY)
};
#undef MUEVAL_FFMPEG_ENTRY

/// Filled under `lock`; read without it once `loaded` was seen set under it (by the decoders, after mueval_ffmpeg).
static struct mueval_ffmpeg ffmpeg;
static int loaded;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int mueval_media_open_library(const char *name, int major, void **handle, char *error, size_t size) {
    char soname[64];
    snprintf(soname, sizeof soname, "lib%s.so.%d", name, major);
    // RTLD_LOCAL: FFmpeg's symbols (and its dependencies') stay out of the process's global namespace.
    if ((*handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL))) return 0;
    const char *reason = dlerror();
    // Debian names FFmpeg's packages after the soname (libavformat.so.59 is in libavformat59).
    snprintf(error, size, "FFmpeg's %s could not be loaded: %s; install lib%s%d", soname, reason ? reason : "no reason given",
             name, major);
    return -1;
}

/// Loads the libraries and fills `ffmpeg`; on failure closes what it opened, so that the next call tries anew.
static int load(char *error, size_t size) {
    void *handles[LIBRARIES] = { NULL };
    struct mueval_ffmpeg table;
    int library = 0;
    for (; library < LIBRARIES; library++) {
        if (mueval_media_open_library(libraries[library].name, libraries[library].major, &handles[library], error, size) != 0) goto failed;
    }
    for (size_t index = 0; index < sizeof functions / sizeof functions[0]; index++) {
        void *function = dlsym(handles[functions[index].library], functions[index].name);
        if (!function) {
            snprintf(error, size, "FFmpeg's lib%s.so.%d has no %s (a build against other FFmpeg headers than this one's)",
                     libraries[functions[index].library].name, libraries[functions[index].library].major, functions[index].name);
            library = LIBRARIES;
            goto failed;
        }
        // A function pointer through void *: what dlsym returns, which POSIX guarantees to convert.
        memcpy((char *)&table + functions[index].offset, &function, sizeof function);
    }
    ffmpeg = table;
    return 0;

failed:
    while (library-- > 0) if (handles[library]) dlclose(handles[library]);
    return -1;
}

const struct mueval_ffmpeg *mueval_ffmpeg(char *error, size_t size) {
    pthread_mutex_lock(&lock);
    int result = loaded ? 0 : load(error, size);
    if (result == 0) loaded = 1;
    pthread_mutex_unlock(&lock);
    return result == 0 ? &ffmpeg : NULL;
}

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
    // A negative code comes from FFmpeg (or AVERROR(errno)) after mueval_ffmpeg succeeded in this thread.
    if (code < 0 && ffmpeg.av_strerror) ffmpeg.av_strerror(code, reason, sizeof reason);
    snprintf(error, size, "%s%s%s", what, reason[0] ? ": " : "", reason);
    return -1;
}
