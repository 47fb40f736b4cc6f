#include "graph/print.hpp"

#include "graph/op.hpp"

#include <sstream>
#include <unordered_map>

namespace theon::graph {
namespace {

std::string id_name(size_t n) {  // A, B, ..., Z, BA, BB, ... as Theano
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('A' + n % 26));
    n /= 26;
  } while (n);
  return s;
}

}  // namespace

std::string debugprint(const std::vector<VarPtr>& outputs) {
  std::ostringstream os;
  std::unordered_map<const void*, std::string> ids;  // Apply* for outputs, Variable* for leaves
  auto id_of = [&](const void* key, bool& first) {
    auto [it, inserted] = ids.try_emplace(key, id_name(ids.size()));
    first = inserted;
    return it->second;
  };
  // Iterative to survive very deep graphs: (variable, prefix) pairs.
  std::vector<std::pair<VarPtr, std::string>> stack;
  for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) stack.push_back({*it, ""});
  while (!stack.empty()) {
    auto [v, prefix] = stack.back();
    stack.pop_back();
    bool first = false;
    const void* key = v->owner ? static_cast<const void*>(v->owner) : static_cast<const void*>(v.get());
    std::string id = id_of(key, first);
    os << prefix;
    if (v->owner) {
      os << v->owner->op().display();
      if (v->owner->num_outputs() > 1) os << "." << v->index;
    } else if (v->kind == VarKind::Constant) {
      os << "TensorConstant{" << v->label() << "}";
    } else {
      os << v->label();
    }
    os << " [id " << id << "]";
    if (v->owner && !v->name.empty()) os << " '" << v->name << "'";
    if (v->kind == VarKind::Shared) os << " (shared)";
    os << "  " << v->type.str() << "\n";
    if (v->owner && first) {
      std::string child = prefix + " |";
      const auto& ins = v->owner->inputs();
      for (size_t i = ins.size(); i-- > 0;) stack.push_back({ins[i], child});
    }
  }
  return os.str();
}

}  // namespace theon::graph
