#include "engine/distributed/gradient_sync.hpp"

#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "engine/core/errors.hpp"
#include "engine/distributed/shared_memory_sum.hpp"

namespace engine::distributed {
namespace {

constexpr size_t kFirstBucketBytes = 1 << 20;  // DDP's _DEFAULT_FIRST_BUCKET_BYTES
// The gradients are views into the all-reduce buckets (DDP's gradient_as_bucket_view=True): no
// copy from the buckets back into separate gradient tensors after each all-reduce, and no
// second copy of the gradients' memory.
constexpr bool kGradientAsBucketView = true;

// Each bucket averaged through the machine's shared segment, on the thread that runs the
// backward pass (the Reducer calls it when the bucket's last gradient is ready).
class SharedMemoryHook : public c10d::CommHookInterface {
 public:
  explicit SharedMemoryHook(SharedMemorySum& sum) : sum_(sum) {}
  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
    auto& buffer = bucket.getBufferRef();
    sum_.average(buffer);
    auto done = c10::make_intrusive<c10::ivalue::Future>(c10::TensorType::get());
    done->markCompleted(c10::IValue(buffer));
    return done;
  }
  at::Tensor parseHookResult(const c10::IValue& result) override { return result.toTensor(); }

 private:
  SharedMemorySum& sum_;
};

// What the shared segment must hold: one bucket as large as every trainable parameter of the
// model; nothing when a parameter is of a type it does not sum (Gloo carries those).
size_t shared_bytes(const std::vector<torch::Tensor>& params) {
  size_t bytes = 0;
  for (const auto& p : params) {
    if (!p.device().is_cpu() || p.is_sparse() ||
        (p.scalar_type() != torch::kFloat32 && p.scalar_type() != torch::kFloat64)) {
      return 0;
    }
    bytes += p.nbytes();
  }
  return bytes;
}

std::vector<torch::Tensor> trainable(std::vector<torch::Tensor> parameters) {
  parameters.erase(std::remove_if(parameters.begin(), parameters.end(),
                                  [](const torch::Tensor& p) { return !p.requires_grad(); }),
                   parameters.end());
  return parameters;
}

// c10d::Reducer's constructor as libtorch 1.13 has it (bucket size limits third), or as 2.x
// has it (no limits; whether unused parameters skip the all-reduce, whether Python drives the
// reducer, a list of bucket caps after the first bucket's cap).
template <typename Reducer = c10d::Reducer>
std::unique_ptr<Reducer> make_reducer(std::vector<torch::Tensor> params,
                                      std::vector<std::vector<size_t>> buckets,
                                      std::vector<size_t> limits,
                                      const c10::intrusive_ptr<c10d::ProcessGroup>& group,
                                      int64_t bucket_bytes, bool find_unused,
                                      int64_t first_bucket_bytes) {
  const size_t count = params.size();
  if constexpr (std::is_constructible_v<
                    Reducer, std::vector<torch::Tensor>, std::vector<std::vector<size_t>>,
                    std::vector<size_t>, c10::intrusive_ptr<c10d::ProcessGroup>, std::vector<bool>,
                    int64_t, bool, bool, std::unordered_map<size_t, std::string>, int64_t>) {
    return std::make_unique<Reducer>(std::move(params), std::move(buckets), std::move(limits),
                                     group, std::vector<bool>(count, false), bucket_bytes,
                                     find_unused, kGradientAsBucketView,
                                     std::unordered_map<size_t, std::string>{}, first_bucket_bytes);
  } else {
    (void)limits;
    return std::make_unique<Reducer>(std::move(params), std::move(buckets), group,
                                     std::vector<bool>(count, false), bucket_bytes, find_unused,
                                     kGradientAsBucketView,
                                     std::unordered_map<size_t, std::string>{}, first_bucket_bytes,
                                     /*skip_all_reduce_unused_params=*/false,
                                     /*use_python_reducer=*/false, std::vector<int64_t>{});
  }
}

}  // namespace

GradientSync::GradientSync(Group& group, std::vector<torch::Tensor> parameters,
                           std::vector<torch::Tensor> buffers, GradientSyncOptions options)
    : group_(group), buffers_(std::move(buffers)) {
  auto params = trainable(std::move(parameters));
  if (params.empty()) {
    throw core::UsageError("distributed training needs a model with trainable parameters");
  }
  try {
    c10d::verify_params_across_processes(group_.backend(), params, c10::nullopt);
  } catch (const std::exception& e) {
    // libtorch compared every rank's parameters and they differ: the ranks are all there, and
    // what differs is the script's model, not a rank that did not come
    const std::string cause = core::describe_exception(e);
    if (cause.find("expects same model") != std::string::npos ||
        cause.find("appears not to match") != std::string::npos) {
      throw core::ScriptError(
          "rank " + std::to_string(group_.rank()) + ": the ranks built different models (" +
          cause.substr(0, cause.find('\n')) +
          "): every rank must build the same model; does the script's model depend on the "
          "rank, the machine or a random draw before the seed?");
    }
    group_.fail("checking that every rank builds the same model", e);
  }
  const size_t segment_bytes = shared_bytes(params);
  if (options.shared_memory) {
    try {
      local_sum_ = SharedMemorySum::open(group_, segment_bytes);
    } catch (const core::Error&) {
      throw;
    } catch (const std::exception& e) {
      group_.fail("setting up the shared-memory gradient all-reduce", e);
    }
  }
  // Through shared memory the sum takes the backward pass's own core, so starting it early
  // overlaps nothing: one bucket (of each type), averaged once every gradient is ready.
  size_t first_bucket = kFirstBucketBytes;
  if (local_sum_) {
    first_bucket = segment_bytes;
    options.bucket_bytes = static_cast<int64_t>(first_bucket);
  }
  auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(
      params, {first_bucket, static_cast<size_t>(options.bucket_bytes)},
      std::vector<bool>(params.size(), false));
  std::reverse(buckets.begin(), buckets.end());
  std::reverse(limits.begin(), limits.end());
  try {
    reducer_ = make_reducer(std::move(params), std::move(buckets), std::move(limits),
                            group_.backend(), options.bucket_bytes, options.find_unused_parameters,
                            static_cast<int64_t>(first_bucket));
    if (local_sum_) reducer_->register_comm_hook(std::make_unique<SharedMemoryHook>(*local_sum_));
  } catch (const std::exception& e) {
    group_.fail("setting up the gradient all-reduce", e);
  }
}

GradientSync::~GradientSync() = default;

void GradientSync::before_forward() {
  try {
    reducer_->rebuild_buckets();  // once, after the first step; then a no-op
    reducer_->prepare_for_forward();
  } catch (const std::exception& e) {
    group_.fail("rebuilding the gradient buckets", e);
  }
  if (!buffers_.empty()) group_.broadcast(buffers_);
}

void GradientSync::before_backward(const torch::Tensor& loss) {
  try {
    reducer_->prepare_for_backward({loss});
  } catch (const std::exception& e) {
    group_.fail("preparing the gradient all-reduce", e);
  }
}

}  // namespace engine::distributed
