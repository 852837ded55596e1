// DLBS's JSON configs as engine bench CONFIG.json plans them (DLBS's Builder and Processor:
// references, $(...)$ Python expressions, extensions, casts, the engine's points), and the
// Python expressions alone.
#include <optional>
#include <string>

#include "engine/bench/dlbs_config.hpp"
#include "engine/bench/dlbs_points.hpp"
#include "engine/bench/python_expression.hpp"
#include "tests/fuzz/fuzz_target.hpp"

ENGINE_FUZZ_TARGET(dlbs_config) {
  engine::fuzz::Bytes in(data, size);
  if (in.flag()) {
    (void)engine::bench::python_str(engine::bench::evaluate_python(in.rest()));
    return;
  }
  engine::bench::DlbsRequest request;
  request.path = "fuzz.json";
  // a config that is not JSON is the parser's (nlohmann's) to refuse: the engine names the file
  const auto config = engine::bench::DlbsJson::parse(in.rest(), nullptr, false);
  if (config.is_discarded()) return;
  request.config = config;
  request.environment = [](const std::string& name) -> std::optional<std::string> {
    if (name == "BENCH_ROOT") return std::string("/bench");
    return std::nullopt;
  };
  (void)engine::bench::dlbs_points(engine::bench::plan_dlbs(request), request.path);
}
