#include "audio_decode.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
}

namespace {

constexpr int kRate = 16000;
// Containers the service accepts (mp3, m4a, wav, ogg/opus, flac, webm, plus raw AAC); every other
// demuxer (playlists, concat, images...) is refused, so hostile input cannot open other files.
constexpr const char *kFormats = "wav,w64,mp3,mov,mp4,m4a,3gp,3g2,mj2,ogg,flac,matroska,webm,aac";

struct Memory {
  const uint8_t *data;
  size_t size, pos = 0;
};

int ReadPacket(void *opaque, uint8_t *buf, int buf_size) {
  auto *m = static_cast<Memory *>(opaque);
  size_t n = std::min(m->size - m->pos, static_cast<size_t>(buf_size));
  if (n == 0) return AVERROR_EOF;
  std::memcpy(buf, m->data + m->pos, n);
  m->pos += n;
  return static_cast<int>(n);
}

int64_t Seek(void *opaque, int64_t offset, int whence) {
  auto *m = static_cast<Memory *>(opaque);
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return static_cast<int64_t>(m->size);
  int64_t base = whence == SEEK_SET   ? 0
                 : whence == SEEK_CUR ? static_cast<int64_t>(m->pos)
                                      : static_cast<int64_t>(m->size);
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return AVERROR(EINVAL);
  int64_t target = base + offset;
  if (target < 0 || target > static_cast<int64_t>(m->size)) return AVERROR(EINVAL);
  m->pos = static_cast<size_t>(target);
  return target;
}

// No nested opens (HLS segments, mov external references...): input is one buffer, nothing else.
int RefuseOpen(AVFormatContext *, AVIOContext **, const char *, int, AVDictionary **) { return AVERROR(EPERM); }

std::string AvError(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

struct Io {
  AVIOContext *ctx = nullptr;
  ~Io() {
    if (ctx != nullptr) av_freep(&ctx->buffer);
    avio_context_free(&ctx);
  }
};
struct Format {
  AVFormatContext *ctx = nullptr;
  ~Format() { avformat_close_input(&ctx); }
};
struct Codec {
  AVCodecContext *ctx = nullptr;
  ~Codec() { avcodec_free_context(&ctx); }
};
struct Resampler {
  SwrContext *ctx = nullptr;
  AVChannelLayout in_layout{};
  int in_rate = 0, in_format = -1;
  ~Resampler() {
    swr_free(&ctx);
    av_channel_layout_uninit(&in_layout);
  }
};
struct Packet {
  AVPacket *p = av_packet_alloc();
  ~Packet() { av_packet_free(&p); }
};
struct Frame {
  AVFrame *f = av_frame_alloc();
  ~Frame() { av_frame_free(&f); }
};

class Decoder {
 public:
  Decoder(double max_seconds, const std::atomic<bool> *abort)
      : max_samples_(static_cast<size_t>(max_seconds * kRate)), max_seconds_(max_seconds), abort_(abort) {}

  DecodedAudio run(const uint8_t *data, size_t size) {
    if (size == 0) throw InvalidAudio("invalid_audio", "the body is empty: send the audio file's bytes");
    Memory mem{data, size};
    const int buffer_size = 64 * 1024;
    auto *buffer = static_cast<uint8_t *>(av_malloc(buffer_size));
    Io io;
    io.ctx = avio_alloc_context(buffer, buffer_size, 0, &mem, ReadPacket, nullptr, Seek);
    if (io.ctx == nullptr) {
      av_free(buffer);
      throw std::runtime_error("out of memory");
    }
    Format fmt;
    fmt.ctx = avformat_alloc_context();
    fmt.ctx->pb = io.ctx;
    fmt.ctx->flags |= AVFMT_FLAG_CUSTOM_IO;
    fmt.ctx->io_open = RefuseOpen;
    fmt.ctx->format_whitelist = av_strdup(kFormats);
    fmt.ctx->protocol_whitelist = av_strdup("none");
    int err = avformat_open_input(&fmt.ctx, nullptr, nullptr, nullptr);
    if (err < 0)
      throw InvalidAudio(
          "invalid_audio",
          "the body is not a supported audio file (mp3, m4a, wav, ogg, opus, flac, webm): " + AvError(err));
    if ((err = avformat_find_stream_info(fmt.ctx, nullptr)) < 0)
      throw InvalidAudio("invalid_audio", "the audio file is damaged or truncated: " + AvError(err));
    const AVCodec *codec = nullptr;
    int stream = av_find_best_stream(fmt.ctx, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (stream < 0 || codec == nullptr) throw InvalidAudio("invalid_audio", "the file holds no decodable audio stream");
    AVStream *st = fmt.ctx->streams[stream];
    for (unsigned i = 0; i < fmt.ctx->nb_streams; ++i)
      if (static_cast<int>(i) != stream) fmt.ctx->streams[i]->discard = AVDISCARD_ALL;

    // A declared length over the cap is refused before any decoding.
    double declared = fmt.ctx->duration > 0 ? static_cast<double>(fmt.ctx->duration) / AV_TIME_BASE : 0;
    bool declared_reliable = fmt.ctx->duration_estimation_method != AVFMT_DURATION_FROM_BITRATE;
    if (declared_reliable && declared > max_seconds_ + 1) throw TooLong(declared);

    Codec dec;
    dec.ctx = avcodec_alloc_context3(codec);
    if (avcodec_parameters_to_context(dec.ctx, st->codecpar) < 0)
      throw InvalidAudio("invalid_audio", "the audio stream's parameters are invalid");
    dec.ctx->thread_count = 1;
    dec.ctx->pkt_timebase = st->time_base;
    if ((err = avcodec_open2(dec.ctx, codec, nullptr)) < 0)
      throw InvalidAudio("invalid_audio", std::string("cannot decode ") + codec->name + " audio: " + AvError(err));

    Packet pkt;
    Frame frame;
    int bad_packets = 0;
    while (true) {
      if (abort_ != nullptr && abort_->load(std::memory_order_relaxed)) throw Cancelled();
      err = av_read_frame(fmt.ctx, pkt.p);
      if (err < 0) break;  // end of file, or a damaged tail: keep what decoded
      if (pkt.p->stream_index == stream) {
        if (avcodec_send_packet(dec.ctx, pkt.p) < 0)
          ++bad_packets;
        else
          drain(dec.ctx, frame.f);
      }
      av_packet_unref(pkt.p);
    }
    avcodec_send_packet(dec.ctx, nullptr);
    drain(dec.ctx, frame.f);
    flush_resampler();

    if (pcm_.empty())
      throw InvalidAudio("invalid_audio", bad_packets > 0 ? "no audio could be decoded: the stream is damaged"
                                                          : "the audio has no samples");
    double decoded = static_cast<double>(pcm_.size()) / kRate;
    if (declared_reliable && declared > 1 && decoded < 0.9 * declared - 0.5)
      throw InvalidAudio("invalid_audio", "the audio file is truncated: it declares " + Seconds(declared) +
                                              " but holds " + Seconds(decoded));
    return DecodedAudio{std::move(pcm_), fmt.ctx->iformat->name, codec->name};
  }

 private:
  static std::string Seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
  }

  InvalidAudio TooLong(double seconds) const {
    std::string length = seconds > 0 ? Seconds(seconds) : "more than " + Seconds(max_seconds_);
    return InvalidAudio("audio_too_long",
                        "the audio lasts " + length + "; at most " + Seconds(max_seconds_) + " is accepted");
  }

  void drain(AVCodecContext *ctx, AVFrame *f) {
    while (avcodec_receive_frame(ctx, f) >= 0) {
      resample(f);
      av_frame_unref(f);
    }
  }

  // (Re)creates the resampler when the frame's layout, rate or format differs from the last one.
  void prepare(const AVFrame *f) {
    AVChannelLayout layout{};
    if (f->ch_layout.nb_channels <= 0) throw InvalidAudio("invalid_audio", "the audio stream has no channels");
    if (f->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC)
      av_channel_layout_default(&layout, f->ch_layout.nb_channels);
    else
      av_channel_layout_copy(&layout, &f->ch_layout);
    if (f->sample_rate <= 0) {
      av_channel_layout_uninit(&layout);
      throw InvalidAudio("invalid_audio", "the audio stream has no sample rate");
    }
    if (swr_.ctx != nullptr && f->sample_rate == swr_.in_rate && f->format == swr_.in_format &&
        av_channel_layout_compare(&layout, &swr_.in_layout) == 0) {
      av_channel_layout_uninit(&layout);
      return;
    }
    flush_resampler();
    swr_free(&swr_.ctx);
    av_channel_layout_uninit(&swr_.in_layout);
    swr_.in_layout = layout;
    swr_.in_rate = f->sample_rate;
    swr_.in_format = f->format;
    AVChannelLayout mono = AV_CHANNEL_LAYOUT_MONO;
    if (swr_alloc_set_opts2(&swr_.ctx, &mono, AV_SAMPLE_FMT_FLT, kRate, &swr_.in_layout,
                            static_cast<AVSampleFormat>(f->format), f->sample_rate, 0, nullptr) < 0 ||
        swr_init(swr_.ctx) < 0)
      throw InvalidAudio("invalid_audio", "the audio's sample format cannot be converted");
  }

  void resample(const AVFrame *f) {
    prepare(f);
    int room = swr_get_out_samples(swr_.ctx, f->nb_samples);
    if (room < 0) throw InvalidAudio("invalid_audio", "the audio's sample format cannot be converted");
    convert(const_cast<const uint8_t **>(f->extended_data), f->nb_samples, room);
  }

  void flush_resampler() {
    if (swr_.ctx == nullptr) return;
    int room = swr_get_out_samples(swr_.ctx, 0);
    if (room > 0) convert(nullptr, 0, room);
  }

  void convert(const uint8_t **in, int n_in, int room) {
    size_t at = pcm_.size();
    pcm_.resize(at + static_cast<size_t>(room));
    auto *out = reinterpret_cast<uint8_t *>(pcm_.data() + at);
    int got = swr_convert(swr_.ctx, &out, room, in, n_in);
    if (got < 0) throw InvalidAudio("invalid_audio", "the audio could not be resampled");
    pcm_.resize(at + static_cast<size_t>(got));
    if (pcm_.size() > max_samples_) throw TooLong(0);
  }

  const size_t max_samples_;
  const double max_seconds_;
  const std::atomic<bool> *abort_;
  Resampler swr_;
  std::vector<float> pcm_;
};

}  // namespace

DecodedAudio decode_audio(const uint8_t *data, size_t size, double max_seconds, const std::atomic<bool> *abort) {
  static std::once_flag quiet;
  std::call_once(quiet,
                 [] { av_log_set_level(std::getenv("DM_NATIVE_LOG") != nullptr ? AV_LOG_WARNING : AV_LOG_QUIET); });
  return Decoder(max_seconds, abort).run(data, size);
}
