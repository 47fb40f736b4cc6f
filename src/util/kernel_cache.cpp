#include "util/kernel_cache.hpp"

#include <theon/config.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace theon::detail {

std::string kernel_cache_dir(const std::string& backend) {
  std::string base = config().compiledir;
  if (base.empty()) {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) base = std::string(x) + "/theon";
    else if (const char* h = std::getenv("HOME"); h && *h) base = std::string(h) + "/.cache/theon";
    else base = "/tmp/theon-cache";
  }
  return base + "/" + backend;
}

namespace {

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::string content_key(const std::string& text) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(text, 14695981039346656037ull)),
                static_cast<unsigned long long>(fnv1a(text, 0x9e3779b97f4a7c15ull)));
  return buf;
}

}  // namespace theon::detail
