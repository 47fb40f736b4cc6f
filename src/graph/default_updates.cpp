#include "graph/default_updates.hpp"

#include <mutex>
#include <vector>
#include <unordered_map>
#include <utility>

namespace theon::graph {

namespace {

struct Entry {
  std::weak_ptr<Variable> shared;  // an address may be reused once the variable dies
  DefaultUpdateTemplate t;
};

std::mutex& table_mutex() {
  static std::mutex m;
  return m;
}

std::unordered_map<const Variable*, Entry>& table() {
  static std::unordered_map<const Variable*, Entry> t;
  return t;
}

}  // namespace

void set_default_update_template(const VarPtr& shared, std::optional<DefaultUpdateTemplate> t) {
  std::unique_lock<std::mutex> lock(table_mutex());
  auto& entries = table();
  // Dropped outside the lock: freeing a template frees graphs, which may take a while.
  std::vector<DefaultUpdateTemplate> dead;
  for (auto it = entries.begin(); it != entries.end();) {
    if (it->second.shared.expired()) {
      dead.push_back(std::move(it->second.t));
      it = entries.erase(it);
    } else {
      ++it;
    }
  }
  if (auto it = entries.find(shared.get()); it != entries.end()) {
    dead.push_back(std::move(it->second.t));
    entries.erase(it);
  }
  if (t) entries.emplace(shared.get(), Entry{shared, std::move(*t)});
  lock.unlock();
}

std::optional<DefaultUpdateTemplate> default_update_template(const Variable& shared) {
  std::lock_guard<std::mutex> lock(table_mutex());
  const auto it = table().find(&shared);
  if (it == table().end() || it->second.shared.lock().get() != &shared) return std::nullopt;
  return it->second.t;
}

}  // namespace theon::graph
