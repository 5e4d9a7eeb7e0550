// Audio decoding for the recogniser: libavformat/libavcodec read what phones record (PCM WAV, AAC
// in MP4) and libswresample turns it into the 16 kHz mono 16-bit PocketSphinx expects. In C because
// libav's API is macros and pointer-heavy structs that Swift calls badly; this file is only glue.
#include "mueval_audio_decode.h"

#include "mueval_ffmpeg.h"
#include "mueval_media_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OUTPUT_RATE = 16000, OUTPUT_BLOCK = 8192, INPUT_BLOCK = 65536 };

/// The decoders of what the protocol accepts (docs/PROTOCOL.md, Media): linear PCM in WAV, AAC in MP4.
/// Nothing else is opened, not even while libavformat looks at the streams.
static const char *const DECODERS = "pcm_u8,pcm_s16le,pcm_s24le,pcm_s32le,pcm_f32le,pcm_f64le,aac";

/// The one demuxer of each container: never probed, so a file cannot choose another (an HLS playlist
/// calling itself WAV would otherwise open the HLS demuxer, and through it any file or URL).
static const char *demuxer(mueval_audio_container container) {
    switch (container) {
    case MUEVAL_AUDIO_WAV: return "wav";
    case MUEVAL_AUDIO_MP4: return "mov";
    }
    return NULL;
}

/// Converts and delivers what `frame` holds (NULL: what the resampler still buffers).
static int deliver(const struct mueval_ffmpeg *ff, SwrContext *resampler, const AVFrame *frame, int16_t *out, mueval_audio_block block, void *context) {
    const uint8_t **input = frame ? (const uint8_t **)frame->extended_data : NULL;
    int count = frame ? frame->nb_samples : 0;
    do {
        uint8_t *output = (uint8_t *)out;
        int converted = ff->swr_convert(resampler, &output, OUTPUT_BLOCK, input, count);
        if (converted < 0) return converted;
        if (converted > 0 && block(context, out, (size_t)converted) != 0) return 1;
        if (converted < OUTPUT_BLOCK) break;
        input = NULL;
        count = 0;
    } while (1);
    return 0;
}

