#ifndef MUEVAL_AUDIO_DECODE_H
#define MUEVAL_AUDIO_DECODE_H

#include <stddef.h>
#include <stdint.h>

/// Receives decoded audio: 16 kHz mono signed 16-bit samples, `count` of them. Returns 0 to go on,
/// anything else to stop decoding (cancellation).
typedef int (*mueval_audio_block)(void *context, const int16_t *samples, size_t count);

/// The containers muevald accepts audio in (docs/PROTOCOL.md, Media).
typedef enum {
    MUEVAL_AUDIO_WAV,
    /// MP4 and M4A (fragmented or not), through libavformat's `mov` demuxer.
    MUEVAL_AUDIO_MP4,
} mueval_audio_container;

/// Decodes the first audio stream of the file at `path` to 16 kHz mono, handing the samples to
/// `block` in pieces. The file is read as `container` and nothing else: only that demuxer, only PCM
/// and AAC decoders, and no protocol (a playlist's or reference's other files are refused).
/// `duration` gets the container's duration in seconds (0 when it does not say) before the first
/// block. Returns 0 when the whole file was decoded, 1 when `block` stopped it, -1 on an error
/// described in `error`.
int mueval_decode_audio(const char *path, mueval_audio_container container, mueval_audio_block block, void *context,
                        double *duration, char *error, size_t error_size);

#endif
