#include "engine/train/optimizer_archive.hpp"

#include <torch/optim/lbfgs.h>
#include <torch/serialize/archive.h>

#include <sstream>

namespace engine::train {
namespace {

// libtorch's LBFGS keeps a scratch list `al` of history_size tensors; a step writes an entry
// before it reads it, and entries past the history are undefined, which libtorch's archive cannot
// hold ("Cannot access storage of UndefinedTensorImpl"): they become empty tensors, which no step
// reads either.
void define_lbfgs_scratch(torch::optim::Optimizer& optimizer) {
  if (!dynamic_cast<torch::optim::LBFGS*>(&optimizer)) return;
  for (auto& [key, state] : optimizer.state()) {
    auto& lbfgs = static_cast<torch::optim::LBFGSParamState&>(*state);
    if (!lbfgs.al()) continue;
    std::vector<torch::Tensor> scratch = *lbfgs.al();
    for (auto& t : scratch) {
      if (!t.defined()) t = torch::empty({0});
    }
    lbfgs.al(scratch);
  }
}

}  // namespace

torch::Tensor optimizer_archive(torch::optim::Optimizer& optimizer) {
  define_lbfgs_scratch(optimizer);
  torch::serialize::OutputArchive archive;
  optimizer.save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  const std::string data = bytes.str();
  return torch::from_blob(const_cast<char*>(data.data()), {static_cast<int64_t>(data.size())},
                          torch::kUInt8)
      .clone();
}

void load_optimizer_archive(torch::optim::Optimizer& optimizer, const torch::Tensor& bytes) {
  const auto blob = bytes.to(torch::kCPU, torch::kUInt8).contiguous();
  torch::serialize::InputArchive archive;
  archive.load_from(reinterpret_cast<const char*>(blob.data_ptr<uint8_t>()),
                    static_cast<size_t>(blob.numel()));
  optimizer.load(archive);
}

}  // namespace engine::train
