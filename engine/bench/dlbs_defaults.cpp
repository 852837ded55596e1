#include "engine/bench/dlbs_defaults.hpp"

#include <algorithm>

namespace engine::bench {

const std::vector<DlbsDefault>& dlbs_defaults() {
  // clang-format off
  static const std::vector<DlbsDefault> defaults = {
      {"exp.status", "str", R"("ok")"},
      {"exp.status_msg", "str", R"("")"},
      {"exp.proj", "str", R"("")"},
      {"exp.framework", "str", R"("")"},
      {"exp.framework_title", "str", R"("")"},
      {"exp.framework_family", "str", R"("${exp.framework}")"},
      {"exp.framework_ver", "str", R"("")"},
      {"exp.framework_commit", "str", R"("")"},
      {"exp.model", "str", R"("")"},
      {"exp.model_opts", "str", R"("{}")"},
      {"exp.model_title", "str", R"("")"},
      {"exp.num_warmup_batches", "int", R"(1)"},
      {"exp.num_batches", "int", R"(100)"},
      {"exp.phase", "str", R"("training")"},
      {"exp.data_dir", "str", R"("${${exp.framework_family}.data_dir}")"},
      {"exp.data", "str", R"("$('synthetic' if '${exp.data_dir}' == '' else 'real')$")"},
      {"exp.data_store", "str", R"("")"},
      {"exp.dtype", "str", R"("float32")"},
      {"exp.use_tensor_core", "bool", R"(true)"},
      {"exp.effective_batch", "int", R"("$(${exp.num_replicas}*${exp.replica_batch} if '${exp.device_type}' == 'gpu' else ${exp.num_nodes} * ${exp.replica_batch})$")"},
      {"exp.replica_batch", "int", R"(16)"},
      {"exp.gpus", "str", R"("0")"},
      {"exp.num_local_replicas", "int", R"("$(len('${exp.gpus}'.replace(',', ' ').split()) if '${exp.device_type}' == 'gpu' else 1)$")"},
      {"exp.num_local_gpus", "int", R"("$(len(re.sub('[:,]', ' ', '${exp.gpus}').split()))$")"},
      {"exp.num_replicas", "int", R"("$(${exp.num_local_replicas} * ${exp.num_nodes})$")"},
      {"exp.num_gpus", "int", R"("$(${exp.num_local_gpus} * ${exp.num_nodes})$")"},
      {"exp.device_type", "str", R"("$('gpu' if ${exp.num_gpus} > 0 else 'cpu')$")"},
      {"exp.device_title", "str", R"("")"},
      {"exp.cuda", "str", R"("")"},
      {"exp.cudnn", "str", R"("")"},
      {"exp.id", "str", R"("$(uuid.uuid4().__str__().replace('-', ''))$")"},
      {"exp.log_file", "str", R"("${exp.framework}_${exp.device_type}_${exp.model}_${exp.effective_batch}_${exp.id}.log")"},
      {"exp.rerun", "str", R"("never")"},
      {"exp.node_id", "str", R"("")"},
      {"exp.num_nodes", "int", R"(1)"},
      {"exp.node_nic", "str", R"("")"},
      {"exp.docker", "bool", R"(true)"},
      {"exp.docker_args", "str", R"("--rm --shm-size=1g --ulimit memlock=-1 --ulimit stack=67108864 --ipc=host")"},
      {"monitor.timeseries", "str", R"("time:str:1,mem_virt:float:2,mem_res:float:3,mem_shrd:float:4,cpu:float:5,mem:float:6,power:float:7,gpus:float:8:")"},
      {"monitor.frequency", "float", R"(0)"},
      {"monitor.pid_folder", "str", R"("/dev/shm/monitor")"},
      {"runtime.launcher", "str", R"("")"},
      {"runtime.cuda_cache", "str", R"("/dev/shm/dlbs")"},
      {"runtime.visible_gpus", "str", R"("$(re.sub('[:]', ',', '${exp.gpus}'))$")"},
      {"exp.ignore_past_errors", "bool", R"(false)"},
      {"exp.sys_info", "str", R"("")"},
      {"pytorch.data_dir", "str", R"("")"},
      {"pytorch.data_backend", "str", R"("caffe_lmdb")"},
      {"pytorch.cudnn_benchmark", "bool", R"(true)"},
      {"pytorch.cudnn_fastest", "bool", R"(false)"},
      {"pytorch.data_shuffle", "bool", R"(false)"},
      {"pytorch.num_loader_threads", "int", R"(4)"},
      {"pytorch.data_loader_only", "bool", R"(false)"},
      {"pytorch.distributed_rank", "int", R"(0)"},
      {"pytorch.distributed_rendezvous", "str", R"("localhost:4000")"},
      {"pytorch.__master_addr", "str", R"("$('${pytorch.distributed_rendezvous}'.split(':')[0] if ':' in '${pytorch.distributed_rendezvous}' else '')$")"},
      {"pytorch.__master_port", "int", R"("$('${pytorch.distributed_rendezvous}'.split(':')[1] if ':' in '${pytorch.distributed_rendezvous}' else '')$")"},
  };
  // clang-format on
  return defaults;
}

bool names_other_framework(const std::string& reference) {
  static const char* const kFrameworks[] = {"tensorflow", "caffe2",       "mxnet",      "tensorrt",
                                            "nvcnn",      "nvtfcnn",      "openvino",   "caffe",
                                            "bvlc_caffe", "nvidia_caffe", "intel_caffe"};
  if (reference.rfind('.', 0) == 0) return true;
  for (const char* framework : kFrameworks) {
    const std::string prefix = std::string(framework) + ".";
    if (reference.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> dlbs_names() {
  std::vector<std::string> names = {"exp.docker_image",
                                    "exp.docker_launcher",
                                    "monitor.launcher",
                                    "monitor.backend_pid_folder",
                                    "runtime.python",
                                    "runtime.EXPORT_CUDA_VISIBLE_DEVICES",
                                    "runtime.EXPORT_CUDA_CACHE_PATH",
                                    "pytorch.launcher",
                                    "pytorch.env",
                                    "pytorch.bench_path",
                                    "pytorch.args",
                                    "pytorch.docker_image",
                                    "pytorch.docker_args",
                                    "pytorch.host_python_path",
                                    "pytorch.host_libpath"};
  for (const auto& d : dlbs_defaults()) names.emplace_back(d.name);
  return names;
}

bool is_dlbs_name(const std::string& name) {
  if (names_other_framework(name) && name.rfind('.', 0) != 0) return true;
  const auto names = dlbs_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace engine::bench
