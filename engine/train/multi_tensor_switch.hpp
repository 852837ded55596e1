// What the engine's optimizers (FusedSGD, FusedAdam, FusedAdamW, Adadelta) add to libtorch's
// interface: a switch that sends CPU parameters through the multi-tensor path too, so that the
// path an accelerator takes can be compared with the per-parameter one without a GPU. Off by
// default: on the CPU the per-parameter (or fused) loop is the faster one.
#pragma once

namespace engine::train {

class MultiTensorSwitch {
 public:
  void set_multi_tensor_on_cpu(bool on) { multi_tensor_on_cpu_ = on; }

 protected:
  bool multi_tensor_on_cpu_ = false;
};

}  // namespace engine::train
