#include "log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include "llama.h"
#include "whisper.h"

namespace {

std::atomic<int> threshold{kLogNothing};  // TypeScript sets it when it loads the addon

struct Pending {
  std::string text;
  ggml_log_level level = GGML_LOG_LEVEL_INFO;
};

const char *level_name(ggml_log_level level) {
  switch (level) {
    case GGML_LOG_LEVEL_DEBUG: return "debug";
    case GGML_LOG_LEVEL_WARN: return "warn";
    case GGML_LOG_LEVEL_ERROR: return "error";
    default: return "info";
  }
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string now_iso() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const long ms = static_cast<long>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

void emit(const Pending &line, const char *source) {
  if (line.text.find_first_not_of(" \t") == std::string::npos) return;
  if (static_cast<int>(line.level) < threshold.load(std::memory_order_relaxed)) return;
  const std::string out = "{\"time\":\"" + now_iso() + "\",\"level\":\"" + level_name(line.level) +
                          "\",\"msg\":" + json_string(line.text) + ",\"source\":\"" + source + "\"}\n";
  std::fputs(out.c_str(), stderr);  // one call per line: lines of different threads do not mix
}

// A continuation (GGML_LOG_LEVEL_CONT) keeps the level of the piece it continues.
void collect(ggml_log_level level, const char *text, void *source) {
  thread_local Pending pending;
  if (level != GGML_LOG_LEVEL_CONT) {
    if (!pending.text.empty()) emit(pending, static_cast<const char *>(source));
    pending.text.clear();
    pending.level = level == GGML_LOG_LEVEL_NONE ? GGML_LOG_LEVEL_INFO : level;
  }
  for (const char *c = text; *c != '\0'; ++c) {
    if (*c == '\n') {
      emit(pending, static_cast<const char *>(source));
      pending.text.clear();
    } else {
      pending.text += *c;
    }
  }
}

}  // namespace

void route_native_log() {
  static const char llama_source[] = "llama.cpp", whisper_source[] = "whisper.cpp";
  whisper_log_set(collect, const_cast<char *>(whisper_source));
  llama_log_set(collect, const_cast<char *>(llama_source));  // last: ggml's own lines start as llama.cpp's
}

void set_native_log_threshold(int level) { threshold.store(level, std::memory_order_relaxed); }
