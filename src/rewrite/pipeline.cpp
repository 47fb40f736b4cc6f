#include "rewrite/pipeline.hpp"

#include "rewrite/passes/passes.hpp"

#include <theon/config.hpp>  // canonical_mode

#include <theon/error.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>

namespace theon::rewrite {
namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ':'))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool matches(const Pass& p, const std::vector<std::string>& names) {
  for (auto& n : names)
    if (n == p.name || std::find(p.tags.begin(), p.tags.end(), n) != p.tags.end()) return true;
  return false;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

// A name in optimizer_including/excluding/requiring that no pass or tag has would otherwise
// select nothing without a word (a typo, or a Theano rewrite name Theon does not have): it
// warns once per name and process, listing what exists.
void warn_unknown_names(const std::vector<Pass>& passes, const std::vector<std::string>& names,
                        const char* option) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  for (const std::string& name : names) {
    const bool known = std::any_of(passes.begin(), passes.end(), [&](const Pass& p) { return matches(p, {name}); });
    if (known) continue;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!warned.insert(name).second) continue;
    }
    std::set<std::string> pass_names, tags;
    for (const Pass& p : passes) {
      pass_names.insert(p.name);
      tags.insert(p.tags.begin(), p.tags.end());
    }
    auto join = [](const std::set<std::string>& words) {
      std::string out;
      for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
      return out;
    };
    std::cerr << "theon: warning: " << option << ": no rewrite or tag is named '" << name
              << "'; it selects nothing (rewrites: " << join(pass_names) << "; tags: " << join(tags) << ")\n";
  }
}

}  // namespace

std::vector<Pass>& registered_passes() {
  static std::vector<Pass> passes;
  return passes;
}

void register_pass(Pass pass) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& passes = registered_passes();
  passes.push_back(std::move(pass));
  std::stable_sort(passes.begin(), passes.end(), [](const Pass& a, const Pass& b) { return a.position < b.position; });
}

std::vector<PassRecord> optimize(graph::FunctionGraph& fgraph, const std::string& mode, const std::string& including,
                                 const std::string& excluding, const Target& target, const std::string& requiring) {
  const std::string m = canonical_mode(mode);
  const auto inc = split(including), exc = split(excluding), req = split(requiring);
  register_standard_passes();
  std::vector<Pass> passes;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    passes = registered_passes();
  }
  warn_unknown_names(passes, inc, "optimizer_including");
  warn_unknown_names(passes, exc, "optimizer_excluding");
  warn_unknown_names(passes, req, "optimizer_requiring");
  std::vector<PassRecord> records;
  for (const Pass& p : passes) {
    bool selected = m != "none" && std::find(p.tags.begin(), p.tags.end(), m) != p.tags.end();
    if (matches(p, inc)) selected = true;
    if (matches(p, exc)) selected = false;
    // Theano's `requiring`: of the rewrites selected, only those matching every name run.
    for (const std::string& name : req)
      if (!matches(p, {name})) selected = false;
    if (p.required) selected = true;
    if (!selected) continue;
    auto t0 = std::chrono::steady_clock::now();
    bool changed = p.run(fgraph, target);
    if (changed) {
      try {
        fgraph.verify();
      } catch (InternalError& e) {
        e.add_context("after rewrite pass '" + p.name + "'");
        throw;
      }
    }
    records.push_back({p.name, changed, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
  }
  return records;
}

}  // namespace theon::rewrite
