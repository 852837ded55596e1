#include "engine/nn/describe.hpp"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>

#include <sstream>

#include "engine/nn/parameter_slots.hpp"

namespace engine::nn {
namespace {

void strip_all(std::string& s, const std::string& what) {
  for (size_t pos; (pos = s.find(what)) != std::string::npos;) s.erase(pos, what.size());
}

void tree(const torch::nn::Module& module, const std::string& name, int depth,
          std::ostringstream& out) {
  out << std::string(2 * depth, ' ');
  if (!name.empty()) out << "(" << name << "): ";
  out << describe_layer(module);
  const int64_t n = count_parameters(module);
  if (n > 0) out << "  [" << n << " params]";
  out << "\n";
  for (const auto& child : module.named_children()) {
    tree(*child.value(), child.key(), depth + 1, out);
  }
}

// Layers whose options hold a dimension print it as users wrote it: 1-based (a negative dim
// is printed as given), not libtorch's 0-based number.
int64_t user_dim(int64_t dim) {
  return dim >= 0 ? dim + 1 : dim;
}

bool describe_dim_layer(const torch::nn::Module& module, std::ostringstream& out) {
  if (auto* m = dynamic_cast<const torch::nn::SoftmaxImpl*>(&module)) {
    out << "Softmax(dim=" << user_dim(m->options.dim()) << ")";
  } else if (auto* m = dynamic_cast<const torch::nn::LogSoftmaxImpl*>(&module)) {
    out << "LogSoftmax(dim=" << user_dim(m->options.dim()) << ")";
  } else if (auto* m = dynamic_cast<const torch::nn::FlattenImpl*>(&module)) {
    out << "Flatten(start_dim=" << user_dim(m->options.start_dim())
        << ", end_dim=" << user_dim(m->options.end_dim()) << ")";
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::string describe_layer(const torch::nn::Module& module) {
  std::ostringstream out;
  if (describe_dim_layer(module, out)) return out.str();
  module.pretty_print(out);
  std::string s = out.str();
  strip_all(s, "torch::nn::");
  strip_all(s, "engine::nn::");
  strip_all(s, "engine::lua::");
  return s;
}

std::string describe_tree(const torch::nn::Module& module) {
  std::ostringstream out;
  tree(module, "", 0, out);
  std::string s = out.str();
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

int64_t count_parameters(const torch::nn::Module& module, bool trainable_only) {
  int64_t n = 0;
  for (const auto& p : unique_parameters(module)) {  // a tied weight counts once
    if (!trainable_only || p.requires_grad()) n += p.numel();
  }
  return n;
}

}  // namespace engine::nn
