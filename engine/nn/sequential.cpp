#include "engine/nn/sequential.hpp"

#include <c10/util/Exception.h>

#include <new>

#include "engine/core/device.hpp"
#include "engine/core/errors.hpp"
#include "engine/core/format.hpp"
#include "engine/nn/describe.hpp"
#include "engine/nn/layer_error.hpp"

namespace engine::nn {

namespace {

// libtorch's CPU allocator says "not enough memory" in a plain c10::Error (1.13); the engine's
// own and CUDA's throw c10::OutOfMemoryError
bool out_of_memory(const c10::Error& e) {
  return dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
         std::string(e.what_without_backtrace()).find("not enough memory") != std::string::npos;
}

}  // namespace

torch::Tensor forward_layer(torch::nn::AnyModule& layer, const torch::Tensor& input) {
  // the dtype too when it is not the usual one (a float16 input on the CPU)
  auto shape_of = [&] {
    std::string shape = core::shape_string(input.sizes());
    if (input.scalar_type() != torch::kFloat32) {
      shape += " (" + core::dtype_name(input.scalar_type()) + ")";
    }
    return shape;
  };
  try {
    return layer.forward(input);
  } catch (const LayerError&) {
    throw;
  } catch (const c10::Error& e) {
    if (out_of_memory(e)) {  // not the input's fault: exit 7, where it happened
      throw core::OutOfMemory("out of memory in layer " + describe_layer(*layer.ptr()) +
                              " with an input of shape " + shape_of() + ": " +
                              e.what_without_backtrace());
    }
    throw LayerError("", describe_layer(*layer.ptr()), shape_of(), core::describe_exception(e));
  } catch (const std::bad_alloc&) {
    throw core::OutOfMemory("out of memory in layer " + describe_layer(*layer.ptr()) +
                            " with an input of shape " + shape_of() + " (std::bad_alloc)");
  }
}

void SequentialImpl::push_back(torch::nn::AnyModule layer) {
  register_module(std::to_string(layers_.size()), layer.ptr());
  layers_.push_back(std::move(layer));
}

torch::Tensor SequentialImpl::forward(torch::Tensor input) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    try {
      input = forward_layer(layers_[i], input);
    } catch (const LayerError& e) {
      throw e.nested_in(std::to_string(i));
    }
  }
  return input;
}

void SequentialImpl::pretty_print(std::ostream& stream) const {
  stream << "Sequential";
}

}  // namespace engine::nn