int mueval_decode_audio(const char *path, mueval_audio_container container, mueval_audio_block block, void *context,
                        double *duration, char *error, size_t error_size) {
    *duration = 0;
    const struct mueval_ffmpeg *ff = mueval_ffmpeg(error, error_size);
    if (!ff) return -1;
    AVFormatContext *format = NULL;
    AVIOContext *input = NULL;
    AVDictionary *options = NULL;
    AVCodecContext *codec = NULL;
    SwrContext *resampler = NULL;
    AVPacket *packet = ff->av_packet_alloc();
    AVFrame *frame = ff->av_frame_alloc();
    int16_t *out = ff->av_malloc(OUTPUT_BLOCK * sizeof(int16_t));
    int descriptor = -1;
    int result = 0, code;
    if (!packet || !frame || !out) { result = mueval_media_fail(error, error_size, "out of memory", 0); goto done; }

    const char *name = demuxer(container);
    const AVInputFormat *input_format = name ? ff->av_find_input_format(name) : NULL;
    if (!input_format) { result = mueval_media_fail(error, error_size, "no demuxer for this container", 0); goto done; }
    if ((descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
        result = mueval_media_fail(error, error_size, "cannot open the audio", AVERROR(errno));
        goto done;
    }
    uint8_t *buffer = ff->av_malloc(INPUT_BLOCK);
    if (!buffer || !(input = ff->avio_alloc_context(buffer, INPUT_BLOCK, 0, &descriptor, mueval_media_read, NULL, mueval_media_seek))) {
        ff->av_free(buffer);
        result = mueval_media_fail(error, error_size, "out of memory", 0);
        goto done;
    }
    if (!(format = ff->avformat_alloc_context())) { result = mueval_media_fail(error, error_size, "out of memory", 0); goto done; }
    format->pb = input;
    format->flags |= AVFMT_FLAG_CUSTOM_IO;
    format->io_open = mueval_media_refuse_open;
    ff->av_dict_set(&options, "format_whitelist", name, 0);
    ff->av_dict_set(&options, "protocol_whitelist", "", 0);  // none at all
    ff->av_dict_set(&options, "codec_whitelist", DECODERS, 0);
    // On failure avformat_open_input frees the context (and leaves our AVIOContext to us).
    code = ff->avformat_open_input(&format, NULL, input_format, &options);
    ff->av_dict_free(&options);
    if (code < 0) {
        result = mueval_media_fail(error, error_size, container == MUEVAL_AUDIO_WAV ? "cannot open the audio as WAV" : "cannot open the audio as MP4", code);
        goto done;
    }
    if ((code = ff->avformat_find_stream_info(format, NULL)) < 0) { result = mueval_media_fail(error, error_size, "cannot read the audio's format", code); goto done; }
    const AVCodec *decoder = NULL;
    int stream = ff->av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0);
    if (stream < 0 || !decoder) { result = mueval_media_fail(error, error_size, "the file holds no audio muEval can decode", stream); goto done; }
    if (format->duration > 0) *duration = (double)format->duration / AV_TIME_BASE;

    codec = ff->avcodec_alloc_context3(decoder);
    if (!codec) { result = mueval_media_fail(error, error_size, "out of memory", 0); goto done; }
    ff->av_dict_set(&options, "codec_whitelist", DECODERS, 0);
    if ((code = ff->avcodec_parameters_to_context(codec, format->streams[stream]->codecpar)) < 0
        || (code = ff->avcodec_open2(codec, decoder, &options)) < 0) {
        result = mueval_media_fail(error, error_size, "cannot start the audio decoder (muEval decodes PCM and AAC)", code);
        goto done;
    }

    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
    if (codec->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC) ff->av_channel_layout_default(&codec->ch_layout, codec->ch_layout.nb_channels);
    if ((code = ff->swr_alloc_set_opts2(&resampler, &mono, AV_SAMPLE_FMT_S16, OUTPUT_RATE,
                                    &codec->ch_layout, codec->sample_fmt, codec->sample_rate, 0, NULL)) < 0
        || (code = ff->swr_init(resampler)) < 0) { result = mueval_media_fail(error, error_size, "cannot convert the audio to 16 kHz mono", code); goto done; }

    int flushing = 0;
    while (result == 0) {
        if (!flushing) {
            code = ff->av_read_frame(format, packet);
            if (code == AVERROR_EOF) { flushing = 1; code = ff->avcodec_send_packet(codec, NULL); }
            else if (code < 0) { result = mueval_media_fail(error, error_size, "cannot read the audio", code); break; }
            else if (packet->stream_index != stream) { ff->av_packet_unref(packet); continue; }
            else { code = ff->avcodec_send_packet(codec, packet); ff->av_packet_unref(packet); }
            // A damaged packet (a lost chunk's neighbour) is skipped, not fatal: the rest still decodes.
            if (code < 0 && code != AVERROR(EAGAIN) && code != AVERROR_EOF && code != AVERROR_INVALIDDATA) {
                result = mueval_media_fail(error, error_size, "cannot decode the audio", code);
                break;
            }
        }
        while ((code = ff->avcodec_receive_frame(codec, frame)) >= 0) {
            int delivered = deliver(ff, resampler, frame, out, block, context);
            ff->av_frame_unref(frame);
            if (delivered != 0) { result = delivered > 0 ? 1 : mueval_media_fail(error, error_size, "cannot convert the audio", delivered); break; }
        }
        if (result != 0) break;
        if (code == AVERROR_EOF) {
            int delivered = deliver(ff, resampler, NULL, out, block, context);
            if (delivered != 0) result = delivered > 0 ? 1 : mueval_media_fail(error, error_size, "cannot convert the audio", delivered);
            break;
        }
        if (code != AVERROR(EAGAIN) && code != AVERROR_INVALIDDATA) { result = mueval_media_fail(error, error_size, "cannot decode the audio", code); break; }
    }

done:
    ff->swr_free(&resampler);
    ff->avcodec_free_context(&codec);
    ff->avformat_close_input(&format);
    if (input) ff->av_freep(&input->buffer);
    ff->avio_context_free(&input);
    ff->av_dict_free(&options);
    if (descriptor >= 0) close(descriptor);
    ff->av_frame_free(&frame);
    ff->av_packet_free(&packet);
    ff->av_free(out);
    return result;
}
