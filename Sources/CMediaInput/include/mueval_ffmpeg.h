// FFmpeg's functions the decoders call, through one table that mueval_media_load fills with dlsym: the libraries
// are loaded at first use, not linked (mueval_media_input.h). Not in the module map: C only, Swift never sees it.
#ifndef MUEVAL_FFMPEG_H
#define MUEVAL_FFMPEG_H

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>

/// The one list: each function with the library it is taken from (an index into the loader's table of libraries).
#define MUEVAL_FFMPEG_FUNCTIONS(F) \
    F(AVUTIL, av_malloc) F(AVUTIL, av_free) F(AVUTIL, av_freep) F(AVUTIL, av_strerror) \
    F(AVUTIL, av_dict_set) F(AVUTIL, av_dict_free) \
    F(AVUTIL, av_frame_alloc) F(AVUTIL, av_frame_free) F(AVUTIL, av_frame_unref) \
    F(AVUTIL, av_channel_layout_default) F(AVUTIL, av_get_pix_fmt_name) \
    F(SWRESAMPLE, swr_alloc_set_opts2) F(SWRESAMPLE, swr_init) F(SWRESAMPLE, swr_convert) F(SWRESAMPLE, swr_free) \
    F(AVCODEC, av_packet_alloc) F(AVCODEC, av_packet_free) F(AVCODEC, av_packet_unref) \
    F(AVCODEC, avcodec_find_decoder) F(AVCODEC, avcodec_get_name) \
    F(AVCODEC, avcodec_alloc_context3) F(AVCODEC, avcodec_free_context) F(AVCODEC, avcodec_parameters_to_context) \
    F(AVCODEC, avcodec_open2) F(AVCODEC, avcodec_send_packet) F(AVCODEC, avcodec_receive_frame) \
    F(AVFORMAT, av_find_input_format) F(AVFORMAT, avio_alloc_context) F(AVFORMAT, avio_context_free) \
    F(AVFORMAT, avformat_alloc_context) F(AVFORMAT, avformat_open_input) F(AVFORMAT, avformat_find_stream_info) \
    F(AVFORMAT, av_find_best_stream) F(AVFORMAT, av_read_frame) F(AVFORMAT, avformat_close_input)

#define MUEVAL_FFMPEG_FIELD(library, name) __typeof__(name) *name;
struct mueval_ffmpeg {
    MUEVAL_FFMPEG_FUNCTIONS(MUEVAL_FFMPEG_FIELD)
};
#undef MUEVAL_FFMPEG_FIELD

/// The table after loading the libraries (mueval_media_load), or NULL with why in `error`.
const struct mueval_ffmpeg *mueval_ffmpeg(char *error, size_t size);

#endif
